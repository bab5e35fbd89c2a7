/* SPDX-License-Identifier: MIT */
/*
 * Writer round trip: record known calls, write the file, read it back with
 * the plain HDF5 C API (not our reader) and check the schema-2 layout,
 * dtypes, counts, timestamps and summary_statistics.
 */
#include <check.h>
#include <errno.h>
#include <hdf5.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "output.h"
#include "recorder.h"
#include "snapshot.h"
#include "writer.h"
#include "check-main.h"

static char path[256];

static void setup(void)
{
	snprintf(path, sizeof path, "/tmp/sp-writer-test-%d.h5", (int)getpid());
	setenv("SCOPE_PROFILER_CLOCK", "monotonic", 1);
	sp_config_load();
	sp_recorder_start();
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static void teardown(void)
{
	unlink(path);
}

static hsize_t dset_len(hid_t f, const char *name, hid_t expect_type)
{
	hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
	ck_assert_msg(d >= 0, "missing dataset %s", name);
	hid_t t = H5Dget_type(d);
	if (expect_type >= 0)
		ck_assert_msg(H5Tequal(t, expect_type) > 0, "wrong dtype for %s", name);
	hid_t sp = H5Dget_space(d);
	hsize_t n = 0;
	H5Sget_simple_extent_dims(sp, &n, NULL);
	H5Sclose(sp);
	H5Tclose(t);
	H5Dclose(d);
	return n;
}

static void read_i64(hid_t f, const char *name, int64_t *out)
{
	hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
	ck_assert(H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0);
	H5Dclose(d);
}

static int64_t root_schema(hid_t f)
{
	int64_t v = -1;
	hid_t a = H5Aopen(f, "scope_profiler_schema", H5P_DEFAULT);
	ck_assert(a >= 0);
	hid_t t = H5Aget_type(a);
	ck_assert(H5Tequal(t, H5T_STD_I64LE) > 0);
	H5Aread(a, H5T_NATIVE_INT64, &v);
	H5Tclose(t);
	H5Aclose(a);
	return v;
}

static void write_snapshot(void)
{
	sp_recorder_stop();
	struct sp_snapshot s;
	ck_assert_int_eq(sp_snapshot_take(&s), 0);
	ck_assert_int_eq(sp_output_write_single(path, &s, 0, 1), 0);
	sp_snapshot_free(&s);
}

START_TEST(test_round_trip_layout)
{
	uint32_t setup_r = sp_region_intern("setup", SP_KIND_MANUAL);
	uint32_t step = sp_region_intern("timestep", SP_KIND_MANUAL);
	uint32_t solve = sp_region_intern("solve / odd name > x", SP_KIND_MANUAL);
	sp_rec_enter(setup_r);
	sp_rec_exit(setup_r);
	for (int i = 0; i < 5; i++) {
		sp_rec_enter(step);
		sp_rec_enter(solve);
		sp_rec_exit(solve);
		sp_rec_exit(step);
	}
	write_snapshot();

	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	ck_assert(f >= 0);
	ck_assert_int_eq(root_schema(f), 2);
	ck_assert_uint_eq(dset_len(f, "region_table/names", -1), 3);
	ck_assert_uint_eq(dset_len(f, "rank_region_index/region_ids", H5T_STD_U32LE), 3);
	ck_assert_uint_eq(dset_len(f, "rank_region_index/ranks", H5T_STD_U32LE), 3);
	ck_assert_uint_eq(dset_len(f, "rank_region_index/event_offsets", H5T_STD_U64LE), 3);
	ck_assert_uint_eq(dset_len(f, "rank_region_index/event_counts", H5T_STD_U64LE), 3);
	ck_assert_uint_eq(dset_len(f, "rank_region_index/source_lines", H5T_STD_I64LE), 3);
	ck_assert_uint_eq(dset_len(f, "rank_region_index/exclusive_totals", H5T_STD_I64LE), 3);
	ck_assert_uint_eq(dset_len(f, "rank_region_index/summary_statistics", -1), 3);
	ck_assert_uint_eq(dset_len(f, "events/start_times", H5T_STD_I64LE), 11);
	ck_assert_uint_eq(dset_len(f, "events/end_times", H5T_STD_I64LE), 11);
	/* One thread, no drops: optional columns are absent. */
	ck_assert_int_eq(H5Lexists(f, "events/thread_ids", H5P_DEFAULT), 0);
	ck_assert_int_eq(H5Lexists(f, "rank_region_index/dropped_counts", H5P_DEFAULT), 0);
	ck_assert_int_eq(H5Lexists(f, "events/call_ids", H5P_DEFAULT), 0);

	int64_t counts[3], offsets[3], starts[11], ends[11];
	read_i64(f, "rank_region_index/event_counts", counts);
	read_i64(f, "rank_region_index/event_offsets", offsets);
	read_i64(f, "events/start_times", starts);
	read_i64(f, "events/end_times", ends);
	ck_assert_int_eq(counts[0], 1);
	ck_assert_int_eq(counts[1], 5);
	ck_assert_int_eq(counts[2], 5);
	ck_assert_int_eq(offsets[0], 0);
	ck_assert_int_eq(offsets[1], 1);
	ck_assert_int_eq(offsets[2], 6);
	for (int i = 0; i < 5; i++) {
		/* solve call i lies inside timestep call i. */
		ck_assert(starts[6 + i] >= starts[1 + i] && ends[6 + i] <= ends[1 + i]);
	}

	/* summary_statistics: field order and values. */
	hid_t d = H5Dopen2(f, "rank_region_index/summary_statistics", H5P_DEFAULT);
	hid_t t = H5Dget_type(d);
	static const char *const fields[] = { "total", "minimum", "maximum", "first", "last",
		"start_minimum", "end_maximum", "gpu_count", "gpu_total", "mean", "m2" };
	ck_assert_int_eq(H5Tget_nmembers(t), 11);
	for (int i = 0; i < 11; i++) {
		char *n = H5Tget_member_name(t, (unsigned)i);
		ck_assert_str_eq(n, fields[i]);
		H5free_memory(n);
	}
	struct sp_summary_record rec[3];
	hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(struct sp_summary_record));
	H5Tinsert(mt, "total", HOFFSET(struct sp_summary_record, total), H5T_NATIVE_INT64);
	H5Tinsert(mt, "first", HOFFSET(struct sp_summary_record, first), H5T_NATIVE_INT64);
	H5Tinsert(mt, "mean", HOFFSET(struct sp_summary_record, mean), H5T_NATIVE_DOUBLE);
	H5Tinsert(mt, "start_minimum", HOFFSET(struct sp_summary_record, start_minimum),
		  H5T_NATIVE_INT64);
	ck_assert(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, rec) >= 0);
	int64_t total = 0;
	for (int i = 1; i < 6; i++)
		total += ends[i] - starts[i];
	ck_assert_int_eq(rec[1].total, total);
	ck_assert_int_eq(rec[1].first, ends[1] - starts[1]);
	ck_assert_int_eq(rec[1].start_minimum, starts[1]);
	ck_assert(rec[1].mean * 5 > (double)total - 1 && rec[1].mean * 5 < (double)total + 1);
	H5Tclose(mt);
	H5Tclose(t);
	H5Dclose(d);

	/* Metadata: integer times and the native markers. */
	hid_t g = H5Gopen2(f, "metadata", H5P_DEFAULT);
	static const char *const keys[] = { "start_time_ns", "finalize_time_ns", "timestamp",
		"hostname", "mpi_size", "omp_num_threads", "total_cores", "modules", "source",
		"source_language", "scope_profiler_version", "dropped_events" };
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		ck_assert_msg(H5Aexists(g, keys[i]) > 0, "metadata key %s missing", keys[i]);
	int64_t st = 0, fin = 0;
	hid_t a = H5Aopen(g, "start_time_ns", H5P_DEFAULT);
	H5Aread(a, H5T_NATIVE_INT64, &st);
	H5Aclose(a);
	a = H5Aopen(g, "finalize_time_ns", H5P_DEFAULT);
	H5Aread(a, H5T_NATIVE_INT64, &fin);
	H5Aclose(a);
	ck_assert(st <= starts[0] && fin >= ends[10]);
	H5Gclose(g);
	H5Fclose(f);
}
END_TEST

static void *thread_body(void *arg)
{
	uint32_t r = *(uint32_t *)arg;
	for (int i = 0; i < 100; i++) {
		sp_rec_enter(r);
		sp_rec_exit(r);
	}
	return NULL;
}

START_TEST(test_threads_column_and_table)
{
	uint32_t r = sp_region_intern("work", SP_KIND_MANUAL);
	pthread_t th[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, thread_body, &r);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	write_snapshot();
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	ck_assert_uint_eq(dset_len(f, "events/thread_ids", H5T_STD_I64LE), 300);
	ck_assert_uint_eq(dset_len(f, "thread_table/index", H5T_STD_I64LE), 3);
	ck_assert_uint_eq(dset_len(f, "thread_table/ranks", H5T_STD_U32LE), 3);
	int64_t tids[300];
	read_i64(f, "events/thread_ids", tids);
	int per[3] = { 0 };
	for (int i = 0; i < 300; i++) {
		ck_assert(tids[i] >= 0 && tids[i] < 3);
		per[tids[i]]++;
	}
	ck_assert(per[0] == 100 && per[1] == 100 && per[2] == 100);
	H5Fclose(f);
}
END_TEST

START_TEST(test_dropped_column)
{
	sp_recorder_stop();
	setenv("SCOPE_PROFILER_MAX_MEMORY", "100K", 1);
	sp_config_load();
	sp_thread_set_cap(sp_config.max_memory);
	atomic_store(&sp_recording, 1);
	uint32_t r = sp_region_intern("busy", SP_KIND_MANUAL);
	for (int i = 0; i < 5000; i++) {
		sp_rec_enter(r);
		sp_rec_exit(r);
	}
	write_snapshot();
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	int64_t dropped[1], counts[1];
	read_i64(f, "rank_region_index/dropped_counts", dropped);
	read_i64(f, "rank_region_index/event_counts", counts);
	ck_assert_int_eq(counts[0] + dropped[0], 5000);
	ck_assert_int_gt(dropped[0], 0);
	H5Fclose(f);
}
END_TEST

START_TEST(test_failed_write_leaves_no_file)
{
	sp_recorder_stop();
	struct sp_snapshot s;
	ck_assert_int_eq(sp_snapshot_take(&s), 0);
	ck_assert_int_lt(sp_output_write_single("/nonexistent-dir/x.h5", &s, 0, 1), 0);
	sp_snapshot_free(&s);
}
END_TEST

/* The MPI columns in the row layout: nmpi values, mpi_offsets per row, the
 * /events attribute; puts outside nmpi and call sites without MPI refused. */
START_TEST(test_mpi_row_layout)
{
	const char *names[] = { "compute", "MPI_Send" };
	struct sp_writer_layout l = { .nnames = 2, .names = names, .nrows = 2, .nevents = 5,
				      .nmpi = 2, .columns = SP_WCOL_MPI | SP_WCOL_CALLSITE };
	struct sp_writer *w = NULL;
	struct sp_writer_layout bad = l;
	bad.columns = SP_WCOL_CALLSITE;
	ck_assert_int_eq(sp_writer_create(path, &bad, &w), -EINVAL);
	ck_assert_int_eq(sp_writer_create(path, &l, &w), 0);
	struct sp_writer_row rows[2] = {
		{ .region = 0, .offset = 0, .count = 3, .source_line = -1, .mpi_offset = -1 },
		{ .region = 1, .offset = 3, .count = 2, .source_line = -1, .mpi_offset = 0 },
	};
	ck_assert_int_eq(sp_writer_put_rows(w, 0, 2, rows), 0);
	int64_t st[5] = { 1, 2, 3, 4, 5 }, en[5] = { 10, 3, 4, 5, 6 };
	ck_assert_int_eq(sp_writer_put_events(w, 0, 5, &(struct sp_writer_events){ st, en, NULL }), 0);
	int64_t bytes[2] = { 8, 16 };
	int32_t peer[2] = { 1, 0 }, none[2] = { -1, -1 }, tag[2] = { 7, 9 }, comm[2] = { 0, 0 },
		site[2] = { 3, 4 };
	struct sp_writer_mpi m = { bytes, peer, none, tag, comm, site };
	ck_assert_int_eq(sp_writer_put_mpi(w, 1, 2, &m), -EINVAL);
	ck_assert_int_eq(sp_writer_put_mpi(w, 0, 2, &m), 0);
	ck_assert_int_eq(sp_writer_commit(w), 0);

	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	ck_assert(f >= 0);
	ck_assert_uint_eq(dset_len(f, "events/start_times", H5T_STD_I64LE), 5);
	ck_assert_uint_eq(dset_len(f, "events/mpi_bytes", H5T_STD_I64LE), 2);
	ck_assert_uint_eq(dset_len(f, "events/mpi_peers", H5T_STD_I32LE), 2);
	ck_assert_uint_eq(dset_len(f, "events/callsite_ids", H5T_STD_I32LE), 2);
	ck_assert_uint_eq(dset_len(f, "rank_region_index/mpi_offsets", H5T_STD_I64LE), 2);
	int64_t off[2], got[2];
	read_i64(f, "rank_region_index/mpi_offsets", off);
	ck_assert_int_eq(off[0], -1);
	ck_assert_int_eq(off[1], 0);
	read_i64(f, "events/mpi_tags", got);
	ck_assert_int_eq(got[0], 7);
	ck_assert_int_eq(got[1], 9);
	read_i64(f, "events/callsite_ids", got);
	ck_assert_int_eq(got[1], 4);
	hid_t g = H5Gopen2(f, "events", H5P_DEFAULT);
	hid_t a = H5Aopen(g, SP_EV_ATTR_MPI_LAYOUT, H5P_DEFAULT);
	ck_assert(a >= 0);
	hid_t t = H5Aget_type(a);
	char *v = NULL;
	ck_assert(H5Aread(a, t, &v) >= 0);
	ck_assert_str_eq(v, SP_MPI_LAYOUT_ROWS);
	H5free_memory(v);
	H5Tclose(t);
	H5Aclose(a);
	H5Gclose(g);
	H5Fclose(f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("writer");
	TCase *tc = tcase_create("round-trip");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_round_trip_layout);
	tcase_add_test(tc, test_threads_column_and_table);
	tcase_add_test(tc, test_dropped_column);
	tcase_add_test(tc, test_failed_write_leaves_no_file);
	tcase_add_test(tc, test_mpi_row_layout);
	suite_add_tcase(s, tc);
	return sp_check_run(s, false);
}
