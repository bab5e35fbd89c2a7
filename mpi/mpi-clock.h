/* SPDX-License-Identifier: MIT */
/*
 * One timeline across hosts (docs/MPI.md): every rank's CLOCK_MONOTONIC
 * measured against rank 0's at MPI_Init and again at MPI_Finalize, by
 * ping-pongs on the private communicator; the two offsets give a linear
 * map (offset + drift) that puts the rank's snapshot on rank 0's timeline.
 * Rank 0 gathers every rank's parameters for the file's /clock_sync.
 */
#ifndef SP_MPI_CLOCK_H
#define SP_MPI_CLOCK_H

#include <mpi.h>

#include "compiler.h"
#include "groups.h"
#include "snapshot.h"

/* Ping-pongs per rank and measurement; the one of shortest round trip
 * is kept. */
#define SP_MPI_CLOCK_PINGPONGS 10

/* At MPI_Init, once the private communicator exists: the first
 * measurement. Collective on comm (every rank, whatever the configuration). */
SP_HIDDEN void sp_mpi_clock_init(MPI_Comm comm);

/*
 * At MPI_Finalize, collective on comm (also on ranks that recorded
 * nothing): the second measurement, the fit, and s (may be empty) mapped
 * in place onto rank 0's timeline when the rank's clock is not rank 0's
 * (another boot, or the test skew): every timestamp through one increasing
 * map, so durations change by the drift (ppm) and nesting is kept. Of the
 * events, those in memory ([0, s->nmem)) are mapped.
 * Rank 0 keeps every rank's parameters for sp_mpi_clock_add_group().
 */
SP_HIDDEN void sp_mpi_clock_finalize(struct sp_snapshot *s, MPI_Comm comm);
/* After it: one time (CLOCK_MONOTONIC ns of this rank) through the same
 * map, for times not in s when it ran (events [s->nmem, s->nevents),
 * streamed later; sp_stream_part's map, ctx unused). */
SP_HIDDEN int64_t sp_mpi_clock_map_ns(const void *ctx, int64_t t);
/* After it: a snapshot taken again mapped as s was. */
SP_HIDDEN void sp_mpi_clock_apply(struct sp_snapshot *s);

/* Rank 0, after sp_mpi_clock_finalize(): the /clock_sync rows into g (no
 * group when nothing was measured). Returns 0 or -ENOMEM. */
SP_HIDDEN int sp_mpi_clock_add_group(struct sp_groups *g);

#endif /* SP_MPI_CLOCK_H */
