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

#include <stdbool.h>
#include <stddef.h>
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
	/*
	 * The raw layout (the parallel finalize): every fixed-size numeric
	 * dataset contiguous, allocated at creation and never filled by HDF5,
	 * so that other processes write its bytes in place (sp_writer_raw_offsets);
	 * compression must be 0. names are then the file's final names (each
	 * with a row), written at creation with `uncalled`, and the commit
	 * computes nothing: exclusive_totals come in the rows.
	 */
	bool raw;
	const char *const *uncalled;
	uint32_t nuncalled;
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
	int64_t exclusive_ns;    /* raw layout: the row's exclusive ns, -1 unknown
				  * (otherwise computed at the commit) */
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

/*
 * The fixed-size numeric columns of a file, for writers of their bytes in
 * place (raw layout): the events, MPI and thread table columns, then the
 * rank_region_index columns in their table's order (SP_RAW_ROW0 + c; the
 * string columns among them are never raw). Values are little-endian, as
 * in memory on the hosts we build for; the summary compound is unpadded.
 */
enum sp_raw_col {
	SP_RAW_EV_START, SP_RAW_EV_END, SP_RAW_EV_THREAD,
	SP_RAW_MPI_BYTES, SP_RAW_MPI_PEERS, SP_RAW_MPI_ROOTS, SP_RAW_MPI_TAGS, SP_RAW_MPI_COMMS,
	SP_RAW_MPI_SITES,
	SP_RAW_TT_RANKS, SP_RAW_TT_INDEX, SP_RAW_TT_IDENT, SP_RAW_TT_NATIVE_ID, SP_RAW_TT_START,
	SP_RAW_TT_END, SP_RAW_TT_CPU, SP_RAW_TT_DAEMON,
	SP_RAW_ROW0,
	SP_RAW_NCOLS = SP_RAW_ROW0 + 18 /* the rank_region_index table (writer-index.c) */
};
#define SP_RAW_ABSENT UINT64_MAX

/* Bytes per value of column c (0: a string column, never raw). */
SP_HIDDEN size_t sp_raw_col_size(enum sp_raw_col c);
/* For a row column (c >= SP_RAW_ROW0): column c of rows [0, n) as the
 * file's bytes into out (n * sp_raw_col_size(c)). */
SP_HIDDEN void sp_writer_pack_rows(enum sp_raw_col c, const struct sp_writer_row *rows,
				   uint64_t n, void *out);
/* For a thread table column: column c of t[0, n) as the file's bytes. */
SP_HIDDEN void sp_writer_pack_threads(enum sp_raw_col c, const struct sp_writer_thread *t,
				      uint64_t n, void *out);

/*
 * Exclusive ns of one rank's rows from its events in memory, nested per
 * thread lane exactly as at the commit (writer-finish.c): row k covers
 * events [offset[k], offset[k]+count[k]) of start/end/lane (lane NULL: one
 * lane) and pos[k] is its region's position in the file's region order
 * (sp_writer_region_order). out[k], all -1 when the calls do not nest.
 * Returns 0 or -ENOMEM.
 */
SP_HIDDEN int sp_writer_exclusive_rows(size_t nrows, const uint64_t *offset,
				       const uint64_t *count, const uint32_t *pos,
				       const int64_t *start, const int64_t *end,
				       const uint32_t *lane, int64_t *out);
/* One lane's rows merged in start order through nest.c (the path above
 * when every call is on one lane); returns 1, out unset, when a row is not
 * in start order. */
SP_HIDDEN int sp_writer_exclusive_rows_merged(size_t nrows, const uint64_t *offset,
					      const uint64_t *count, const uint32_t *pos,
					      const int64_t *start, const int64_t *end, int64_t *out);
/* The same by sorting every call (the rule's definition; the path above
 * takes it when there are several lanes or a row is out of start order,
 * and the unit test nest checks the merge against it). */
SP_HIDDEN int sp_writer_exclusive_rows_sorted(size_t nrows, const uint64_t *offset,
					      const uint64_t *count, const uint32_t *pos,
					      const int64_t *start, const int64_t *end,
					      const uint32_t *lane, int64_t *out);

/*
 * The regions' positions as the reader orders them: by key (a region's
 * smallest first start in seconds over its rows, 0.0 for a row without
 * calls: sp_writer_region_key), ties in id order. Returns 0 or -ENOMEM.
 */
SP_HIDDEN int sp_writer_region_order(const double *key, uint32_t n, uint32_t *pos);
/* A row's contribution to its region's key (min over the rows). */
SP_HIDDEN double sp_writer_region_key(const int64_t *start, uint64_t n);

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
 * allocated) and of the thread column (the same, SP_RAW_ABSENT without
 * one), for the caller to pwrite them directly: a finalize then streams
 * events through small buffers instead of building 16 B/event arrays for
 * HDF5 to copy. After this, put_events also takes start = end = NULL
 * (written already), with thread_ids NULL when the caller wrote that
 * column too. The descriptors stay the writer's. Returns 0 or -ENOTSUP.
 */
struct sp_writer_times {
	int fd;
	int dirfd;      /* the output's directory (O_PATH), for the caller's temporaries */
	uint64_t start, end, thread;
};
SP_HIDDEN int sp_writer_times_raw(struct sp_writer *w, struct sp_writer_times *ret_times);
/* The rows put carry their exclusive_ns (the caller nested the calls as
 * the commit would): the commit does not read the events back for them. */
SP_HIDDEN void sp_writer_exclusive_given(struct sp_writer *w);
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
/*
 * Raw layout: where each column's bytes start in the file (SP_RAW_ABSENT:
 * not in this file, or empty). Returns 0 or -ENOTSUP (not a raw layout).
 */
SP_HIDDEN int sp_writer_raw_offsets(struct sp_writer *w, uint64_t off[SP_RAW_NCOLS]);
/* Raw layout: the string columns of rows [first, first+n) (source files). */
SP_HIDDEN int sp_writer_put_row_strings(struct sp_writer *w, uint64_t first, uint64_t n,
					const struct sp_writer_row *rows);
/* Raw layout: the names of threads [first, first+n) (from their index). */
SP_HIDDEN int sp_writer_put_thread_names(struct sp_writer *w, uint64_t first, uint64_t n,
					 const struct sp_writer_thread *threads);
/*
 * Raw layout: close the HDF5 file (everything but the raw bytes is in it)
 * and keep the temporary, whose name sp_writer_temp_path gives, for other
 * processes to write; then sp_writer_publish (fsync, rename) or
 * sp_writer_destroy (removed). Returns 0 or -errno.
 */
SP_HIDDEN int sp_writer_seal(struct sp_writer *w);
SP_HIDDEN const char *sp_writer_temp_path(const struct sp_writer *w);
/* The sealed temporary's identity (for a check by the other writers) and
 * size (the raw columns are allocated in it). */
SP_HIDDEN int sp_writer_temp_id(const struct sp_writer *w, uint64_t *dev, uint64_t *ino,
				uint64_t *size);
/* The sealed temporary's descriptor (writable; the writer keeps it), -1
 * when not sealed. */
SP_HIDDEN int sp_writer_temp_fd(const struct sp_writer *w);
/* A sealed file's metadata attributes keys[0..n) (int64s written with
 * sp_writer_put_metadata), set to values: the file opened again by HDF5
 * after the other writers' raw bytes, before sp_writer_publish. The raw
 * data lies inside HDF5's allocation and is not touched. 0 or -errno. */
/* Whether the HDF5 file open at fd (the caller's, read-only) has the
 * string metadata attribute key, equal to value. Loads HDF5 if needed;
 * false on any error (not HDF5, no such key, another type). */
SP_HIDDEN bool sp_writer_meta_str_equals(int fd, const char *key, const char *value);
/* sp_output_adopt's check: the file's metadata process_tree is tree (a
 * string, "<root pid>:<16 hex>"). */
SP_HIDDEN bool sp_writer_of_tree(int fd, void *tree);
SP_HIDDEN int sp_writer_update_ints(struct sp_writer *w, const char *const *keys,
				   const int64_t *values, int n);
/* Publish a sealed file: fsync and rename over the final path. Freed. */
SP_HIDDEN int sp_writer_publish(struct sp_writer *w);
/* Close, fsync and rename over the final path. The writer is freed. */
SP_HIDDEN int sp_writer_commit(struct sp_writer *w);
/* Abandon the file (temporary removed). Accepts NULL. */
SP_HIDDEN void sp_writer_destroy(struct sp_writer *w);

#endif /* SP_WRITER_H */
