/* SPDX-License-Identifier: MIT */
/*
 * The tables of the HTML report: the sortable region table (every sort key
 * is a data-* attribute of the row; each row is followed by a hidden row
 * with the per-rank statistics), the call tree (summary rows, §3.8) and the
 * metadata.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "svg.h"

#define MAX_RANK_ROWS 1024
#define NAME_MAX_BYTES 64 /* longer names are elided in the middle */

/*
 * A region name for a table cell: the full name (title) in the title attribute
 * (shown on hover), the text elided in the middle past NAME_MAX_BYTES
 * (C++ names keep their namespace head and their function tail), cut at
 * UTF-8 character boundaries; the CSS caps the cell width as well.
 */
static void name_cell(FILE *f, const char *cls, const char *style, const char *swatch,
		      const char *title, const char *name)
{
	size_t len = strlen(name), head = NAME_MAX_BYTES / 2 - 2, tail = len - (NAME_MAX_BYTES / 2 - 2);

	fprintf(f, "<td class=\"%s\"%s title=\"", cls, style);
	html_text(f, title);
	fputs("\">", f);
	if (swatch) {
		fputs("<span class=\"swatch\" style=\"background:", f);
		html_text(f, swatch);
		fputs("\"></span>", f);
	}
	fputs("<span class=\"nm\">", f);
	if (len <= NAME_MAX_BYTES) {
		html_text(f, name);
	} else {
		char *buf = malloc(len + 4);

		while (head > 0 && ((unsigned char)name[head] & 0xC0) == 0x80)
			head--;
		while (tail < len && ((unsigned char)name[tail] & 0xC0) == 0x80)
			tail++;
		if (buf) {
			memcpy(buf, name, head);
			memcpy(buf + head, "\xe2\x80\xa6", 3);
			memcpy(buf + head + 3, name + tail, len - tail + 1);
			html_text(f, buf);
			free(buf);
		}
	}
	fputs("</span>", f);
}

/* data-key="value" with full precision; empty when undefined. */
static void attr(FILE *f, const char *key, double v)
{
	if (isfinite(v))
		fprintf(f, " data-%s=\"%.9g\"", key, v);
	else
		fprintf(f, " data-%s=\"\"", key);
}

static void cell_sec(FILE *f, double v)
{
	fprintf(f, "<td>%s</td>", isfinite(v) ? report_sec(v) : "-");
}

static const struct {
	const char *key, *label;
} columns[] = {
	{ "name", "region" }, { "ranks", "ranks" }, { "calls", "calls" },
	{ "total", "total" }, { "exclusive", "exclusive" }, { "share", "% excl." },
	{ "avg", "avg" }, { "min", "min" }, { "max", "max" }, { "p95", "p95" },
	{ "imbalance", "imbalance" },
};
#define N_COLUMNS (sizeof(columns) / sizeof(columns[0]))

/* Per-rank statistics of one region (the expandable detail row). */
static void rank_rows(struct report *rp, size_t i, const struct report_region *g)
{
	struct sp_reader *r = rp->files[i].r;
	const uint32_t *ranks;
	size_t n = sp_reader_ranks(r, &ranks), shown = 0;
	double mean = g->st.num_ranks ? g->st.total / g->st.num_ranks : 0;
	FILE *f = rp->f;

	fprintf(f, "<tr class=\"detail\" hidden><td colspan=\"%zu\"><table class=\"ranks\">"
		   "<thead><tr><th>rank</th><th>calls</th><th>total</th><th>exclusive</th>"
		   "<th>avg</th><th>min</th><th>max</th><th>vs mean</th></tr></thead><tbody>\n",
		N_COLUMNS);
	for (size_t k = 0; k < n && shown < MAX_RANK_ROWS; k++) {
		long row = sp_reader_row_find(r, g->id, ranks[k]);
		struct sp_stats st;
		double vs;

		if (row < 0 || !sp_selection_match_rank(rp->c.sel, ranks[k]) ||
		    sp_reader_row_stats_flags(r, (size_t)row, SP_STATS_NO_SPREAD, &st) < 0)
			continue;
		vs = mean > 0 ? (st.total / mean - 1) * 100 : NAN;
		fprintf(f, "<tr data-rank=\"%" PRIu32 "\"><td>%" PRIu32 "</td><td>%" PRIu64 "</td>",
			ranks[k], ranks[k], st.num_calls);
		cell_sec(f, st.total);
		cell_sec(f, st.has_exclusive ? st.exclusive : NAN);
		cell_sec(f, st.average);
		cell_sec(f, st.min);
		cell_sec(f, st.max);
		if (isfinite(vs))
			fprintf(f, "<td%s>%+.1f%%</td></tr>\n", vs >= 15 ? " class=\"hot\"" : "",
				fabs(vs) < 0.05 ? 0.0 : vs);
		else
			fputs("<td>-</td></tr>\n", f);
		shown++;
	}
	fputs("</tbody></table>", f);
	if (shown == MAX_RANK_ROWS)
		fprintf(f, "<p>Only the first %d ranks are listed.</p>", MAX_RANK_ROWS);
	fputs("</td></tr>\n", f);
}

static void region_row(struct report *rp, size_t i, const struct report_region *g,
		       double excl_sum)
{
	const struct sp_stats *st = &g->st;
	double share = st->has_exclusive && excl_sum > 0 ? 100 * st->exclusive / excl_sum : NAN;
	FILE *f = rp->f;

	fputs("<tr class=\"region\" data-region=\"", f);
	html_text(f, g->name);
	fputs("\" data-name=\"", f);
	html_text(f, g->name);
	fprintf(f, "\" data-ranks=\"%u\" data-calls=\"%" PRIu64 "\"", st->num_ranks, st->num_calls);
	attr(f, "total", st->total);
	attr(f, "exclusive", st->has_exclusive ? st->exclusive : NAN);
	attr(f, "share", share);
	attr(f, "avg", st->num_calls ? st->average : NAN);
	attr(f, "min", st->num_calls ? st->min : NAN);
	attr(f, "max", st->num_calls ? st->max : NAN);
	attr(f, "first", st->num_calls ? st->first : NAN);
	attr(f, "last", st->num_calls ? st->last : NAN);
	attr(f, "std", st->num_calls ? st->std : NAN);
	attr(f, "p50", st->has_percentiles && st->num_calls ? st->p50 : NAN);
	attr(f, "p95", st->has_percentiles && st->num_calls ? st->p95 : NAN);
	attr(f, "p99", st->has_percentiles && st->num_calls ? st->p99 : NAN);
	attr(f, "imbalance", st->rank_imbalance_pct);
	attr(f, "start", st->first_start);
	fputs(">", f);
	name_cell(f, "rname", "", rp->files[i].colors[g->id] ? rp->files[i].colors[g->id] : "#999",
		  g->name, g->name);
	fprintf(f, "</td><td>%u</td><td>%" PRIu64 "</td>", st->num_ranks, st->num_calls);
	cell_sec(f, st->total);
	cell_sec(f, st->has_exclusive ? st->exclusive : NAN);
	if (isfinite(share))
		fprintf(f, "<td>%.1f%%</td>", share);
	else
		fputs("<td>-</td>", f);
	cell_sec(f, st->num_calls ? st->average : NAN);
	cell_sec(f, st->num_calls ? st->min : NAN);
	cell_sec(f, st->num_calls ? st->max : NAN);
	cell_sec(f, st->has_percentiles && st->num_calls ? st->p95 : NAN);
	fprintf(f, "<td%s>%.1f%%</td></tr>\n",
		st->rank_imbalance_pct >= 15 ? " class=\"hot\"" : "",
		fabs(st->rank_imbalance_pct) < 0.05 ? 0.0 : st->rank_imbalance_pct);
	rank_rows(rp, i, g);
}

int report_region_table(struct report *rp, size_t i)
{
	const struct report_file *rf = &rp->rf[i];
	double excl_sum = 0;
	FILE *f = rp->f;

	for (size_t k = 0; k < rf->n_regs; k++)
		if (rf->regs[k].st.has_exclusive)
			excl_sum += rf->regs[k].st.exclusive;
	fputs("<h3>Regions</h3>\n<p class=\"hint\">Click a column to sort, a row for its "
	      "per-rank statistics. Durations are pooled over the selected ranks; imbalance "
	      "= slowest rank's total vs the per-rank mean.</p>\n", f);
	fprintf(f, "<div class=\"scroll\"><table class=\"sortable regions\" data-sort=\"%s\">"
		   "<thead><tr>", rp->sort);
	for (size_t c = 0; c < N_COLUMNS; c++)
		fprintf(f, "<th data-key=\"%s\">%s</th>", columns[c].key, columns[c].label);
	fputs("</tr></thead>\n<tbody>\n", f);
	for (size_t k = 0; k < rf->n_regs; k++)
		region_row(rp, i, &rf->regs[k], excl_sum);
	fputs("</tbody></table></div>\n", f);
	return 0;
}

int report_call_tree(struct report *rp, size_t i)
{
	struct sp_summary *sum;
	enum sp_sort_key key = SP_SORT_START;
	FILE *f = rp->f;
	char style[40];
	bool session;
	int rc;

	if (sp_sort_key_parse(rp->sort, &key) < 0)
		key = SP_SORT_TOTAL;
	/* The tree shows calls, totals and averages: no spread. */
	rc = sp_summary_build_flags(rp->files[i].r, rp->c.sel, key, SP_SUMMARY_NO_SPREAD, &sum);
	if (rc < 0) {
		cli_error(&rp->c, "%s: %s", sp_reader_path(rp->files[i].r), sp_reader_last_error());
		return EXIT_USAGE;
	}
	session = sp_summary_has_session(sum);
	fputs("<h3>Call tree</h3>\n", f);
	if (sp_summary_is_flat(sum))
		fputs("<div class=\"callout warn\">Calls are not properly nested on some rank; "
		      "regions are listed flat.</div>\n", f);
	fprintf(f, "<div class=\"scroll\"><table class=\"tree\"><thead><tr><th>region</th>"
		   "<th>calls</th><th>total</th>%s<th>avg</th><th>imbalance</th></tr></thead>"
		   "<tbody>\n", session ? "<th>% session</th>" : "");
	for (size_t k = 0; k < sp_summary_count(sum); k++) {
		const struct sp_summary_row *row = sp_summary_get(sum, k);

		fprintf(f, "<tr data-depth=\"%d\"%s data-region=\"", row->depth,
			row->own ? " class=\"own\"" : "");
		html_text(f, row->name);
		fputs("\">", f);
		/* The indentation is a CSS variable: a filtered tree drops it (report.css). */
		snprintf(style, sizeof(style), " style=\"--depth:%d\"", row->depth);
		name_cell(f, "name", style, NULL, row->name, row->own ? "(own)" : row->name);
		if (!row->own && row->recursive)
			fputs(" &#8635;", f);
		fprintf(f, "</td><td>%" PRIu64 "</td>", row->calls);
		cell_sec(f, row->total);
		if (session) {
			if (isfinite(row->percent))
				fprintf(f, "<td>%.2f%%</td>", row->percent);
			else
				fputs("<td>-</td>", f);
		}
		cell_sec(f, row->own ? NAN : row->avg);
		if (!row->own && isfinite(row->imbalance))
			fprintf(f, "<td>%.1f%%</td></tr>\n",
				fabs(row->imbalance) < 0.05 ? 0.0 : row->imbalance);
		else
			fputs("<td>-</td></tr>\n", f);
	}
	fputs("</tbody></table></div>\n", f);
	sp_summary_destroy(sum);
	return 0;
}

static void meta_value(FILE *f, const struct sp_meta *m)
{
	switch (m->type) {
	case SP_META_INT:
		fprintf(f, "%lld", (long long)m->i);
		break;
	case SP_META_FLOAT:
		fprintf(f, "%.17g", m->f);
		break;
	case SP_META_STRING:
		html_text(f, m->s);
		break;
	case SP_META_STRINGS:
		for (size_t k = 0; k < m->n; k++) {
			fputs(k ? ", " : "", f);
			html_text(f, m->strv[k]);
		}
		if (m->n == 0)
			fputs("(empty list)", f);
		break;
	}
}

void report_metadata(struct report *rp, size_t i)
{
	struct sp_reader *r = rp->files[i].r;
	size_t n = sp_reader_num_metadata(r);
	FILE *f = rp->f;

	fprintf(f, "<h3>Metadata</h3>\n");
	if (n == 0) {
		fputs("<p>No metadata in this file.</p>\n", f);
		return;
	}
	fputs("<table class=\"meta\"><tbody>\n", f);
	for (size_t k = 0; k < n; k++) {
		const struct sp_meta *m = sp_reader_metadata(r, k);

		fputs("<tr><td>", f);
		html_text(f, m->key);
		fputs("</td><td>", f);
		meta_value(f, m);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}
