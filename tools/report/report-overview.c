/* SPDX-License-Identifier: MIT */
/*
 * The overview of one run in the HTML report: cards (ranks, regions,
 * calls, wall time, MPI share per rank) and callouts: the hot spot by
 * exclusive time, the largest inclusive region, ranks >= 15 % above the
 * per-rank mean (regions of at least 1 % of the run), regions whose calls
 * are too short to trust, and what the charts aggregated.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "svg.h"

#define IMBALANCE_CALLOUT_PCT 15.0
#define MAX_IMBALANCE_CALLOUTS 5
#define IMBALANCE_MIN_RUN_PCT 1.0 /* callouts skip regions under 1 % of the run */
#define MAX_MPI_RANK_ROWS 1024

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

/* The run time the shares refer to: setup to finalize, else first entry to last exit. */
static double run_time(const struct sp_reader *r)
{
	struct sp_times t;

	sp_reader_times(r, &t);
	return t.has_total_time && t.total_time > 0 ? t.total_time : t.time_span;
}

/* Time in MPI regions of each selected rank (ranks[k] -> mpi[k]). */
static size_t mpi_per_rank(struct report *rp, size_t i, const uint32_t **ret_ranks,
			   double *mpi)
{
	struct sp_reader *r = rp->files[i].r;
	size_t n = sp_reader_ranks(r, ret_ranks);

	for (size_t k = 0; k < n; k++) {
		mpi[k] = NAN;
		if (!sp_selection_match_rank(rp->c.sel, (*ret_ranks)[k]))
			continue;
		mpi[k] = 0;
		for (size_t g = 0; g < rp->rf[i].n_regs; g++) {
			const struct report_region *reg = &rp->rf[i].regs[g];
			long row;
			struct sp_stats st;

			if (!sp_region_kind_is_mpi(sp_reader_region_kind(r, reg->id)) ||
			    (row = sp_reader_row_find(r, reg->id, (*ret_ranks)[k])) < 0 ||
			    sp_reader_row_stats_flags(r, (size_t)row, SP_STATS_NO_SPREAD, &st) < 0)
				continue;
			mpi[k] += st.total;
		}
	}
	return n;
}

/* Whether any selected region of file i is an MPI call. */
static bool has_mpi(struct report *rp, size_t i)
{
	for (size_t g = 0; g < rp->rf[i].n_regs; g++)
		if (sp_region_kind_is_mpi(sp_reader_region_kind(rp->files[i].r, rp->rf[i].regs[g].id)) &&
		    rp->rf[i].regs[g].st.num_calls)
			return true;
	return false;
}

/*
 * The MPI card: mean MPI share of the selected ranks and the slowest
 * (largest share) rank, with the per-rank list folded below the cards.
 * Shares are of the run time (setup to finalize when recorded).
 */
static void mpi_card(struct report *rp, size_t i, FILE *ranks_out)
{
	const uint32_t *ranks;
	size_t nr = sp_reader_ranks(rp->files[i].r, &ranks), n, used = 0, shown = 0;
	double *mpi = calloc(nr + 1, sizeof(*mpi)), wall = run_time(rp->files[i].r);
	double sum = 0, max = -1, min = INFINITY;
	uint32_t slowest = 0;
	char v[64], k[160];

	if (!mpi || !has_mpi(rp, i) || !(wall > 0)) {
		free(mpi);
		return;
	}
	n = mpi_per_rank(rp, i, &ranks, mpi);
	for (size_t r = 0; r < n; r++) {
		if (isnan(mpi[r]))
			continue;
		sum += mpi[r];
		used++;
		min = fmin(min, mpi[r]);
		if (mpi[r] > max) {
			max = mpi[r];
			slowest = ranks[r];
		}
	}
	if (!used) {
		free(mpi);
		return;
	}
	snprintf(v, sizeof(v), "%.1f %%", 100 * sum / (double)used / wall);
	snprintf(k, sizeof(k), "MPI time, mean of %zu rank%s (min %.1f %%, max %.1f %% on rank %"
		 PRIu32 ")", used, used == 1 ? "" : "s", 100 * min / wall, 100 * max / wall, slowest);
	fprintf(rp->f, "<div class=\"card mpi\" data-card=\"mpi\" data-slowest-rank=\"%" PRIu32
		       "\" data-mpi-max-pct=\"%.3f\">", slowest, 100 * max / wall);
	fputs("<div class=\"v\">", rp->f);
	html_text(rp->f, v);
	fputs("</div><div class=\"k\">", rp->f);
	html_text(rp->f, k);
	fputs("</div></div>\n", rp->f);
	fprintf(ranks_out, "<details class=\"mpi-ranks\"><summary>MPI share per rank (of %s)"
			   "</summary><table class=\"ranks\"><thead><tr><th>rank</th>"
			   "<th>MPI time</th><th>%% of run</th></tr></thead><tbody>\n",
		report_sec(wall));
	for (size_t r = 0; r < n && shown < MAX_MPI_RANK_ROWS; r++) {
		if (isnan(mpi[r]))
			continue;
		fprintf(ranks_out, "<tr data-rank=\"%" PRIu32 "\"%s><td>%" PRIu32 "</td><td>%s</td>"
				   "<td>%.1f%%</td></tr>\n", ranks[r],
			ranks[r] == slowest ? " class=\"hot\"" : "", ranks[r], report_sec(mpi[r]),
			100 * mpi[r] / wall);
		shown++;
	}
	fputs("</tbody></table></details>\n", ranks_out);
	free(mpi);
}

static void cards(struct report *rp, size_t i)
{
	struct sp_reader *r = rp->files[i].r;
	struct sp_times t;
	char buf[64], *ranks = NULL;
	size_t ranks_len = 0;
	FILE *ranks_out = open_memstream(&ranks, &ranks_len);

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
	if (ranks_out)
		mpi_card(rp, i, ranks_out);
	fputs("</div>\n", rp->f);
	if (ranks_out) {
		fclose(ranks_out);
		fwrite(ranks, 1, ranks_len, rp->f);
	}
	free(ranks);
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
		    sp_reader_row_stats_flags(r, (size_t)row, SP_STATS_NO_SPREAD, &st) < 0 || !(st.total > 0))
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
	double floor_s = IMBALANCE_MIN_RUN_PCT / 100 * run_time(rp->files[i].r);
	size_t n = 0, small = 0;

	if (!hot)
		return;
	for (size_t k = 0; k < rf->n_regs; k++) {
		struct imb_callout *c = &hot[n];

		c->g = &rf->regs[k];
		if (!(c->g->st.rank_imbalance_pct >= IMBALANCE_CALLOUT_PCT) ||
		    !slowest_rank(rp, i, c->g->id, &c->rank, &c->max, &c->mean))
			continue;
		/* A few ms of a long run are not worth a callout: the slowest
		 * rank's time must be at least 1 % of the run. */
		if (c->max < floor_s)
			small++;
		else
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
	if (small)
		fprintf(rp->f, "<div class=\"callout note\" data-callout=\"imbalance-small\">%zu "
			       "imbalanced region%s under 1%% of the run (%s of %s) not listed; sort "
			       "the table by imbalance.</div>\n", small, small == 1 ? "" : "s",
			report_sec(floor_s), report_sec(floor_s * 100));
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
