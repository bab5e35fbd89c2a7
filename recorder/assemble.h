/* SPDX-License-Identifier: MIT */
/*
 * Several ranks' snapshots written as one schema-2 file, region names
 * unified: the writer behind `scope-profiler recover` and `merge`. Kept free
 * of the recorder's metadata and writer types so that a CLI file can use it
 * next to the reader's header.
 */
#ifndef SP_ASSEMBLE_H
#define SP_ASSEMBLE_H

#include <stddef.h>
#include <stdint.h>

#include "compiler.h"
#include "snapshot.h"

/*
 * One rank's data. The MPI values are optional (mpi_offsets NULL: the rank
 * has none) and in the file's row layout: mpi_offsets[i] is the first
 * value of snapshot row i in the nmpi values of each array, -1 when the
 * row has none (function and manual regions).
 */
struct sp_asm_rank {
	const struct sp_snapshot *s;
	uint32_t rank;
	const int64_t *mpi_offsets;
	uint64_t nmpi;
	const int64_t *mpi_bytes;
	const int32_t *mpi_peers, *mpi_roots, *mpi_tags, *mpi_comms;
};

enum sp_asm_meta_type { SP_ASM_INT, SP_ASM_DOUBLE, SP_ASM_STR, SP_ASM_STRLIST };

struct sp_asm_meta {
	const char *key;
	enum sp_asm_meta_type type;
	int64_t i;
	double d;
	const char *s;
	const char *const *list;
	size_t n;
};

/* Write ranks[0..n) (in that order) and the metadata to path, atomically
 * (temporary file + rename). dropped_events is set from the ranks. Returns
 * 0 or -errno (-EIO for an HDF5 failure, -EINVAL for MPI offsets outside
 * the rank's values). */
SP_HIDDEN int sp_assemble_write(const char *path, const struct sp_asm_rank *ranks, size_t n,
				    const struct sp_asm_meta *meta, size_t nmeta);

#endif /* SP_ASSEMBLE_H */
