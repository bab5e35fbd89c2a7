/* SPDX-License-Identifier: MIT */
/*
 * Shared by the writer's files (writer.c: file, events, groups, commit;
 * writer-index.c: the index and thread tables). Not for other callers.
 */
#ifndef SP_WRITER_INTERNAL_H
#define SP_WRITER_INTERNAL_H

#include <hdf5.h>
#include "lazy-hdf5.h"

#include "sp-safe-file.h"
#include <stdbool.h>

#include "writer.h"

struct sp_writer {
	hid_t file;
	char *path;
	struct sp_safe_file out; /* the temporary beside path (sp-safe-file.h) */
	struct sp_writer_layout layout;
	hid_t str_type;   /* vlen UTF-8 */
	hid_t summary_type;
	hid_t g_meta, g_index, g_events, g_threads;
	bool times_raw;   /* start/end written by the caller (sp_writer_times_raw) */
	bool excl_given;  /* rows carry exclusive_ns: the commit computes none */
};

/* A contiguous 1-D dataset of n values of type. Returns 0 or -EIO. */
int sp_writer_make_dset(hid_t group, const char *name, hid_t type, uint64_t n);
/* As sp_writer_make_dset, raw (contiguous, allocated early, never filled)
 * when the layout is raw and the type is fixed-size. */
int sp_writer_make_col(struct sp_writer *w, hid_t group, const char *name, hid_t type,
		       uint64_t n);
/* The dataset of raw column c (its group in *ret_group), NULL when the
 * layout has no such column (writer-index.c for the row and thread tables). */
const char *sp_writer_raw_name(const struct sp_writer *w, enum sp_raw_col c, hid_t *ret_group);
/* Write n values of buf at [first, first+n) of group/name. Returns 0 or -EIO. */
int sp_writer_put_range(hid_t group, const char *name, uint64_t first, uint64_t n,
			const void *buf);
/* Read n values at [first, first+n) of group/name into buf. Returns 0 or -EIO. */
int sp_writer_get_range(hid_t group, const char *name, uint64_t first, uint64_t n, void *buf);
/* region_table: names (with kinds when not NULL) and the uncalled names. */
int sp_writer_put_names(struct sp_writer *w, const char *const *names, const uint8_t *kinds,
			uint32_t n, const char *const *uncalled, uint32_t n_uncalled);
/* At the commit: names only for regions with rows, and exclusive_totals
 * (writer-finish.c). Returns 0, -ENOMEM or -EIO. */
int sp_writer_finish_index(struct sp_writer *w);
/* Create the rank_region_index / thread_table datasets of the layout. */
int sp_writer_create_index(struct sp_writer *w);
int sp_writer_create_threads(struct sp_writer *w);

#endif /* SP_WRITER_INTERNAL_H */
