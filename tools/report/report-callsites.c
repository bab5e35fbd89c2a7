/* SPDX-License-Identifier: MIT */
/*
 * The report's MPI call-site table: the line profile's MPI rows (one per
 * source location of a call site and MPI function, most time first), for
 * files recorded with call sites. Nothing is written for other files.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "line-profile.h"
#include "report.h"

#define MAX_ROWS 100

static void row_html(FILE *f, const struct lp_row *row, struct lp_sources *src)
{
	const char *b = strrchr(row->file, '/'), *text = lp_source_line(src, row->file, row->line);

	fputs("<tr><td class=\"rname\" title=\"", f);
	html_text(f, row->file);
	fputs("\">", f);
	html_text(f, b ? b + 1 : row->file);
	fprintf(f, ":%" PRId64 "</td><td>", row->line);
	html_text(f, row->function);
	fputs("</td><td>", f);
	html_text(f, row->region);
	fprintf(f, "</td><td>%" PRIu64 "</td><td>%s</td>", row->calls,
		report_sec((double)row->total_ns / 1e9));
	fprintf(f, "<td>%s</td>", report_sec((double)row->total_ns / 1e9 / (double)row->calls));
	fprintf(f, "<td>%s</td>", report_sec(row->max_s));
	if (row->has_bytes)
		fprintf(f, "<td>%" PRId64 "</td>", row->bytes);
	else
		fputs("<td>-</td>", f);
	fprintf(f, "<td>%.1f%%</td><td%s>%.2f</td><td>%" PRIu32 "</td><td><code>",
		row->percent_mpi, row->cov >= 0.15 ? " class=\"hot\"" : "", row->cov,
		row->slowest_rank);
	html_text(f, text ? text : "");
	fputs("</code></td></tr>\n", f);
}

int report_callsites(struct report *rp, size_t i)
{
	struct sp_reader *r = rp->files[i].r;
	struct lp_filter flt = { .ranks = rp->c.sel, .regions = rp->c.sel, .top = MAX_ROWS };
	struct lp_result res;
	struct lp_sources *src;
	FILE *f = rp->f;

	if (!sp_reader_column(r, SP_COL_CALLSITE_IDS))
		return 0;
	if (lp_collect(r, &flt, &res) < 0) {
		cli_error(&rp->c, "%s: call sites: %s", sp_reader_path(r), sp_reader_last_error());
		return EXIT_USAGE;
	}
	src = lp_sources_new();
	fprintf(f, "<div class=\"callsites\" id=\"callsites-%zu\">\n<h3>MPI call sites</h3>\n"
		   "<p class=\"hint\">MPI calls by the source line they are made from (depth %d "
		   "call paths merged), most time first. %% MPI: share of all MPI time of the "
		   "selected ranks; CoV: variation of the per-rank totals.</p>\n",
		i, sp_callsites_depth(res.sites));
	fputs("<div class=\"scroll\"><table class=\"callsites\"><thead><tr><th>location</th>"
	      "<th>function</th><th>MPI function</th><th>calls</th><th>total</th><th>avg</th>"
	      "<th>max</th><th>bytes</th><th>% MPI</th><th>CoV</th><th>slowest rank</th>"
	      "<th>source</th></tr></thead>\n<tbody>\n", f);
	for (size_t k = 0; k < res.n_mpi; k++)
		row_html(f, &res.rows[k], src);
	fputs("</tbody></table></div>\n</div>\n", f);
	lp_sources_free(src);
	lp_free(&res);
	return 0;
}
