/* SPDX-License-Identifier: MIT */
/*
 * Call-tree pane of `scope-profiler tui`: the reconstructed calls of one rank
 * and thread lane (sp_call_stack_build, parents before children in start
 * order), shown as a tree that expands lazily: only the children of an
 * expanded call are looked up and put on the visible list.
 */
#include <curses.h>
#include <stdlib.h>
#include <string.h>

#include "tui.h"

struct tui_calltree {
	struct sp_call_stack *cs;
	bool failed;
	size_t n;
	int32_t *depth;	   /* per call */
	uint8_t *expanded; /* per call */
	size_t *vis;	   /* visible call ids */
	size_t n_vis, cap_vis;
	struct tui_cursor cur;
	double origin; /* seconds subtracted from start times */
};

static void calltree_free(struct tui_calltree *c)
{
	sp_call_stack_destroy(c->cs);
	free(c->depth);
	free(c->expanded);
	free(c->vis);
}

void tui_calltree_reset(struct tui *t)
{
	if (t->calltree)
		calltree_free(t->calltree);
	free(t->calltree);
	t->calltree = NULL;
}

void tui_calltree_destroy(struct tui *t)
{
	tui_calltree_reset(t);
}

static bool has_kids(const struct tui_calltree *c, size_t i)
{
	return i + 1 < c->n && c->depth[i + 1] > c->depth[i];
}

/* Insert the direct children of the call shown at position v after it. */
static int expand(struct tui_calltree *c, size_t v)
{
	size_t i = c->vis[v], nk = 0, j;
	int32_t d = c->depth[i];

	for (j = i + 1; j < c->n && c->depth[j] > d; j++)
		nk += c->depth[j] == d + 1;
	if (c->n_vis + nk > c->cap_vis) {
		size_t cap = c->n_vis + nk + 1024;
		size_t *p = realloc(c->vis, cap * sizeof(*p));

		if (!p)
			return -1;
		c->vis = p;
		c->cap_vis = cap;
	}
	memmove(c->vis + v + 1 + nk, c->vis + v + 1, (c->n_vis - v - 1) * sizeof(*c->vis));
	nk = 0;
	for (j = i + 1; j < c->n && c->depth[j] > d; j++)
		if (c->depth[j] == d + 1)
			c->vis[v + 1 + nk++] = j;
	c->n_vis += nk;
	c->expanded[i] = 1;
	return 0;
}

/* Remove everything shown below the call at position v. */
static void collapse(struct tui_calltree *c, size_t v)
{
	size_t i = c->vis[v], end = v + 1;

	while (end < c->n_vis && c->depth[c->vis[end]] > c->depth[i]) {
		c->expanded[c->vis[end]] = 0;
		end++;
	}
	memmove(c->vis + v + 1, c->vis + end, (c->n_vis - end) * sizeof(*c->vis));
	c->n_vis -= end - v - 1;
	c->expanded[i] = 0;
}

static int load(struct tui *t, struct tui_calltree *c, long rank)
{
	struct sp_call call;
	struct sp_times times;
	size_t roots = 0;
	int rc;

	rc = sp_call_stack_build(t->r, (uint32_t)rank, t->lane, t->names, &c->cs);
	if (rc < 0) {
		tui_message(t, "call tree: %s", sp_reader_last_error());
		return rc;
	}
	c->n = sp_call_stack_count(c->cs);
	c->depth = malloc((c->n + 1) * sizeof(*c->depth));
	c->expanded = calloc(c->n + 1, 1);
	if (!c->depth || !c->expanded)
		return -ENOMEM;
	for (size_t i = 0; i < c->n; i++) {
		sp_call_stack_get(c->cs, i, &call);
		c->depth[i] = call.depth;
		roots += call.depth == 0;
	}
	c->cap_vis = roots + 1;
	if (!(c->vis = malloc(c->cap_vis * sizeof(*c->vis))))
		return -ENOMEM;
	for (size_t i = 0; i < c->n; i++)
		if (c->depth[i] == 0)
			c->vis[c->n_vis++] = i;
	if (c->n_vis == 1 && expand(c, 0) < 0)
		return -ENOMEM;
	sp_reader_times(t->r, &times);
	c->origin = times.time_origin;
	return 0;
}

static struct tui_calltree *get(struct tui *t)
{
	struct tui_calltree *c = t->calltree;
	long rank = tui_single_rank(t);

	if (!c && !(c = t->calltree = calloc(1, sizeof(*c))))
		return NULL;
	if (c->cs || c->failed)
		return c;
	if (rank < 0 || load(t, c, rank) < 0) {
		calltree_free(c);
		memset(c, 0, sizeof(*c));
		c->failed = true;
	}
	return c;
}

static void cells(const struct tui_calltree *c, const struct sp_call *call, char out[4][32])
{
	snprintf(out[0], 32, "%llu", (unsigned long long)call->call_index);
	snprintf(out[1], 32, "%.6f", (double)call->start_ns / 1e9 - c->origin);
	snprintf(out[2], 32, "%.6f", (double)(call->end_ns - call->start_ns) / 1e9);
	snprintf(out[3], 32, "%.6f", (double)call->exclusive_ns / 1e9);
}

static const char *const heads[4] = {"call #", "start [s]", "duration [s]", "exclusive [s]"};
static const int widths[4] = {9, 14, 14, 14};

static void draw_line(struct tui *t, const struct tui_calltree *c, int y, size_t v, int nw)
{
	struct sp_call call;
	char buf[512], num[4][32];
	size_t i = c->vis[v];
	const char *mark = !has_kids(c, i)  ? t->g->leaf
			   : c->expanded[i] ? t->g->open
					    : t->g->closed;
	int x = nw;

	sp_call_stack_get(c->cs, i, &call);
	snprintf(buf, sizeof(buf), "%*s%s%s", 2 * call.depth, "", mark,
		 sp_reader_region_name(t->r, call.region));
	tui_put(t, y, 0, nw, buf, true);
	cells(c, &call, num);
	for (int k = 0; k < 4 && x + 2 + widths[k] <= COLS; k++) {
		tui_put(t, y, x, 2 + widths[k], "", true);
		tui_put_right(t, y, x + 2, widths[k], num[k]);
		x += 2 + widths[k];
	}
}

static void calltree_draw(struct tui *t, int y, int height)
{
	struct tui_calltree *c = get(t);
	long rank = tui_single_rank(t);
	int nw = COLS - (4 * 2 + 9 + 14 * 3);
	char buf[256], lane[32] = "all";
	int x;

	if (t->lane != TUI_ALL_LANES)
		snprintf(lane, sizeof(lane), "%lld", (long long)t->lane);
	snprintf(buf, sizeof(buf), "rank %ld, thread %s: %zu calls", rank, lane,
		 c && c->cs ? c->n : (size_t)0);
	attron(A_BOLD);
	tui_put(t, y, 0, COLS, buf, true);
	attroff(A_BOLD);
	if (!c || !c->cs) {
		tui_put(t, y + 1, 0, COLS, "(no call tree for this rank)", false);
		return;
	}
	nw = nw < 20 ? 20 : nw > 60 ? 60 : nw;
	attron(A_BOLD | A_UNDERLINE);
	tui_put(t, y + 1, 0, nw, "region", true);
	x = nw;
	for (int k = 0; k < 4 && x + 2 + widths[k] <= COLS; k++) {
		tui_put(t, y + 1, x, 2 + widths[k], "", true);
		tui_put_right(t, y + 1, x + 2, widths[k], heads[k]);
		x += 2 + widths[k];
	}
	attroff(A_BOLD | A_UNDERLINE);
	tui_cursor_fix(&c->cur, c->n_vis, height - 2);
	for (int line = 0; line < height - 2; line++) {
		size_t v = c->cur.top + (size_t)line;

		if (v >= c->n_vis)
			break;
		if (v == c->cur.cur) {
			struct sp_call call;

			sp_call_stack_get(c->cs, c->vis[v], &call);
			t->has_region = true;
			t->region = call.region;
			attron(A_REVERSE);
		}
		draw_line(t, c, y + 2 + line, v, nw);
		if (v == c->cur.cur)
			attroff(A_REVERSE);
	}
}

static bool calltree_key(struct tui *t, int ch, int height)
{
	struct tui_calltree *c = get(t);
	size_t v, i;

	if (!c || !c->cs || c->n_vis == 0)
		return false;
	if (tui_cursor_key(&c->cur, ch, c->n_vis, height - 2))
		return true;
	v = c->cur.cur;
	i = c->vis[v];
	if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		if (c->expanded[i])
			collapse(c, v);
		else if (has_kids(c, i) && expand(c, v) < 0)
			tui_message(t, "out of memory");
	} else if (ch == KEY_RIGHT || ch == 'l') {
		if (has_kids(c, i) && !c->expanded[i]) {
			if (expand(c, v) < 0)
				tui_message(t, "out of memory");
		} else if (c->expanded[i] && v + 1 < c->n_vis) {
			c->cur.cur++;
		}
	} else if (ch == KEY_LEFT || ch == 'h') {
		if (c->expanded[i]) {
			collapse(c, v);
		} else {
			while (v > 0 && c->depth[c->vis[v]] >= c->depth[i])
				v--;
			c->cur.cur = v;
		}
	} else {
		return false;
	}
	return true;
}

static long calltree_csv(struct tui *t, FILE *f)
{
	struct tui_calltree *c = get(t);
	struct sp_call call;

	if (!c || !c->cs)
		return -1;
	fputs("call_id,depth,region,rank,lane,call_index,start,end,duration,exclusive\n", f);
	for (size_t v = 0; v < c->n_vis; v++) {
		sp_call_stack_get(c->cs, c->vis[v], &call);
		fprintf(f, "%zu,%d", c->vis[v], call.depth);
		tui_csv_field(f, false, sp_reader_region_name(t->r, call.region));
		fprintf(f, ",%u,%lld,%llu", call.rank, (long long)call.lane,
			(unsigned long long)call.call_index);
		tui_csv_double(f, (double)call.start_ns / 1e9 - c->origin);
		tui_csv_double(f, (double)call.end_ns / 1e9 - c->origin);
		tui_csv_double(f, (double)(call.end_ns - call.start_ns) / 1e9);
		tui_csv_double(f, (double)call.exclusive_ns / 1e9);
		fputc('\n', f);
	}
	return (long)c->n_vis;
}

static bool calltree_ready(const struct tui *t)
{
	return t->calltree && (t->calltree->cs || t->calltree->failed);
}

static void calltree_prepare(struct tui *t)
{
	get(t);
}

const struct tui_pane tui_calltree_pane = {
    .title = "Call tree",
    .draw = calltree_draw,
    .key = calltree_key,
    .export_csv = calltree_csv,
    .ready = calltree_ready,
    .prepare = calltree_prepare,
    .busy = "reconstructing the call stack",
};
