/* SPDX-License-Identifier: MIT */
/*
 * The /callsites table (docs/CALLSITES.md) through sp_callsites_load: sites
 * and their frames, the events' callsite_ids column, a file without the
 * table (-ENOENT), and frame ranges outside the frame table (corrupt).
 * Dataset names are spelled out: the test checks the documented layout.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5-build.h"
#include "scope-profiler-reader.h"
#include "check-main.h"

static void dset(hid_t g, const char *name, hid_t ftype, hid_t mtype, size_t n, const void *v)
{
	hsize_t dims = n;
	hid_t sp = H5Screate_simple(1, &dims, NULL);
	hid_t d = H5Dcreate2(g, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert(d >= 0);
	if (n)
		ck_assert(H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
	H5Dclose(d);
	H5Sclose(sp);
}

static void strings(hid_t g, const char *name, size_t n, const char *const *v)
{
	hid_t t = H5Tcopy(H5T_C_S1);
	H5Tset_size(t, H5T_VARIABLE);
	H5Tset_cset(t, H5T_CSET_UTF8);
	dset(g, name, t, t, n, v);
	H5Tclose(t);
}

/*
 * Two MPI events of region "MPI_Send" (sites 1 and 0) and one function
 * event (no site). Site 0: send() at a.c:10 called from main at a.c:20;
 * site 1: a frame without source. bad_offset puts site 1's frames past the
 * frame table.
 */
static const char *build(const char *stem, bool table, bool bad_offset)
{
	static const char *const names[] = { "MPI_Send", "main" };
	static const uint32_t reg[] = { 0, 1 }, rank[] = { 0, 0 };
	static const uint64_t off[] = { 0, 2 }, cnt[] = { 2, 1 };
	static const int64_t s[] = { 10, 30, 0 }, e[] = { 20, 40, 50 };
	static const int32_t ids[] = { 1, 0, -1 };
	static const char *const fn[] = { "send", "mpi_loop" };
	static const char *const file[] = { "/src/a.c", "" };
	static const int64_t line[] = { 10, -1 };
	static const char *const ffn[] = { "send", "main", "mpi_loop" };
	static const char *const ffile[] = { "/src/a.c", "/src/a.c", "" };
	static const int64_t fline[] = { 10, 20, -1 };
	static const uint32_t fcnt[] = { 2, 1 };
	uint64_t foff[] = { 0, bad_offset ? 3 : 2 };
	const char *path = h5b_tmp(stem);
	hid_t f = h5b_create(path);

	h5b_root_int(f, SP_ATTR_SCHEMA, 2);
	h5b_root_str(f, SP_ATTR_STORAGE_LAYOUT, SP_STORAGE_COLUMNAR);
	h5b_columnar(f, names, 2, reg, rank, off, cnt, 2, s, e, 3);
	hid_t ev = H5Gopen2(f, SP_GROUP_EVENTS, H5P_DEFAULT);
	dset(ev, SP_EV_CALLSITE_IDS, H5T_STD_I32LE, H5T_NATIVE_INT32, 3, ids);
	H5Gclose(ev);
	if (table) {
		hid_t g = H5Gcreate2(f, SP_GROUP_CALLSITES, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
		hid_t sp = H5Screate(H5S_SCALAR);
		hid_t a = H5Acreate2(g, SP_CS_ATTR_DEPTH, H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
		int64_t depth = 2;
		H5Awrite(a, H5T_NATIVE_INT64, &depth);
		H5Aclose(a);
		H5Sclose(sp);
		strings(g, SP_CS_FUNCTIONS, 2, fn);
		strings(g, SP_CS_FILES, 2, file);
		dset(g, SP_CS_LINES, H5T_STD_I64LE, H5T_NATIVE_INT64, 2, line);
		dset(g, SP_CS_FRAME_OFFSETS, H5T_STD_U64LE, H5T_NATIVE_UINT64, 2, foff);
		dset(g, SP_CS_FRAME_COUNTS, H5T_STD_U32LE, H5T_NATIVE_UINT32, 2, fcnt);
		strings(g, SP_CS_FRAME_FUNCTIONS, 3, ffn);
		strings(g, SP_CS_FRAME_FILES, 3, ffile);
		dset(g, SP_CS_FRAME_LINES, H5T_STD_I64LE, H5T_NATIVE_INT64, 3, fline);
		H5Gclose(g);
	}
	h5b_close(f);
	return path;
}

START_TEST(table_and_column)
{
	const char *path = build("cs-ok", true, false);
	struct sp_reader *r;
	struct sp_callsites *t;

	ck_assert_int_eq(sp_reader_open(path, &r), 0);
	ck_assert_int_eq(sp_callsites_load(r, &t), 0);
	unlink(path);
	ck_assert_uint_eq(sp_callsites_count(t), 2);
	ck_assert_int_eq(sp_callsites_depth(t), 2);
	const struct sp_callsite *c = sp_callsites_get(t, 0);
	ck_assert_str_eq(c->function, "send");
	ck_assert_str_eq(c->file, "/src/a.c");
	ck_assert_int_eq(c->line, 10);
	ck_assert_uint_eq(c->num_frames, 2);
	ck_assert_str_eq(c->frames[1].function, "main");
	ck_assert_int_eq(c->frames[1].line, 20);
	c = sp_callsites_get(t, 1);
	ck_assert_str_eq(c->function, "mpi_loop");
	ck_assert_str_eq(c->file, "");
	ck_assert_int_eq(c->line, -1);
	ck_assert_uint_eq(c->num_frames, 1);
	ck_assert_ptr_null(sp_callsites_get(t, 2));
	ck_assert_ptr_null(sp_callsites_get(t, -1));
	const int64_t *ids = sp_reader_column(r, SP_COL_CALLSITE_IDS);
	ck_assert_ptr_nonnull(ids);
	ck_assert_int_eq(ids[0], 1);
	ck_assert_int_eq(ids[1], 0);
	ck_assert_int_eq(ids[2], -1);
	sp_callsites_destroy(t);
	sp_callsites_destroy(NULL);
	sp_reader_destroy(r);
}
END_TEST

START_TEST(no_table)
{
	const char *path = build("cs-none", false, false);
	struct sp_reader *r;
	struct sp_callsites *t = NULL;

	ck_assert_int_eq(sp_reader_open(path, &r), 0);
	ck_assert_int_eq(sp_callsites_load(r, &t), -ENOENT);
	unlink(path);
	ck_assert_ptr_null(t);
	ck_assert_ptr_nonnull(strstr(sp_reader_last_error(), "no /callsites table"));
	ck_assert_uint_eq(sp_callsites_count(NULL), 0);
	sp_reader_destroy(r);
}
END_TEST

START_TEST(frames_out_of_range)
{
	const char *path = build("cs-bad", true, true);
	struct sp_reader *r;
	struct sp_callsites *t = NULL;

	ck_assert_int_eq(sp_reader_open(path, &r), 0);
	ck_assert_int_eq(sp_callsites_load(r, &t), -SP_E_CORRUPT);
	unlink(path);
	ck_assert_ptr_null(t);
	ck_assert_ptr_nonnull(strstr(sp_reader_last_error(), "call site 1"));
	sp_reader_destroy(r);
}
END_TEST

static Suite *callsites_suite(void)
{
	Suite *s = suite_create("callsites");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, table_and_column);
	tcase_add_test(tc, no_table);
	tcase_add_test(tc, frames_out_of_range);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	return sp_check_run(callsites_suite(), false);
}
