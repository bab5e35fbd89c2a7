/* SPDX-License-Identifier: MIT */
/*
 * The streamed nesting (recorder/nest.c) against the commit's
 * (sp_writer_exclusive_rows, writer-finish.c): random call trees on several
 * lanes with a coarse clock, so that many calls share a start, an end or
 * both, and zero-length calls abound; calls fed in entry order must give
 * the same exclusive ns per row, and -1 everywhere when they do not nest.
 */
#include <check.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "nest.h"
#include "writer.h"
#include "check-main.h"

enum { ROWS = 6, MAXEV = 20000 };

struct call {
	int64_t s, e;
	uint32_t row, lane;
};

static struct call calls[MAXEV];
static size_t ncalls;
static unsigned seed;

static unsigned rnd(unsigned n)
{
	seed = seed * 1103515245u + 12345u;
	return (seed >> 16) % n;
}

/* A call and its subtree in entry order; the clock moves 0..2 ticks. */
static void tree(int64_t *t, uint32_t lane, int depth)
{
	if (ncalls == MAXEV)
		return;
	size_t me = ncalls++;
	calls[me] = (struct call){ .s = *t, .row = rnd(ROWS), .lane = lane };
	*t += rnd(3);
	unsigned kids = depth < 6 ? rnd(4) : 0;
	for (unsigned k = 0; k < kids; k++) {
		tree(t, lane, depth + 1);
		*t += rnd(2);
	}
	calls[me].e = *t;
}

/* The calls grouped by row (entry order within a row), as a file holds
 * them: offset and count per row, times and lanes per event. */
static int64_t start[MAXEV], end[MAXEV];
static uint32_t lane[MAXEV];
static uint64_t offset[ROWS], count[ROWS];

static void layout(void)
{
	memset(count, 0, sizeof count);
	for (size_t i = 0; i < ncalls; i++)
		count[calls[i].row]++;
	for (uint32_t r = 0, at = 0; r < ROWS; r++) {
		offset[r] = at;
		at += (uint32_t)count[r];
	}
	uint64_t fill[ROWS];
	memcpy(fill, offset, sizeof fill);
	for (size_t i = 0; i < ncalls; i++) {
		uint64_t at = fill[calls[i].row]++;
		start[at] = calls[i].s;
		end[at] = calls[i].e;
		lane[at] = calls[i].lane;
	}
}

/* Exclusive ns per row: the commit's (events grouped by row) and the
 * stream's (entry order, lane by lane). */
static void both(const uint32_t *pos, int64_t *want, int64_t *got)
{
	layout();
	ck_assert_int_eq(sp_writer_exclusive_rows(ROWS, offset, count, pos, start, end, lane, want),
			 0);
	struct sp_nest n;
	ck_assert_int_eq(sp_nest_init(&n, ROWS, pos), 0);
	for (size_t i = 0; i < ncalls; i++) {
		if (i && calls[i].lane != calls[i - 1].lane)
			ck_assert_int_eq(sp_nest_lane_end(&n), 0);
		ck_assert_int_eq(sp_nest_add(&n, calls[i].s, calls[i].e, calls[i].row), 0);
	}
	ck_assert_int_eq(sp_nest_lane_end(&n), 0);
	ck_assert(!n.disorder);
	for (uint32_t r = 0; r < ROWS; r++)
		got[r] = n.broken ? -1 : n.excl[r];
	sp_nest_free(&n);
}

START_TEST(test_random_trees)
{
	for (unsigned round = 0; round < 300; round++) {
		seed = round * 7919u + 1;
		ncalls = 0;
		for (uint32_t ln = 0; ln < 3; ln++) {
			int64_t t = rnd(5);
			unsigned roots = 1 + rnd(20);
			for (unsigned k = 0; k < roots; k++) {
				tree(&t, ln, 0);
				t += rnd(2);
			}
		}
		uint32_t pos[ROWS];
		for (uint32_t r = 0; r < ROWS; r++)
			pos[r] = r;
		for (uint32_t r = ROWS - 1; r > 0; r--) { /* a random region order */
			uint32_t j = rnd(r + 1), x = pos[r];
			pos[r] = pos[j];
			pos[j] = x;
		}
		int64_t want[ROWS], got[ROWS];
		both(pos, want, got);
		for (uint32_t r = 0; r < ROWS; r++)
			ck_assert_msg(want[r] == got[r], "round %u row %u: commit %lld, stream %lld",
				      round, r, (long long)want[r], (long long)got[r]);
	}
}
END_TEST

/* One lane (an MPI rank's usual case): sp_writer_exclusive_rows merges the
 * rows in start order into nest.c instead of sorting every call; the same
 * exclusive ns as the sort, also when a row is out of start order (it
 * sorts then) and when the calls do not nest. */
static void one_lane_check(const uint32_t *pos, const char *what, unsigned round, bool in_order)
{
	layout();
	int64_t merged[ROWS], sorted[ROWS], direct[ROWS];
	ck_assert_int_eq(sp_writer_exclusive_rows(ROWS, offset, count, pos, start, end, NULL, merged), 0);
	/* Rows in start order: the merge itself answers (1: it gave up). */
	int m = sp_writer_exclusive_rows_merged(ROWS, offset, count, pos, start, end, direct);
	ck_assert_int_eq(m, in_order ? 0 : m);
	for (uint32_t r = 0; m == 0 && r < ROWS; r++)
		ck_assert_int_eq(direct[r], merged[r]);
	ck_assert_int_eq(sp_writer_exclusive_rows_sorted(ROWS, offset, count, pos, start, end, NULL,
							 sorted), 0);
	for (uint32_t r = 0; r < ROWS; r++)
		ck_assert_msg(merged[r] == sorted[r], "%s round %u row %u: merged %lld, sorted %lld",
			      what, round, r, (long long)merged[r], (long long)sorted[r]);
}

START_TEST(test_one_lane_merge)
{
	for (unsigned round = 0; round < 300; round++) {
		seed = round * 104729u + 3;
		ncalls = 0;
		int64_t t = rnd(5);
		unsigned roots = 1 + rnd(40);
		for (unsigned k = 0; k < roots; k++) {
			tree(&t, 0, 0);
			t += rnd(2);
		}
		uint32_t pos[ROWS];
		for (uint32_t r = 0; r < ROWS; r++)
			pos[r] = (r * 5 + round) % ROWS;
		one_lane_check(pos, "nested", round, true);
		if (ncalls > 3) { /* a row out of start order: two calls swapped */
			size_t a = rnd((unsigned)ncalls), b = rnd((unsigned)ncalls);
			struct call x = calls[a];
			calls[a] = calls[b];
			calls[b] = x;
			one_lane_check(pos, "swapped", round, false);
		}
	}
}
END_TEST

START_TEST(test_not_nested)
{
	/* The second call starts inside the first and ends after it. */
	ncalls = 2;
	calls[0] = (struct call){ 0, 10, 0, 0 };
	calls[1] = (struct call){ 5, 15, 1, 0 };
	uint32_t pos[ROWS] = { 0, 1, 2, 3, 4, 5 };
	int64_t want[ROWS], got[ROWS];
	both(pos, want, got);
	for (uint32_t r = 0; r < ROWS; r++) {
		ck_assert_int_eq(want[r], -1);
		ck_assert_int_eq(got[r], -1);
	}
}
END_TEST

START_TEST(test_out_of_order_is_refused)
{
	uint32_t pos[2] = { 0, 1 };
	struct sp_nest n;
	ck_assert_int_eq(sp_nest_init(&n, 2, pos), 0);
	ck_assert_int_eq(sp_nest_add(&n, 10, 20, 0), 0);
	ck_assert_int_eq(sp_nest_add(&n, 5, 6, 1), 0);
	ck_assert(n.disorder); /* the caller leaves the nesting to the commit */
	sp_nest_free(&n);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("nest");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_random_trees);
	tcase_add_test(tc, test_one_lane_merge);
	tcase_add_test(tc, test_not_nested);
	tcase_add_test(tc, test_out_of_order_is_refused);
	suite_add_tcase(s, tc);
	return sp_check_run(s, false);
}
