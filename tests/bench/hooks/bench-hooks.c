/* SPDX-License-Identifier: MIT */
/*
 * Hook micro-benchmark: N calls of one tiny function, timed in-process with
 * the process CPU-time clock around the loop (so that other load on the
 * machine does not count; page faults do); prints ns per call. Built twice,
 * with and without -finstrument-functions; run-bench.py runs the variants.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) int tiny(int x);

__attribute__((noinline)) int tiny(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5000000;
	int s = 0;
	for (long i = 0; i < n / 10; i++) /* warm-up: caches, first chunk */
		s = tiny(s);
	double t0 = now_ns();
	for (long i = 0; i < n; i++)
		s = tiny(s);
	double t1 = now_ns();
	printf("%.3f %d\n", (t1 - t0) / (double)n, s);
	return 0;
}
