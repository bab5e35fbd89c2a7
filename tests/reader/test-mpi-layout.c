/* SPDX-License-Identifier: MIT */
/*
 * The MPI columns in the row layout (docs/FORMAT.md): sp_reader_column()
 * gives the same full-length columns as for the old, full-length layout,
 * sp_reader_row_column() a row's values (NULL for a row without any),
 * sp_reader_has_column() presence; bad mpi_offsets are refused.
 */
#include <check.h>
#include <hdf5.h>
#include <stdlib.h>
#include <unistd.h>

#include "h5-build.h"
#include "scope-profiler-reader.h"
#include "check-main.h"

/* Rows: compute (3 events, rank 0), MPI_Send (2, rank 0), compute (1, rank 1). */
static const char *const names[] = { "compute", "MPI_Send" };
static const uint32_t reg[] = { 0, 1, 0 }, rnk[] = { 0, 0, 1 };
static const uint64_t off[] = { 0, 3, 5 }, cnt[] = { 3, 2, 1 };
static const int64_t st[] = { 1, 2, 3, 4, 6, 1 }, en[] = { 10, 3, 4, 5, 7, 2 };
static const int64_t bytes[] = { 64, 128 }, peers[] = { 1, 1 }, tags[] = { 7, 8 };

static void put_i64(hid_t g, const char *name, hid_t ftype, const int64_t *v, size_t n)
{
	hsize_t dims = n;
	hid_t sp = H5Screate_simple(1, &dims, NULL);
	hid_t d = H5Dcreate2(g, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert(d >= 0);
	ck_assert(H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
	H5Dclose(d);
	H5Sclose(sp);
}

static void put_str_attr(hid_t g, const char *name, const char *v)
{
	hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR);
	H5Tset_size(t, H5T_VARIABLE);
	H5Tset_cset(t, H5T_CSET_UTF8);
	hid_t a = H5Acreate2(g, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
	ck_assert(a >= 0 && H5Awrite(a, t, &v) >= 0);
	H5Aclose(a);
	H5Sclose(sp);
	H5Tclose(t);
}

/* rows = 1: row layout with these mpi_offsets; else the old layout. */
static const char *write_file(const char *stem, bool rows, const int64_t *mpi_off)
{
	const char *path = h5b_tmp(stem);
	hid_t f = h5b_create(path);
	h5b_root_int(f, SP_ATTR_SCHEMA, 2);
	h5b_root_str(f, SP_ATTR_STORAGE_LAYOUT, SP_STORAGE_COLUMNAR);
	h5b_columnar(f, names, 2, reg, rnk, off, cnt, 3, st, en, 6);
	hid_t ev = H5Gopen2(f, SP_GROUP_EVENTS, H5P_DEFAULT);
	if (rows) {
		int64_t none[2] = { -1, -1 }, zero[2] = { 0, 0 };
		put_i64(ev, SP_EV_MPI_BYTES, H5T_STD_I64LE, bytes, 2);
		put_i64(ev, SP_EV_MPI_PEERS, H5T_STD_I32LE, peers, 2);
		put_i64(ev, SP_EV_MPI_ROOTS, H5T_STD_I32LE, none, 2);
		put_i64(ev, SP_EV_MPI_TAGS, H5T_STD_I32LE, tags, 2);
		put_i64(ev, SP_EV_MPI_COMMS, H5T_STD_I32LE, zero, 2);
		put_str_attr(ev, SP_EV_ATTR_MPI_LAYOUT, SP_MPI_LAYOUT_ROWS);
		hid_t idx = H5Gopen2(f, SP_GROUP_INDEX, H5P_DEFAULT);
		put_i64(idx, SP_IDX_MPI_OFFSETS, H5T_STD_I64LE, mpi_off, 3);
		H5Gclose(idx);
	} else {
		int64_t b[6] = { -1, -1, -1, 64, 128, -1 }, p[6] = { -1, -1, -1, 1, 1, -1 },
			n[6] = { -1, -1, -1, -1, -1, -1 }, t[6] = { -1, -1, -1, 7, 8, -1 },
			c[6] = { -1, -1, -1, 0, 0, -1 };
		put_i64(ev, SP_EV_MPI_BYTES, H5T_STD_I64LE, b, 6);
		put_i64(ev, SP_EV_MPI_PEERS, H5T_STD_I32LE, p, 6);
		put_i64(ev, SP_EV_MPI_ROOTS, H5T_STD_I32LE, n, 6);
		put_i64(ev, SP_EV_MPI_TAGS, H5T_STD_I32LE, t, 6);
		put_i64(ev, SP_EV_MPI_COMMS, H5T_STD_I32LE, c, 6);
	}
	H5Gclose(ev);
	h5b_close(f);
	return path;
}

static const int64_t good_off[] = { -1, 0, -1 };

START_TEST(row_layout_reads_as_old_layout)
{
	struct sp_reader *a, *b;
	const char *pa = write_file("mpi-rows", true, good_off);
	const char *pb = write_file("mpi-old", false, NULL);
	ck_assert_int_eq(sp_reader_open(pa, &a), 0);
	ck_assert_int_eq(sp_reader_open(pb, &b), 0);
	enum sp_column cols[] = { SP_COL_MPI_BYTES, SP_COL_MPI_PEERS, SP_COL_MPI_ROOTS,
				  SP_COL_MPI_TAGS, SP_COL_MPI_COMMS };
	for (size_t k = 0; k < 5; k++) {
		ck_assert(sp_reader_has_column(a, cols[k]) && sp_reader_has_column(b, cols[k]));
		/* A row's values without building the column. */
		ck_assert_ptr_null(sp_reader_row_column(a, 0, cols[k]));
		ck_assert_ptr_null(sp_reader_row_column(a, 2, cols[k]));
		const int64_t *ra = sp_reader_row_column(a, 1, cols[k]);
		const int64_t *rb = sp_reader_row_column(b, 1, cols[k]);
		ck_assert(ra && rb);
		ck_assert_int_eq(ra[0], rb[0]);
		ck_assert_int_eq(ra[1], rb[1]);
		const int64_t *x = sp_reader_column(a, cols[k]), *y = sp_reader_column(b, cols[k]);
		ck_assert(x && y);
		ck_assert_ptr_eq(sp_reader_column(a, cols[k]), x); /* built once */
		for (size_t e = 0; e < 6; e++)
			ck_assert_int_eq(x[e], y[e]);
	}
	ck_assert_int_eq(sp_reader_row_column(a, 1, SP_COL_MPI_BYTES)[1], 128);
	ck_assert_int_eq(sp_reader_column(a, SP_COL_MPI_TAGS)[3], 7);
	ck_assert_int_eq(sp_reader_column(a, SP_COL_MPI_TAGS)[5], -1);
	ck_assert(!sp_reader_has_column(a, SP_COL_CALLSITE_IDS));
	ck_assert_ptr_null(sp_reader_column(a, SP_COL_CALLSITE_IDS));
	ck_assert_ptr_null(sp_reader_row_column(a, 3, SP_COL_MPI_BYTES)); /* no such row */
	ck_assert_int_eq(sp_reader_row_column(a, 1, SP_COL_START_TIMES)[0], 4);
	sp_reader_destroy(a);
	sp_reader_destroy(b);
	unlink(pa);
	unlink(pb);
}
END_TEST

START_TEST(bad_offsets_refused)
{
	static const int64_t bad[][3] = {
		{ -1, 1, -1 },  /* slice past the 2 values */
		{ -1, 0, 1 },   /* overlap: row 1 at [0, 2), row 2 at [1, 2) */
		{ -1, -2, -1 }, /* negative */
		{ -1, -1, -1 }, /* the 2 values belong to no row */
		{ -1, 0, 2 },   /* row 2's value past the end */
		{ 0, -1, -1 },  /* row 0's 3 events in 2 values */
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct sp_reader *r = NULL;
		const char *p = write_file("mpi-bad", true, bad[i]);
		ck_assert_msg(sp_reader_open(p, &r) == -SP_E_CORRUPT, "case %zu", i);
		ck_assert_ptr_null(r);
		ck_assert(sp_reader_last_error()[0] != '\0');
		unlink(p);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mpi-layout");
	TCase *tc = tcase_create("mpi-layout");
	tcase_add_test(tc, row_layout_reads_as_old_layout);
	tcase_add_test(tc, bad_offsets_refused);
	suite_add_tcase(s, tc);
	return sp_check_run(s, false);
}
