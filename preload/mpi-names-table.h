/* SPDX-License-Identifier: MIT */
/*
 * Rank 0's global region-name table of the merge: names in first-seen
 * order (rank 0's, then new names of later ranks) and the local -> global
 * map of each rank's names.
 */
#ifndef SP_MPI_NAMES_TABLE_H
#define SP_MPI_NAMES_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

struct sp_mpi_names {
	char **v;          /* global names, id order */
	uint32_t n, cap;
	uint32_t *slots;   /* open addressing over v */
	size_t nslots;
};

/* Map n NUL-separated names of blob to global ids (added as needed).
 * Returns 0 or -ENOMEM. */
SP_HIDDEN int sp_mpi_names_map(struct sp_mpi_names *t,
							   const char *blob, uint32_t n,
							   uint32_t *map);
SP_HIDDEN void sp_mpi_names_free(struct sp_mpi_names *t);

#endif
