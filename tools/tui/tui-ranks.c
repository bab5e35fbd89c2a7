/* SPDX-License-Identifier: MIT */
/*
 * Ranks pane of `scope-profiler tui`: per-rank statistics of the region
 * chosen in the Summary or Call tree pane, with a text bar chart of each
 * rank's total against the slowest rank and a mark at the mean, so load
 * imbalance shows at a glance. Computed when first shown for a region.
 */
#include <curses.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tui.h"

struct rank_stat {
	uint32_t rank;
	struct sp_stats st;
};

struct tui_ranks {
	bool valid;
	uint32_t region;
	struct rank_stat *rows;
	size_t n;
	double mean, max; /* of the per-rank totals */
	double imbalance; /* percent, as the reader's rank_imbalance_pct */
	bool by_total;	  /* sort by total (descending), else by rank */
	struct tui_cursor cur;
};

void tui_ranks_reset(struct tui *t)
{
	if (t->ranks) {
		free(t->ranks->rows);
		t->ranks->rows = NULL;
		t->ranks->valid = false;
	}
}

void tui_ranks_destroy(struct tui *t)
{
	tui_ranks_reset(t);
	free(t->ranks);
	t->ranks = NULL;
}

static int cmp_total(const void *pa, const void *pb)
{
	const struct rank_stat *a = pa, *b = pb;

	if (a->st.total_ns != b->st.total_ns)
		return a->st.total_ns > b->st.total_ns ? -1 : 1;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

static int cmp_rank(const void *pa, const void *pb)
{
	const struct rank_stat *a = pa, *b = pb;

	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* max / mean of the positive per-rank totals, minus one, in percent; 0 with
 * fewer than two such ranks (§3.2 rank_imbalance_pct). */
static double imbalance_pct(const struct tui_ranks *k)
{
	double sum = 0, max = 0;
	size_t used = 0;

	for (size_t i = 0; i < k->n; i++) {
		double v = k->rows[i].st.total;

		if (v <= 0)
			continue;
		sum += v;
		max = v > max ? v : max;
		used++;
	}
	return used >= 2 ? (max / (sum / (double)used) - 1) * 100 : 0.0;
}

static int load(struct tui *t, struct tui_ranks *k)
{
	const uint32_t *ranks;
	size_t nr = sp_reader_ranks(t->r, &ranks);

	k->rows = calloc(nr + 1, sizeof(*k->rows));
	if (!k->rows)
		return -ENOMEM;
	k->n = 0;
	k->mean = k->max = 0;
	for (size_t i = 0; i < nr; i++) {
		long row = sp_reader_row_find(t->r, t->region, ranks[i]);
		struct rank_stat *rs = &k->rows[k->n];

		if (row < 0 || sp_reader_row_stats(t->r, (size_t)row, &rs->st) < 0)
			continue;
		rs->rank = ranks[i];
		k->mean += rs->st.total;
		k->max = rs->st.total > k->max ? rs->st.total : k->max;
		k->n++;
	}
	if (k->n)
		k->mean /= (double)k->n;
	k->imbalance = imbalance_pct(k);
	qsort(k->rows, k->n, sizeof(*k->rows), k->by_total ? cmp_total : cmp_rank);
	k->region = t->region;
	k->valid = true;
	return 0;
}

static struct tui_ranks *get(struct tui *t)
{
	struct tui_ranks *k = t->ranks;

	if (!k && !(k = t->ranks = calloc(1, sizeof(*k))))
		return NULL;
	if (k->valid && k->region != t->region)
		tui_ranks_reset(t);
	if (!k->valid && t->has_region && load(t, k) < 0) {
		tui_ranks_reset(t);
		tui_message(t, "ranks: out of memory");
	}
	return k;
}

/* The bar of one rank: total against the slowest rank, mean marked. */
static void bar(const struct tui *t, const struct tui_ranks *k, double v, char *buf, size_t size,
		int width)
{
	int eighths = k->max > 0 ? (int)lround(v / k->max * width * 8) : 0;
	int mean_col = k->max > 0 ? (int)(k->mean / k->max * width) : -1;
	size_t len = 0;

	if (mean_col >= width)
		mean_col = width - 1;
	buf[0] = '\0';
	for (int c = 0; c < width && len + 8 < size; c++) {
		int f = eighths - 8 * c;
		const char *g = f >= 8 ? t->g->eighths[8] : f > 0 ? t->g->eighths[f] : "";

		if (!*g)
			g = c == mean_col ? t->g->mean_mark : " ";
		len += (size_t)snprintf(buf + len, size - len, "%s", g);
	}
}

static const char *const heads[] = {"rank",    "calls",	  "total [s]", "avg [s]",
				    "min [s]", "max [s]", "excl [s]",  "vs mean"};
static const int widths[] = {6, 9, 12, 10, 10, 10, 12, 9};
#define N_COLS 8

static void cells(const struct tui_ranks *k, const struct rank_stat *rs, char out[N_COLS][32])
{
	snprintf(out[0], 32, "%u", rs->rank);
	snprintf(out[1], 32, "%llu", (unsigned long long)rs->st.num_calls);
	snprintf(out[2], 32, "%.6f", rs->st.total);
	tui_fmt(out[3], 32, "%.3e", rs->st.num_calls ? rs->st.average : NAN);
	tui_fmt(out[4], 32, "%.3e", rs->st.num_calls ? rs->st.min : NAN);
	tui_fmt(out[5], 32, "%.3e", rs->st.num_calls ? rs->st.max : NAN);
	tui_fmt(out[6], 32, "%.6f", rs->st.has_exclusive ? rs->st.exclusive : NAN);
	tui_fmt(out[7], 32, "%+.1f%%",
		k->mean > 0 ? (rs->st.total - k->mean) / k->mean * 100 : NAN);
}

static void draw_title(struct tui *t, const struct tui_ranks *k, int y)
{
	char buf[512];

	snprintf(
	    buf, sizeof(buf),
	    "region %s: %zu rank%s, mean total %.6f s, slowest %.6f s, imbalance %.2f%% (%s = mean)",
	    sp_reader_region_name(t->r, k->region), k->n, k->n == 1 ? "" : "s", k->mean, k->max,
	    k->imbalance,
	    t->g->mean_mark);
	attron(A_BOLD);
	tui_put(t, y, 0, COLS, buf, true);
	attroff(A_BOLD);
}

static void ranks_draw(struct tui *t, int y, int height)
{
	struct tui_ranks *k = get(t);
	char num[N_COLS][32], buf[4096];
	int x = 0, bw;

	if (!k || !k->valid) {
		tui_put(t, y, 0, COLS, "(choose a region in the Summary pane)", false);
		return;
	}
	draw_title(t, k, y);
	attron(A_BOLD | A_UNDERLINE);
	for (int c = 0; c < N_COLS; c++) {
		tui_put_right(t, y + 1, x, widths[c], heads[c]);
		x += widths[c] + 2;
	}
	bw = COLS - x - 1;
	tui_put(t, y + 1, x, COLS - x, k->by_total ? "bar (sorted by total)" : "bar", true);
	attroff(A_BOLD | A_UNDERLINE);
	tui_cursor_fix(&k->cur, k->n, height - 2);
	for (int line = 0; line < height - 2; line++) {
		size_t v = k->cur.top + (size_t)line;
		const struct rank_stat *rs;

		if (v >= k->n)
			break;
		rs = &k->rows[v];
		attrset(v == k->cur.cur ? A_REVERSE : A_NORMAL);
		if ((long)rs->rank == t->rank)
			attron(A_BOLD);
		cells(k, rs, num);
		tui_put(t, y + 2 + line, 0, COLS, "", true);
		x = 0;
		for (int c = 0; c < N_COLS; c++) {
			tui_put_right(t, y + 2 + line, x, widths[c], num[c]);
			x += widths[c] + 2;
		}
		if (bw > 4) {
			bar(t, k, rs->st.total, buf, sizeof(buf), bw);
			tui_put(t, y + 2 + line, x, bw, buf, false);
		}
	}
	attrset(A_NORMAL);
}

static bool ranks_key(struct tui *t, int ch, int height)
{
	struct tui_ranks *k = get(t);

	if (!k || !k->valid)
		return false;
	if (tui_cursor_key(&k->cur, ch, k->n, height - 2))
		return true;
	if (ch == 's' || ch == 'S') {
		k->by_total = !k->by_total;
		qsort(k->rows, k->n, sizeof(*k->rows), k->by_total ? cmp_total : cmp_rank);
		tui_message(t, "ranks sorted by %s", k->by_total ? "total" : "rank");
		return true;
	}
	if ((ch == '\n' || ch == '\r' || ch == KEY_ENTER) && k->n) {
		tui_set_rank(t, (long)k->rows[k->cur.cur].rank);
		t->pane = TUI_CALLTREE;
		return true;
	}
	return false;
}

static long ranks_csv(struct tui *t, FILE *f)
{
	struct tui_ranks *k = get(t);

	if (!k || !k->valid)
		return -1;
	fputs("region,rank,calls,total,avg,min,max,exclusive,p50,p95,p99,vs_mean_pct\n", f);
	for (size_t i = 0; i < k->n; i++) {
		const struct sp_stats *st = &k->rows[i].st;
		bool calls = st->num_calls > 0;

		tui_csv_field(f, true, sp_reader_region_name(t->r, k->region));
		fprintf(f, ",%u,%llu", k->rows[i].rank, (unsigned long long)st->num_calls);
		tui_csv_double(f, st->total);
		tui_csv_double(f, calls ? st->average : NAN);
		tui_csv_double(f, calls ? st->min : NAN);
		tui_csv_double(f, calls ? st->max : NAN);
		tui_csv_double(f, st->has_exclusive ? st->exclusive : NAN);
		tui_csv_double(f, calls && st->has_percentiles ? st->p50 : NAN);
		tui_csv_double(f, calls && st->has_percentiles ? st->p95 : NAN);
		tui_csv_double(f, calls && st->has_percentiles ? st->p99 : NAN);
		tui_csv_double(f, k->mean > 0 ? (st->total - k->mean) / k->mean * 100 : NAN);
		fputc('\n', f);
	}
	return (long)k->n;
}

static bool ranks_ready(const struct tui *t)
{
	return !t->has_region || (t->ranks && t->ranks->valid && t->ranks->region == t->region);
}

static void ranks_prepare(struct tui *t)
{
	get(t);
}

const struct tui_pane tui_ranks_pane = {
    .title = "Ranks",
    .draw = ranks_draw,
    .key = ranks_key,
    .export_csv = ranks_csv,
    .ready = ranks_ready,
    .prepare = ranks_prepare,
    .busy = "computing per-rank statistics",
};
