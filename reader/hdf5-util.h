/* SPDX-License-Identifier: MIT */
/*
 * Small HDF5 helpers shared by the HDF5 loaders: attribute values, string
 * datasets and whole integer columns read with a single H5Dread.
 */
#ifndef SP_HDF5_UTIL_H
#define SP_HDF5_UTIL_H

#include <hdf5.h>

#include "lazy-hdf5.h" /* HDF5 loaded on first use (recorder/lazy/) */
#include "reader-internal.h"

/* Length of a 1-D dataset; -1 if not 1-D (or on error), -2 if scalar. */
hssize_t h5_dset_len(hid_t dset);

/* True if link name exists under loc (no error printed). */
bool h5_exists(hid_t loc, const char *name);
/* A file access list that denies external links (hdf5-util.c). */
hid_t sp_h5_fapl(void);

/*
 * Read a whole 1-D integer column as int64 (HDF5 converts narrower types).
 * Returns the element count, -ENOENT if absent, -SP_E_CORRUPT on a non-1-D
 * or non-integer dataset or one that claims more values than it stores,
 * -ENOMEM. *ret is malloc'ed (at least 1 element).
 */
long h5_read_i64(struct sp_reader *r, hid_t loc, const char *name,
		 int64_t **ret);
/* As h5_read_i64, reading at most the first limit values (the rest of the
 * dataset is never read); returns the count read. */
long h5_read_i64_max(struct sp_reader *r, hid_t loc, const char *name, uint64_t limit,
		     int64_t **ret);

/*
 * Read a 1-D string dataset (vlen or fixed) into malloc'ed strings placed
 * in the reader's pool; *ret is malloc'ed (also pooled). Returns count.
 */
long h5_read_strings(struct sp_reader *r, hid_t loc, const char *name,
		     char ***ret);

/* Read attribute 'name' of obj into m (int, float, string or strings). */
int h5_attr_to_meta(struct sp_reader *r, hid_t obj, const char *name,
		    struct sp_meta *m);

/* Read all attributes of obj as metadata entries of the reader. */
int h5_read_metadata(struct sp_reader *r, hid_t obj);

/* Scalar attribute helpers: -ENOENT if absent. */
int h5_attr_string(struct sp_reader *r, hid_t obj, const char *name,
		   char **ret);
int h5_attr_int(hid_t obj, const char *name, int64_t *ret);

int sp_load_columnar(struct sp_reader *r, hid_t file);
int sp_load_schema1(struct sp_reader *r, hid_t file);

#endif /* SP_HDF5_UTIL_H */
