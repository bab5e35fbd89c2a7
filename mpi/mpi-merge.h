/* SPDX-License-Identifier: MIT */
/*
 * What the two ways of writing the one file at MPI_Finalize share: a rank's
 * contribution (its snapshot, names, MPI rows, communicators, call sites)
 * and the packing of its MPI values. mpi-merge.c streams every rank through
 * rank 0 (the fallback); mpi-pwrite.c has every rank write its own slices
 * through MPI-IO into the layout rank 0 creates (the default).
 */
#ifndef SP_MPI_MERGE_H
#define SP_MPI_MERGE_H

#include <stdbool.h>
#include <stdint.h>

#include "assemble.h"
#include "mpi-callsites.h"
#include "mpi-record.h"
#include "snapshot.h"

/* A rank's sizes, as the serial stream sends them to rank 0. */
struct sp_merge_hdr {
	uint64_t names_bytes, nrows, nevents, nthreads, dropped;
	uint32_t nnames, columns, ncomms, ok;
	uint64_t sites_bytes;  /* call-site keys (mpi-callsites.h), unified like names */
	uint32_t nsites, pad;
	uint64_t nmpi;         /* MPI values: the events of the rows with MPI data */
};

/* Everything one rank contributes. */
struct sp_merge_local {
	struct sp_snapshot s;
	/* Non-NULL: a big snapshot kept bounded (sp_merge_local_take): only
	 * the rows with MPI values are in memory, the plan streams the rest
	 * into the file (sp_pwrite). */
	struct sp_snapshot_plan *plan;
	struct sp_merge_hdr h;
	char *names;           /* names back to back, NUL-terminated */
	uint32_t *map;         /* local name -> the file's id */
	int64_t *row_mpi;      /* per row: first of its MPI values, -1 none */
	struct sp_mpi_comm_row *comms;
	struct sp_mpi_sites sites; /* sites.global: local key -> the file's id */
};

/* Where the next MPI value of a rank comes from: row, event in the row. */
struct sp_merge_cursor {
	uint32_t row;
	uint64_t k;
};

/* Bytes per MPI value in a packed buffer: bytes; peer, root, tag, comm, site. */
#define SP_MERGE_MPI_VBYTES (8 + 5 * 4)

/* Take this rank's contribution (recorded: it has a snapshot to take).
 * may_plan: the parallel write will take it, so a snapshot whose events
 * would need more than SP_MERGE_MEMORY_EVENTS_BYTES in memory is kept as
 * a plan (l->plan) with the MPI rows filled, the rest streamed later.
 * Returns 0 or -ENOMEM / -errno (then it contributes nothing, but takes
 * part). */
SP_HIDDEN int sp_merge_local_take(struct sp_merge_local *l, bool recorded, bool may_plan);
/* A planned contribution made whole (the rank-0 stream needs every event
 * in memory): taken again, onto rank 0's timeline, whether its plan was
 * streamed or not. Returns 0 or -errno. */
SP_HIDDEN int sp_merge_local_fill(struct sp_merge_local *l);
/* Event memory of an in-memory snapshot (start, end, thread, aux: 24 B an
 * event) above which the parallel write streams: the finalize's memory
 * beyond the recording's then stays within a constant. */
#define SP_MERGE_MEMORY_EVENTS_BYTES ((uint64_t)32 << 20)
SP_HIDDEN void sp_merge_local_free(struct sp_merge_local *l);
/* The next n MPI values (row order) as six columns into buf. */
SP_HIDDEN void sp_merge_pack_mpi(const struct sp_merge_local *l, struct sp_merge_cursor *c,
				 uint64_t n, char *buf);
/* The six columns of a buffer of n packed values. */
SP_HIDDEN struct sp_part_mpi sp_merge_mpi_view(char *buf, uint64_t n);
/* Communicators of rank `rank` into the groups. Returns 0 or -ENOMEM. */
SP_HIDDEN int sp_merge_add_comms(struct sp_groups *g, const struct sp_mpi_comm_row *c,
				 uint32_t n, uint32_t rank);
/* The metadata every finalize writes: the run's, mpi_size, dropped events,
 * the time taken since t0, the path and what rank 0 received. */
SP_HIDDEN int sp_merge_meta(struct sp_run_meta *meta, int64_t t0, uint64_t dropped,
			    const char *path, uint64_t recv_bytes);
/* Rank 0, after the job's file: one line when calls were dropped (the
 * README's promise, as the serial finalize gives it). */
SP_HIDDEN void sp_merge_warn_dropped(uint64_t dropped, int ranks, bool written);

/*
 * The rank-0 stream (every rank, collective on comm): write the file at
 * path. Returns 0 when the file was written (on rank 0; other ranks 0).
 */
SP_HIDDEN int sp_merge_serial(struct sp_merge_local *l, MPI_Comm comm, const char *path);

/* A file of at most this many bytes after the layout (FINALIZE=auto) has
 * its slices written by rank 0, gathered, instead of through MPI-IO. */
#define SP_PWRITE_GATHER_MAX (16u << 20)
/* So has a bigger one when every rank is on one crowded host (more ranks
 * than CPUs: MPI-IO's collective rounds among ranks that share the cores
 * cost more than rank 0 writing alone), in rounds of at most this many
 * bytes of events and MPI values from all ranks together. */
#define SP_PWRITE_GATHER_ROUND (8u << 20)

/* The parallel write (every rank, collective on comm). */
enum { SP_PWRITE_DONE = 0, SP_PWRITE_FALLBACK = 1 };
/* Returns SP_PWRITE_DONE (written: 0 on every rank), SP_PWRITE_FALLBACK
 * (nothing written; every rank agrees to take the stream) or -errno (the
 * file could not be written; every rank agrees). */
SP_HIDDEN int sp_pwrite(struct sp_merge_local *l, MPI_Comm comm, const char *path);

#endif /* SP_MPI_MERGE_H */
