/* SPDX-License-Identifier: MIT */
/*
 * The one way from ranks' data to a file: the serial write, the MPI
 * finalize, `merge` and `recover` all describe their ranks as parts (sizes
 * first, then rows, events, MPI values and threads in any slices), the
 * unified names and the optional groups, and this module lays them out in
 * the file through the writer. Where a part's data comes from (a snapshot
 * in memory, a message from another rank, a spill or another file) is the
 * caller's business, so that a part can also be put by the rank that owns
 * it once the writer can be shared.
 */
#ifndef SP_ASSEMBLE_H
#define SP_ASSEMBLE_H

#include <stddef.h>
#include <stdint.h>

#include "compiler.h"
#include "groups.h"
#include "metadata.h"
#include "snapshot.h"
#include "writer.h"

/* What one rank contributes, known before its data. */
struct sp_part_size {
	uint32_t rank;
	uint64_t nrows, nevents, nthreads;
	uint64_t nmpi;          /* MPI values (row layout): the events of its MPI rows */
	uint64_t dropped;       /* calls lost, for the dropped_events key */
	unsigned columns;       /* SP_WCOL_* the part needs */
};

/* A part's MPI values [first, first+n) in the row layout; callsite_ids
 * already in the file's call-site ids. */
struct sp_part_mpi {
	const int64_t *bytes;
	const int32_t *peers, *roots, *tags, *comms, *callsite_ids;
};

/* Optional columns a snapshot's rows and threads need (no MPI ones). */
SP_HIDDEN unsigned sp_part_columns(const struct sp_snapshot *s);
/* A snapshot's part size (nmpi 0). */
SP_HIDDEN struct sp_part_size sp_part_size_of(const struct sp_snapshot *s, uint32_t rank);

struct sp_assembly;

/*
 * Create the file for parts[0..nparts) in that order, with names (the
 * file's region ids; copied by the writer), their kinds (SP_KIND_*, NULL:
 * region_table/kinds not written) and gzip level compression.
 * Returns 0 or -errno (as sp_writer_create).
 */
SP_HIDDEN int sp_assembly_create(const char *path, const char *const *names,
				     const uint8_t *kinds, uint32_t nnames,
				     const struct sp_part_size *parts, size_t nparts,
				     int compression, struct sp_assembly **ret_a);
/* The file's optional columns (the union of the parts'). */
SP_HIDDEN unsigned sp_assembly_columns(const struct sp_assembly *a);
/*
 * Rows [first, first+n) of part p, offsets relative to the part's events.
 * region_map (NULL: identity) turns row.region into the file's id;
 * mpi_offsets (NULL: none) is per row its first MPI value in the part, -1
 * none. Returns 0, -EINVAL or -EIO.
 */
SP_HIDDEN int sp_assembly_put_rows(struct sp_assembly *a, size_t p, uint64_t first, uint64_t n,
				       const struct sp_snap_row *rows, const uint32_t *region_map,
				       const int64_t *mpi_offsets);
/* Events [first, first+n) of part p; start = end = NULL when they went
 * through sp_assembly_times_raw already; thread NULL: all thread 0. */
SP_HIDDEN int sp_assembly_put_events(struct sp_assembly *a, size_t p, uint64_t first,
					 uint64_t n, const int64_t *start, const int64_t *end,
					 const uint32_t *thread);
/* Where the whole start/end (and thread) columns lie (sp_writer_times_raw). */
SP_HIDDEN int sp_assembly_times_raw(struct sp_assembly *a, struct sp_writer_times *ret_times);
/* The parts' rows carry exclusive_ns (one part: sp_assembly_put_snapshot
 * of a snapshot that nested its calls sets it): the commit computes none. */
SP_HIDDEN void sp_assembly_exclusive_given(struct sp_assembly *a);
SP_HIDDEN int sp_assembly_put_mpi(struct sp_assembly *a, size_t p, uint64_t first, uint64_t n,
				      const struct sp_part_mpi *m);
/* All threads of part p (its nthreads); end_ns 0 is written as given. */
SP_HIDDEN int sp_assembly_put_threads(struct sp_assembly *a, size_t p,
					  const struct sp_snap_thread *threads);
/*
 * Part p from a snapshot: rows (through region_map), events, threads, and
 * the MPI values when mpi_offsets is given (m: all of the part's values).
 */
SP_HIDDEN int sp_assembly_put_snapshot(struct sp_assembly *a, size_t p,
					   const struct sp_snapshot *s, const uint32_t *region_map,
					   const int64_t *mpi_offsets, const struct sp_part_mpi *m);
/*
 * Write the groups (NULL: none) and the metadata, dropped_events set from
 * the parts, and publish the file. The assembly is freed either way.
 */
SP_HIDDEN int sp_assembly_commit(struct sp_assembly *a, struct sp_run_meta *meta,
				     const struct sp_groups *groups);
/* Abandon the file. Accepts NULL. */
SP_HIDDEN void sp_assembly_destroy(struct sp_assembly *a);

#endif /* SP_ASSEMBLE_H */
