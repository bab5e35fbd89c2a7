/* SPDX-License-Identifier: MIT */
/*
 * Inputs of `merge` and `recover`: per-rank HDF5 files (read with the
 * reader library) and raw spill files, each turned into one part per rank
 * (snapshot, MPI values; the files' groups merged), then written as one
 * file through the recorder's parts-to-file path.
 */
#ifndef SP_RANK_INPUTS_H
#define SP_RANK_INPUTS_H

#include <stdbool.h>
#include <stdint.h>

#include "cli-common.h"
#include "groups.h"
#include "names.h"
#include "snapshot.h"

struct rank_input {
	const char *path;
	uint32_t rank;
	int32_t size;            /* ranks of its run as the file says, 0 unknown */
	bool partial;            /* ended at a signal or crash (spill file) */
	int signo;               /* that signal; -1 no trailer (SIGKILL); 0 none */
	uint64_t unclosed;       /* calls still open when the process died */
	int64_t start_ns, end_ns;
	struct sp_snapshot s;
	/* MPI values in the row layout: NULL when the input has no MPI
	 * columns; per snapshot row its first value, -1 none. */
	int64_t *mpi_offsets;
	uint64_t nmpi;
	int64_t *mpi_bytes;      /* nmpi values */
	int32_t *mpi_i32;        /* peers, roots, tags, comms, call-site ids: 5 x nmpi */
	bool has_sites;          /* call-site ids read (in the merged /callsites' ids) */
	struct sp_reader *reader; /* keeps the source-file strings alive */
};

struct rank_inputs {
	struct rank_input *v;
	size_t n;
	struct sp_reader *first_h5; /* metadata source for the merged file */
	struct sp_names names;      /* the merged region table */
	uint8_t *kinds;             /* its SP_KIND_* per name */
	struct sp_groups groups;    /* the HDF5 inputs' groups, merged */
};

/* Load every file (HDF5 profile: one input per rank it holds; spill file:
 * one input). Ranks must be distinct. Errors are reported; returns 0 or
 * EXIT_USAGE. */
int rank_inputs_load(const struct cli_common *c, struct rank_inputs *in);
/* Write them as one file (ranks ascending) with metadata partial set when
 * any input is partial or ranks are missing. Returns 0 or EXIT_USAGE. */
int rank_inputs_write(const struct cli_common *c, struct rank_inputs *in, const char *out);
void rank_inputs_free(struct rank_inputs *in);
/* The whole command `scope-profiler NAME FILE... -o OUT [--json]`: load,
 * write, print a line. */
int rank_inputs_main(int argc, char **argv, const char *name, const char *description);

#endif /* SP_RANK_INPUTS_H */
