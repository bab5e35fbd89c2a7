/* SPDX-License-Identifier: MIT */
/*
 * A small program for the noise-aware check tests: two regions that spin
 * for a fixed amount of work (not time), so the only difference between
 * runs is noise, unless SLOWDOWN (e.g. 0.2) adds that fraction of work to
 * "solve". Usage: busy-work [SLOWDOWN] [CALLS]
 */
#include <stdio.h>
#include <stdlib.h>

#include "scope_profiler.h"

#define WORK_PER_CALL 400000L /* about 1 ms per call */

static volatile double sink;

/* A dependent floating-point chain: fixed work, no memory traffic. */
static void spin(long iterations)
{
	double x = 1.0;

	for (long i = 0; i < iterations; i++)
		x = x * 1.0000001 + 1e-9;
	sink = x;
}

int main(int argc, char **argv)
{
	double slowdown = argc > 1 ? atof(argv[1]) : 0.0;
	int calls = argc > 2 ? atoi(argv[2]) : 40;
	sp_init(NULL, 0); /* the default context: sp_region() needs it */
	int solve = sp_region("solve"), steady = sp_region("steady");

	if (slowdown < 0 || calls < 1) {
		fprintf(stderr, "usage: busy-work [SLOWDOWN >= 0] [CALLS >= 1]\n");
		return 2;
	}
	for (int i = 0; i < calls; i++) {
		sp_begin(solve);
		spin((long)((double)WORK_PER_CALL * (1.0 + slowdown)));
		sp_end(solve);
		sp_begin(steady);
		spin(WORK_PER_CALL);
		sp_end(steady);
	}
	return 0;
}
