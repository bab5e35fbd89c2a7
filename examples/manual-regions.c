/* SPDX-License-Identifier: MIT */
/*
 * Manual regions: a small time-stepping program annotated with the C API
 * (handles, names and the scoped macro). Its call counts are fixed: setup 1,
 * timestep N, assemble N, solve N, and the session root once.
 * Usage: manual-regions [STEPS]   (default 5)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "scope_profiler.h"

static void pause_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	nanosleep(&ts, NULL);
}

static double assemble(int scale)
{
	SP_SCOPE("assemble");
	pause_us(400L * scale);
	double s = 0;
	for (int i = 1; i <= 1000 * scale; i++)
		s += 1.0 / i;
	return s;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 5;
	sp_init("manual-regions", 0); /* the default context; nothing is written */
	int session = sp_region("scope_profiler.session");
	int solve = sp_region("solve");
	sp_begin(session);

	sp_begin_name("setup");
	pause_us(2000);
	sp_end_name("setup");

	double acc = 0;
	for (int step = 0; step < steps; step++) {
		SP_SCOPE("timestep");
		acc += assemble(1 + step % 3);
		sp_begin(solve);
		pause_us(300);
		sp_end(solve);
	}
	sp_end(session);
	printf("result %.6f after %d steps\n", acc, steps);
	return 0;
}
