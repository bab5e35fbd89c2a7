/* SPDX-License-Identifier: MIT */
/*
 * The HDF5 writer: schema 2 columnar (reference §1.4, §1.5, §1.9). The
 * layout (sizes, optional columns) is fixed up front, then rows, events and
 * threads are put in any number of slices, so a merge can stream rank by
 * rank without holding everything. The file is built at a temporary path
 * and renamed into place by sp_writer_commit().
 */
#ifndef SP_WRITER_H
#define SP_WRITER_H

#include <stdint.h>

#include "compiler.h"
#include "metadata.h"
#include "sp-format.h"

/* Optional columns present in the file. */
enum {
	SP_WCOL_THREAD_IDS = 1u << 0, /* events/thread_ids + /thread_table */
	SP_WCOL_DROPPED = 1u << 1,    /* rank_region_index/dropped_counts */
	SP_WCOL_THROTTLED = 1u << 2,  /* rank_region_index/throttled_{counts,totals,timed_counts,ci95,since}, patched_since */
	SP_WCOL_MPI = 1u << 3,        /* events/mpi_{bytes,peers,roots,tags,comms} (row layout)
				      * + rank_region_index/mpi_offsets */
	SP_WCOL_CALLSITE = 1u << 4,   /* events/callsite_ids, laid out as the MPI columns */
};

struct sp_writer_layout {
	uint32_t nnames;
	const char *const *names;
	const uint8_t *kinds; /* SP_KIND_* per name (region_table/kinds), NULL: not written */
	uint64_t nrows;
	uint64_t nevents;
	uint64_t nthreads; /* thread_table rows, with SP_WCOL_THREAD_IDS */
	uint64_t nmpi;     /* values of each MPI column (SP_WCOL_MPI): the events of
			    * the rows that carry MPI data, summed */
	unsigned columns;
	int compression;   /* gzip level 1-9 (+ shuffle) for event columns; 0 = none */
};

struct sp_writer_row {
	uint32_t region, rank;
	uint64_t offset, count;
	int64_t source_line;
	const char *source_file; /* NULL: "" */
	struct sp_summary_record summary;
	uint64_t dropped;
	uint64_t throttled_calls;
	int64_t throttled_ns;
	uint64_t throttle_timed;  /* with SP_WCOL_THROTTLED: calls timed by sampling */
	int64_t throttled_ci_ns;  /* 95 % half-width, 0 exact, -1 unknown */
	int64_t throttled_since_ns; /* -1 never throttled */
	int64_t patched_since_ns;   /* -1 never patched */
	int64_t mpi_offset;      /* SP_WCOL_MPI: first value in the MPI columns, -1 none */
};

/* Event columns of one slice; members for absent columns are ignored. */
struct sp_writer_events {
	const int64_t *start, *end;
	const int64_t *thread_ids;
};

/*
 * A slice of the MPI columns (SP_WCOL_MPI), which hold layout.nmpi values:
 * the events of the rows with MPI data only, at their rows' mpi_offset.
 * callsite_ids is read with SP_WCOL_CALLSITE only.
 */
struct sp_writer_mpi {
	const int64_t *bytes;
	const int32_t *peers, *roots, *tags, *comms;
	const int32_t *callsite_ids;
};

struct sp_writer_thread {
	uint32_t rank;
	int64_t index, ident, native_id, start_ns, end_ns, cpu_ns;
};

/* An extension group (/callsites, /mpi_communicators, ...): 1-D columns,
 * each of its own length, and int64 scalar attributes. */
enum sp_writer_type { SP_WTYPE_U32, SP_WTYPE_I32, SP_WTYPE_U64, SP_WTYPE_I64, SP_WTYPE_STR,
		       SP_WTYPE_F64 };

struct sp_writer_column {
	const char *name;
	enum sp_writer_type type;
	uint64_t n;
	const void *data;        /* n values; SP_WTYPE_STR: n const char * */
};

struct sp_writer_attr {
	const char *name;
	int64_t value;
};

struct sp_writer_group {
	const char *name;
	size_t ncolumns;
	const struct sp_writer_column *columns;
	size_t nattrs;
	const struct sp_writer_attr *attrs;
};

struct sp_writer;

/* Create the temporary file with every dataset sized. Returns 0 or -errno
 * (-EIO for an HDF5 failure, -ENOLCK when HDF5 could not lock the file). */
SP_HIDDEN int sp_writer_create(const char *path, const struct sp_writer_layout *layout,
				      struct sp_writer **ret_writer);
SP_HIDDEN int sp_writer_put_rows(struct sp_writer *w, uint64_t first, uint64_t n,
					const struct sp_writer_row *rows);
/*
 * Uncompressed, non-empty files: the descriptor and the byte offsets of
 * the start and end columns (nevents little-endian int64 each, storage
 * allocated), for the caller to pwrite them directly: a finalize then
 * streams events through small buffers instead of building 16 B/event
 * arrays for HDF5 to copy. After this, put_events also takes start =
 * end = NULL (written already). The descriptor stays the writer's.
 * Returns 0 or -ENOTSUP.
 */
SP_HIDDEN int sp_writer_times_raw(struct sp_writer *w, int *fd, uint64_t *off_start,
					 uint64_t *off_end);
SP_HIDDEN int sp_writer_put_events(struct sp_writer *w, uint64_t first, uint64_t n,
					  const struct sp_writer_events *ev);
/* Values [first, first+n) of the MPI columns. Returns 0, -EINVAL or -EIO. */
SP_HIDDEN int sp_writer_put_mpi(struct sp_writer *w, uint64_t first, uint64_t n,
				       const struct sp_writer_mpi *m);
SP_HIDDEN int sp_writer_put_threads(struct sp_writer *w, uint64_t first, uint64_t n,
					   const struct sp_writer_thread *threads);
/* Add an extension group, columns contiguous. Returns 0, -EIO or -ENOMEM. */
SP_HIDDEN int sp_writer_put_group(struct sp_writer *w, const struct sp_writer_group *g);
SP_HIDDEN int sp_writer_put_metadata(struct sp_writer *w, const struct sp_run_meta *m);
/* Close, fsync and rename over the final path. The writer is freed. */
SP_HIDDEN int sp_writer_commit(struct sp_writer *w);
/* Abandon the file (temporary removed). Accepts NULL. */
SP_HIDDEN void sp_writer_destroy(struct sp_writer *w);

#endif /* SP_WRITER_H */
