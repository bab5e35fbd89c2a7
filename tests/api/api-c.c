/* SPDX-License-Identifier: MIT */
/*
 * Upstream's native C API, every function, written against the contract
 * (upstream-native-api.md §2, §5.1): return codes, strings and counters are
 * checked here; the files it writes are checked by check_api_files.py.
 * Built with -std=c99 -pedantic -Werror. Runs in the current directory.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "scope_profiler.h"

static int failures;
#define CHECK(cond)                                                             \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(stderr, "api-c:%d: %s\n", __LINE__, #cond);     \
			failures++;                                             \
		}                                                               \
	} while (0)

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts;
	ts.tv_sec = 0;
	ts.tv_nsec = ms * 1000000L;
	nanosleep(&ts, NULL);
}

static int fib_region;
static int fib(int n)
{
	int r;
	sp_begin(fib_region);
	r = n < 2 ? n : fib(n - 1) + fib(n - 2);
	sp_end(fib_region);
	return r;
}

/* §5.1.2-3: dead instrumentation and NULL contexts. */
static void before_init(void)
{
	sp_region_stats st;
	sp_scope dead;
	CHECK(sp_region("x") == SP_INVALID_REGION);
	sp_begin(-1);
	sp_end(-1);
	sp_begin(0);
	sp_end(0);
	CHECK(sp_num_calls(0) == 0);
	CHECK(sp_is_active() == 0);
	CHECK(sp_output_path() == NULL);
	CHECK(sp_default_profiler() == NULL);
	CHECK(sp_set_output_format(SP_OUTPUT_TRACE) == SP_ERR_INACTIVE);
	CHECK(sp_current_output_format() == SP_OUTPUT_HDF5);
	CHECK(sp_region_at("x", "x.c", 1) == -1);
	CHECK(sp_finalize() == 0);
	printf("id=%d active=%d calls=%d\n", sp_region("x"), sp_is_active(), (int)sp_num_calls(0));

	CHECK(sp_profiler_last_error(NULL) == SP_OK);
	CHECK(sp_profiler_region(NULL, "a") == -1);
	CHECK(sp_profiler_region_at(NULL, "a", "a.c", 1) == -1);
	CHECK(sp_profiler_is_active(NULL) == 0);
	CHECK(sp_profiler_flush(NULL) == 0);
	CHECK(sp_profiler_finalize(NULL) == 0);
	CHECK(sp_profiler_end_last(NULL) == SP_ERR_UNMATCHED_END);
	CHECK(sp_scope_end(NULL) == SP_ERR_UNMATCHED_END);
	dead = sp_profiler_scope_begin(NULL, 0);
	CHECK(dead.slot == -1 && dead.profiler == NULL && dead.region == 0);
	CHECK(sp_scope_end(&dead) == SP_ERR_UNMATCHED_END);
	CHECK(sp_profiler_reset(NULL) == SP_ERR_INACTIVE);
	CHECK(sp_profiler_get_region_stats(NULL, 0, &st) == SP_ERR_INACTIVE);
	CHECK(sp_profiler_num_regions(NULL) == 0);
	CHECK(sp_profiler_region_name(NULL, 0) == NULL);
	CHECK(sp_profiler_output_path(NULL) == NULL);
	CHECK(sp_profiler_output_format(NULL) == SP_OUTPUT_HDF5);
	CHECK(sp_profiler_set_output_format(NULL, SP_OUTPUT_TRACE) == SP_ERR_INACTIVE);
	sp_profiler_begin(NULL, 0);
	sp_profiler_end(NULL, 0);
	sp_destroy(NULL);

	CHECK(strcmp(sp_error_string(SP_OK), "ok") == 0);
	CHECK(strcmp(sp_error_string(SP_ERR_INACTIVE), "profiler is not active") == 0);
	CHECK(strcmp(sp_error_string(SP_ERR_NO_CLOCK), "no monotonic clock available") == 0);
	CHECK(strcmp(sp_error_string(SP_ERR_NO_MEMORY), "out of memory") == 0);
	CHECK(strcmp(sp_error_string(SP_ERR_IO), "output file could not be written") == 0);
	CHECK(strcmp(sp_error_string(SP_ERR_UNMATCHED_END), "no open call to end") == 0);
	CHECK(strcmp(sp_error_string(SP_ERR_OPEN_SCOPES), "a region is still open") == 0);
	CHECK(strcmp(sp_error_string(SP_ERR_UNSUPPORTED),
		     "output format not available in this build") == 0);
	CHECK(strcmp(sp_error_string((sp_status)99), "unknown status") == 0);
	CHECK(sp_hdf5_available() == 1);
	CHECK(sp_default_output_format() == SP_OUTPUT_HDF5);
	CHECK(SP_FORMAT_VERSION == 2 && SP_INVALID_REGION == -1);
	CHECK(sp_now_ns() > 0);
}

/* The default context: registry, counts, timings, formats, finalize. */
static void default_context(FILE *measured)
{
	int work, again, located, late, partial, open_r, i;
	sp_region_stats st;
	CHECK(sp_init("main", 0) == 0);
	CHECK(sp_is_active() == 1);
	CHECK(sp_default_profiler() != NULL);
	CHECK(strcmp(sp_output_path(), "main_rank00000.h5") == 0);
	work = sp_region("work");
	fib_region = sp_region("fib");
	again = sp_region("work");
	CHECK(work == 0 && fib_region == 1 && again == 0);
	located = SP_REGION_AT("located");
	CHECK(located == 2);
	late = sp_region("late");
	CHECK(sp_region_at("late", "late.c", 42) == late); /* backfill */
	CHECK(sp_region_at("late", "other.c", 7) == late); /* first writer wins */
	CHECK(sp_profiler_num_regions(sp_default_profiler()) == 4);
	CHECK(strcmp(sp_profiler_region_name(sp_default_profiler(), late), "late") == 0);

	for (i = 0; i < 3; i++) {
		long long t0 = now_ns(), t1;
		sp_begin(work);
		sleep_ms(20);
		sp_end(work);
		t1 = now_ns();
		fprintf(measured, "%lld\n", t1 - t0);
	}
	sp_begin(located);
	sp_end(located);
	sp_begin(late);
	sp_end(late);
	CHECK(fib(10) == 55);
	CHECK(sp_num_calls(fib_region) == 177);
	CHECK(sp_num_calls(work) == 3);

	sp_end(work); /* unmatched: stderr line, status 5 */
	CHECK(sp_profiler_last_error(sp_default_profiler()) == SP_ERR_UNMATCHED_END);
	CHECK(strcmp(sp_error_string(sp_profiler_last_error(sp_default_profiler())),
		     "no open call to end") == 0);
	CHECK(sp_profiler_get_region_stats(sp_default_profiler(), work, &st) == SP_OK);
	CHECK(st.calls == 3 && st.min_ns >= 20000000 && st.max_ns >= st.min_ns &&
	      st.total_ns >= st.min_ns + 2 * st.min_ns);
	CHECK(sp_profiler_get_region_stats(sp_default_profiler(), 99, &st) == SP_ERR_INACTIVE);

	/* flush as HDF5, then finalize as .spt: both files (§5.1.11). */
	CHECK(sp_profiler_flush(sp_default_profiler()) == 0);
	printf("%d %s\n", (int)sp_current_output_format(), sp_output_path());
	CHECK(sp_set_output_format((sp_output_format)5) == SP_ERR_UNSUPPORTED);
	CHECK(sp_current_output_format() == SP_OUTPUT_HDF5);
	CHECK(sp_set_output_format(SP_OUTPUT_TRACE) == SP_OK);
	CHECK(strcmp(sp_output_path(), "main_rank00000.spt") == 0);
	printf("%d %s\n", (int)sp_current_output_format(), sp_output_path());

	/* Written count (§2.7.4): 2 completed, then one open at finalize. */
	partial = sp_region("partial");
	for (i = 0; i < 2; i++) {
		sp_begin(partial);
		sp_end(partial);
	}
	sp_begin(partial);
	open_r = sp_region("never_closed");
	sp_begin(open_r);
	CHECK(sp_num_calls(open_r) == 1); /* entries: an open call counts */
	CHECK(sp_finalize() == 0);
	CHECK(sp_profiler_last_error(sp_default_profiler()) == SP_ERR_OPEN_SCOPES);
	CHECK(sp_is_active() == 0);
	CHECK(sp_num_calls(work) == 3 && sp_num_calls(fib_region) == 177);
	CHECK(sp_region("x") == -1);
	CHECK(sp_finalize() == 0);
	CHECK(strcmp(sp_output_path(), "main_rank00000.spt") == 0);
	CHECK(sp_profiler_get_region_stats(sp_default_profiler(), work, &st) == SP_OK && st.calls == 3);
	sp_begin(work); /* after finalize: nothing */
	CHECK(sp_num_calls(work) == 3);
}

/* Explicit contexts: tokens, end_last, reset, growth, depth (§5.1.6-9). */
static void explicit_contexts(void)
{
	sp_profiler *p = sp_create("ctx", 3), *q = sp_create("ctx2", 4);
	sp_region_stats st;
	sp_scope outer, inner;
	int a, b, many, deep, shared_p, shared_q, i;
	CHECK(p && q && sp_profiler_is_active(p) && sp_profiler_last_error(p) == SP_OK);
	CHECK(sp_profiler_output_format(p) == SP_OUTPUT_HDF5);
	CHECK(sp_profiler_set_output_format(p, SP_OUTPUT_TRACE) == SP_OK);
	CHECK(strcmp(sp_profiler_output_path(p), "ctx_rank00003.spt") == 0);
	a = SP_PROFILER_REGION_AT(p, "outer");
	b = sp_profiler_region(p, "inner");
	CHECK(a == 0 && b == 1);

	outer = sp_profiler_scope_begin(p, a);
	inner = sp_profiler_scope_begin(p, a); /* recursive */
	CHECK(outer.slot == 0 && inner.slot == 1 && outer.profiler == p && outer.region == a);
	printf("tokens %d", sp_scope_end(&outer));
	printf(" %d", sp_scope_end(&inner));
	printf(" %d", sp_scope_end(&outer));
	printf(" %d\n", sp_scope_end(&outer));
	CHECK(inner.slot == -1 && outer.slot == -1);

	sp_profiler_begin(p, a);
	sp_profiler_begin(p, b);
	CHECK(sp_profiler_end_last(p) == SP_OK);
	CHECK(sp_profiler_completed_calls(p, b) == 1 && sp_profiler_completed_calls(p, a) == 2);
	CHECK(sp_profiler_end_last(p) == SP_OK);
	CHECK(sp_profiler_completed_calls(p, a) == 3);
	CHECK(sp_profiler_end_last(p) == SP_ERR_UNMATCHED_END);
	CHECK(sp_profiler_last_error(p) == SP_ERR_UNMATCHED_END);

	sp_profiler_begin(p, a);
	CHECK(sp_profiler_reset(p) == SP_ERR_OPEN_SCOPES);
	sp_profiler_end(p, a);
	CHECK(sp_profiler_reset(p) == SP_OK);
	CHECK(sp_profiler_num_regions(p) == 2);
	CHECK(sp_profiler_get_region_stats(p, a, &st) == SP_OK && st.calls == 0 && st.total_ns == 0);
	sp_profiler_begin(p, a);
	sp_profiler_end(p, a);
	CHECK(sp_profiler_get_region_stats(p, a, &st) == SP_OK && st.calls == 1);

	many = sp_profiler_region(p, "many");
	for (i = 0; i < 5000; i++) {
		sp_profiler_begin(p, many);
		sp_profiler_end(p, many);
	}
	CHECK(sp_profiler_completed_calls(p, many) == 5000);

	/* 65 nested: the 65th is counted, not timed; its end closes the
	 * innermost timed call early, so the last end is unmatched. */
	deep = sp_profiler_region(p, "deep");
	for (i = 0; i < 65; i++)
		sp_profiler_begin(p, deep);
	for (i = 0; i < 65; i++)
		sp_profiler_end(p, deep);
	CHECK(sp_profiler_last_error(p) == SP_ERR_UNMATCHED_END);
	CHECK(sp_profiler_get_region_stats(p, deep, &st) == SP_OK && st.calls == 65);
	CHECK(sp_profiler_completed_calls(p, deep) == 64);

	/* Two contexts, one name: separate counts, one region in the file. */
	shared_p = sp_profiler_region(p, "shared");
	shared_q = sp_profiler_region(q, "shared");
	CHECK(shared_q == 0);
	for (i = 0; i < 2; i++) {
		sp_profiler_begin(p, shared_p);
		sp_profiler_end(p, shared_p);
		sp_profiler_begin(q, shared_q);
		sp_profiler_end(q, shared_q);
	}
	CHECK(sp_profiler_get_region_stats(q, shared_q, &st) == SP_OK && st.calls == 2);
	CHECK(sp_profiler_finalize(p) == 0);
	CHECK(sp_profiler_is_active(p) == 0 && sp_profiler_finalize(p) == 0);
	CHECK(sp_profiler_region(p, "outer") == -1 && sp_profiler_last_error(p) == SP_ERR_INACTIVE);
	CHECK(sp_profiler_set_output_format(p, SP_OUTPUT_HDF5) == SP_ERR_INACTIVE);
	CHECK(sp_profiler_get_region_stats(p, many, &st) == SP_OK && st.calls == 5000);
	CHECK(strcmp(sp_profiler_region_name(p, many), "many") == 0);
	CHECK(sp_profiler_flush(p) == 0);
	sp_destroy(p);
	sp_destroy(q); /* never finalized: no ctx2 file */
}

int main(void)
{
	FILE *measured = fopen("measured.txt", "w");
	if (!measured)
		return 2;
	before_init();
	default_context(measured);
	fclose(measured);
	explicit_contexts();
	/* A new session after finalize: fresh handles, nothing written. */
	CHECK(sp_init("again", 0) == 0);
	CHECK(sp_region("fresh") == 0 && sp_num_calls(0) == 0);
	sp_begin(0);
	sp_end(0);
	if (failures)
		fprintf(stderr, "api-c: %d failures\n", failures);
	return failures ? 1 : 0;
}
