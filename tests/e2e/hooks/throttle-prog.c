/* SPDX-License-Identifier: MIT */
/*
 * Test program for the default auto-throttle (tests/e2e/hooks/test-throttle.py),
 * compiled with -finstrument-functions.
 *   throttle-prog phase N   spin() is called N times, 2 us per call for the
 *                           first half and 7 us for the second; the body
 *                           measures itself (CLOCK_MONOTONIC) and prints, as
 *                           JSON, its durations of the first K calls (K =
 *                           argv[3]), the total of the later ones, and how
 *                           much of that total is in calls over 50 us
 *                           (preempted: the machine's noise, not spin's).
 *   throttle-prog threads N 4 threads call leaf() N times each; threads 1-3
 *                           start only after thread 0 made N/2 calls.
 *   throttle-prog nest N    outer() is called N times and calls inner() once.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long later_total, later_excess, calls, first_k, first_d[4096];

__attribute__((noinline)) void spin(long long ns)
{
	long long t0 = now_ns(), t1;
	while ((t1 = now_ns()) - t0 < ns)
		;
	long long d = t1 - t0;
	if (calls < first_k) {
		first_d[calls++] = d;
		return;
	}
	calls++;
	later_total += d;
	if (d > 50000)
		later_excess += d - 50000;
}

static volatile int sink;
static atomic_long progress;

__attribute__((noinline)) void leaf(int i)
{
	sink = i;
}

__attribute__((noinline)) void inner(int i)
{
	sink = i;
}

__attribute__((noinline)) void outer(int i)
{
	inner(i + 1);
	sink = i;
}

static long per_thread;

static void *worker(void *arg)
{
	long id = (long)arg;
	if (id)
		while (atomic_load(&progress) < per_thread / 2)
			;
	for (long i = 0; i < per_thread; i++) {
		leaf((int)i);
		if (!id)
			atomic_store(&progress, i + 1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	long n = atol(argv[2]);
	if (strcmp(argv[1], "phase") == 0) {
		first_k = argc > 3 ? atol(argv[3]) : 0;
		if (first_k < 0 || first_k > 4096)
			return 2;
		for (long i = 0; i < n; i++)
			spin(i < n / 2 ? 2000 : 7000);
		printf("{\"calls\": %lld, \"later_total_ns\": %lld, \"later_excess_ns\": %lld, \"first_ns\": [",
		       calls, later_total, later_excess);
		for (long i = 0; i < first_k; i++)
			printf("%s%lld", i ? ", " : "", first_d[i]);
		printf("]}\n");
		return 0;
	}
	if (strcmp(argv[1], "nest") == 0) {
		for (long i = 0; i < n; i++)
			outer((int)i);
		printf("{\"calls\": %ld}\n", n);
		return 0;
	}
	pthread_t t[4];
	per_thread = n;
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("{\"calls\": %ld}\n", 4 * n);
	return 0;
}
