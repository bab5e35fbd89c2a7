/* SPDX-License-Identifier: MIT */
/*
 * A program written for upstream scope-profiler's native C API, in the
 * style of its example.c (our own code): nothing in it knows about us.
 * The README shows it; test-upstream-example.sh builds it unchanged
 * against our header and library and reads its file with our CLI.
 */
#include <stdio.h>

#include "scope_profiler.h"

static int fib_region;

static long fib(int n)
{
	long r;
	sp_begin(fib_region);
	r = n < 2 ? n : fib(n - 1) + fib(n - 2);
	sp_end(fib_region);
	return r;
}

int main(void)
{
	int solve, i;
	double x = 0;
	if (sp_init("profile", 0) != 0)
		return 1;
	fib_region = SP_REGION_AT("fib");
	solve = sp_region("solve");
	for (i = 0; i < 10; i++) {
		int j;
		sp_begin(solve);
		for (j = 1; j <= 100000; j++)
			x += 1.0 / j;
		sp_end(solve);
	}
	printf("fib(10) = %ld, x = %.3f\n", fib(10), x);
	printf("fib calls: %lld, solve calls: %lld\n", (long long)sp_num_calls(fib_region),
	       (long long)sp_num_calls(solve));
	printf("writing %s\n", sp_output_path());
	return sp_finalize();
}
