// SPDX-License-Identifier: MIT
// A C++ exception through frames whose exits are not instrumented
// (tests/e2e/frames): main's try calls tramp() (C++, not instrumented),
// which calls c_mid() (C, instrumented, built without exception tables'
// cleanups, so the unwinder skips its exit hook), which calls back
// cb_throw() (not instrumented), which calls thrower(). Two calls in three
// throw; after_catch() runs after each try. Writes the calls and depths to
// argv[1] as JSON. after_catch()'s depth is not checked: called by main
// from another site than the c_mid() frame left open, with a larger frame,
// it nests in that frame until the next c_mid() closes it (docs/HOOKS.md).
#include <cstdio>
#include <cstdlib>

extern "C" void tramp(long i);             // exc-tramp.cpp
extern "C" long n_mid;                     // exc-mid.c
long n_thrower, n_after, n_caught;
static volatile long sink;
// Work in each function: calls last well over the clock's resolution.
#define WORK() for (volatile int w_ = 0; w_ < 40; w_++)

extern "C" __attribute__((noinline)) void thrower(long i)
{
	n_thrower++;
	WORK();
	if (i % 3 != 2)
		throw i;
	sink += i;
}

extern "C" __attribute__((noinline)) void after_catch(long i)
{
	n_after++;
	WORK();
	sink += i;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? std::atol(argv[2]) : 1500;
	for (long i = 0; i < n; i++) {
		try {
			tramp(i);
		} catch (long) {
			n_caught++;
		}
		after_catch(i);
	}
	FILE *f = argc > 1 ? std::fopen(argv[1], "w") : nullptr;
	if (!f)
		return 2;
	std::fprintf(f, "{\"calls\": {\"main\": 1, \"c_mid\": %ld, \"thrower\": %ld, \"after_catch\": %ld},\n"
			" \"caught\": %ld,\n"
			" \"depth\": {\"main\": 0, \"c_mid\": 1, \"thrower\": 2, \"after_catch\": null}}\n",
		     n_mid, n_thrower, n_after, n_caught);
	return std::fclose(f) == 0 ? 0 : 2;
}
