/* SPDX-License-Identifier: MIT */
/*
 * Test program for counted calls shared out over call paths
 * (tests/e2e/hooks/test-throttle-split.py), compiled with
 * -finstrument-functions:
 *   split-prog NT R A B   p() calls t() NT times; then R rounds of q1()
 *                         calling u() A times and q2() calling it B times
 *                         (interleaved, so u's timeline window holds both
 *                         paths in the ratio A:B). Prints the exact counts.
 * R stays under the throttle window so that q1 and q2 keep all their calls
 * on the timeline.
 */
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;

__attribute__((noinline)) void t(long i)
{
	sink += i;
}

__attribute__((noinline)) void u(long i)
{
	sink ^= i;
}

__attribute__((noinline)) void p(long n)
{
	for (long i = 0; i < n; i++)
		t(i);
}

__attribute__((noinline)) void q1(long n)
{
	for (long i = 0; i < n; i++)
		u(i);
}

__attribute__((noinline)) void q2(long n)
{
	for (long i = 0; i < n; i++)
		u(i);
}

int main(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	long nt = atol(argv[1]), rounds = atol(argv[2]), a = atol(argv[3]), b = atol(argv[4]);

	p(nt);
	for (long k = 0; k < rounds; k++) {
		q1(a);
		q2(b);
	}
	printf("{\"t\": %ld, \"u_q1\": %ld, \"u_q2\": %ld}\n", nt, rounds * a, rounds * b);
	return 0;
}
