/* SPDX-License-Identifier: MIT */
/*
 * Summary pane of `scope-profiler tui`: the call-path rows of §3.8 (tree
 * view with "(own)" rows) built once per filter/rank by sp_summary_build,
 * re-sorted locally by any column (siblings only, "(own)" stays first, the
 * reader's order: start ascending, name alphabetical, others descending,
 * undefined last, ties by name), with collapsible nodes.
 */
#define _GNU_SOURCE
#include <curses.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tui.h"

struct tui_summary {
	struct sp_summary *s;
	size_t n;
	bool failed;
	size_t *parent; /* row index, n = the (virtual) root */
	size_t *kids;	/* children of p: kids[off[p] .. off[p + 1]) */
	size_t *off;	/* n + 2 entries */
	bool *collapsed;
	size_t *vis; /* shown rows, in display order */
	size_t n_vis;
	enum sp_sort_key sort;
	struct tui_cursor cur;
};

static const char *const sort_names[] = {
    "start", "total", "calls", "avg", "min", "max",	  "first",
    "last",  "std",   "p50",   "p95", "p99", "imbalance", "name",
};
#define N_SORT ((int)(sizeof(sort_names) / sizeof(sort_names[0])))

/* Numeric columns; the region column comes first. */
enum {
	K_RANKS,
	K_CALLS,
	K_PERCENT,
	K_TOTAL,
	K_AVG,
	K_MIN,
	K_MAX,
	K_STD,
	K_P50,
	K_P95,
	K_P99,
	K_FIRST,
	K_LAST,
	K_IMBALANCE,
	K_N
};

static const struct column {
	const char *head, *csv;
	int width;
	int sort; /* enum sp_sort_key or -1 */
} columns[K_N] = {
    {"ranks", "ranks", 6, -1},
    {"n", "calls", 9, SP_SORT_CALLS},
    {"% session", "percent", 10, -1},
    {"total [s]", "total", 12, SP_SORT_TOTAL},
    {"avg [s]", "avg", 10, SP_SORT_AVG},
    {"min [s]", "min", 10, SP_SORT_MIN},
    {"max [s]", "max", 10, SP_SORT_MAX},
    {"std [s]", "std", 10, SP_SORT_STD},
    {"p50 [s]", "p50", 10, SP_SORT_P50},
    {"p95 [s]", "p95", 10, SP_SORT_P95},
    {"p99 [s]", "p99", 10, SP_SORT_P99},
    {"first [s]", "first", 10, SP_SORT_FIRST},
    {"last [s]", "last", 10, SP_SORT_LAST},
    {"imbalance [%]", "imbalance", 13, SP_SORT_IMBALANCE},
};

static double sort_value(const struct sp_summary_row *row, enum sp_sort_key key)
{
	switch (key) {
	case SP_SORT_START:
		return row->first_start;
	case SP_SORT_TOTAL:
		return row->calls ? row->total : NAN;
	case SP_SORT_CALLS:
		return row->calls ? (double)row->calls : NAN;
	case SP_SORT_AVG:
		return row->avg;
	case SP_SORT_MIN:
		return row->min;
	case SP_SORT_MAX:
		return row->max;
	case SP_SORT_FIRST:
		return row->first;
	case SP_SORT_LAST:
		return row->last;
	case SP_SORT_STD:
		return row->std;
	case SP_SORT_P50:
		return row->p50;
	case SP_SORT_P95:
		return row->p95;
	case SP_SORT_P99:
		return row->p99;
	case SP_SORT_IMBALANCE:
		return row->imbalance;
	default:
		return 0;
	}
}

static int cmp_rows(const void *pa, const void *pb, void *arg)
{
	const struct tui_summary *m = arg;
	const struct sp_summary_row *a = sp_summary_get(m->s, *(const size_t *)pa);
	const struct sp_summary_row *b = sp_summary_get(m->s, *(const size_t *)pb);

	if (m->sort != SP_SORT_NAME) {
		double x = sort_value(a, m->sort), y = sort_value(b, m->sort);
		bool nx = isnan(x), ny = isnan(y);

		if (nx != ny)
			return nx ? 1 : -1;
		if (!nx && x != y) {
			if (m->sort == SP_SORT_START)
				return x < y ? -1 : 1;
			return x > y ? -1 : 1;
		}
	}
	return strcmp(a->name, b->name);
}

/* Order every sibling list by m->sort; an "(own)" row stays first. */
static void sort_siblings(struct tui_summary *m)
{
	for (size_t p = 0; p <= m->n; p++) {
		size_t *k = m->kids + m->off[p], nk = m->off[p + 1] - m->off[p];

		if (nk && sp_summary_get(m->s, k[0])->own) {
			k++;
			nk--;
		}
		qsort_r(k, nk, sizeof(*k), cmp_rows, m);
	}
}

/* Parents from the depth-first rows, then the children lists. */
static int link_rows(struct tui_summary *m)
{
	size_t n = m->n, *stack = calloc(n + 1, sizeof(*stack)), *fill;

	m->parent = calloc(n + 1, sizeof(*m->parent));
	m->kids = calloc(n + 1, sizeof(*m->kids));
	m->off = calloc(n + 2, sizeof(*m->off));
	m->collapsed = calloc(n + 1, sizeof(*m->collapsed));
	m->vis = calloc(n + 1, sizeof(*m->vis));
	fill = calloc(n + 2, sizeof(*fill));
	if (!stack || !m->parent || !m->kids || !m->off || !m->collapsed || !m->vis || !fill) {
		free(stack);
		free(fill);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		int d = sp_summary_get(m->s, i)->depth;

		if (d < 0)
			d = 0;
		if ((size_t)d > n)
			d = (int)n;
		m->parent[i] = d == 0 ? n : stack[d - 1];
		stack[d] = i;
		m->off[m->parent[i] + 1]++;
	}
	for (size_t p = 1; p <= n + 1; p++)
		m->off[p] += m->off[p - 1];
	for (size_t i = 0; i < n; i++) {
		size_t p = m->parent[i];

		m->kids[m->off[p] + fill[p]++] = i;
	}
	free(stack);
	free(fill);
	return 0;
}

static bool has_kids(const struct tui_summary *m, size_t i)
{
	return m->off[i + 1] > m->off[i];
}

/* Recompute the shown rows, keeping the cursor on the same row. */
static void make_visible(struct tui_summary *m)
{
	size_t keep = m->n_vis ? m->vis[m->cur.cur] : m->n, top = 0;
	size_t *stack = malloc((m->n + 1) * sizeof(*stack));

	m->n_vis = 0;
	if (!stack)
		return;
	stack[top++] = m->n;
	while (top) {
		size_t p = stack[--top];

		if (p != m->n)
			m->vis[m->n_vis++] = p;
		if (p != m->n && m->collapsed[p])
			continue;
		for (size_t k = m->off[p + 1]; k > m->off[p]; k--)
			stack[top++] = m->kids[k - 1];
	}
	free(stack);
	for (size_t i = 0; i < m->n_vis; i++)
		if (m->vis[i] == keep)
			m->cur.cur = i;
}

static void summary_free(struct tui_summary *m)
{
	sp_summary_destroy(m->s);
	free(m->parent);
	free(m->kids);
	free(m->off);
	free(m->collapsed);
	free(m->vis);
}

static struct tui_summary *get(struct tui *t)
{
	struct tui_summary *m = t->summary;
	int rc;

	if (!m && !(m = t->summary = calloc(1, sizeof(*m))))
		return NULL;
	if (m->s || m->failed)
		return m;
	rc = sp_summary_build(t->r, t->sel, SP_SORT_START, &m->s);
	if (rc < 0) {
		m->failed = true;
		tui_message(t, "summary: %s", sp_reader_last_error());
		return m;
	}
	m->n = sp_summary_count(m->s);
	if (link_rows(m) < 0) {
		summary_free(m);
		memset(m, 0, sizeof(*m));
		m->failed = true;
		tui_message(t, "summary: out of memory");
		return m;
	}
	sort_siblings(m);
	make_visible(m);
	if (sp_summary_is_flat(m->s))
		tui_message(t, "no call tree (%s): one row per region",
			    sp_reader_nesting_problem(t->r) ? sp_reader_nesting_problem(t->r)
							    : "not nested");
	return m;
}

void tui_summary_reset(struct tui *t)
{
	struct tui_summary *m = t->summary;
	enum sp_sort_key sort;

	if (!m)
		return;
	sort = m->sort;
	summary_free(m);
	memset(m, 0, sizeof(*m));
	m->sort = sort;
}

void tui_summary_destroy(struct tui *t)
{
	if (t->summary)
		summary_free(t->summary);
	free(t->summary);
	t->summary = NULL;
}

const char *tui_summary_sort_name(const struct tui *t)
{
	return sort_names[t->summary ? t->summary->sort : SP_SORT_START];
}

/* The tree label of a row: indent, node marker, name, call count. */
static void label(const struct tui *t, const struct tui_summary *m, size_t i, char *buf,
		  size_t size)
{
	const struct sp_summary_row *row = sp_summary_get(m->s, i);
	const char *mark = !has_kids(m, i)   ? t->g->leaf
			   : m->collapsed[i] ? t->g->closed
					     : t->g->open;
	int len = snprintf(buf, size, "%*s%s", 2 * row->depth, "", mark);

	if (row->own)
		snprintf(buf + len, size - (size_t)len, "(own)");
	else if (row->calls > 1)
		snprintf(buf + len, size - (size_t)len, "%s (%llux)%s", row->name,
			 (unsigned long long)row->calls,
			 row->recursive ? (t->utf8 ? " ↻" : " (rec)") : "");
	else
		snprintf(buf + len, size - (size_t)len, "%s%s", row->name,
			 row->recursive ? (t->utf8 ? " ↻" : " (rec)") : "");
}

static void cell(const struct sp_summary_row *row, int k, char *buf, size_t size)
{
	switch (k) {
	case K_RANKS:
		snprintf(buf, size, "%u", row->num_ranks);
		return;
	case K_CALLS:
		snprintf(buf, size, "%llu", (unsigned long long)row->calls);
		return;
	case K_PERCENT:
		tui_fmt(buf, size, "%.2f%%", row->percent);
		return;
	case K_TOTAL:
		tui_fmt(buf, size, "%.6f", row->total);
		return;
	case K_AVG:
		tui_fmt(buf, size, "%.3e", row->avg);
		return;
	case K_MIN:
		tui_fmt(buf, size, "%.3e", row->min);
		return;
	case K_MAX:
		tui_fmt(buf, size, "%.3e", row->max);
		return;
	case K_STD:
		tui_fmt(buf, size, "%.3e", row->std);
		return;
	case K_P50:
		tui_fmt(buf, size, "%.3e", row->p50);
		return;
	case K_P95:
		tui_fmt(buf, size, "%.3e", row->p95);
		return;
	case K_P99:
		tui_fmt(buf, size, "%.3e", row->p99);
		return;
	case K_FIRST:
		tui_fmt(buf, size, "%.3e", row->first);
		return;
	case K_LAST:
		tui_fmt(buf, size, "%.3e", row->last);
		return;
	case K_IMBALANCE:
		tui_fmt(buf, size, "%.2f", row->imbalance);
		return;
	default:
		buf[0] = '\0';
	}
}

/* Columns that fit after a region column of width rw; the sorted column is
 * always shown (it replaces the last one that fits). Returns the count. */
static int fit_columns(const struct tui_summary *m, int rw, int *cols)
{
	int n = 0, x = rw, sorted = -1;
	bool session = sp_summary_has_session(m->s);

	for (int k = 0; k < K_N; k++) {
		if (k == K_PERCENT && !session)
			continue;
		if (columns[k].sort == (int)m->sort)
			sorted = k;
		if (x + 2 + columns[k].width <= COLS) {
			cols[n++] = k;
			x += 2 + columns[k].width;
		}
	}
	if (sorted >= 0 && n > 0) {
		bool shown = false;

		for (int i = 0; i < n; i++)
			shown |= cols[i] == sorted;
		if (!shown)
			cols[n - 1] = sorted;
	}
	return n;
}

static int region_width(const struct tui *t, const struct tui_summary *m)
{
	int w = 24;
	char buf[512];

	for (size_t i = 0; i < m->n_vis; i++) {
		int lw;

		label(t, m, m->vis[i], buf, sizeof(buf));
		lw = tui_width(t, buf);
		w = lw > w ? lw : w;
	}
	w += 1;
	return w > COLS / 2 ? (COLS / 2 > 24 ? COLS / 2 : 24) : w;
}

static void draw_header(const struct tui *t, const struct tui_summary *m, int y, int rw,
			const int *cols, int nc)
{
	char buf[64];
	int x = rw;

	attron(A_BOLD | A_UNDERLINE);
	snprintf(buf, sizeof(buf), "region%s", m->sort == SP_SORT_NAME ? t->g->sort_mark : "");
	tui_put(t, y, 0, rw, buf, true);
	for (int i = 0; i < nc; i++) {
		const struct column *c = &columns[cols[i]];

		tui_put(t, y, x, 2, "", true);
		snprintf(buf, sizeof(buf), "%s%s", c->head,
			 c->sort == (int)m->sort ? t->g->sort_mark : "");
		tui_put_right(t, y, x + 2, c->width, buf);
		x += 2 + c->width;
	}
	attroff(A_BOLD | A_UNDERLINE);
}

static void summary_draw(struct tui *t, int y, int height)
{
	struct tui_summary *m = get(t);
	int cols[K_N], nc, rw;
	char buf[512];

	if (!m || !m->s) {
		tui_put(t, y, 0, COLS, "(no summary)", false);
		return;
	}
	if (m->n_vis == 0) {
		tui_put(t, y, 0, COLS, "(no regions match the filter)", false);
		return;
	}
	rw = region_width(t, m);
	nc = fit_columns(m, rw, cols);
	draw_header(t, m, y, rw, cols, nc);
	tui_cursor_fix(&m->cur, m->n_vis, height - 1);
	for (int line = 0; line < height - 1; line++) {
		size_t v = m->cur.top + (size_t)line;
		int x = rw;

		if (v >= m->n_vis)
			break;
		if (v == m->cur.cur)
			attron(A_REVERSE);
		label(t, m, m->vis[v], buf, sizeof(buf));
		tui_put(t, y + 1 + line, 0, rw, buf, true);
		for (int i = 0; i < nc; i++) {
			int w = columns[cols[i]].width;

			cell(sp_summary_get(m->s, m->vis[v]), cols[i], buf, sizeof(buf));
			tui_put(t, y + 1 + line, x, w + 2, "", true);
			tui_put_right(t, y + 1 + line, x + 2, w, buf);
			x += 2 + w;
		}
		if (v == m->cur.cur)
			attroff(A_REVERSE);
	}
	t->has_region = true;
	t->region = sp_summary_get(m->s, m->vis[m->cur.cur])->region;
}

/* Enter/Right/Left on the row under the cursor. */
static bool tree_key(struct tui *t, struct tui_summary *m, int ch)
{
	size_t i = m->vis[m->cur.cur];

	if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		if (!has_kids(m, i)) {
			t->pane = TUI_RANKS;
			return true;
		}
		m->collapsed[i] = !m->collapsed[i];
	} else if (ch == KEY_RIGHT || ch == 'l') {
		if (has_kids(m, i) && m->collapsed[i])
			m->collapsed[i] = false;
		else if (has_kids(m, i) && m->cur.cur + 1 < m->n_vis)
			m->cur.cur++;
	} else if (ch == KEY_LEFT || ch == 'h') {
		if (has_kids(m, i) && !m->collapsed[i]) {
			m->collapsed[i] = true;
		} else if (m->parent[i] != m->n) {
			for (size_t v = 0; v < m->n_vis; v++)
				if (m->vis[v] == m->parent[i])
					m->cur.cur = v;
		}
	} else {
		return false;
	}
	make_visible(m);
	return true;
}

static bool summary_key(struct tui *t, int ch, int height)
{
	struct tui_summary *m = get(t);

	if (!m || !m->s)
		return false;
	if (ch == 's' || ch == 'S') {
		m->sort = (enum sp_sort_key)((m->sort + (ch == 's' ? 1 : N_SORT - 1)) % N_SORT);
		sort_siblings(m);
		make_visible(m);
		tui_message(t, "sorted by %s", sort_names[m->sort]);
		return true;
	}
	if (m->n_vis == 0)
		return false;
	if (tui_cursor_key(&m->cur, ch, m->n_vis, height - 1))
		return true;
	return tree_key(t, m, ch);
}

static long summary_csv(struct tui *t, FILE *f)
{
	struct tui_summary *m = get(t);

	if (!m || !m->s)
		return -1;
	fputs("depth,region,own,recursive", f);
	for (int k = 0; k < K_N; k++)
		fprintf(f, ",%s", columns[k].csv);
	fputc('\n', f);
	for (size_t v = 0; v < m->n_vis; v++) {
		const struct sp_summary_row *row = sp_summary_get(m->s, m->vis[v]);

		fprintf(f, "%d", row->depth);
		tui_csv_field(f, false, row->name);
		fprintf(f, ",%d,%d,%u,%llu", row->own, row->recursive, row->num_ranks,
			(unsigned long long)row->calls);
		tui_csv_double(f, row->percent);
		tui_csv_double(f, row->total);
		tui_csv_double(f, row->avg);
		tui_csv_double(f, row->min);
		tui_csv_double(f, row->max);
		tui_csv_double(f, row->std);
		tui_csv_double(f, row->p50);
		tui_csv_double(f, row->p95);
		tui_csv_double(f, row->p99);
		tui_csv_double(f, row->first);
		tui_csv_double(f, row->last);
		tui_csv_double(f, row->imbalance);
		fputc('\n', f);
	}
	return (long)m->n_vis;
}

static bool summary_ready(const struct tui *t)
{
	return t->summary && (t->summary->s || t->summary->failed);
}

static void summary_prepare(struct tui *t)
{
	get(t);
}

const struct tui_pane tui_summary_pane = {
    .title = "Summary",
    .draw = summary_draw,
    .key = summary_key,
    .export_csv = summary_csv,
    .ready = summary_ready,
    .prepare = summary_prepare,
    .busy = "building the call-path summary",
};
