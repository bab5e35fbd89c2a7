/* SPDX-License-Identifier: MIT */
/*
 * summary's calls counted but not on the timeline (auto-throttle,
 * MIN_DURATION, MAX_DEPTH): per-region totals, the change of each region's
 * exclusive time once the reader shared them out over the call paths
 * (SP_SUMMARY_THROTTLED), the row marks and their legends (docs/SUMMARY.md).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "summary-view.h"

struct region_info *summary_region_infos(struct sp_reader *r, const struct sp_selection *sel)
{
	size_t nreg = sp_reader_num_regions(r);
	struct region_info *ri = calloc(nreg ? nreg : 1, sizeof(*ri));
	double *best = calloc(nreg ? nreg : 1, sizeof(*best));

	if (!ri || !best) {
		free(ri);
		free(best);
		return NULL;
	}
	for (size_t i = 0; i < nreg; i++)
		ri[i].slowest = -1;
	for (size_t i = 0; i < sp_reader_num_rows(r); i++) {
		const struct sp_row *row = sp_reader_row(r, i);
		struct sp_stats st;
		double t;

		if (row->region >= nreg || !sp_selection_match_rank(sel, row->rank))
			continue;
		if (row->throttled_count > 0) {
			ri[row->region].hidden_calls += (uint64_t)row->throttled_count;
			ri[row->region].hidden_ns += row->throttled_total_ns > 0 ? row->throttled_total_ns : 0;
		}
		if (sp_reader_row_stats(r, i, &st) < 0)
			continue;
		t = st.total + (row->throttled_total_ns > 0 ? (double)row->throttled_total_ns / 1e9 : 0);
		if (t > 0) { /* max/mean over the ranks with time, as stats.c */
			ri[row->region].imb_sum += t;
			ri[row->region].imb_n++;
			ri[row->region].imb_max = fmax(ri[row->region].imb_max, t);
		}
		if (ri[row->region].slowest < 0 || t > best[row->region]) {
			best[row->region] = t;
			ri[row->region].slowest = row->rank;
		}
	}
	free(best);
	return ri;
}

void summary_region_deltas(struct region_info *ri, const struct sp_summary *s)
{
	for (size_t i = 0; i < sp_summary_count(s); i++) {
		const struct sp_summary_row *row = sp_summary_get(s, i);

		/* Node rows only: an own row repeats its node's change. */
		if (!row->own)
			ri[row->region].excl_delta_ns += row->throttled_excl_ns;
	}
}

int summary_flat_deltas(struct sp_reader *r, const struct sp_selection *sel,
			struct region_info *ri)
{
	struct sp_summary *s;
	bool any = false;
	int rc;

	for (size_t i = 0; i < sp_reader_num_regions(r); i++)
		any |= ri[i].hidden_calls > 0;
	if (!any)
		return 0;
	rc = sp_summary_build_flags(r, sel, SP_SORT_START,
				    SP_SUMMARY_NO_SPREAD | SP_SUMMARY_THROTTLED, &s);
	if (rc < 0)
		return rc;
	if (!sp_summary_is_flat(s)) /* no tree, no paths to share out over */
		summary_region_deltas(ri, s);
	sp_summary_destroy(s);
	return 0;
}

/* Sampled or estimated time of the counted calls (the file's timing). */
static bool timing_estimated(struct sp_reader *r)
{
	const struct sp_meta *timing = sp_reader_metadata_find(r, "throttle_timing");

	return timing && timing->s &&
	       (!strcmp(timing->s, "sampled") || !strcmp(timing->s, "estimate"));
}

char summary_mark(struct sp_reader *r, const struct region_info *ri)
{
	if (!ri->hidden_calls)
		return ' ';
	return timing_estimated(r) ? '~' : '*';
}

char summary_row_mark(struct sp_reader *r, const struct sp_summary_row *row)
{
	if (!row->throttled_calls && !row->throttled_ns)
		return ' ';
	return row->throttled_split || timing_estimated(r) ? '~' : '*';
}

void summary_legends(struct tbl *t, struct sp_reader *r, bool split)
{
	const struct sp_meta *timing = sp_reader_metadata_find(r, "throttle_timing");
	const struct sp_meta *calls = sp_reader_metadata_find(r, "throttle_calls");
	const struct sp_meta *mean = sp_reader_metadata_find(r, "throttle_mean_ns");
	const struct sp_meta *sample = sp_reader_metadata_find(r, "throttle_sample");
	const char *how = "their time estimated as count x the mean before the throttle";
	char why[160], head[240], sampled[120], buf[800];

	if (calls && mean)
		snprintf(why, sizeof why, "auto-throttle: %lld calls, own cost < %.3g us",
			 (long long)calls->i, (double)mean->i / 1e3);
	else
		snprintf(why, sizeof why, "MIN_DURATION, MAX_DEPTH or auto-throttle");
	snprintf(head, sizeof head, "calls counted exactly, not all on the timeline\n(%s);\n", why);
	snprintf(buf, sizeof buf, "%stheir time measured exactly", head);
	tbl_legend(t, '*', buf);
	if (timing && timing->s && !strcmp(timing->s, "sampled") && sample) {
		snprintf(sampled, sizeof sampled,
			 "1 in %lld timed at random, total estimated (95 %% interval: inspect)",
			 (long long)sample->i);
		how = sampled;
	} else if (!timing_estimated(r)) {
		how = "their time measured exactly";
	}
	/* The split (docs/SUMMARY.md): only where a row has one. */
	snprintf(buf, sizeof buf, "%s%s%s", head, how, split
		 ? ";\non several call paths: split over the paths by their timeline\n"
		   "calls (an estimate), the same time taken out of the caller's excl" : "");
	tbl_legend(t, '~', buf);
}

void summary_clamp_note(FILE *f, const struct sp_summary *s, double scale, bool ascii)
{
	int64_t clamped = 0;
	char buf[64];

	for (size_t i = 0; i < sp_summary_count(s); i++) {
		const struct sp_summary_row *row = sp_summary_get(s, i);

		if (!row->own)
			clamped += row->throttled_clamped_ns;
	}
	if (clamped <= 0)
		return;
	tbl_duration(buf, sizeof buf, (double)clamped / 1e9 * scale, ascii);
	fprintf(f, "note: %s of the counted calls' time did not fit in their callers'\n"
		   "      own time: excl stops at 0 (a path's share is an estimate)\n", buf);
}
