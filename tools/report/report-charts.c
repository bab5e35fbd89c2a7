/* SPDX-License-Identifier: MIT */
/*
 * The charts of the HTML report, inline SVG from charts.h: per file the
 * Gantt timeline, the flame chart (rank 0, or the first --ranks rank),
 * duration bars (metric tabs) and per-rank imbalance; for several files a
 * comparison section with durations of all runs, speedup and weak scaling.
 * What was aggregated or left out is noted under each chart and collected
 * for the overview.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "svg.h"

static void caption(FILE *f, const char *text)
{
	fputs("<figcaption>", f);
	html_text(f, text);
	fputs("</figcaption>\n", f);
}

static void add_note(struct report_file *rf, const char *what, const char *note)
{
	size_t len = strlen(rf->chart_notes);

	if (note[0] && len + 1 < sizeof(rf->chart_notes))
		snprintf(rf->chart_notes + len, sizeof(rf->chart_notes) - len, "%s%s: %s",
			 len ? " " : "", what, note);
}

static int failure(struct report *rp, size_t i, int rc)
{
	cli_error(&rp->c, "%s: %s", sp_reader_path(rp->files[i].r),
		  rc == -ENOMEM ? "out of memory" : sp_reader_last_error());
	return EXIT_USAGE;
}

static int gantt(struct report *rp, size_t i)
{
	struct timeline t;
	char note[1024];
	int rc = timeline_build(&rp->files[i], NULL, 0, &rp->o, &t);

	if (rc < 0)
		return failure(rp, i, rc);
	timeline_note(&t, false, note, sizeof(note));
	add_note(&rp->rf[i], "Gantt", note);
	timeline_note(&t, true, note, sizeof(note));
	/* data-span: the seconds the x axis covers, for the page's zoom (report.js). */
	fprintf(rp->f, "<figure class=\"chart\" data-chart=\"gantt\" id=\"gantt-%zu\" "
		       "tabindex=\"0\" data-span=\"%.9g\">\n", i, (double)(t.t1_ns - t.t0_ns) / 1e9);
	caption(rp->f, note[0] ? note : "One lane per rank (and thread); call depth grows "
					"downwards inside a lane. Hover a bar for details.");
	fputs("<div class=\"zoombar\"><button type=\"button\" data-zoom=\"in\" title=\"zoom in (+)\">"
	      "+</button><button type=\"button\" data-zoom=\"out\" title=\"zoom out (-)\">&minus;"
	      "</button><button type=\"button\" data-zoom=\"reset\" title=\"whole run (0)\">reset"
	      "</button><span class=\"zoom-range\">wheel: zoom at the cursor, drag: pan</span></div>\n",
	      rp->f);
	gantt_render(rp->f, &rp->files[i], &t, 1, &rp->o);
	fputs("</figure>\n", rp->f);
	timeline_free(&t);
	return 0;
}

/* First selected rank, else the lowest rank (rank 0). false without ranks. */
static bool flame_rank(struct report *rp, size_t i, uint32_t *ret)
{
	const uint32_t *ranks;
	size_t n = sp_reader_ranks(rp->files[i].r, &ranks);

	for (size_t k = 0; k < n; k++)
		if (sp_selection_match_rank(rp->c.sel, ranks[k])) {
			*ret = ranks[k];
			return true;
		}
	return false;
}

static int flame(struct report *rp, size_t i)
{
	struct timeline t;
	char note[1024];
	uint32_t rank;
	int rc;

	if (!flame_rank(rp, i, &rank))
		return 0;
	rc = timeline_build(&rp->files[i], &rank, 1, &rp->o, &t);
	if (rc < 0)
		return failure(rp, i, rc);
	timeline_note(&t, false, note, sizeof(note));
	add_note(&rp->rf[i], "Flame chart", note);
	timeline_note(&t, true, note, sizeof(note));
	fprintf(rp->f, "<figure class=\"chart\" data-chart=\"flame\" data-rank=\"%" PRIu32 "\">\n",
		rank);
	caption(rp->f, note[0] ? note : "Nested calls of one rank over time (choose the rank "
					"with --ranks).");
	flame_render(rp->f, &rp->files[i], &t, &rp->o);
	fputs("</figure>\n", rp->f);
	timeline_free(&t);
	return 0;
}

/* Bar charts of the four metrics behind tab buttons. files[0..n). */
static int durations(struct report *rp, const struct chart_file *files, size_t n, size_t i)
{
	/* total is a sum over ranks, the others per call: say so, in the comparison above all. */
	fputs("<figure class=\"chart metric-tabs\" data-chart=\"durations\">\n"
	      "<figcaption><b>total</b>: summed over the selected ranks (not per rank); "
	      "<b>avg, min, max</b>: per call, pooled over the selected ranks. ", rp->f);
	if (n > 1)
		fputs("Runs with different rank counts differ in total by their rank count as "
		      "well. ", rp->f);
	fputs("<span class=\"tabs\">", rp->f);
	for (int m = 0; m < 4; m++)
		fprintf(rp->f, "<button type=\"button\" data-metric=\"%s\">%s</button>",
			dur_metric_name((enum dur_metric)m),
			m == 0 ? "total (sum over ranks)" : dur_metric_name((enum dur_metric)m));
	fputs("</span></figcaption>\n", rp->f);
	for (int m = 0; m < 4; m++) {
		struct dur_bar *bars = NULL;
		long nb = durations_build(files, n, (enum dur_metric)m, &rp->o, &bars);

		if (nb < 0)
			return failure(rp, i, (int)nb);
		fprintf(rp->f, "<div data-metric=\"%s\"%s>\n", dur_metric_name((enum dur_metric)m),
			m ? " hidden" : "");
		durations_render(rp->f, files, n, (enum dur_metric)m, bars, (size_t)nb, &rp->o);
		fputs("</div>\n", rp->f);
		free(bars);
	}
	fputs("</figure>\n", rp->f);
	return 0;
}

static int imbalance(struct report *rp, size_t i)
{
	struct imbalance im;
	char note[160] = "";
	int rc = imbalance_build(&rp->files[i], 1, &rp->o, &im);

	if (rc < 0)
		return failure(rp, i, rc);
	if (im.regions_drawn < im.regions_total) {
		snprintf(note, sizeof(note), "showing the %zu of %zu regions with the largest totals.",
			 im.regions_drawn, im.regions_total);
		add_note(&rp->rf[i], "Imbalance", note);
	}
	fputs("<figure class=\"chart\" data-chart=\"imbalance\">\n", rp->f);
	caption(rp->f, note[0] ? note : "Total time of each rank per region; dashed: the mean "
					"over ranks; outlined: 15 % or more above it.");
	imbalance_render(rp->f, &rp->files[i], 1, &im, &rp->o);
	fputs("</figure>\n", rp->f);
	imbalance_free(&im);
	return 0;
}

int report_charts(struct report *rp, size_t i)
{
	int rc = gantt(rp, i);

	if (rc == 0)
		rc = flame(rp, i);
	if (rc == 0)
		rc = durations(rp, &rp->files[i], 1, i);
	if (rc == 0)
		rc = imbalance(rp, i);
	return rc;
}

static int scaling(struct report *rp, bool weak)
{
	struct scale_chart sc;
	char err[512];
	int rc = scaling_build(rp->files, rp->n, rp->x_field, weak, &rp->o, &sc, err, sizeof(err));

	if (rc == -EINVAL) {
		fprintf(rp->f, "<div class=\"callout note\" data-callout=\"%s\">No %s chart: ",
			weak ? "weak_scaling" : "speedup", weak ? "weak-scaling" : "speedup");
		html_text(rp->f, err);
		fputs(".</div>\n", rp->f);
		return 0;
	}
	if (rc < 0)
		return failure(rp, 0, rc);
	fprintf(rp->f, "<figure class=\"chart\" data-chart=\"%s\">\n", weak ? "weak_scaling" : "speedup");
	if (sc.n_x < 2)
		caption(rp->f, "All files have the same x value; choose another field with --x.");
	scaling_render(rp->f, &sc, rp->map, &rp->o);
	fputs("</figure>\n", rp->f);
	scaling_free(&sc);
	return 0;
}

int report_comparison(struct report *rp)
{
	int rc;

	fputs("<section class=\"scaling\" id=\"comparison\">\n<h2>Comparison of the runs</h2>\n"
	      "<h3>Durations</h3>\n", rp->f);
	rc = durations(rp, rp->files, rp->n, 0);
	if (rc == 0) {
		fprintf(rp->f, "<h3>Scaling</h3>\n<p class=\"hint\">x axis: <code>");
		html_text(rp->f, rp->x_field);
		fputs("</code> (choose with --x); mean per-call duration of the regions common to "
		      "all runs, pooled over ranks (a per-call value, not a sum).</p>\n", rp->f);
		rc = scaling(rp, false);
	}
	if (rc == 0)
		rc = scaling(rp, true);
	fputs("</section>\n", rp->f);
	return rc;
}
