/* SPDX-License-Identifier: MIT */
/*
 * MPI call sites after the run: each rank turns its threads' address
 * tuples into text keys (function, file and line of every frame, resolved
 * with the function hooks' symbolizer), the merge unifies the keys across
 * ranks like region names, and /callsites is made from them (groups.c).
 * The capture side (hot path) is declared in mpi-record.h.
 */
#ifndef SP_MPI_CALLSITES_H
#define SP_MPI_CALLSITES_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"
#include "names.h"
#include "snapshot.h"

/* One rank's call sites, resolved. */
struct sp_mpi_sites {
	char *blob;          /* n keys, NUL-terminated, back to back */
	uint64_t bytes;      /* of blob, terminators included */
	uint32_t n;
	uint32_t nthreads;
	uint32_t **local;    /* [thread index][thread site id] -> key index */
	uint32_t *nlocal;    /* sites per thread */
	uint32_t *global;    /* key index -> row of /callsites (set by the merge) */
};

/* True when call sites are captured in this process. */
SP_HIDDEN bool sp_mpi_sites_enabled(void);
/* Resolve every site of every thread (recording stopped). An empty set
 * when call sites are off. Returns 0 or -ENOMEM (then *s is empty). */
SP_HIDDEN int sp_mpi_sites_take(struct sp_mpi_sites *s);
SP_HIDDEN void sp_mpi_sites_free(struct sp_mpi_sites *s);
/* events/callsite_ids of snapshot events [first, first+n): the row of
 * /callsites, -1 for an event without a site. */
SP_HIDDEN void sp_mpi_site_column(const struct sp_snapshot *snap, uint64_t first, uint64_t n,
				     const struct sp_mpi_sites *s, int32_t *out);
/* Frames captured per site (SCOPE_PROFILER_CALLSITES). */
SP_HIDDEN int64_t sp_mpi_sites_depth(void);

#endif /* SP_MPI_CALLSITES_H */
