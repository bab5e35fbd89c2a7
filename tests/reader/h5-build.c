/* SPDX-License-Identifier: MIT */
/*
 * Test helper implementation: hand-built HDF5 profiles (schema 1 per-rank
 * groups, or columnar) written with plain contiguous datasets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5-build.h"

const char *h5b_tmp(const char *stem)
{
	static char bufs[16][512];
	static int next;
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char *b = bufs[next++ % 16];

	snprintf(b, 512, "%s/sp-reader-test-%d-%s.h5", dir, (int)getpid(), stem);
	return b;
}

hid_t h5b_create(const char *path)
{
	return H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
}

void h5b_close(hid_t file)
{
	H5Fclose(file);
}

static void attr_int(hid_t obj, const char *name, int64_t v)
{
	hid_t sp = H5Screate(H5S_SCALAR);
	hid_t a = H5Acreate2(obj, name, H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);

	H5Awrite(a, H5T_NATIVE_INT64, &v);
	H5Aclose(a);
	H5Sclose(sp);
}

static hid_t vlen_str_type(void)
{
	hid_t t = H5Tcopy(H5T_C_S1);

	H5Tset_size(t, H5T_VARIABLE);
	H5Tset_cset(t, H5T_CSET_UTF8);
	return t;
}

static void attr_str(hid_t obj, const char *name, const char *v)
{
	hid_t sp = H5Screate(H5S_SCALAR), t = vlen_str_type();
	hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);

	H5Awrite(a, t, &v);
	H5Aclose(a);
	H5Tclose(t);
	H5Sclose(sp);
}

void h5b_root_int(hid_t file, const char *name, int64_t v) { attr_int(file, name, v); }
void h5b_root_str(hid_t file, const char *name, const char *v) { attr_str(file, name, v); }

static hid_t meta_group(hid_t file)
{
	if (H5Lexists(file, SP_GROUP_METADATA, H5P_DEFAULT) > 0)
		return H5Gopen2(file, SP_GROUP_METADATA, H5P_DEFAULT);
	return H5Gcreate2(file, SP_GROUP_METADATA, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
}

void h5b_meta_int(hid_t file, const char *key, int64_t v)
{
	hid_t g = meta_group(file);

	attr_int(g, key, v);
	H5Gclose(g);
}

void h5b_meta_str(hid_t file, const char *key, const char *v)
{
	hid_t g = meta_group(file);

	attr_str(g, key, v);
	H5Gclose(g);
}

void h5b_meta_strv(hid_t file, const char *key, const char *const *v, size_t n)
{
	hsize_t dims[1] = { n };
	hid_t g = meta_group(file), sp = H5Screate_simple(1, dims, NULL);
	hid_t t = vlen_str_type();
	hid_t a = H5Acreate2(g, key, t, sp, H5P_DEFAULT, H5P_DEFAULT);

	if (n)
		H5Awrite(a, t, v);
	H5Aclose(a);
	H5Tclose(t);
	H5Sclose(sp);
	H5Gclose(g);
}

static void dset(hid_t loc, const char *name, hid_t ftype, hid_t mtype,
		 const void *data, size_t n)
{
	hsize_t dims[1] = { n };
	hid_t sp = H5Screate_simple(1, dims, NULL);
	hid_t d = H5Dcreate2(loc, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT,
			     H5P_DEFAULT);

	if (n)
		H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
	H5Dclose(d);
	H5Sclose(sp);
}

size_t h5b_events_chunk;

/* int64 column in chunks of h5b_events_chunk values, deflated. */
static void dset_chunked(hid_t loc, const char *name, const int64_t *data,
			 size_t n)
{
	hsize_t dims[1] = { n }, chunk[1] = { h5b_events_chunk };
	hid_t sp = H5Screate_simple(1, dims, NULL);
	hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
	hid_t d;

	H5Pset_chunk(dcpl, 1, chunk);
	H5Pset_deflate(dcpl, 4);
	d = H5Dcreate2(loc, name, H5T_STD_I64LE, sp, H5P_DEFAULT, dcpl,
		       H5P_DEFAULT);
	if (n)
		H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
	H5Dclose(d);
	H5Pclose(dcpl);
	H5Sclose(sp);
}

static hid_t group_path(hid_t file, const char *path)
{
	hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), g;

	H5Pset_create_intermediate_group(lcpl, 1);
	if (H5Lexists(file, path, H5P_DEFAULT) > 0)
		g = H5Gopen2(file, path, H5P_DEFAULT);
	else
		g = H5Gcreate2(file, path, lcpl, H5P_DEFAULT, H5P_DEFAULT);
	H5Pclose(lcpl);
	return g;
}

void h5b_region(hid_t file, unsigned rank, const char *name,
		const int64_t *starts, const int64_t *ends, size_t n)
{
	char path[512];
	hid_t g;

	snprintf(path, sizeof(path), "rank%u/regions/%s", rank, name);
	g = group_path(file, path);
	dset(g, SP_EV_START_TIMES, H5T_STD_I64LE, H5T_NATIVE_INT64, starts, n);
	dset(g, SP_EV_END_TIMES, H5T_STD_I64LE, H5T_NATIVE_INT64, ends, n);
	H5Gclose(g);
}

void h5b_columnar(hid_t file, const char *const *names, size_t n_names,
		  const uint32_t *region_ids, const uint32_t *ranks,
		  const uint64_t *offsets, const uint64_t *counts, size_t n_rows,
		  const int64_t *starts, const int64_t *ends, size_t n_events)
{
	hid_t g = group_path(file, SP_GROUP_REGION_TABLE), t = vlen_str_type();

	dset(g, SP_DSET_REGION_NAMES, t, t, names, n_names);
	H5Gclose(g);
	g = group_path(file, SP_GROUP_INDEX);
	dset(g, SP_IDX_REGION_IDS, H5T_STD_U32LE, H5T_NATIVE_UINT32, region_ids, n_rows);
	dset(g, SP_IDX_RANKS, H5T_STD_U32LE, H5T_NATIVE_UINT32, ranks, n_rows);
	dset(g, SP_IDX_EVENT_OFFSETS, H5T_STD_U64LE, H5T_NATIVE_UINT64, offsets, n_rows);
	dset(g, SP_IDX_EVENT_COUNTS, H5T_STD_U64LE, H5T_NATIVE_UINT64, counts, n_rows);
	H5Gclose(g);
	g = group_path(file, SP_GROUP_EVENTS);
	if (h5b_events_chunk) {
		dset_chunked(g, SP_EV_START_TIMES, starts, n_events);
		dset_chunked(g, SP_EV_END_TIMES, ends, n_events);
	} else {
		dset(g, SP_EV_START_TIMES, H5T_STD_I64LE, H5T_NATIVE_INT64, starts, n_events);
		dset(g, SP_EV_END_TIMES, H5T_STD_I64LE, H5T_NATIVE_INT64, ends, n_events);
	}
	H5Gclose(g);
	H5Tclose(t);
}
