// SPDX-License-Identifier: MIT
// Upstream's C++ layer (scope_profiler.hpp) over our library, -std=c++11:
// sp::Scope on a normal exit, an exception and a move; the SP_PROFILE_*
// macros with names, file and line. Files checked by check_api_cxx.py.
#include "scope_profiler.hpp"

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>

static int failures;
#define CHECK(cond)                                                         \
	do {                                                                \
		if (!(cond)) {                                              \
			std::fprintf(stderr, "api-cxx:%d: %s\n", __LINE__, #cond); \
			failures++;                                         \
		}                                                           \
	} while (0)

static void solve()
{
	SP_PROFILE_FUNCTION();
}

static void in_context(sp_profiler *p)
{
	SP_PROFILE_FUNCTION_CTX(p);
	{
		SP_PROFILE_SCOPE_CTX(p, "ctx_block");
	}
}

int main()
{
	{
		sp::Scope inert(0); // before sp_init: inert
	}
	CHECK(sp_init("cxx", 0) == 0);
	int r = sp_region("scoped");
	{
		sp::Scope s(r); // normal exit
	}
	try {
		sp::Scope s(r); // exception unwind
		throw std::runtime_error("x");
	} catch (const std::exception &) {
	}
	{
		sp::Scope a(r);
		sp::Scope b(std::move(a)); // moved-from a ends nothing
	}
	{
		sp::Scope a(r), b(r);
		b = std::move(a); // b ends its own call, then takes a's
	}
	CHECK(sp_num_calls(r) == 5);
	sp_region_stats st;
	CHECK(sp_profiler_get_region_stats(sp_default_profiler(), r, &st) == SP_OK);
	CHECK(sp_profiler_completed_calls(sp_default_profiler(), r) == 5);
	for (int i = 0; i < 4; i++)
		solve();
	{
		SP_PROFILE_SCOPE("block");
	}
	sp_profiler *p = sp_create("cxxctx", 1);
	in_context(p);
	in_context(p);
	CHECK(sp_profiler_num_regions(p) == 2);
	CHECK(sp_profiler_set_output_format(p, SP_OUTPUT_TRACE) == SP_OK);
	CHECK(sp_profiler_finalize(p) == 0);
	sp_destroy(p);
	CHECK(sp_num_calls(sp_region("void solve()")) == 4);
	CHECK(sp_finalize() == 0);
	return failures ? 1 : 0;
}
