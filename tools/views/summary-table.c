/* SPDX-License-Identifier: MIT */
/*
 * The framed summary table of §3.8 (newest layout): one row per call path,
 * "name (Nx)" labels, "(own)" rows, numeric cells indented by depth, a
 * "% session" column when a scope_profiler.session region exists.
 * Functions with calls that are not on the timeline (auto-throttle,
 * MIN_DURATION, MAX_DEPTH) are marked "*" and, when the function has one
 * call path, shown with their true count and total (timeline + counted).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli-common.h"

enum col { C_REGION, C_RANKS, C_CALLS, C_TOTAL, C_PERCENT, C_AVG, C_MIN,
	   C_MAX, C_FIRST, C_LAST, C_STD, C_P50, C_P95, C_P99, C_IMBALANCE,
	   C_N };

static const char *const col_keys[C_N] = {
	"region", "ranks", "calls", "total", "percent", "avg", "min", "max",
	"first", "last", "std", "p50", "p95", "p99", "imbalance",
};
static const char *const col_headers[C_N] = {
	"region", "ranks", "n", "total [s]", "% session", "avg [s]", "min [s]",
	"max [s]", "first [s]", "last [s]", "std [s]", "p50 [s]", "p95 [s]",
	"p99 [s]", "imbalance [%]",
};

#define MAX_COLS 32
#define CELL 256

/* Per region: calls counted but not on the timeline, over the selected
 * ranks, and the number of call paths (tree rows) the region has. */
struct hidden {
	uint64_t calls;
	int64_t ns;
	unsigned paths;
};

static int parse_columns(const struct cli_common *c, const char *spec,
			 bool session, enum col *cols)
{
	char buf[512], *save = NULL, *tok;
	int n = 0;

	if (!spec) {
		cols[n++] = C_REGION;
		if (session)
			cols[n++] = C_PERCENT;
		cols[n++] = C_TOTAL;
		return n;
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		int k;

		for (k = 0; k < C_N && strcmp(tok, col_keys[k]) != 0; k++)
			;
		if (k == C_N) {
			cli_usage_error(c, "unknown column '%s' (choose from region, ranks, calls, total, percent, avg, min, max, first, last, std, p50, p95, p99, imbalance)",
					tok);
			return -1;
		}
		if (n < MAX_COLS)
			cols[n++] = (enum col)k;
	}
	return n;
}

/* Does the column list show std or a percentile? (The default does not;
 * without them the summary keeps no per-call durations.) */
static bool needs_spread(const char *spec)
{
	char buf[512], *save = NULL, *tok;

	if (!spec)
		return false;
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save))
		if (!strcmp(tok, "std") || !strcmp(tok, "p50") || !strcmp(tok, "p95") ||
		    !strcmp(tok, "p99"))
			return true;
	return false;
}

/* snprintf's return value, clamped to what was written into CELL bytes. */
static size_t written(int n, size_t at)
{
	if (n < 0)
		return at;
	return at + (size_t)n < CELL - 1 ? at + (size_t)n : CELL - 1;
}

static void fmt_num(char *out, int indent, const char *fmt, double v)
{
	size_t n = written(snprintf(out, CELL, "%*s", indent, ""), 0);

	if (isnan(v))
		snprintf(out + n, CELL - n, "-");
	else
		snprintf(out + n, CELL - n, fmt, v);
}

/* Deep trees (a hostile file can nest 100k levels) are cut at CELL bytes. */
static void name_cell(char *out, const struct sp_summary_row *row, const struct hidden *hd)
{
	size_t len = 0;

	out[0] = '\0';
	for (int d = 1; d < row->depth && len < CELL - 1; d++)
		len = written(snprintf(out + len, CELL - len, "  "), len);
	if (row->depth > 0)
		len = written(snprintf(out + len, CELL - len, "└─ "), len);
	if (row->own) {
		snprintf(out + len, CELL - len, "(own)");
		return;
	}
	len = written(snprintf(out + len, CELL - len, "%s", row->name), len);
	if (hd && hd->calls && hd->paths == 1)
		len = written(snprintf(out + len, CELL - len, " (%llux*)",
				       (unsigned long long)(row->calls + hd->calls)), len);
	else if (hd && hd->calls)
		len = written(snprintf(out + len, CELL - len, " (%llux, +%llu*)",
				       (unsigned long long)row->calls,
				       (unsigned long long)hd->calls), len);
	else if (row->calls > 1)
		len = written(snprintf(out + len, CELL - len, " (%llux)",
				       (unsigned long long)row->calls), len);
	if (row->recursive)
		snprintf(out + len, CELL - len, " ↻");
}

static void cell(char *out, const struct sp_summary_row *row, enum col col,
		 const struct hidden *hidden)
{
	int ind = row->depth ? 2 * row->depth + 1 : 0;
	/* Single-path functions with hidden calls: the true count and total. */
	const struct hidden *hd = hidden && !row->own ? &hidden[row->region] : NULL;
	bool whole = hd && hd->calls && hd->paths == 1;

	switch (col) {
	case C_REGION: name_cell(out, row, hd); return;
	case C_RANKS: snprintf(out, CELL, "%*s%u", ind, "", row->num_ranks); return;
	case C_CALLS: snprintf(out, CELL, "%*s%llu%s", ind, "",
			       (unsigned long long)(row->calls + (whole ? hd->calls : 0)),
			       whole ? "*" : ""); return;
	case C_TOTAL:
		if (whole) {
			fmt_num(out, ind, "%.6f*", row->total + (double)hd->ns / 1e9);
			return;
		}
		fmt_num(out, ind, "%.6f", row->total);
		return;
	case C_PERCENT: fmt_num(out, ind, "%.2f%%", row->percent); return;
	case C_AVG: fmt_num(out, ind, "%.3e", row->avg); return;
	case C_MIN: fmt_num(out, ind, "%.3e", row->min); return;
	case C_MAX: fmt_num(out, ind, "%.3e", row->max); return;
	case C_FIRST: fmt_num(out, ind, "%.3e", row->first); return;
	case C_LAST: fmt_num(out, ind, "%.3e", row->last); return;
	case C_STD: fmt_num(out, ind, "%.3e", row->std); return;
	case C_P50: fmt_num(out, ind, "%.3e", row->p50); return;
	case C_P95: fmt_num(out, ind, "%.3e", row->p95); return;
	case C_P99: fmt_num(out, ind, "%.3e", row->p99); return;
	case C_IMBALANCE: fmt_num(out, ind, "%.2f", row->imbalance); return;
	default: out[0] = '\0';
	}
}

static void put_padded(FILE *f, const char *s, size_t width)
{
	size_t w = cli_display_width(s);

	fputs(s, f);
	for (; w < width; w++)
		fputc(' ', f);
}

static void rule(FILE *f, const char *l, const char *r, size_t inner)
{
	fprintf(f, "  %s", l);
	for (size_t i = 0; i < inner + 2; i++)
		fputs("─", f);
	fprintf(f, "%s\n", r);
}

static void print_line(FILE *f, char (*cells)[CELL], const size_t *width,
		       int ncols)
{
	fputs("  │ ", f);
	for (int k = 0; k < ncols; k++) {
		if (k)
			fputs("    ", f);
		put_padded(f, cells[k], width[k]);
	}
	fputs(" │\n", f);
}

static void render(FILE *f, const struct sp_summary *s, const enum col *cols,
		   int ncols, const struct hidden *hidden)
{
	size_t n = sp_summary_count(s), width[MAX_COLS] = { 0 }, inner = 0;
	char (*cells)[CELL] = calloc((n + 1) * (size_t)ncols, CELL);

	if (!cells)
		return;
	for (int k = 0; k < ncols; k++) {
		snprintf(cells[k], CELL, "%s", col_headers[cols[k]]);
		width[k] = cli_display_width(cells[k]);
	}
	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < ncols; k++) {
			char *out = cells[(i + 1) * (size_t)ncols + (size_t)k];
			size_t w;

			cell(out, sp_summary_get(s, i), cols[k], hidden);
			w = cli_display_width(out);
			width[k] = w > width[k] ? w : width[k];
		}
	}
	for (int k = 0; k < ncols; k++)
		inner += width[k] + (k ? 4 : 0);
	rule(f, "╭", "╮", inner);
	print_line(f, cells, width, ncols);
	rule(f, "├", "┤", inner);
	for (size_t i = 0; i < n; i++)
		print_line(f, cells + (i + 1) * (size_t)ncols, width, ncols);
	rule(f, "╰", "╯", inner);
	free(cells);
}

/* Hidden calls per region over the selected ranks; NULL when there are
 * none (or no memory: the table is then shown without the marks). */
static struct hidden *hidden_calls(struct sp_reader *r, const struct sp_selection *sel,
				   const struct sp_summary *s)
{
	size_t nreg = sp_reader_num_regions(r);
	struct hidden *hd = calloc(nreg ? nreg : 1, sizeof *hd);
	bool any = false;

	if (!hd)
		return NULL;
	for (size_t i = 0; i < sp_reader_num_rows(r); i++) {
		const struct sp_row *row = sp_reader_row(r, i);

		if (row->region >= nreg || row->throttled_count <= 0 ||
		    !sp_selection_match_rank(sel, row->rank))
			continue;
		hd[row->region].calls += (uint64_t)row->throttled_count;
		hd[row->region].ns += row->throttled_total_ns > 0 ? row->throttled_total_ns : 0;
		any = true;
	}
	for (size_t i = 0; any && i < sp_summary_count(s); i++) {
		const struct sp_summary_row *row = sp_summary_get(s, i);

		if (!row->own && row->region < nreg)
			hd[row->region].paths++;
	}
	if (!any) {
		free(hd);
		return NULL;
	}
	return hd;
}

/* What "*" means, from the file's throttle settings. */
static void legend(FILE *f, struct sp_reader *r, const struct hidden *hd, size_t nreg)
{
	const struct sp_meta *timing = sp_reader_metadata_find(r, "throttle_timing");
	const struct sp_meta *calls = sp_reader_metadata_find(r, "throttle_calls");
	const struct sp_meta *mean = sp_reader_metadata_find(r, "throttle_mean_ns");
	const struct sp_meta *sample = sp_reader_metadata_find(r, "throttle_sample");
	const char *t = timing && timing->s ? timing->s : NULL;
	bool multi = false;

	for (size_t i = 0; i < nreg; i++)
		multi |= hd[i].calls && hd[i].paths > 1;
	fprintf(f, "  * calls counted exactly, not on the timeline (");
	if (calls && mean)
		fprintf(f, "auto-throttle: %lld calls, own cost < %.3g us", (long long)calls->i,
			(double)mean->i / 1e3);
	else
		fprintf(f, "MIN_DURATION, MAX_DEPTH or auto-throttle");
	fprintf(f, ")\n    their time: ");
	if (t && strcmp(t, "sampled") == 0 && sample)
		fprintf(f, "1 in %lld timed at random, total estimated (95 %% interval: inspect)\n",
			(long long)sample->i);
	else if (t && strcmp(t, "estimate") == 0)
		fprintf(f, "count x the mean before the throttle (an estimate)\n");
	else
		fprintf(f, "measured exactly\n");
	if (multi)
		fprintf(f, "    \"+N*\": on several call paths, where those calls nested is not stored\n");
}

int cli_print_summary_table(const struct cli_common *c, FILE *f,
			    struct sp_reader *r, const char *columns,
			    enum sp_sort_key sort)
{
	return cli_print_region_table(c, f, r, columns, sort, NULL);
}

int cli_print_region_table(const struct cli_common *c, FILE *f,
			   struct sp_reader *r, const char *columns,
			   enum sp_sort_key sort, const char *title)
{
	struct sp_summary *s;
	enum col cols[MAX_COLS];
	unsigned nr = sp_reader_num_ranks(r);
	int ncols, rc;

	rc = sp_summary_build_flags(r, c->sel, sort,
				    needs_spread(columns) ? 0 : SP_SUMMARY_NO_SPREAD, &s);
	if (rc < 0) {
		cli_error(c, "%s: %s", sp_reader_path(r), sp_reader_last_error());
		return EXIT_USAGE;
	}
	ncols = parse_columns(c, columns, sp_summary_has_session(s), cols);
	if (ncols < 0) {
		sp_summary_destroy(s);
		return EXIT_USAGE;
	}
	if (sp_summary_is_flat(s))
		cli_error(c, "warning: %s; showing one row per region",
			  sp_reader_nesting_problem(r) ? sp_reader_nesting_problem(r)
						       : "no call tree");
	if (title)
		fprintf(f, "%s\n", title);
	else
		fprintf(f, "%s (%u %s)\n", sp_reader_path(r), nr, nr == 1 ? "rank" : "ranks");
	struct hidden *hidden = hidden_calls(r, c->sel, s);
	render(f, s, cols, ncols, hidden);
	if (hidden)
		legend(f, r, hidden, sp_reader_num_regions(r));
	free(hidden);
	sp_summary_destroy(s);
	return 0;
}
