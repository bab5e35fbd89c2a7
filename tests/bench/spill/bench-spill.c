/* SPDX-License-Identifier: MIT */
/*
 * Cost of spilling: N begin+end pairs on one thread, timed in-process
 * (recording only; the file write at exit is not timed). bench-spill.sh runs
 * it with a cap that holds everything, a cap that spills, and SPILL=0 (drop).
 * usage: bench-spill METRIC N
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "scope_profiler.h"

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	long n = atol(argv[2]);
	sp_init(NULL, 0); /* the default context: sp_region() needs it */
	int r = sp_region("bench");
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		sp_begin(r);
		sp_end(r);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n;
	printf("%-28s %8.2f ns per begin+end pair (%ld pairs)\n", argv[1], ns, n);
	printf("{\"metric\": \"%s\", \"unit\": \"ns\", \"value\": %.3f, \"pairs\": %ld}\n", argv[1], ns, n);
	return 0;
}
