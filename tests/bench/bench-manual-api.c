/* SPDX-License-Identifier: MIT */
/*
 * Manual API micro-benchmark: ns per sp_begin+sp_end pair, against a loop
 * of two raw timestamp reads (TSC and clock_gettime), the timeline alone
 * (sp_begin_name: no context, what sp_begin cost before contexts, plus a
 * name lookup) and a context that a second thread has used (the locked
 * path). Median of 7 runs; prints a table and one JSON line per metric.
 * Not a test: it asserts nothing about time.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "scope_profiler.h"

#define RUNS 7
#define PAIRS 1000000L

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static volatile long long sink;

static double run_api(int h)
{
	double t0 = now_ns();
	for (long i = 0; i < PAIRS; i++) {
		sp_begin(h);
		sp_end(h);
	}
	return (now_ns() - t0) / PAIRS;
}

static double run_name(void)
{
	double t0 = now_ns();
	for (long i = 0; i < PAIRS; i++) {
		sp_begin_name("bench_name");
		sp_end_name("bench_name");
	}
	return (now_ns() - t0) / PAIRS;
}

static double run_shared(sp_profiler *p, int h)
{
	double t0 = now_ns();
	for (long i = 0; i < PAIRS; i++) {
		sp_profiler_begin(p, h);
		sp_profiler_end(p, h);
	}
	return (now_ns() - t0) / PAIRS;
}

/* One call from another thread: the context is locked from then on. */
static void *touch(void *arg)
{
	sp_profiler *p = arg;
	sp_profiler_begin(p, 0);
	sp_profiler_end(p, 0);
	return NULL;
}

static double run_tsc(void)
{
	double t0 = now_ns();
	long long acc = 0;
	for (long i = 0; i < PAIRS; i++) {
#if defined(__x86_64__)
		acc += (long long)__rdtsc();
		acc ^= (long long)__rdtsc();
#endif
	}
	sink = acc;
	return (now_ns() - t0) / PAIRS;
}

static double run_clock(void)
{
	double t0 = now_ns();
	long long acc = 0;
	struct timespec ts;
	for (long i = 0; i < PAIRS; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		acc += ts.tv_nsec;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		acc ^= ts.tv_nsec;
	}
	sink = acc;
	return (now_ns() - t0) / PAIRS;
}

static void report(const char *metric, double *v, double ref)
{
	qsort(v, RUNS, sizeof *v, cmp);
	printf("%-34s %8.2f ns  (min %.2f, max %.2f)  ratio %.2f\n", metric, v[RUNS / 2], v[0],
	       v[RUNS - 1], v[RUNS / 2] / ref);
	printf("{\"metric\": \"%s\", \"unit\": \"ns\", \"median\": %.3f, \"min\": %.3f, "
	       "\"max\": %.3f, \"runs\": %d, \"ratio_to_reference\": %.3f}\n",
	       metric, v[RUNS / 2], v[0], v[RUNS - 1], RUNS, v[RUNS / 2] / ref);
}

int main(void)
{
	char out[64];
	snprintf(out, sizeof out, "/tmp/sp-bench-manual-%d.h5", (int)getpid());
	sp_set_output(out);
	sp_init(NULL, 0); /* the default context (upstream API) */
	int h = sp_region("bench");
	sp_profiler *shared = sp_create("bench-shared", 0);
	int hs = sp_profiler_region(shared, "bench_shared");
	pthread_t t;
	if (pthread_create(&t, NULL, touch, shared) == 0)
		pthread_join(t, NULL);
	double api[RUNS], name[RUNS], locked[RUNS], tsc[RUNS], clk[RUNS];
	run_api(h); /* warm up: first chunks, page faults */
	for (int r = 0; r < RUNS; r++) {
		api[r] = run_api(h);
		name[r] = run_name();
		locked[r] = run_shared(shared, hs);
		tsc[r] = run_tsc();
		clk[r] = run_clock();
	}
	double tsc_med, clk_med;
	qsort(tsc, RUNS, sizeof *tsc, cmp);
	qsort(clk, RUNS, sizeof *clk, cmp);
	tsc_med = tsc[RUNS / 2];
	clk_med = clk[RUNS / 2];
	printf("manual API: %ld begin+end pairs per run, %d runs, median\n", PAIRS, RUNS);
	report("two_tsc_reads", tsc, tsc_med);
	report("two_clock_gettime_reads", clk, clk_med);
	report("sp_begin_sp_end_pair", api, tsc_med);
	report("sp_begin_name_sp_end_name_pair", name, tsc_med);
	report("shared_context_pair", locked, tsc_med);
	sp_destroy(shared);
	sp_stop(); /* write the process file now */
	unlink(out);
	return 0;
}
