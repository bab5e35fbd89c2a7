/* SPDX-License-Identifier: MIT */
/*
 * The hand-built cases of the Python project's tests (reference §6.3, cases
 * 1-7 and 9): statistics, time origins, call stack, exclusive time, nesting
 * edge cases and summary-table rows, on schema-1 files written here.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5-build.h"
#include "scope-profiler-reader.h"
#include "check-main.h"

#define TOL 1e-12

struct reg { unsigned rank; const char *name; int64_t s[4], e[4]; size_t n; };

static struct sp_reader *build(const char *stem, const struct reg *regs,
			       size_t n, hid_t *keep)
{
	const char *path = h5b_tmp(stem);
	hid_t f = h5b_create(path);
	struct sp_reader *r = NULL;

	for (size_t i = 0; i < n; i++)
		h5b_region(f, regs[i].rank, regs[i].name, regs[i].s, regs[i].e,
			   regs[i].n);
	if (keep) {
		*keep = f;
		return NULL;
	}
	h5b_close(f);
	ck_assert_msg(sp_reader_open(path, &r) == 0, "%s", sp_reader_last_error());
	unlink(path);
	return r;
}

static struct sp_reader *reopen(const char *stem, hid_t f)
{
	const char *path = h5b_tmp(stem);
	struct sp_reader *r = NULL;

	h5b_close(f);
	ck_assert_msg(sp_reader_open(path, &r) == 0, "%s", sp_reader_last_error());
	unlink(path);
	return r;
}

static struct sp_stats stats_of(struct sp_reader *r, const char *name)
{
	struct sp_stats st;
	int id = sp_reader_region_find(r, name);

	ck_assert_int_ge(id, 0);
	ck_assert_int_eq(sp_reader_region_stats(r, (uint32_t)id, NULL, &st), 0);
	return st;
}

START_TEST(case1_region_stats)
{
	struct reg regs[] = { { 0, "r", { S(0), S(10) }, { S(2), S(14) }, 2 } };
	struct sp_reader *r = build("case1", regs, 1, NULL);
	struct sp_stats st = stats_of(r, "r");

	ck_assert_uint_eq(st.num_calls, 2);
	ck_assert_double_eq_tol(st.total, 6, TOL);
	ck_assert_double_eq_tol(st.average, 3, TOL);
	ck_assert_double_eq_tol(st.min, 2, TOL);
	ck_assert_double_eq_tol(st.max, 4, TOL);
	ck_assert_double_eq_tol(st.std, 1.0, TOL);
	ck_assert_double_eq_tol(st.first, 2, TOL);
	ck_assert_double_eq_tol(st.last, 4, TOL);
	ck_assert_double_eq_tol(st.first_start, 0, TOL);
	ck_assert_double_eq_tol(st.last_end, 14, TOL);
	ck_assert_double_eq_tol(st.p50, 3.0, TOL);
	ck_assert_double_eq_tol(st.p95, 3.9, TOL);
	ck_assert_double_eq_tol(st.p99, 3.98, TOL);
	sp_reader_destroy(r);
}
END_TEST

START_TEST(case2_empty_region)
{
	struct reg regs[] = { { 0, "empty", { 0 }, { 0 }, 0 } };
	struct sp_reader *r = build("case2", regs, 1, NULL);
	struct sp_stats st = stats_of(r, "empty");

	ck_assert_uint_eq(st.num_calls, 0);
	ck_assert_double_eq(st.total, 0.0);
	ck_assert_double_eq(st.average, 0.0);
	ck_assert_double_eq(st.min, 0.0);
	ck_assert_double_eq(st.max, 0.0);
	ck_assert_double_eq(st.std, 0.0);
	ck_assert_double_eq(st.first, 0.0);
	ck_assert_double_eq(st.last, 0.0);
	ck_assert_double_eq(st.p50, 0.0);
	ck_assert_double_eq(st.p99, 0.0);
	ck_assert_double_eq(st.exclusive, 0.0);
	sp_reader_destroy(r);
}
END_TEST

static struct sp_reader *two_ranks(void)
{
	struct reg regs[] = {
		{ 0, "setup", { S(0) }, { S(1) }, 1 },
		{ 0, "solve", { S(2), S(5) }, { S(4), S(8) }, 2 },
		{ 1, "setup", { S(0) }, { S(3) }, 1 },
		{ 1, "solve", { S(2), S(5) }, { S(6), S(9) }, 2 },
	};
	return build("case3", regs, 4, NULL);
}

START_TEST(case3_two_ranks)
{
	struct sp_reader *r = two_ranks();
	struct sp_stats st = stats_of(r, "solve"), su = stats_of(r, "setup");
	uint32_t *ids = NULL;
	long row;

	ck_assert_uint_eq(sp_reader_num_ranks(r), 2);
	ck_assert_uint_eq(st.num_calls, 4);
	ck_assert_uint_eq(st.num_ranks, 2);
	ck_assert_double_eq_tol(st.total, 13, TOL);
	ck_assert_double_eq_tol(st.average, 3.25, TOL);
	ck_assert_double_eq_tol(st.min, 2, TOL);
	ck_assert_double_eq_tol(st.max, 4, TOL);
	ck_assert_double_eq_tol(st.first_start, 2, TOL);
	ck_assert_double_eq_tol(st.last_end, 9, TOL);
	ck_assert_double_eq_tol(st.first, 2, TOL);
	ck_assert_double_eq_tol(st.last, 4, TOL);
	ck_assert_double_eq_tol(st.p50, 3.5, TOL);
	ck_assert_double_eq_tol(st.p95, 4.0, TOL);
	ck_assert_double_eq_tol(st.rank_imbalance, 8 / 6.5, TOL);
	ck_assert_double_eq_tol(st.rank_imbalance_pct, (8 / 6.5 - 1) * 100, 1e-9);
	ck_assert_double_eq_tol(su.std, 1.0, TOL);
	ck_assert_double_eq_tol(st.std, 0.82915619758885, 1e-12);
	row = sp_reader_row_find(r, (uint32_t)sp_reader_region_find(r, "solve"), 0);
	ck_assert_int_ge(row, 0);
	{
		struct sp_stats r0;

		ck_assert_int_eq(sp_reader_row_stats(r, (size_t)row, &r0), 0);
		ck_assert_double_eq_tol(r0.total, 5, TOL);
	}
	/* get_regions order: setup (first start 0) before solve (2). */
	ck_assert_int_eq(sp_reader_regions(r, NULL, &ids), 2);
	ck_assert_str_eq(sp_reader_region_name(r, ids[0]), "setup");
	ck_assert_str_eq(sp_reader_region_name(r, ids[1]), "solve");
	free(ids);
	ck_assert_uint_eq(sp_reader_num_events(r), 6);
	sp_reader_destroy(r);
}
END_TEST

/* Without spread: the same sums, std and percentiles NAN; the full
 * statistics asked afterwards still have them (no spread-less cache). */
START_TEST(case3_stats_no_spread)
{
	struct sp_reader *r = two_ranks();
	uint32_t solve = (uint32_t)sp_reader_region_find(r, "solve");
	long row = sp_reader_row_find(r, solve, 1);
	struct sp_stats ns, full, rns, rfull;

	ck_assert_int_eq(sp_reader_region_stats_flags(r, solve, NULL, SP_STATS_NO_SPREAD, &ns), 0);
	ck_assert_uint_eq(ns.num_calls, 4);
	ck_assert_double_eq_tol(ns.total, 13, TOL);
	ck_assert_double_eq_tol(ns.average, 3.25, TOL);
	ck_assert_double_eq_tol(ns.rank_imbalance, 8 / 6.5, TOL);
	ck_assert(isnan(ns.std) && isnan(ns.p50) && isnan(ns.p95) && isnan(ns.p99));
	ck_assert(!ns.has_percentiles);
	ck_assert_int_eq(sp_reader_region_stats(r, solve, NULL, &full), 0);
	ck_assert(full.has_percentiles);
	ck_assert_double_eq_tol(full.p50, 3.5, TOL);
	ck_assert_double_eq_tol(full.std, 0.82915619758885, 1e-12);
	ck_assert(full.total == ns.total && full.exclusive == ns.exclusive &&
		  full.min == ns.min && full.max == ns.max);
	/* Cached full statistics, asked without spread: still without. */
	ck_assert_int_eq(sp_reader_region_stats_flags(r, solve, NULL, SP_STATS_NO_SPREAD, &ns), 0);
	ck_assert(isnan(ns.std) && isnan(ns.p99) && ns.total == full.total);
	ck_assert_int_ge(row, 0);
	ck_assert_int_eq(sp_reader_row_stats_flags(r, (size_t)row, SP_STATS_NO_SPREAD, &rns), 0);
	ck_assert_int_eq(sp_reader_row_stats(r, (size_t)row, &rfull), 0);
	ck_assert_double_eq_tol(rns.total, 8, TOL);
	ck_assert(rns.total == rfull.total && rns.average == rfull.average);
	ck_assert(isnan(rns.p50) && !isnan(rfull.p50));
	ck_assert_int_eq(sp_reader_row_stats_flags(r, 99, SP_STATS_NO_SPREAD, &rns), -ENOENT);
	sp_reader_destroy(r);
}
END_TEST

START_TEST(case3_sorted_rows)
{
	struct sp_reader *r = two_ranks();
	struct sp_summary *s;

	ck_assert_int_eq(sp_summary_build(r, NULL, SP_SORT_MIN, &s), 0);
	ck_assert_uint_eq(sp_summary_count(s), 2);
	ck_assert_str_eq(sp_summary_get(s, 0)->name, "solve");
	ck_assert_str_eq(sp_summary_get(s, 1)->name, "setup");
	sp_summary_destroy(s);
	ck_assert_int_eq(sp_summary_build(r, NULL, SP_SORT_STD, &s), 0);
	ck_assert_str_eq(sp_summary_get(s, 0)->name, "setup");
	ck_assert_double_eq_tol(sp_summary_get(s, 1)->std, 0.82915619758885, 1e-12);
	sp_summary_destroy(s);
	sp_reader_destroy(r);
}
END_TEST

START_TEST(case4_origins)
{
	struct reg regs[] = { { 0, "solve", { S(100), S(130) }, { S(110), S(140) }, 2 } };
	struct sp_reader *r = build("case4a", regs, 1, NULL);
	struct sp_times t;
	hid_t f;

	sp_reader_times(r, &t);
	ck_assert(!t.has_run_start);
	ck_assert_double_eq_tol(t.time_origin, 100, TOL);
	ck_assert_double_eq_tol(t.time_span, 40, TOL);
	ck_assert_double_eq(t.startup_time, 0.0);
	sp_reader_destroy(r);

	build("case4b", regs, 1, &f);
	h5b_meta_int(f, "start_time_ns", S(80));
	r = reopen("case4b", f);
	sp_reader_times(r, &t);
	ck_assert(t.has_run_start);
	ck_assert_double_eq_tol(t.time_origin, 80, TOL);
	ck_assert_double_eq_tol(t.startup_time, 20, TOL);
	ck_assert_double_eq_tol(t.minimum_start_time, 100, TOL);
	ck_assert(!t.has_total_time);
	sp_reader_destroy(r);

	build("case4c", regs, 1, &f);
	h5b_meta_str(f, "start_time_ns", "not a number");
	r = reopen("case4c", f);
	sp_reader_times(r, &t);
	ck_assert(!t.has_run_start);
	sp_reader_destroy(r);

	{
		struct reg one[] = { { 0, "solve", { S(100) }, { S(130) }, 1 } };

		build("case4d", one, 1, &f);
	}
	h5b_meta_int(f, "start_time_ns", S(80));
	h5b_meta_int(f, "finalize_time_ns", S(140));
	r = reopen("case4d", f);
	sp_reader_times(r, &t);
	ck_assert(t.has_total_time);
	ck_assert_double_eq_tol(t.total_time, 60, TOL);
	ck_assert_double_eq_tol(t.time_span, 30, TOL);
	sp_reader_destroy(r);
}
END_TEST

static struct sp_call_stack *stack_of(struct sp_reader *r, const char *exclude)
{
	struct sp_selection *sel = NULL;
	struct sp_call_stack *cs = NULL;

	ck_assert_int_eq(sp_selection_create(&sel), 0);
	if (exclude)
		ck_assert_int_eq(sp_selection_add_exclude(sel, exclude), 0);
	ck_assert_msg(sp_call_stack_build(r, 0, INT64_MIN, sel, &cs) == 0, "%s",
		      sp_reader_last_error());
	sp_selection_destroy(sel);
	return cs;
}

START_TEST(case5_call_stack)
{
	struct reg regs[] = {
		{ 0, "outer", { 10 }, { 110 }, 1 },
		{ 0, "inner", { 20, 60 }, { 50, 100 }, 2 },
		{ 0, "leaf", { 25 }, { 30 }, 1 },
	};
	static const char *const names[] = { "outer", "inner", "leaf", "inner" };
	static const int depth[] = { 0, 1, 2, 1 }, parent[] = { -1, 0, 1, 0 };
	static const char *const paths[] = { "outer", "outer > inner",
		"outer > inner > leaf", "outer > inner" };
	struct sp_reader *r = build("case5", regs, 3, NULL);
	struct sp_call_stack *cs = stack_of(r, NULL);
	struct sp_call c;
	char buf[256];

	ck_assert_uint_eq(sp_call_stack_count(cs), 4);
	for (size_t i = 0; i < 4; i++) {
		ck_assert_int_eq(sp_call_stack_get(cs, i, &c), 0);
		ck_assert_str_eq(sp_reader_region_name(r, c.region), names[i]);
		ck_assert_int_eq(c.depth, depth[i]);
		ck_assert_int_eq(c.parent, parent[i]);
		sp_call_stack_path(cs, r, i, buf, sizeof(buf));
		ck_assert_str_eq(buf, paths[i]);
	}
	sp_call_stack_destroy(cs);
	cs = stack_of(r, "inner");
	ck_assert_uint_eq(sp_call_stack_count(cs), 2);
	sp_call_stack_get(cs, 0, &c);
	ck_assert_int_eq(c.depth, 0);
	sp_call_stack_get(cs, 1, &c);
	ck_assert_int_eq(c.depth, 1);
	ck_assert_str_eq(sp_reader_region_name(r, c.region), "leaf");
	sp_call_stack_destroy(cs);
	sp_reader_destroy(r);
}
END_TEST

/* sp_call_stack_walk hands over the calls of sp_call_stack_build, in order. */
struct walked {
	struct sp_call c[8];
	size_t n;
};

static int walk_collect(void *data, const struct sp_call *c)
{
	struct walked *w = data;

	if (w->n == 8)
		return -E2BIG;
	w->c[w->n++] = *c;
	return 0;
}

START_TEST(case5_call_stack_walk)
{
	struct reg regs[] = {
		{ 0, "outer", { 10 }, { 110 }, 1 },
		{ 0, "inner", { 20, 60 }, { 50, 100 }, 2 },
		{ 0, "leaf", { 25 }, { 30 }, 1 },
	};
	struct sp_reader *r = build("case5w", regs, 3, NULL);
	struct sp_call_stack *cs = stack_of(r, NULL);
	struct walked w = { .n = 0 };
	struct sp_call c;

	ck_assert_int_eq(sp_call_stack_walk(r, 0, INT64_MIN, NULL, walk_collect, &w), 0);
	ck_assert_uint_eq(w.n, sp_call_stack_count(cs));
	for (size_t i = 0; i < w.n; i++) {
		sp_call_stack_get(cs, i, &c);
		ck_assert_uint_eq(w.c[i].region, c.region);
		ck_assert_uint_eq(w.c[i].event, c.event);
		ck_assert_uint_eq(w.c[i].call_index, c.call_index);
		ck_assert_int_eq(w.c[i].depth, c.depth);
		ck_assert_int_eq(w.c[i].start_ns, c.start_ns);
		ck_assert_int_eq(w.c[i].end_ns, c.end_ns);
		ck_assert_int_eq(w.c[i].lane, c.lane);
		ck_assert_int_eq(w.c[i].parent, -1);
	}
	/* The callback's error stops the walk; no such rank. */
	w.n = 8;
	ck_assert_int_eq(sp_call_stack_walk(r, 0, INT64_MIN, NULL, walk_collect, &w), -E2BIG);
	ck_assert_int_eq(sp_call_stack_walk(r, 7, INT64_MIN, NULL, walk_collect, &w), -ENOENT);
	sp_call_stack_destroy(cs);
	sp_reader_destroy(r);
}
END_TEST

static void check_stack(const struct reg *regs, size_t n, size_t calls,
			const int *depth, const int *parent, const int64_t *excl)
{
	struct sp_reader *r = build("stack", regs, n, NULL);
	struct sp_call_stack *cs = stack_of(r, NULL);
	struct sp_call c;

	ck_assert_uint_eq(sp_call_stack_count(cs), calls);
	for (size_t i = 0; i < calls; i++) {
		sp_call_stack_get(cs, i, &c);
		ck_assert_int_eq(c.depth, depth[i]);
		if (parent)
			ck_assert_int_eq(c.parent, parent[i]);
		if (excl)
			ck_assert_int_eq(c.exclusive_ns, excl[i]);
	}
	sp_call_stack_destroy(cs);
	sp_reader_destroy(r);
}

START_TEST(case6_exclusive)
{
	struct reg a[] = {
		{ 0, "outer", { 0 }, { 100 }, 1 },
		{ 0, "inner", { 10, 50 }, { 40, 90 }, 2 },
		{ 0, "leaf", { 15 }, { 20 }, 1 },
	};
	struct reg b[] = {
		{ 0, "outer", { 0 }, { 100 }, 1 },
		{ 0, "first", { 10 }, { 30 }, 1 },
		{ 0, "second", { 50 }, { 80 }, 1 },
	};
	struct reg c[] = {
		{ 0, "outer", { 0, 200 }, { 100, 300 }, 2 },
		{ 0, "inner", { 10 }, { 40 }, 1 },
	};
	static const int da[] = { 0, 1, 2, 1 }, pa[] = { -1, 0, 1, 0 };
	static const int64_t xa[] = { 30, 25, 5, 40 };
	static const int db[] = { 0, 1, 1 };
	static const int64_t xb[] = { 50, 20, 30 };
	struct sp_reader *r;

	check_stack(a, 3, 4, da, pa, xa);
	check_stack(b, 3, 3, db, NULL, xb);
	r = build("case6c", c, 2, NULL);
	ck_assert_int_eq(stats_of(r, "outer").exclusive_ns, 170);
	ck_assert_int_eq(stats_of(r, "inner").exclusive_ns, 30);
	sp_reader_destroy(r);
}
END_TEST

START_TEST(case7_edges)
{
	struct reg touch[] = { { 0, "a", { 0, 10 }, { 10, 20 }, 2 } };
	struct reg fib[] = { { 0, "fib", { 0, 10, 60 }, { 100, 90, 80 }, 3 } };
	struct reg ticks[] = {
		{ 0, "outer", { 0 }, { 100 }, 1 },
		{ 0, "tick", { 0, 50 }, { 0, 50 }, 2 },
	};
	struct reg eq[] = {
		{ 0, "inner", { 5 }, { 40 }, 1 },
		{ 0, "outer", { 5 }, { 100 }, 1 },
	};
	static const int d00[] = { 0, 0 }, d012[] = { 0, 1, 2 }, d011[] = { 0, 1, 1 };
	static const int64_t xt[] = { 100, 0, 0 };
	static const int p01[] = { -1, 0 };
	struct sp_call_stack *cs;
	struct sp_reader *r;
	struct sp_call c;

	check_stack(touch, 1, 2, d00, NULL, NULL);
	check_stack(fib, 1, 3, d012, NULL, NULL);
	check_stack(ticks, 2, 3, d011, NULL, xt);
	r = build("case7eq", eq, 2, NULL);
	cs = stack_of(r, NULL);
	sp_call_stack_get(cs, 0, &c);
	ck_assert_str_eq(sp_reader_region_name(r, c.region), "outer");
	sp_call_stack_get(cs, 1, &c);
	ck_assert_int_eq(c.parent, p01[1]);
	ck_assert_int_eq(c.depth, 1);
	sp_call_stack_destroy(cs);
	sp_reader_destroy(r);
}
END_TEST

START_TEST(case7_errors)
{
	struct reg bad[] = {
		{ 0, "short", { 0 }, { 50 }, 1 },
		{ 0, "long", { 10 }, { 200 }, 1 },
	};
	struct reg back[] = { { 0, "b", { 100 }, { 10 }, 1 } };
	struct sp_call_stack *cs = NULL;
	struct sp_reader *r = build("case7bad", bad, 2, NULL);
	const char *msg;

	ck_assert_int_eq(sp_call_stack_build(r, 0, INT64_MIN, NULL, &cs), -SP_E_NESTING);
	msg = sp_reader_last_error();
	ck_assert_ptr_nonnull(strstr(msg, "'long' call 0 [10, 200] ns starts inside 'short' call 0 [0, 50] ns but ends after it"));
	ck_assert_ptr_nonnull(strstr(msg, "recorded calls are not properly nested"));
	ck_assert(!stats_of(r, "long").has_exclusive);
	ck_assert_ptr_nonnull(sp_reader_nesting_problem(r));
	sp_reader_destroy(r);
	r = build("case7back", back, 1, NULL);
	ck_assert_int_eq(sp_call_stack_build(r, 0, INT64_MIN, NULL, &cs), -SP_E_NESTING);
	ck_assert_ptr_nonnull(strstr(sp_reader_last_error(), "ends before it starts"));
	sp_reader_destroy(r);
}
END_TEST

static struct sp_reader *session_file(void)
{
	struct reg regs[] = {
		{ 0, "scope_profiler.session", { S(0) }, { S(10) }, 1 },
		{ 0, "work", { S(1) }, { S(9) }, 1 },
		{ 0, "leaf", { S(2), S(5) }, { S(3), S(7) }, 2 },
	};
	return build("case9", regs, 3, NULL);
}

START_TEST(case9_summary_rows)
{
	static const char *const names[] = { "scope_profiler.session",
		"scope_profiler.session", "work", "work", "leaf" };
	static const bool own[] = { false, true, false, true, false };
	static const int depth[] = { 0, 1, 1, 2, 2 };
	static const double pct[] = { 100, 20, 80, 50, 30 };
	static const double total[] = { 10, 2, 8, 5, 3 };
	struct sp_reader *r = session_file();
	struct sp_summary *s;

	ck_assert_int_eq(sp_summary_build(r, NULL, SP_SORT_START, &s), 0);
	ck_assert(sp_summary_has_session(s));
	ck_assert_uint_eq(sp_summary_count(s), 5);
	for (size_t i = 0; i < 5; i++) {
		const struct sp_summary_row *row = sp_summary_get(s, i);

		ck_assert_str_eq(row->name, names[i]);
		ck_assert_int_eq(row->own, own[i]);
		ck_assert_int_eq(row->depth, depth[i]);
		ck_assert_double_eq_tol(row->percent, pct[i], 1e-9);
		ck_assert_double_eq_tol(row->total, total[i], TOL);
	}
	ck_assert_uint_eq(sp_summary_get(s, 4)->calls, 2);
	ck_assert_double_eq_tol(sp_summary_get(s, 1)->avg, 2.0, TOL);
	ck_assert_double_eq_tol(sp_summary_get(s, 3)->avg, 5.0, TOL);
	sp_summary_destroy(s);
	sp_reader_destroy(r);
}
END_TEST

/* Without spread: the same rows, std and percentiles NAN. */
START_TEST(case9_summary_no_spread)
{
	struct sp_reader *r = session_file();
	struct sp_summary *s, *ns;

	ck_assert_int_eq(sp_summary_build(r, NULL, SP_SORT_START, &s), 0);
	ck_assert_int_eq(sp_summary_build_flags(r, NULL, SP_SORT_START,
						SP_SUMMARY_NO_SPREAD, &ns), 0);
	ck_assert_uint_eq(sp_summary_count(ns), sp_summary_count(s));
	for (size_t i = 0; i < sp_summary_count(s); i++) {
		const struct sp_summary_row *a = sp_summary_get(s, i);
		const struct sp_summary_row *b = sp_summary_get(ns, i);

		ck_assert_str_eq(a->name, b->name);
		ck_assert_uint_eq(a->calls, b->calls);
		ck_assert_int_eq(a->total_ns, b->total_ns);
		ck_assert(memcmp(&a->avg, &b->avg, sizeof(double)) == 0);
		ck_assert(memcmp(&a->min, &b->min, sizeof(double)) == 0);
		ck_assert(memcmp(&a->max, &b->max, sizeof(double)) == 0);
		ck_assert(isnan(b->std) && isnan(b->p50) && isnan(b->p95) && isnan(b->p99));
	}
	sp_summary_destroy(ns);
	/* Sorting by a percentile needs them: the flag is ignored. */
	ck_assert_int_eq(sp_summary_build_flags(r, NULL, SP_SORT_P50,
						SP_SUMMARY_NO_SPREAD, &ns), 0);
	ck_assert(!isnan(sp_summary_get(ns, 0)->p50));
	sp_summary_destroy(ns);
	sp_summary_destroy(s);
	sp_reader_destroy(r);
}
END_TEST

START_TEST(case9_filtered_exclusive)
{
	struct sp_reader *r = session_file();
	struct sp_selection *sel;
	uint32_t *ids = NULL;
	struct sp_stats st;

	sp_selection_create(&sel);
	ck_assert_int_eq(sp_selection_add_include(sel, "work|leaf"), 0);
	ck_assert_int_eq(sp_reader_regions(r, sel, &ids), 2);
	ck_assert_str_eq(sp_reader_region_name(r, ids[0]), "work");
	ck_assert_int_eq(sp_reader_region_stats(r, ids[0], sel, &st), 0);
	ck_assert_double_eq_tol(st.exclusive, 5.0, TOL);
	free(ids);
	sp_selection_destroy(sel);
	sp_reader_destroy(r);
}
END_TEST

START_TEST(selection_re_match)
{
	struct sp_selection *sel;

	sp_selection_create(&sel);
	ck_assert_int_eq(sp_selection_add_include(sel, "s"), 0);
	ck_assert(sp_selection_match_name(sel, "setup"));
	ck_assert(sp_selection_match_name(sel, "solve"));
	ck_assert(!sp_selection_match_name(sel, "assemble")); /* anchored */
	ck_assert_int_eq(sp_selection_add_exclude(sel, "set"), 0);
	ck_assert(!sp_selection_match_name(sel, "setup"));
	ck_assert_int_eq(sp_selection_add_include(sel, "("), -EINVAL);
	ck_assert_int_eq(sp_selection_add_ranks(sel, "0,2,4-7"), 0);
	ck_assert(sp_selection_match_rank(sel, 5));
	ck_assert(!sp_selection_match_rank(sel, 3));
	ck_assert_int_eq(sp_selection_add_ranks(sel, "1-"), -EINVAL);
	ck_assert_int_eq(sp_selection_add_ranks(sel, "x"), -EINVAL);
	sp_selection_destroy(sel);
}
END_TEST

START_TEST(percentile_numpy)
{
	int64_t v[] = { 5, 1, 4, 2, 3 };

	/* numpy.percentile([1,2,3,4,5] ns -> s, q) */
	ck_assert_double_eq_tol(sp_percentile_ns(v, 5, 50), 3e-9, 1e-21);
	ck_assert_double_eq_tol(sp_percentile_ns(v, 5, 95), 4.8e-9, 1e-21);
	ck_assert_double_eq_tol(sp_percentile_ns(v, 5, 0), 1e-9, 1e-21);
	ck_assert_double_eq_tol(sp_percentile_ns(v, 5, 100), 5e-9, 1e-21);
}
END_TEST

static Suite *analysis_suite(void)
{
	Suite *s = suite_create("analysis");
	TCase *tc = tcase_create("cases");

	tcase_add_test(tc, case1_region_stats);
	tcase_add_test(tc, case2_empty_region);
	tcase_add_test(tc, case3_two_ranks);
	tcase_add_test(tc, case3_stats_no_spread);
	tcase_add_test(tc, case3_sorted_rows);
	tcase_add_test(tc, case4_origins);
	tcase_add_test(tc, case5_call_stack);
	tcase_add_test(tc, case5_call_stack_walk);
	tcase_add_test(tc, case6_exclusive);
	tcase_add_test(tc, case7_edges);
	tcase_add_test(tc, case7_errors);
	tcase_add_test(tc, case9_summary_rows);
	tcase_add_test(tc, case9_summary_no_spread);
	tcase_add_test(tc, case9_filtered_exclusive);
	tcase_add_test(tc, selection_re_match);
	tcase_add_test(tc, percentile_numpy);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	return sp_check_run(analysis_suite(), false);
}
