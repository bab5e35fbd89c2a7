/* SPDX-License-Identifier: MIT */
/*
 * How much of a profile's time is the profiler's own: calls x the per-call
 * cost the recorder measured at start (profiler_event_cost_ns). Whole file
 * (summary footer) and per region (summary --json); definitions in
 * docs/FORMAT.md, "Self-measurement".
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "overhead-estimate.h"

static double meta_double(const struct sp_reader *r, const char *key)
{
	const struct sp_meta *m = sp_reader_metadata_find(r, key);

	if (!m)
		return -1;
	if (m->type == SP_META_FLOAT)
		return m->f;
	if (m->type == SP_META_INT)
		return (double)m->i;
	return -1;
}

static double event_cost_ns(const struct sp_reader *r)
{
	return meta_double(r, "profiler_event_cost_ns");
}

/* selected[id]: the region passes the selection. Caller frees. */
static bool *selected_regions(const struct sp_reader *r, const struct sp_selection *sel)
{
	size_t nreg = sp_reader_num_regions(r);
	bool *mark = calloc(nreg + 1, sizeof(*mark));
	uint32_t *ids = NULL;
	int n = mark ? sp_reader_regions(r, sel, &ids) : -ENOMEM;

	if (n < 0) {
		free(mark);
		return NULL;
	}
	for (int i = 0; i < n; i++)
		mark[ids[i]] = true;
	free(ids);
	return mark;
}

int cli_overhead_file(struct sp_reader *r, const struct sp_selection *sel,
		      struct cli_overhead *ret)
{
	struct cli_overhead o = { .cost_ns = event_cost_ns(r) };
	struct sp_times times;
	const uint32_t *ranks;
	size_t nranks = sp_reader_ranks(r, &ranks), used = 0;
	bool *mark;

	if (!(o.cost_ns >= 0))
		return 0;
	if (!(mark = selected_regions(r, sel)))
		return -ENOMEM;
	for (size_t i = 0; i < sp_reader_num_rows(r); i++) {
		const struct sp_row *row = sp_reader_row(r, i);

		if (!mark[row->region] || !sp_selection_match_rank(sel, row->rank))
			continue;
		o.events += row->count ? row->count : row->has_aggregate ? row->agg_count : 0;
		if (row->throttled_count > 0)
			o.hidden += (uint64_t)row->throttled_count;
		/* Counted-only calls: throttled ones that were not timed. */
		if (row->throttled_count > 0 && row->throttle_timed >= 0)
			o.counted += (uint64_t)row->throttled_count -
				     ((uint64_t)row->throttle_timed < (uint64_t)row->throttled_count
				      ? (uint64_t)row->throttle_timed : (uint64_t)row->throttled_count);
	}
	free(mark);
	for (size_t k = 0; k < nranks; k++)
		used += sp_selection_match_rank(sel, ranks[k]);
	sp_reader_times(r, &times);
	o.call_ns = meta_double(r, "profiler_call_cost_ns");
	o.count_ns = meta_double(r, "profiler_count_cost_ns");
	double alloc = meta_double(r, "profiler_alloc_ns"), fin = meta_double(r, "profiler_finalize_ns");
	/* The ranks that could run at once (MPI files since stop 41): the
	 * finalize, which every rank waits out, costs the run its time on each
	 * of them, and the run's own time counts on as many; on a node with
	 * more ranks than CPUs that is the CPUs. Without it (older files,
	 * serial runs): the finalize once, the run time of every rank. */
	double conc = meta_double(r, "profiler_concurrency");
	double at_once = conc >= 1 ? (conc < (double)used ? conc : (double)used) : -1;
	if (alloc >= 0 && fin >= 0) {
		/* This run's costs: timed calls at their cost probed during the
		 * run (or, with every call recorded on the inline path and no
		 * probe, the start-up measurement), counted ones at theirs; start-up
		 * and event memory on every rank; finalize (rank 0's: the merge
		 * and the write, which the other ranks wait for) on every rank
		 * that ran at once. */
		if (o.call_ns < 0)
			o.call_ns = o.cost_ns;
		if (o.count_ns < 0)
			o.count_ns = 0;
		double start = meta_double(r, "profiler_startup_ns");
		o.finalize_s = fin * (at_once > 0 ? at_once : 1) / 1e9;
		o.fixed_s = (alloc + (start > 0 ? start : 0)) * (double)used / 1e9 + o.finalize_s;
		o.estimate_s = ((double)(o.events + o.hidden - o.counted) * o.call_ns +
				(double)o.counted * o.count_ns) / 1e9 + o.fixed_s;
	} else {
		o.call_ns = -1;
		o.estimate_s = (double)(o.events + o.hidden) * o.cost_ns / 1e9;
	}
	o.run_s = times.has_total_time && times.total_time > 0
		? times.total_time * (at_once > 0 ? at_once : (double)used) : 0;
	*ret = o;
	return 1;
}

/* Counted-only calls of every region over the selected ranks. */
static void add_hidden(const struct sp_reader *r, const struct sp_selection *sel, double *est,
		       double cost_s)
{
	for (size_t i = 0; i < sp_reader_num_rows(r); i++) {
		const struct sp_row *row = sp_reader_row(r, i);

		if (row->throttled_count > 0 && est[row->region] >= 0 &&
		    sp_selection_match_rank(sel, row->rank))
			est[row->region] += (double)row->throttled_count * cost_s;
	}
}

int cli_overhead_regions(struct sp_reader *r, const struct sp_selection *sel,
			 double **ret)
{
	/* The in-run costs when the file has them (timeline calls are timed,
	 * hidden ones mostly counted only), else the start-up one for both. */
	double call = meta_double(r, "profiler_call_cost_ns");
	double count = meta_double(r, "profiler_count_cost_ns");
	double cost = call >= 0 && count >= 0 ? call : event_cost_ns(r);
	double hidden_cost = call >= 0 && count >= 0 ? count : cost;
	size_t nreg = sp_reader_num_regions(r), n;
	struct sp_summary *s;
	uint32_t *path;
	double *est;
	int rc;

	if (!(cost >= 0))
		return 0;
	rc = sp_summary_build_flags(r, sel, SP_SORT_START, SP_SUMMARY_NO_SPREAD, &s);
	if (rc < 0)
		return rc;
	n = sp_summary_count(s);
	est = malloc((nreg + 1) * sizeof(*est));
	path = malloc((n + 1) * sizeof(*path));
	if (!est || !path) {
		free(est);
		free(path);
		sp_summary_destroy(s);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nreg; i++)
		est[i] = -1;
	/*
	 * Rows are the call tree in pre-order. For each row of region R that
	 * has no ancestor of region R (recursion counted once), add the calls
	 * of its whole subtree: its own calls and every call nested in them.
	 */
	for (size_t i = 0; i < n; i++) {
		const struct sp_summary_row *row = sp_summary_get(s, i);
		uint64_t calls = 0;
		bool nested = false;

		if (row->own)
			continue;
		path[row->depth] = row->region;
		for (int d = 0; d < row->depth && !nested; d++)
			nested = path[d] == row->region;
		if (est[row->region] < 0)
			est[row->region] = 0;
		if (nested)
			continue;
		for (size_t j = i; j < n; j++) {
			const struct sp_summary_row *sub = sp_summary_get(s, j);

			if (j > i && sub->depth <= row->depth)
				break;
			if (!sub->own)
				calls += sub->calls;
		}
		est[row->region] += (double)calls * cost / 1e9;
	}
	free(path);
	sp_summary_destroy(s);
	add_hidden(r, sel, est, hidden_cost / 1e9);
	*ret = est;
	return 1;
}

double cli_overhead_pct(const struct cli_overhead *o)
{
	return o->run_s > 0 ? 100.0 * o->estimate_s / (o->run_s + o->finalize_s) : -1;
}

void cli_overhead_print_footer(FILE *f, struct sp_reader *r, const struct sp_selection *sel)
{
	struct cli_overhead o;

	if (cli_overhead_file(r, sel, &o) <= 0)
		return;
	if (o.call_ns >= 0)
		fprintf(f, "profiler overhead estimate: %llu timed calls x %.1f ns + %llu counted x %.1f ns"
			   " + %.3f s start-up, memory and finalize = %.6f s",
			(unsigned long long)(o.events + o.hidden - o.counted), o.call_ns,
			(unsigned long long)o.counted, o.count_ns, o.fixed_s, o.estimate_s);
	else
		fprintf(f, "profiler overhead estimate: %llu calls x %.1f ns = %.6f s",
			(unsigned long long)(o.events + o.hidden), o.cost_ns, o.estimate_s);
	if (o.run_s > 0)
		fprintf(f, " (%.3f %% of the run%s)", cli_overhead_pct(&o),
			o.finalize_s > 0 ? " and its finalize" : "");
	fputc('\n', f);
}
