/* SPDX-License-Identifier: MIT */
/*
 * The text screens of `scope-profiler summary` (docs/SUMMARY.md): the
 * header line, the call-path tree, the flat top 10 by exclusive time, the
 * MPI block, and the flat view of --flat.
 */
#ifndef SP_CLI_SUMMARY_VIEW_H
#define SP_CLI_SUMMARY_VIEW_H

#include <stdbool.h>
#include <stdio.h>

#include "cli-common.h"
#include "table.h"

/* The statistics a column shows or a sort orders by (summary_key_parse). */
enum sv_key {
	SV_REGION, SV_RANKS, SV_CALLS, SV_TOTAL, SV_EXCL, SV_PERCENT, SV_AVG,
	SV_MIN, SV_MAX, SV_FIRST, SV_LAST, SV_STD, SV_P50, SV_P95, SV_P99,
	SV_IMBALANCE, SV_SLOWEST, SV_START, SV_NAME, SV_NKEYS
};

struct summary_opts {
	const char *columns;  /* --columns, NULL: the default */
	enum sv_key sort;     /* --sort, SV_START: call order (tree), total (flat) */
	bool sorted;          /* --sort was given */
	bool sum;             /* --sum: totals over ranks instead of per-rank means */
	bool flat;            /* --flat: one row per region, sorted globally */
	struct tbl_style st;
};

/** Key by name ("exclusive", "p95", ...). @return 0 or -1. */
int summary_key_parse(const char *name, enum sv_key *ret);
/** The comma-separated key names (for messages and --help). */
extern const char summary_key_names[];

/** The default screen or the flat view of one file. @return 0 or EXIT_USAGE. */
int summary_print(const struct cli_common *c, FILE *f, struct sp_reader *r,
		  const struct summary_opts *o);

/* summary-mpi.c: the header line and the MPI block. */
struct summary_run {
	unsigned nranks;     /* selected ranks holding rows */
	double wall;         /* run time, wall clock (s); 0 unknown */
	double mpi_mean;     /* MPI time per rank, mean (s); < 0 not an MPI run */
};
void summary_run_info(struct sp_reader *r, const struct sp_selection *sel,
		      struct summary_run *ret);
void summary_print_header(FILE *f, struct sp_reader *r, const struct sp_selection *sel,
			  const struct summary_run *run, bool sum);
int summary_print_mpi(FILE *f, struct sp_reader *r, const struct sp_selection *sel,
		      const struct summary_run *run, const struct summary_opts *o);

#endif
