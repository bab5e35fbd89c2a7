/* SPDX-License-Identifier: MIT */
/*
 * This process's file: the serial write and a rank's own file, through the
 * one parts-to-file path (assemble.h), with the metadata of this run.
 */
#ifndef SP_OUTPUT_H
#define SP_OUTPUT_H

#include "compiler.h"
#include "assemble.h"
#include "metadata.h"
#include "snapshot.h"

/* Run information for the metadata, with finalize_time_ns = now. */
SP_HIDDEN void sp_run_info_init(struct sp_run_info *run, int rank, int size);
/*
 * Write one snapshot as a complete file, with its MPI values (nmpi of them,
 * mpi_offsets per row, -1 none; NULL and 0: no MPI data), the optional
 * columns they need (SP_WCOL_MPI, SP_WCOL_CALLSITE) and the groups (NULL:
 * none), and this run's metadata. Returns 0 or -errno.
 */
SP_HIDDEN int sp_output_write_part(const char *path, const struct sp_snapshot *s,
					  uint64_t nmpi, unsigned mpi_columns,
					  const int64_t *mpi_offsets, const struct sp_part_mpi *mpi,
					  const struct sp_groups *groups, int rank, int size);
/* One process's snapshot as a complete file, no MPI data (tests). */
SP_HIDDEN int sp_output_write_single(const char *path, struct sp_snapshot *s,
					    int rank, int size);
/*
 * Take this process's snapshot into *s and write it as a complete file,
 * filling the event times in place in the file when it is uncompressed.
 * *s is valid or zeroed afterwards (free it either way); its start/end are
 * NULL when they were filled in place.
 */
SP_HIDDEN int sp_output_write_local(const char *path, struct sp_snapshot *s, int rank,
					   int size);
/*
 * Set by the MPI layer: writes a rank's own file with its MPI values and
 * groups (taking *s as sp_output_write_local does), or returns -ENOTSUP
 * when this process is not an MPI rank.
 */
SP_HIDDEN extern int (*sp_output_local_hook)(const char *path, struct sp_snapshot *s,
						    int rank, int size);

#endif /* SP_OUTPUT_H */
