/* SPDX-License-Identifier: MIT */
/*
 * The profiler's own share of a profile, estimated from its self-measurement
 * (metadata profiler_event_cost_ns): the summary footer and the per-region
 * `profiler_overhead_estimate` key of `summary --json` (docs/FORMAT.md).
 */
#ifndef SP_CLI_OVERHEAD_ESTIMATE_H
#define SP_CLI_OVERHEAD_ESTIMATE_H

#include <stdint.h>
#include <stdio.h>

#include "scope-profiler-reader.h"

struct cli_overhead {
	double cost_ns;     /* profiler_event_cost_ns: one recorded call */
	uint64_t events;    /* selected calls on the timeline */
	uint64_t hidden;    /* selected calls counted but not on it (throttled...) */
	uint64_t counted;   /* of the hidden, counted only (not timed) */
	double call_ns;     /* profiler_call_cost_ns (timed call, in-run), <0 absent */
	double count_ns;    /* profiler_count_cost_ns (counted-only call) */
	double fixed_s;     /* event memory + finalize, over the selected ranks */
	double estimate_s;  /* timed x call_ns + counted x count_ns + fixed; without
			     * the in-run keys (older files): (events + hidden) x cost */
	double run_s;       /* run time x the selected ranks that ran at once
			     * (profiler_concurrency; without it all); 0 unknown */
	double finalize_s;  /* profiler_finalize_ns x the same (once without it; in
			     * fixed_s): after the run time, so the share's
			     * denominator adds it; 0 absent */
};

/* The estimate in percent of the run and its finalize (the run time
 * alone when the file has no finalize time), < 0 when unknown. */
double cli_overhead_pct(const struct cli_overhead *o);

/**
 * Whole-file estimate over the selected regions and ranks.
 * @return 1 with *ret filled, 0 when the file has no self-measurement,
 *         or a negative errno.
 */
int cli_overhead_file(struct sp_reader *r, const struct sp_selection *sel,
		      struct cli_overhead *ret);

/**
 * Per-region estimate in seconds, indexed by region id
 * (sp_reader_num_regions() entries, -1 for regions not in the call tree):
 * cost x (the region's calls on the timeline + its counted-only calls + the
 * timeline calls nested inside its calls), since a nested call's recording
 * cost lands inside the caller's inclusive time. Caller frees *ret.
 * @return 1, 0 without self-measurement, or a negative errno.
 */
int cli_overhead_regions(struct sp_reader *r, const struct sp_selection *sel,
			 double **ret);

/** The summary footer line, nothing without self-measurement. */
void cli_overhead_print_footer(FILE *f, struct sp_reader *r, const struct sp_selection *sel);

#endif
