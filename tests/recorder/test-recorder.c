/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the recorder core without MPI: nesting, recursion, threads,
 * the memory cap, mismatched ends, configuration parsing. Check forks each
 * test, so every test starts from a fresh recorder.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "sp-duration.h"
#include "recorder.h"
#include "snapshot.h"
#include "check-main.h"

static void start(const char *max_memory)
{
	if (max_memory)
		setenv("SCOPE_PROFILER_MAX_MEMORY", max_memory, 1);
	setenv("SCOPE_PROFILER_CLOCK", getenv("SP_TEST_CLOCK") ? getenv("SP_TEST_CLOCK") : "auto", 1);
	sp_config_load();
	ck_assert_int_eq(sp_recorder_start(), 0);
}

static const struct sp_snap_row *row_named(const struct sp_snapshot *s, const char *name)
{
	for (uint32_t i = 0; i < s->nrows; i++)
		if (strcmp(s->names[s->rows[i].region], name) == 0)
			return &s->rows[i];
	return NULL;
}

START_TEST(test_nesting)
{
	start(NULL);
	uint32_t a = sp_region_intern("outer", SP_KIND_MANUAL);
	uint32_t b = sp_region_intern("inner", SP_KIND_MANUAL);
	ck_assert_uint_eq(sp_region_intern("outer", SP_KIND_MANUAL), a);
	sp_rec_enter(a);
	for (int i = 0; i < 3; i++) {
		sp_rec_enter(b);
		sp_rec_exit(b);
	}
	sp_rec_exit(a);
	sp_recorder_stop();
	struct sp_snapshot s;
	ck_assert_int_eq(sp_snapshot_take(&s), 0);
	ck_assert_uint_eq(s.nrows, 2);
	ck_assert_str_eq(s.names[0], "outer");
	const struct sp_snap_row *ra = row_named(&s, "outer"), *rb = row_named(&s, "inner");
	ck_assert_uint_eq(ra->count, 1);
	ck_assert_uint_eq(rb->count, 3);
	int64_t as = s.start[ra->offset], ae = s.end[ra->offset];
	for (uint64_t i = 0; i < 3; i++) {
		uint64_t k = rb->offset + i;
		ck_assert(s.start[k] >= as && s.end[k] <= ae && s.end[k] >= s.start[k]);
		if (i)
			ck_assert(s.start[k] >= s.end[k - 1]);
	}
	/* Summary statistics of the row agree with its events. */
	int64_t total = 0;
	for (uint64_t i = 0; i < 3; i++)
		total += s.end[rb->offset + i] - s.start[rb->offset + i];
	ck_assert_int_eq(rb->summary.total, total);
	ck_assert_int_eq(rb->summary.first, s.end[rb->offset] - s.start[rb->offset]);
	ck_assert_int_eq(s.nevents, 4);
	sp_snapshot_free(&s);
}
END_TEST

START_TEST(test_recursion_entry_order)
{
	start(NULL);
	uint32_t f = sp_region_intern("fib", SP_KIND_MANUAL);
	for (int i = 0; i < 4; i++)
		sp_rec_enter(f);
	for (int i = 0; i < 4; i++)
		sp_rec_exit(f);
	sp_recorder_stop();
	struct sp_snapshot s;
	ck_assert_int_eq(sp_snapshot_take(&s), 0);
	const struct sp_snap_row *r = row_named(&s, "fib");
	ck_assert_uint_eq(r->count, 4);
	/* Entry order: the outermost call first, each nested one inside. */
	for (uint64_t i = 1; i < 4; i++) {
		ck_assert(s.start[r->offset + i] >= s.start[r->offset + i - 1]);
		ck_assert(s.end[r->offset + i] <= s.end[r->offset + i - 1]);
	}
	sp_snapshot_free(&s);
}
END_TEST

START_TEST(test_mismatched_end_and_stray_exit)
{
	start(NULL);
	uint32_t a = sp_region_intern("a", SP_KIND_MANUAL);
	uint32_t b = sp_region_intern("b", SP_KIND_MANUAL);
	uint32_t c = sp_region_intern("c", SP_KIND_MANUAL);
	sp_rec_exit(c); /* no open call: ignored */
	sp_rec_enter(a);
	sp_rec_enter(b);
	sp_rec_exit(a); /* closes a out of order */
	sp_rec_exit(b);
	sp_rec_enter(c); /* left open: not in the snapshot */
	sp_recorder_stop();
	struct sp_snapshot s;
	ck_assert_int_eq(sp_snapshot_take(&s), 0);
	ck_assert_uint_eq(row_named(&s, "a")->count, 1);
	ck_assert_uint_eq(row_named(&s, "b")->count, 1);
	ck_assert_ptr_null(row_named(&s, "c"));
	ck_assert_uint_eq(s.nevents, 2);
	sp_snapshot_free(&s);
}
END_TEST

#define NTHREADS 8
#define PER_THREAD 20000

static void *worker(void *arg)
{
	char name[32];
	snprintf(name, sizeof name, "worker_%d", (int)(intptr_t)arg);
	uint32_t own = sp_region_intern(name, SP_KIND_MANUAL);
	uint32_t shared = sp_region_intern("shared", SP_KIND_MANUAL);
	for (int i = 0; i < PER_THREAD; i++) {
		sp_rec_enter(shared);
		sp_rec_enter(own);
		sp_rec_exit(own);
		sp_rec_exit(shared);
	}
	return NULL;
}

START_TEST(test_threads_exact_counts)
{
	start(NULL);
	pthread_t th[NTHREADS];
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL); /* threads exit before the snapshot */
	sp_recorder_stop();
	struct sp_snapshot s;
	ck_assert_int_eq(sp_snapshot_take(&s), 0);
	const struct sp_snap_row *sh = row_named(&s, "shared");
	ck_assert_uint_eq(sh->count, NTHREADS * PER_THREAD);
	for (int i = 0; i < NTHREADS; i++) {
		char name[32];
		snprintf(name, sizeof name, "worker_%d", i);
		ck_assert_uint_eq(row_named(&s, name)->count, PER_THREAD);
	}
	ck_assert_uint_eq(s.threads_with_events, NTHREADS);
	ck_assert_uint_eq(s.dropped, 0);
	/* Events of a row from several threads are in start order. */
	for (uint64_t i = 1; i < sh->count; i++)
		ck_assert(s.start[sh->offset + i] >= s.start[sh->offset + i - 1]);
	sp_snapshot_free(&s);
}
END_TEST

START_TEST(test_memory_cap_counts_drops)
{
	/* Room for the first chunk (4096 events) and not for a second. */
	start("200K");
	uint32_t r = sp_region_intern("tick", SP_KIND_MANUAL);
	const int calls = 10000;
	for (int i = 0; i < calls; i++) {
		sp_rec_enter(r);
		sp_rec_exit(r);
	}
	sp_recorder_stop();
	struct sp_snapshot s;
	ck_assert_int_eq(sp_snapshot_take(&s), 0);
	const struct sp_snap_row *row = row_named(&s, "tick");
	ck_assert_uint_eq(row->count, 4096);
	ck_assert_uint_eq(row->dropped, calls - 4096);
	ck_assert_uint_eq(s.dropped, calls - 4096);
	ck_assert_uint_eq(row->count + row->dropped, calls);
	sp_snapshot_free(&s);
}
END_TEST

START_TEST(test_depth_overflow_is_counted)
{
	start(NULL);
	uint32_t r = sp_region_intern("deep", SP_KIND_MANUAL);
	const int depth = SP_STACK_MAX + 10;
	for (int i = 0; i < depth; i++)
		sp_rec_enter(r);
	for (int i = 0; i < depth; i++)
		sp_rec_exit(r);
	sp_recorder_stop();
	struct sp_snapshot s;
	ck_assert_int_eq(sp_snapshot_take(&s), 0);
	const struct sp_snap_row *row = row_named(&s, "deep");
	ck_assert_uint_eq(row->count, SP_STACK_MAX);
	ck_assert_uint_eq(row->dropped, 10);
	sp_snapshot_free(&s);
}
END_TEST

START_TEST(test_not_recording_is_noop)
{
	/* Before start: nothing is recorded, nothing crashes. */
	uint32_t r = sp_region_intern("early", SP_KIND_MANUAL);
	sp_rec_enter(r);
	sp_rec_exit(r);
	ck_assert_ptr_null(sp_tls);
	ck_assert_ptr_null(sp_region_get(12345));
}
END_TEST

/* Whatever the tick source, the snapshot's times are CLOCK_MONOTONIC ns:
 * each converted timestamp lies between monotonic readings taken around
 * it (tolerance 20 us for the fit and the reading itself). */
START_TEST(test_timeline_is_clock_monotonic)
{
	start(NULL);
	uint32_t r = sp_region_intern("timed", SP_KIND_MANUAL);
	int64_t b0 = sp_monotonic_ns();
	sp_rec_enter(r);
	int64_t a0 = sp_monotonic_ns();
	struct timespec ts = { 0, 5000000 };
	nanosleep(&ts, NULL);
	int64_t b1 = sp_monotonic_ns();
	sp_rec_exit(r);
	int64_t a1 = sp_monotonic_ns();
	sp_recorder_stop();
	struct sp_snapshot s;
	ck_assert_int_eq(sp_snapshot_take(&s), 0);
	const int64_t tol = 20000;
	ck_assert_int_ge(s.start[0], b0 - tol);
	ck_assert_int_le(s.start[0], a0 + tol);
	ck_assert_int_ge(s.end[0], b1 - tol);
	ck_assert_int_le(s.end[0], a1 + tol);
	sp_snapshot_free(&s);
}
END_TEST

START_TEST(test_parse_units)
{
	int64_t ns;
	uint64_t bytes;
	ck_assert_int_eq(sp_duration_parse("250ns", &ns), 0);
	ck_assert_int_eq(ns, 250);
	ck_assert_int_eq(sp_duration_parse("10us", &ns), 0);
	ck_assert_int_eq(ns, 10000);
	ck_assert_int_eq(sp_duration_parse("1.5ms", &ns), 0);
	ck_assert_int_eq(ns, 1500000);
	ck_assert_int_eq(sp_duration_parse("2s", &ns), 0);
	ck_assert_int_eq(ns, 2000000000);
	ck_assert_int_lt(sp_duration_parse("2 parsecs", &ns), 0);
	ck_assert_int_lt(sp_duration_parse("-1s", &ns), 0);
	/* A bare number is seconds, as upstream (docs/CLI.md, "Units"). */
	ck_assert_int_eq(sp_duration_parse("2", &ns), 0);
	ck_assert_int_eq(ns, 2000000000);
	ck_assert_int_eq(sp_duration_parse("0.000001", &ns), 0);
	ck_assert_int_eq(ns, 1000);
	ck_assert_int_eq(sp_duration_parse("10\xc2\xb5s", &ns), 0);
	ck_assert_int_eq(ns, 10000);
	ck_assert_int_lt(sp_duration_parse("inf", &ns), 0);
	ck_assert_int_lt(sp_duration_parse("0x10", &ns), 0);
	ck_assert_int_lt(sp_duration_parse("1e30s", &ns), 0);
	ck_assert_int_lt(sp_duration_parse("", &ns), 0);
	ck_assert_int_lt(sp_duration_parse("10 us", &ns), 0);
	/* Per-call thresholds: bare numbers once meant ns; 1 or more is refused. */
	ck_assert_int_eq(sp_duration_parse_per_call("0.00001", &ns), 0);
	ck_assert_int_eq(ns, 10000);
	ck_assert_int_eq(sp_duration_parse_per_call("1000", &ns), -EDOM);
	ck_assert_int_eq(sp_duration_parse_per_call("1000ns", &ns), 0);
	ck_assert_int_eq(ns, 1000);
	ck_assert_int_eq(sp_duration_parse_per_call("2s", &ns), 0);
	ck_assert_int_eq(ns, 2000000000);
	ck_assert_int_eq(sp_parse_size("64K", &bytes), 0);
	ck_assert_uint_eq(bytes, 65536);
	ck_assert_int_eq(sp_parse_size("256M", &bytes), 0);
	ck_assert_uint_eq(bytes, 268435456);
	ck_assert_int_eq(sp_parse_size("1G", &bytes), 0);
	ck_assert_uint_eq(bytes, 1073741824);
	ck_assert_int_lt(sp_parse_size("lots", &bytes), 0);
}
END_TEST

START_TEST(test_bad_env_value_keeps_default)
{
	setenv("SCOPE_PROFILER_MAX_MEMORY", "lots", 1);
	ck_assert_int_eq(sp_config_load(), 1);
	ck_assert_uint_eq(sp_config.max_memory, 1ull << 30);
}
END_TEST

static Suite *recorder_suite(void)
{
	Suite *s = suite_create("recorder");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_nesting);
	tcase_add_test(tc, test_recursion_entry_order);
	tcase_add_test(tc, test_mismatched_end_and_stray_exit);
	tcase_add_test(tc, test_threads_exact_counts);
	tcase_add_test(tc, test_memory_cap_counts_drops);
	tcase_add_test(tc, test_depth_overflow_is_counted);
	tcase_add_test(tc, test_not_recording_is_noop);
	tcase_add_test(tc, test_timeline_is_clock_monotonic);
	tcase_add_test(tc, test_parse_units);
	tcase_add_test(tc, test_bad_env_value_keeps_default);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sp_check_run(recorder_suite(), false);
}
