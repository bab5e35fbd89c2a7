/* SPDX-License-Identifier: MIT */
/*
 * longjmp out of nested instrumented frames, in a loop (tests/e2e/frames).
 * Even iterations jump from level3 back to jumper() (three frames left
 * open), odd ones back into level1() (two left), which then calls level2()
 * again, from another call site: that one calls leaf() and returns. after()
 * runs once the loop is done. Writes the calls it made and each
 * function's 0-based nesting depth to argv[1] as JSON.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINL __attribute__((noinline, noclone))
/* A little work in each function, so that a call lasts well over the
 * clock's resolution and nesting is unambiguous in the file. */
#define WORK() for (volatile int w_ = 0; w_ < 40; w_++)

static jmp_buf outer_env, mid_env;
static volatile long sink;
static long n_jumper, n_level1, n_level2, n_level3, n_leaf, n_after;

NOINL static void level3(long i)
{
	n_level3++;
	WORK();
	sink += i;
	if (i & 1)
		longjmp(mid_env, 1);
	longjmp(outer_env, 1);
}

NOINL static void leaf(long i)
{
	n_leaf++;
	WORK();
	sink += i;
}

NOINL static void level2(long i, int again)
{
	n_level2++;
	WORK();
	if (again) {
		leaf(i);
		return;
	}
	level3(i);
	sink--; /* not reached */
}

NOINL static void level1(volatile long i)
{
	n_level1++;
	WORK();
	if (setjmp(mid_env) == 0)
		level2(i, 0);
	else
		level2(i, 1); /* back from level3: the first level2 and level3 were left */
}

NOINL static void jumper(long n)
{
	n_jumper++;
	for (volatile long i = 0; i < n; i++)
		if (setjmp(outer_env) == 0)
			level1(i);
}

NOINL static void after(long i)
{
	n_after++;
	WORK();
	sink += i;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 800, m = argc > 3 ? atol(argv[3]) : 799; /* 4001 calls */
	jumper(n);
	for (long i = 0; i < m; i++)
		after(i);
	FILE *f = argc > 1 ? fopen(argv[1], "w") : NULL;
	if (!f)
		return 2;
	fprintf(f, "{\"calls\": {\"main\": 1, \"jumper\": %ld, \"level1\": %ld, \"level2\": %ld, "
		   "\"level3\": %ld, \"leaf\": %ld, \"after\": %ld},\n",
		n_jumper, n_level1, n_level2, n_level3, n_leaf, n_after);
	fprintf(f, " \"depth\": {\"main\": 0, \"jumper\": 1, \"level1\": 2, \"level2\": 3, "
		   "\"level3\": 4, \"leaf\": 4, \"after\": 1}}\n");
	return fclose(f) == 0 ? 0 : 2;
}
