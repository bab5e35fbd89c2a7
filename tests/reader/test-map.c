/* SPDX-License-Identifier: MIT */
/*
 * SP_OPEN_MAP_COLUMNS: contiguous native int64 event columns are mapped
 * from the file (seen in /proc/self/maps) and give the same values and
 * statistics as reading; chunked/deflated and delta-encoded (schema 3)
 * columns are read; a mapped file truncated meanwhile raises SIGBUS.
 * Also the exclusive-time pass that spreads ranks over threads (files of
 * >= 1 M events): exact sums, and the first nesting problem in rank order.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5-build.h"
#include "scope-profiler-reader.h"
#include "check-main.h"

/* Is path mapped into this process? */
static bool is_mapped(const char *path)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	bool found = false;

	ck_assert_ptr_nonnull(f);
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, path) != NULL;
	fclose(f);
	return found;
}

/* Rank 0: a [0,100] holding b [10,40], b [50,90]; rank 1: a [0,200] holding
 * b [20,120]. Exclusive: a 30 + 100, b 70 + 100. */
static const char *const names2[] = { "a", "b" };
static const uint32_t nest_reg[] = { 0, 1, 0, 1 }, nest_rank[] = { 0, 0, 1, 1 };
static const uint64_t nest_off[] = { 0, 1, 3, 4 }, nest_cnt[] = { 1, 2, 1, 1 };
static const int64_t nest_s[] = { 0, 10, 50, 0, 20 };
static const int64_t nest_e[] = { 100, 40, 90, 200, 120 };

static const char *write_nested(const char *stem)
{
	const char *path = h5b_tmp(stem);
	hid_t f = h5b_create(path);

	h5b_root_int(f, SP_ATTR_SCHEMA, 2);
	h5b_root_str(f, SP_ATTR_STORAGE_LAYOUT, SP_STORAGE_COLUMNAR);
	h5b_columnar(f, names2, 2, nest_reg, nest_rank, nest_off, nest_cnt, 4,
		     nest_s, nest_e, 5);
	h5b_close(f);
	return path;
}

/* Same events, same statistics. */
static void same_readers(struct sp_reader *a, struct sp_reader *b)
{
	size_t n = sp_reader_num_events(a);

	ck_assert_uint_eq(n, sp_reader_num_events(b));
	ck_assert_uint_eq(sp_reader_num_rows(a), sp_reader_num_rows(b));
	for (int c = 0; c < SP_COL_COUNT; c++) {
		const int64_t *x = sp_reader_column(a, c), *y = sp_reader_column(b, c);

		ck_assert_int_eq(x == NULL, y == NULL);
		for (size_t k = 0; x && k < n; k++)
			ck_assert_int_eq(x[k], y[k]);
	}
	for (uint32_t g = 0; g < sp_reader_num_regions(a); g++) {
		struct sp_stats x, y;

		ck_assert_int_eq(sp_reader_region_stats(a, g, NULL, &x), 0);
		ck_assert_int_eq(sp_reader_region_stats(b, g, NULL, &y), 0);
		ck_assert_uint_eq(x.num_calls, y.num_calls);
		ck_assert_int_eq(x.total_ns, y.total_ns);
		ck_assert_int_eq(x.exclusive_ns, y.exclusive_ns);
		ck_assert(x.p50 == y.p50 && x.p99 == y.p99 && x.std == y.std);
	}
}

START_TEST(mapped_same_as_read)
{
	const char *path = write_nested("map");
	struct sp_reader *rd, *mp;
	struct sp_stats st;

	ck_assert_int_eq(sp_reader_open_flags(path, 0, &rd), 0);
	ck_assert(!is_mapped(path));
	ck_assert_int_eq(sp_reader_open_flags(path, SP_OPEN_MAP_COLUMNS, &mp), 0);
	ck_assert(is_mapped(path));
	same_readers(rd, mp);
	ck_assert_int_eq(sp_reader_region_stats(mp, 0, NULL, &st), 0);
	ck_assert_int_eq(st.total_ns, 300);
	ck_assert_int_eq(st.exclusive_ns, 130);
	ck_assert_int_eq(sp_reader_region_stats(mp, 1, NULL, &st), 0);
	ck_assert_int_eq(st.exclusive_ns, 170);
	sp_reader_destroy(mp);
	ck_assert(!is_mapped(path)); /* unmapped with the reader */
	sp_reader_destroy(rd);
	unlink(path);
	ck_assert_int_eq(sp_reader_open_flags(path, 2, &rd), -EINVAL);
}
END_TEST

/* A user block (h5py's userblock_size) shifts every address in the file. */
START_TEST(user_block)
{
	const char *path = h5b_tmp("userblock");
	hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), f;
	struct sp_reader *rd, *mp;

	H5Pset_userblock(fcpl, 512);
	f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
	H5Pclose(fcpl);
	h5b_root_int(f, SP_ATTR_SCHEMA, 2);
	h5b_root_str(f, SP_ATTR_STORAGE_LAYOUT, SP_STORAGE_COLUMNAR);
	h5b_columnar(f, names2, 2, nest_reg, nest_rank, nest_off, nest_cnt, 4,
		     nest_s, nest_e, 5);
	h5b_close(f);
	ck_assert_int_eq(sp_reader_open_flags(path, 0, &rd), 0);
	ck_assert_int_eq(sp_reader_open_flags(path, SP_OPEN_MAP_COLUMNS, &mp), 0);
	ck_assert(is_mapped(path));
	same_readers(rd, mp);
	ck_assert_int_eq(sp_reader_column(mp, SP_COL_END_TIMES)[4], 120);
	sp_reader_destroy(mp);
	sp_reader_destroy(rd);
	unlink(path);
}
END_TEST

START_TEST(chunked_columns_are_read)
{
	const char *path;
	struct sp_reader *rd, *mp;

	h5b_events_chunk = 2;
	path = write_nested("chunked");
	h5b_events_chunk = 0;
	ck_assert_int_eq(sp_reader_open_flags(path, 0, &rd), 0);
	ck_assert_int_eq(sp_reader_open_flags(path, SP_OPEN_MAP_COLUMNS, &mp), 0);
	ck_assert(!is_mapped(path));
	same_readers(rd, mp);
	sp_reader_destroy(mp);
	sp_reader_destroy(rd);
	unlink(path);
}
END_TEST

/* Files the Python project wrote: schema 2 maps, schema 3 (deltas) reads. */
START_TEST(python_fixtures)
{
	static const char *const files[] = { "hdf5-schema-2.h5", "hdf5-schema-3.h5" };
	const char *dir = getenv("SP_FIXTURES");
	char path[4096];

	ck_assert_ptr_nonnull(dir);
	for (int i = 0; i < 2; i++) {
		struct sp_reader *rd, *mp;

		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		ck_assert_int_eq(sp_reader_open_flags(path, 0, &rd), 0);
		ck_assert_int_eq(sp_reader_open_flags(path, SP_OPEN_MAP_COLUMNS, &mp), 0);
		ck_assert_msg(is_mapped(files[i]) == (i == 0), "%s mapped: %d",
			      files[i], is_mapped(files[i]));
		same_readers(rd, mp);
		sp_reader_destroy(mp);
		sp_reader_destroy(rd);
	}
}
END_TEST

static void on_sigbus(int sig)
{
	(void)sig;
	_exit(42);
}

/*
 * The hazard the flag documents: the process must handle SIGBUS. (Own
 * handler, as sanitizers install theirs and report a plain exit 1.)
 */
START_TEST(truncated_while_mapped)
{
	const char *path = write_nested("trunc");
	struct sp_reader *mp;
	volatile int64_t v;

	signal(SIGBUS, on_sigbus);
	ck_assert_int_eq(sp_reader_open_flags(path, SP_OPEN_MAP_COLUMNS, &mp), 0);
	ck_assert_int_eq(truncate(path, 0), 0);
	unlink(path);
	v = sp_reader_column(mp, SP_COL_START_TIMES)[0]; /* SIGBUS: exit 42 */
	(void)v;
	sp_reader_destroy(mp);
}
END_TEST

enum { CALLS = 1 << 18, RANKS = 4 };

/*
 * 4 ranks x 2^18 calls of a, each holding one b: a [100i, 100i + 80],
 * b [100i + 10, 100i + 30 + rank]. With crossing, the last b on ranks 1
 * and 3 ends at 100i + 95, after its a. 2 M events: the threaded passes.
 */
static struct sp_reader *open_threads_file(bool crossing)
{
	const char *path = h5b_tmp(crossing ? "threads-x" : "threads");
	size_t n = (size_t)RANKS * 2 * CALLS;
	int64_t *s = malloc(n * sizeof(*s)), *e = malloc(n * sizeof(*e));
	uint32_t reg[2 * RANKS], rank[2 * RANKS];
	uint64_t off[2 * RANKS], cnt[2 * RANKS];
	struct sp_reader *r;
	hid_t f;

	ck_assert(s && e);
	for (uint32_t k = 0; k < RANKS; k++) {
		for (int g = 0; g < 2; g++) {
			size_t row = 2 * k + (size_t)g, base = row * CALLS;

			reg[row] = (uint32_t)g;
			rank[row] = k;
			off[row] = base;
			cnt[row] = CALLS;
			for (size_t i = 0; i < CALLS; i++) {
				int64_t t = (int64_t)i * 100;

				s[base + i] = g ? t + 10 : t;
				e[base + i] = g ? t + 30 + k : t + 80;
			}
		}
		if (crossing && k % 2)
			e[(2 * k + 1) * CALLS + CALLS - 1] = (int64_t)(CALLS - 1) * 100 + 95;
	}
	f = h5b_create(path);
	h5b_root_int(f, SP_ATTR_SCHEMA, 2);
	h5b_root_str(f, SP_ATTR_STORAGE_LAYOUT, SP_STORAGE_COLUMNAR);
	h5b_columnar(f, names2, 2, reg, rank, off, cnt, 2 * RANKS, s, e, n);
	h5b_close(f);
	free(s);
	free(e);
	ck_assert_int_eq(sp_reader_open_flags(path, SP_OPEN_MAP_COLUMNS, &r), 0);
	unlink(path);
	return r;
}

/* Ranks 1 and 3 have no exclusive times; the problem reported is rank 1's. */
START_TEST(threaded_exclusive)
{
	struct sp_reader *r = open_threads_file(true);
	const char *problem = sp_reader_nesting_problem(r);
	struct sp_summary *sum;

	ck_assert_ptr_nonnull(problem);
	ck_assert_msg(strstr(problem, ": rank 1: ") != NULL, "%s", problem);
	for (size_t row = 0; row < 2 * RANKS; row++) {
		const struct sp_row *rw = sp_reader_row(r, row);
		struct sp_stats st;
		int64_t b = 20 + (int64_t)rw->rank;

		ck_assert_int_eq(sp_reader_row_stats(r, row, &st), 0);
		ck_assert_int_eq(st.has_exclusive, rw->rank % 2 == 0);
		if (!st.has_exclusive)
			continue;
		ck_assert_int_eq(st.exclusive_ns,
				 (int64_t)CALLS * (rw->region ? b : 80 - b));
	}
	/* The call tree cannot be built: the summary lists regions flat. */
	ck_assert_int_eq(sp_summary_build(r, NULL, SP_SORT_START, &sum), 0);
	ck_assert(sp_summary_is_flat(sum));
	sp_summary_destroy(sum);
	sp_reader_destroy(r);
}
END_TEST

/*
 * The call tree folded per rank on threads and merged: a (4 x 2^18 calls,
 * 80 ns each), its own time, b under it (20 + rank ns): exact totals,
 * imbalance 23 / 21.5 - 1, p50 of b between 21 and 22 ns.
 */
START_TEST(threaded_summary_tree)
{
	struct sp_reader *r = open_threads_file(false);
	const int64_t c = CALLS;
	struct sp_summary *sum;
	const struct sp_summary_row *a, *own, *b;

	ck_assert_int_eq(sp_summary_build(r, NULL, SP_SORT_START, &sum), 0);
	ck_assert(!sp_summary_is_flat(sum));
	ck_assert_uint_eq(sp_summary_count(sum), 3);
	a = sp_summary_get(sum, 0);
	own = sp_summary_get(sum, 1);
	b = sp_summary_get(sum, 2);
	ck_assert_str_eq(a->name, "a");
	ck_assert(!a->own && a->depth == 0 && a->num_ranks == RANKS);
	ck_assert_uint_eq(a->calls, RANKS * c);
	ck_assert_int_eq(a->total_ns, RANKS * c * 80);
	ck_assert(own->own && own->depth == 1);
	ck_assert_int_eq(own->total_ns, c * (4 * 60 - 6));
	ck_assert_str_eq(b->name, "b");
	ck_assert(!b->own && b->depth == 1);
	ck_assert_uint_eq(b->calls, RANKS * c);
	ck_assert_int_eq(b->total_ns, c * 86);
	ck_assert_double_eq_tol(a->imbalance, 0.0, 1e-12);
	ck_assert_double_eq_tol(b->imbalance, (23.0 / 21.5 - 1) * 100, 1e-9);
	ck_assert_double_eq_tol(b->p50, 21.5e-9, 1e-18);
	ck_assert_double_eq_tol(b->min, 20e-9, 1e-18);
	ck_assert_double_eq_tol(b->max, 23e-9, 1e-18);
	sp_summary_destroy(sum);
	sp_reader_destroy(r);
}
END_TEST

static Suite *map_suite(void)
{
	Suite *s = suite_create("map");
	TCase *tc = tcase_create("map");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, mapped_same_as_read);
	tcase_add_test(tc, user_block);
	tcase_add_test(tc, chunked_columns_are_read);
	tcase_add_test(tc, python_fixtures);
	tcase_add_exit_test(tc, truncated_while_mapped, 42);
	tcase_add_test(tc, threaded_exclusive);
	tcase_add_test(tc, threaded_summary_tree);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	return sp_check_run(map_suite(), false);
}
