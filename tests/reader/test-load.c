/* SPDX-License-Identifier: MIT */
/*
 * Loading rules (reference §1, §6.3 case 10): metadata types, numeric rank
 * order, num_ranks, region de-duplication, schema version checks, and the
 * rejection of corrupt indexes with distinct error codes and messages.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5-build.h"
#include "scope-profiler-reader.h"
#include "check-main.h"

static int open_path(const char *path, struct sp_reader **r)
{
	int rc = sp_reader_open(path, r);

	unlink(path);
	return rc;
}

START_TEST(metadata_types)
{
	static const char *const mods[] = { "gcc/12.3.0", "likwid/5.3" };
	static const int64_t s[] = { 1 }, e[] = { 2 };
	const char *path = h5b_tmp("meta");
	hid_t f = h5b_create(path);
	const struct sp_meta *m;
	struct sp_reader *r;

	h5b_meta_strv(f, "modules", mods, 2);
	h5b_meta_strv(f, "empty", NULL, 0);
	h5b_meta_int(f, "mpi_size", 4);
	h5b_meta_str(f, "hostname", "node1");
	h5b_region(f, 0, "a", s, e, 1);
	h5b_close(f);
	ck_assert_int_eq(open_path(path, &r), 0);
	m = sp_reader_metadata_find(r, "modules");
	ck_assert_int_eq(m->type, SP_META_STRINGS);
	ck_assert_uint_eq(m->n, 2);
	ck_assert_str_eq(m->strv[1], "likwid/5.3");
	m = sp_reader_metadata_find(r, "empty");
	ck_assert_int_eq(m->type, SP_META_STRINGS);
	ck_assert_uint_eq(m->n, 0);
	ck_assert_int_eq(sp_reader_metadata_find(r, "mpi_size")->i, 4);
	ck_assert_str_eq(sp_reader_metadata_find(r, "hostname")->s, "node1");
	/* schema 1: num_ranks = number of rank groups, mpi_size ignored */
	ck_assert_uint_eq(sp_reader_num_ranks(r), 1);
	sp_reader_destroy(r);
}
END_TEST

START_TEST(twelve_ranks_numeric_order)
{
	static const int64_t s[] = { 1 }, e[] = { 2 };
	const char *path = h5b_tmp("ranks");
	hid_t f = h5b_create(path);
	const uint32_t *ranks;
	struct sp_reader *r;

	for (unsigned k = 0; k < 12; k++)
		h5b_region(f, k, k % 2 ? "odd" : "even", s, e, 1);
	h5b_region(f, 3, "even", s, e, 1);
	h5b_close(f);
	ck_assert_int_eq(open_path(path, &r), 0);
	ck_assert_uint_eq(sp_reader_num_ranks(r), 12);
	ck_assert_uint_eq(sp_reader_ranks(r, &ranks), 12);
	for (unsigned k = 0; k < 12; k++)
		ck_assert_uint_eq(ranks[k], k);
	ck_assert_uint_eq(sp_reader_num_regions(r), 2); /* de-duplicated */
	/* rows follow numeric rank order: rank2 before rank10 */
	ck_assert_uint_eq(sp_reader_row(r, 2)->rank, 2);
	ck_assert_uint_eq(sp_reader_row(r, sp_reader_num_rows(r) - 1)->rank, 11);
	sp_reader_destroy(r);
}
END_TEST

static int columnar(const char *stem, int64_t schema, const char *schema_str,
		    const uint64_t *offsets, const uint64_t *counts,
		    const uint32_t *regions, const uint32_t *ranks, size_t rows,
		    int64_t mpi_size, struct sp_reader **r)
{
	static const char *const names[] = { "a", "b" };
	static const int64_t s[] = { 1, 3, 5, 7 }, e[] = { 2, 4, 6, 8 };
	const char *path = h5b_tmp(stem);
	hid_t f = h5b_create(path);

	if (schema_str)
		h5b_root_str(f, SP_ATTR_SCHEMA, schema_str);
	else
		h5b_root_int(f, SP_ATTR_SCHEMA, schema);
	h5b_root_str(f, SP_ATTR_STORAGE_LAYOUT, SP_STORAGE_COLUMNAR);
	if (mpi_size)
		h5b_meta_int(f, "mpi_size", mpi_size);
	h5b_columnar(f, names, 2, regions, ranks, offsets, counts, rows, s, e, 4);
	h5b_close(f);
	return open_path(path, r);
}

static const uint64_t ok_off[] = { 0, 2 }, ok_cnt[] = { 2, 2 };
static const uint32_t ok_reg[] = { 0, 1 }, ok_rank[] = { 0, 3 };

START_TEST(columnar_ok_and_num_ranks)
{
	struct sp_reader *r;

	ck_assert_int_eq(columnar("ok", 2, NULL, ok_off, ok_cnt, ok_reg, ok_rank, 2,
				  0, &r), 0);
	ck_assert_uint_eq(sp_reader_num_ranks(r), 4); /* max rank + 1 */
	sp_reader_destroy(r);
	ck_assert_int_eq(columnar("ok8", 2, NULL, ok_off, ok_cnt, ok_reg, ok_rank,
				  2, 8, &r), 0);
	ck_assert_uint_eq(sp_reader_num_ranks(r), 8); /* mpi_size wins */
	sp_reader_destroy(r);
}
END_TEST

START_TEST(schema_versions)
{
	struct sp_reader *r = NULL;

	ck_assert_int_eq(columnar("s4", 4, NULL, ok_off, ok_cnt, ok_reg, ok_rank, 2,
				  0, &r), -SP_E_SCHEMA);
	ck_assert_ptr_nonnull(strstr(sp_reader_last_error(), "unsupported schema version 4"));
	ck_assert_ptr_nonnull(strstr(sp_reader_last_error(), "upgrade"));
	ck_assert_int_eq(columnar("s0", 0, NULL, ok_off, ok_cnt, ok_reg, ok_rank, 2,
				  0, &r), -SP_E_SCHEMA);
	ck_assert_int_eq(columnar("sone", 0, "one", ok_off, ok_cnt, ok_reg, ok_rank,
				  2, 0, &r), -SP_E_SCHEMA);
	ck_assert_ptr_nonnull(strstr(sp_reader_last_error(), "must be an integer"));
}
END_TEST

START_TEST(corrupt_indexes)
{
	static const uint64_t past[] = { 0, 3 }, overlap[] = { 0, 1 };
	static const uint32_t dup_reg[] = { 0, 0 }, dup_rank[] = { 0, 0 };
	struct sp_reader *r = NULL;

	ck_assert_int_eq(columnar("past", 2, NULL, past, ok_cnt, ok_reg, ok_rank, 2,
				  0, &r), -SP_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(sp_reader_last_error(), "past the end"));
	ck_assert_int_eq(columnar("overlap", 2, NULL, overlap, ok_cnt, ok_reg,
				  ok_rank, 2, 0, &r), -SP_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(sp_reader_last_error(), "overlap"));
	ck_assert_int_eq(columnar("dup", 2, NULL, ok_off, ok_cnt, dup_reg, dup_rank,
				  2, 0, &r), -SP_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(sp_reader_last_error(), "duplicate"));
}
END_TEST

START_TEST(not_a_profile)
{
	const char *path = h5b_tmp("text");
	struct sp_reader *r = NULL;
	FILE *f = fopen(path, "w");

	fputs("hello\n", f);
	fclose(f);
	ck_assert_int_eq(open_path(path, &r), -SP_E_NOT_PROFILE);
	ck_assert_ptr_nonnull(strstr(sp_reader_last_error(), path));
	ck_assert_int_eq(sp_reader_open("/nonexistent/x.h5", &r), -ENOENT);
	ck_assert_ptr_nonnull(strstr(sp_reader_last_error(), "/nonexistent/x.h5"));
	path = h5b_tmp("emptyh5");
	h5b_close(h5b_create(path));
	ck_assert_int_eq(open_path(path, &r), -SP_E_NOT_PROFILE);
}
END_TEST

static Suite *load_suite(void)
{
	Suite *s = suite_create("load");
	TCase *tc = tcase_create("load");

	tcase_add_test(tc, metadata_types);
	tcase_add_test(tc, twelve_ranks_numeric_order);
	tcase_add_test(tc, columnar_ok_and_num_ranks);
	tcase_add_test(tc, schema_versions);
	tcase_add_test(tc, corrupt_indexes);
	tcase_add_test(tc, not_a_profile);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	return sp_check_run(load_suite(), false);
}
