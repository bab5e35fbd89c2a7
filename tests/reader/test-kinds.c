/* SPDX-License-Identifier: MIT */
/*
 * Region kinds in the reader: files without region_table/kinds (the
 * upstream fixtures, hand-built columnar files) get the kind of an exact
 * MPI function name and "function" for every other name, with no prefix
 * rule; a kinds dataset is used as written, and one of the wrong length or
 * with an unknown value is refused as corrupt.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "h5-build.h"
#include "scope-profiler-reader.h"
#include "check-main.h"

static const char *const fixtures[] = {
	"hdf5-schema-1.h5", "hdf5-schema-2.h5", "hdf5-schema-3.h5",
	"profile-v1.json", "native-v1.spt", "native-v2.spt",
};

/* Names and the kinds mpi-functions.def gives them (class=), or function. */
static const char *const names[] = {
	"MPI_x", "MPI_Send", "MPI_Recv", "MPI_Allreduce", "MPI_Isend", "MPI_File_write_at",
	"MPI_Put", "MPI_Sendrecv", "MPI_Waitall", "MPI_Comm_split", "mpi_send", "MPI_Send ",
};
static const enum sp_region_kind derived[] = {
	SP_REGION_FUNCTION, SP_REGION_MPI_SEND, SP_REGION_MPI_RECV, SP_REGION_MPI_COLLECTIVE,
	SP_REGION_MPI_SEND, SP_REGION_MPI_IO, SP_REGION_MPI_ONE_SIDED, SP_REGION_MPI_SENDRECV,
	SP_REGION_MPI_REQUEST, SP_REGION_MPI_OTHER, SP_REGION_FUNCTION, SP_REGION_FUNCTION,
};
#define N (sizeof names / sizeof *names)

/* A columnar file with one call of each name on rank 0, and a kinds
 * dataset of nk values (none when nk is 0). */
static const char *build(const char *stem, const uint8_t *kinds, size_t nk)
{
	const char *path = h5b_tmp(stem);
	uint32_t ids[N], ranks[N] = { 0 };
	uint64_t offs[N], counts[N];
	int64_t st[N], en[N];
	for (uint32_t i = 0; i < N; i++) {
		ids[i] = i;
		offs[i] = i;
		counts[i] = 1;
		st[i] = 100 * i;
		en[i] = 100 * i + 50;
	}
	hid_t f = h5b_create(path);
	h5b_root_int(f, "scope_profiler_schema", 2);
	h5b_columnar(f, names, N, ids, ranks, offs, counts, N, st, en, N);
	if (nk) {
		hsize_t dims = nk;
		hid_t sp = H5Screate_simple(1, &dims, NULL);
		hid_t d = H5Dcreate2(f, "region_table/kinds", H5T_STD_U8LE, sp, H5P_DEFAULT,
				     H5P_DEFAULT, H5P_DEFAULT);
		H5Dwrite(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, kinds);
		H5Dclose(d);
		H5Sclose(sp);
	}
	h5b_close(f);
	return path;
}

START_TEST(test_fixture_function)
{
	const char *dir = getenv("SP_FIXTURES");
	char path[1024];
	struct sp_reader *r = NULL;
	snprintf(path, sizeof path, "%s/%s", dir ? dir : ".", fixtures[_i]);
	ck_assert_msg(sp_reader_open(path, &r) == 0, "%s: %s", path, sp_reader_last_error());
	ck_assert_str_eq(sp_reader_region_name(r, 0), "solve");
	ck_assert_int_eq(sp_reader_region_kind(r, 0), SP_REGION_FUNCTION);
	ck_assert(!sp_region_kind_is_mpi(sp_reader_region_kind(r, 0)));
	ck_assert_int_eq(sp_reader_region_kind(r, 99), SP_REGION_FUNCTION);
	sp_reader_destroy(r);
}
END_TEST

START_TEST(test_derived_by_exact_name)
{
	struct sp_reader *r = NULL;
	const char *path = build("kinds-none", NULL, 0);
	ck_assert_msg(sp_reader_open(path, &r) == 0, "%s", sp_reader_last_error());
	for (uint32_t i = 0; i < N; i++) {
		ck_assert_str_eq(sp_reader_region_name(r, i), names[i]);
		ck_assert_msg(sp_reader_region_kind(r, i) == derived[i], "%s: %d", names[i],
			      sp_reader_region_kind(r, i));
	}
	ck_assert_str_eq(sp_region_kind_name(sp_reader_region_kind(r, 0)), "function");
	ck_assert_ptr_null(sp_region_kind_mpi_class(sp_reader_region_kind(r, 0)));
	ck_assert_str_eq(sp_region_kind_name(sp_reader_region_kind(r, 3)), "mpi");
	ck_assert_str_eq(sp_region_kind_mpi_class(sp_reader_region_kind(r, 3)), "collective");
	sp_reader_destroy(r);
	remove(path);
}
END_TEST

START_TEST(test_written_kinds)
{
	uint8_t k[N];
	for (uint32_t i = 0; i < N; i++)
		k[i] = (uint8_t)((i * 7 + 3) % 10); /* not what the names suggest */
	k[0] = 0; /* MPI_x, manual */
	struct sp_reader *r = NULL;
	const char *path = build("kinds-written", k, N);
	ck_assert_msg(sp_reader_open(path, &r) == 0, "%s", sp_reader_last_error());
	for (uint32_t i = 0; i < N; i++)
		ck_assert_int_eq(sp_reader_region_kind(r, i), k[i]);
	ck_assert_str_eq(sp_region_kind_name(sp_reader_region_kind(r, 0)), "manual");
	sp_reader_destroy(r);
	remove(path);
}
END_TEST

START_TEST(test_corrupt_kinds)
{
	uint8_t k[N] = { 0 };
	struct sp_reader *r = NULL;
	const char *path = build("kinds-short", k, N - 1);
	ck_assert_int_eq(sp_reader_open(path, &r), -SP_E_CORRUPT);
	remove(path);
	k[5] = 10; /* one past the last kind */
	path = build("kinds-bad", k, N);
	ck_assert_int_eq(sp_reader_open(path, &r), -SP_E_CORRUPT);
	remove(path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kinds");
	TCase *tc = tcase_create("kinds");
	tcase_add_loop_test(tc, test_fixture_function, 0, 6);
	tcase_add_test(tc, test_derived_by_exact_name);
	tcase_add_test(tc, test_written_kinds);
	tcase_add_test(tc, test_corrupt_kinds);
	suite_add_tcase(s, tc);
	return sp_check_run(s, false);
}
