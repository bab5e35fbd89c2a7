/* SPDX-License-Identifier: MIT */
/*
 * The overview of one run in the HTML report: cards (ranks, regions,
 * calls, wall time) and callouts: the hot spot by exclusive time, the
 * largest inclusive region, ranks >= 15 % above the per-rank mean, regions
 * whose calls are too short to trust, and what the charts aggregated.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "svg.h"

#define IMBALANCE_CALLOUT_PCT 15.0
#define MAX_IMBALANCE_CALLOUTS 5

void html_text(FILE *f, const char *s)
{
	svg_escape(f, s);
}

const char *report_sec(double s)
{
	static char bufs[8][32];
	static unsigned k;
	char *b = bufs[k++ % 8];

	fmt_seconds(b, sizeof(bufs[0]), s);
	return b;
}

static void card(FILE *f, const char *value, const char *key)
{
	fputs("<div class=\"card\"><div class=\"v\">", f);
	html_text(f, value);
	fputs("</div><div class=\"k\">", f);
	html_text(f, key);
	fputs("</div></div>\n", f);
}

static void cards(struct report *rp, size_t i)
{
	struct sp_reader *r = rp->files[i].r;
	struct sp_times t;
	char buf[64];

	sp_reader_times(r, &t);
	fputs("<div class=\"cards\">\n", rp->f);
	snprintf(buf, sizeof(buf), "%u", sp_reader_num_ranks(r));
	card(rp->f, buf, "ranks");
	snprintf(buf, sizeof(buf), "%zu", rp->rf[i].n_regs);
	card(rp->f, buf, "regions");
	snprintf(buf, sizeof(buf), "%" PRIu64, rp->rf[i].calls);
	card(rp->f, buf, "calls");
	card(rp->f, report_sec(t.time_span), "wall time (first entry to last exit)");
	if (t.has_total_time)
		card(rp->f, report_sec(t.total_time), "setup to finalize");
	if (sp_reader_file_size(r) < 1048576)
		snprintf(buf, sizeof(buf), "%.1f KiB", (double)sp_reader_file_size(r) / 1024.0);
	else
		snprintf(buf, sizeof(buf), "%.1f MiB", (double)sp_reader_file_size(r) / 1048576.0);
	card(rp->f, buf, "file size");
	fputs("</div>\n", rp->f);
}

/* Hot spot: most exclusive time as a share of all attributed exclusive time. */
static void hot_spot(struct report *rp, size_t i)
{
	const struct report_file *rf = &rp->rf[i];
	const struct report_region *hot = NULL, *incl = NULL;
	double excl_sum = 0;

	for (size_t k = 0; k < rf->n_regs; k++) {
		const struct report_region *g = &rf->regs[k];

		if (g->st.has_exclusive && g->st.num_calls) {
			excl_sum += g->st.exclusive;
			if (!hot || g->st.exclusive > hot->st.exclusive)
				hot = g;
		}
		/* The session region spans the whole run: not a useful answer. */
		if (g->st.num_calls && strcmp(g->name, "scope_profiler.session") != 0 &&
		    (!incl || g->st.total > incl->st.total))
			incl = g;
	}
	if (hot && excl_sum > 0) {
		fputs("<div class=\"callout\" data-callout=\"hotspot\"><b>Hot spot:</b> "
		      "<span class=\"swatch\" style=\"background:", rp->f);
		html_text(rp->f, rp->files[i].colors[hot->id]);
		fputs("\"></span><b>", rp->f);
		html_text(rp->f, hot->name);
		fprintf(rp->f, "</b> has the most exclusive time: %s, %.1f%% of all exclusive time "
			       "(%" PRIu64 " calls).</div>\n",
			report_sec(hot->st.exclusive), 100.0 * hot->st.exclusive / excl_sum,
			hot->st.num_calls);
	} else if (sp_reader_nesting_problem(rp->files[i].r)) {
		fputs("<div class=\"callout warn\">Exclusive time is unavailable: ", rp->f);
		html_text(rp->f, sp_reader_nesting_problem(rp->files[i].r));
		fputs("</div>\n", rp->f);
	}
	if (incl && incl != hot) {
		fputs("<div class=\"callout\" data-callout=\"inclusive\">Largest inclusive time: <b>",
		      rp->f);
		html_text(rp->f, incl->name);
		fprintf(rp->f, "</b> (%s in %" PRIu64 " calls).</div>\n", report_sec(incl->st.total),
			incl->st.num_calls);
	}
}

/* Slowest rank of a region and the mean of the per-rank totals. */
static bool slowest_rank(struct report *rp, size_t i, uint32_t id, uint32_t *rank,
			 double *max, double *mean)
{
	struct sp_reader *r = rp->files[i].r;
	const uint32_t *ranks;
	size_t n = sp_reader_ranks(r, &ranks), used = 0;
	double sum = 0;

	*max = -1;
	for (size_t k = 0; k < n; k++) {
		long row = sp_reader_row_find(r, id, ranks[k]);
		struct sp_stats st;

		if (row < 0 || !sp_selection_match_rank(rp->c.sel, ranks[k]) ||
		    sp_reader_row_stats(r, (size_t)row, &st) < 0 || !(st.total > 0))
			continue;
		sum += st.total;
		used++;
		if (st.total > *max) {
			*max = st.total;
			*rank = ranks[k];
		}
	}
	*mean = used ? sum / (double)used : 0;
	return used >= 2;
}

struct imb_callout {
	const struct report_region *g;
	uint32_t rank;
	double max, mean;
};

/* Largest excess time (slowest rank minus the mean) first. */
static int cmp_excess(const void *pa, const void *pb)
{
	const struct imb_callout *a = pa, *b = pb;
	double ea = a->max - a->mean, eb = b->max - b->mean;

	if (ea != eb)
		return ea > eb ? -1 : 1;
	return strcmp(a->g->name, b->g->name);
}

static void imbalance_callouts(struct report *rp, size_t i)
{
	const struct report_file *rf = &rp->rf[i];
	struct imb_callout *hot = calloc(rf->n_regs + 1, sizeof(*hot));
	size_t n = 0;

	if (!hot)
		return;
	for (size_t k = 0; k < rf->n_regs; k++) {
		struct imb_callout *c = &hot[n];

		c->g = &rf->regs[k];
		if (c->g->st.rank_imbalance_pct >= IMBALANCE_CALLOUT_PCT &&
		    slowest_rank(rp, i, c->g->id, &c->rank, &c->max, &c->mean))
			n++;
	}
	qsort(hot, n, sizeof(*hot), cmp_excess);
	for (size_t k = 0; k < n && k < MAX_IMBALANCE_CALLOUTS; k++) {
		fputs("<div class=\"callout warn\" data-callout=\"imbalance\" data-region=\"", rp->f);
		html_text(rp->f, hot[k].g->name);
		fputs("\"><b>Imbalance:</b> in <b>", rp->f);
		html_text(rp->f, hot[k].g->name);
		fprintf(rp->f, "</b> the slowest rank %" PRIu32 " is <b>%.1f%%</b> above the per-rank "
			       "mean (%s vs %s).</div>\n", hot[k].rank, hot[k].g->st.rank_imbalance_pct,
			report_sec(hot[k].max), report_sec(hot[k].mean));
	}
	if (n > MAX_IMBALANCE_CALLOUTS)
		fprintf(rp->f, "<div class=\"callout warn\">%zu more regions are imbalanced by "
			       "&ge; 15%% (listed: the largest excess time); sort the table by "
			       "imbalance.</div>\n", n - MAX_IMBALANCE_CALLOUTS);
	free(hot);
}

/* Regions with >= 1000 calls averaging < 10 us: the probe cost matters there. */
static void tiny_calls(struct report *rp, size_t i)
{
	const struct report_file *rf = &rp->rf[i];
	size_t n = 0;

	for (size_t k = 0; k < rf->n_regs; k++) {
		const struct sp_stats *st = &rf->regs[k].st;

		if (st->num_calls < 1000 || !(st->average < 10e-6))
			continue;
		fputs(n++ ? ", " : "<div class=\"callout note\" data-callout=\"tiny\">Many short "
				    "calls (&ge; 1000 calls averaging &lt; 10 &micro;s; the "
				    "profiler's own cost is a large share of them): ", rp->f);
		html_text(rp->f, rf->regs[k].name);
	}
	if (n)
		fputs(".</div>\n", rp->f);
}

void report_overview(struct report *rp, size_t i)
{
	fputs("<h3>Overview</h3>\n", rp->f);
	cards(rp, i);
	hot_spot(rp, i);
	imbalance_callouts(rp, i);
	tiny_calls(rp, i);
	if (rp->rf[i].chart_notes[0]) {
		fputs("<div class=\"callout note\" data-callout=\"aggregated\">", rp->f);
		html_text(rp->f, rp->rf[i].chart_notes);
		fputs("</div>\n", rp->f);
	}
}
