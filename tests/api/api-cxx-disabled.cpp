// SPDX-License-Identifier: MIT
// SP_DISABLE_PROFILING: the macros expand to nothing, their arguments are
// not evaluated, and this program links without the library (the test
// checks that the region string is absent from the executable).
#define SP_DISABLE_PROFILING
#include "scope_profiler_mpi.hpp"

const char *never_defined_name();

static int solve(int x)
{
	SP_PROFILE_FUNCTION();
	SP_PROFILE_SCOPE(never_defined_name());
	SP_PROFILE_SCOPE_CTX(nullptr, "disabled_region_string");
	return x + 1;
}

int main()
{
	return solve(-1);
}
