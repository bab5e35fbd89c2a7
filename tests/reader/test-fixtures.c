/* SPDX-License-Identifier: MIT */
/*
 * The upstream compatibility fixtures (HDF5 schemas 1-3, JSON profile v1,
 * native .spt v1/v2) all describe rank 0, region "solve", starts [10,20,40],
 * ends [15,33,55] ns, source line 7 (tag "golden" where the format has tags).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scope-profiler-reader.h"
#include "check-main.h"

static const char *const fixtures[] = {
	"hdf5-schema-1.h5", "hdf5-schema-2.h5", "hdf5-schema-3.h5",
	"profile-v1.json", "native-v1.spt", "native-v2.spt",
};

static struct sp_reader *open_fixture(const char *name)
{
	const char *dir = getenv("SP_FIXTURES");
	struct sp_reader *r = NULL;
	char path[1024];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : ".", name);
	rc = sp_reader_open(path, &r);
	ck_assert_msg(rc == 0, "%s: %d %s", path, rc, sp_reader_last_error());
	return r;
}

START_TEST(test_fixture_content)
{
	static const int64_t starts[] = { 10, 20, 40 }, ends[] = { 15, 33, 55 };
	const char *name = fixtures[_i];
	struct sp_reader *r = open_fixture(name);
	const struct sp_row *row;
	const int64_t *s, *e;
	long idx;

	ck_assert_uint_eq(sp_reader_num_ranks(r), 1);
	ck_assert_uint_eq(sp_reader_num_regions(r), 1);
	ck_assert_str_eq(sp_reader_region_name(r, 0), "solve");
	idx = sp_reader_row_find(r, 0, 0);
	ck_assert_int_ge(idx, 0);
	row = sp_reader_row(r, (size_t)idx);
	ck_assert_uint_eq(row->count, 3);
	s = sp_reader_column(r, SP_COL_START_TIMES);
	e = sp_reader_column(r, SP_COL_END_TIMES);
	for (int k = 0; k < 3; k++) {
		ck_assert_int_eq(s[row->offset + k], starts[k]);
		ck_assert_int_eq(e[row->offset + k], ends[k]);
	}
	if (strcmp(name, "native-v1.spt") != 0)
		ck_assert_int_eq(row->source_lineno, 7);
	if (strstr(name, ".spt") == NULL) {
		ck_assert_uint_eq(row->num_tags, 1);
		ck_assert_str_eq(row->tags[0], "golden");
		ck_assert_str_eq(row->source_file, "solver.py");
	} else if (strcmp(name, "native-v2.spt") == 0) {
		ck_assert_str_eq(row->source_file, "solver.c");
	}
	sp_reader_destroy(r);
}
END_TEST

START_TEST(test_fixture_schema)
{
	struct sp_reader *r;

	r = open_fixture("hdf5-schema-1.h5");
	ck_assert_int_eq(sp_reader_schema(r), 1);
	ck_assert_int_eq(sp_reader_layout(r), SP_LAYOUT_PER_RANK);
	ck_assert_ptr_nonnull(sp_reader_metadata_find(r, "mpi_size"));
	sp_reader_destroy(r);
	r = open_fixture("hdf5-schema-2.h5");
	ck_assert_int_eq(sp_reader_schema(r), 2);
	ck_assert_int_eq(sp_reader_row(r, 0)->exclusive_total_ns, -1);
	ck_assert(!sp_reader_row(r, 0)->has_summary);
	sp_reader_destroy(r);
	r = open_fixture("hdf5-schema-3.h5");
	ck_assert_int_eq(sp_reader_schema(r), 3);
	sp_reader_destroy(r);
	r = open_fixture("native-v2.spt");
	ck_assert_int_eq(sp_reader_input_format(r), SP_INPUT_SPT);
	ck_assert_int_eq(sp_reader_schema(r), 2);
	sp_reader_destroy(r);
	r = open_fixture("profile-v1.json");
	ck_assert_int_eq(sp_reader_input_format(r), SP_INPUT_JSON);
	sp_reader_destroy(r);
}
END_TEST

START_TEST(test_fixture_stats)
{
	struct sp_reader *r = open_fixture(fixtures[_i]);
	struct sp_stats st;

	ck_assert_int_eq(sp_reader_region_stats(r, 0, NULL, &st), 0);
	ck_assert_uint_eq(st.num_calls, 3);
	ck_assert_int_eq(st.total_ns, 33);
	ck_assert_int_eq(st.exclusive_ns, 33); /* siblings: [10,15] [20,33] [40,55] */
	ck_assert_double_eq_tol(st.min, 5e-9, 1e-24);
	ck_assert_double_eq_tol(st.max, 15e-9, 1e-24);
	ck_assert_double_eq_tol(st.first, 5e-9, 1e-24);
	ck_assert_double_eq_tol(st.last, 15e-9, 1e-24);
	ck_assert_double_eq_tol(st.p50, 13e-9, 1e-24);
	sp_reader_destroy(r);
}
END_TEST

static Suite *fixtures_suite(void)
{
	Suite *s = suite_create("fixtures");
	TCase *tc = tcase_create("fixtures");

	tcase_add_loop_test(tc, test_fixture_content, 0, 6);
	tcase_add_loop_test(tc, test_fixture_stats, 0, 6);
	tcase_add_test(tc, test_fixture_schema);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sp_check_run(fixtures_suite(), false);
}
