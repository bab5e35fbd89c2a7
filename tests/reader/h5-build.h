/* SPDX-License-Identifier: MIT */
/*
 * Test helper: write small hand-built profiles with the HDF5 C API, in the
 * schema-1 layout upstream's tests use and in the columnar layout (for the
 * corrupt-index and schema-version cases). Every on-disk name comes from the
 * format header. The Python tests write theirs with tests/lib/profile_builder.py;
 * this C twin stays because each Check case builds its input next to its
 * assertions (about 40 small files, each read back in the same Check case),
 * with HDF5 storage the case controls (chunking and deflate, a user block).
 */
#ifndef SP_TEST_H5_BUILD_H
#define SP_TEST_H5_BUILD_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "sp-format.h"

hid_t h5b_create(const char *path);
void h5b_close(hid_t file);
void h5b_root_int(hid_t file, const char *name, int64_t v);
void h5b_root_str(hid_t file, const char *name, const char *v);
void h5b_meta_int(hid_t file, const char *key, int64_t v);
void h5b_meta_str(hid_t file, const char *key, const char *v);
/* 1-D vlen string array attribute (n may be 0). */
void h5b_meta_strv(hid_t file, const char *key, const char *const *v, size_t n);
/* /rank<rank>/regions/<name>/{start_times,end_times} (ns). */
void h5b_region(hid_t file, unsigned rank, const char *name,
		const int64_t *starts, const int64_t *ends, size_t n);
/* Nonzero: h5b_columnar writes the event columns chunked (this many values
 * per chunk) and deflated instead of contiguous. */
extern size_t h5b_events_chunk;
/* Columnar layout (schema attribute written separately). */
void h5b_columnar(hid_t file, const char *const *names, size_t n_names,
		  const uint32_t *region_ids, const uint32_t *ranks,
		  const uint64_t *offsets, const uint64_t *counts, size_t n_rows,
		  const int64_t *starts, const int64_t *ends, size_t n_events);

/* Seconds to ns helper for the §6.3 cases. */
#define S(x) ((int64_t)((x) * 1000000000.0))

/* Temporary file name in $TMPDIR (static buffer per call site). */
const char *h5b_tmp(const char *stem);

#endif /* SP_TEST_H5_BUILD_H */
