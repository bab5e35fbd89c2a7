/* SPDX-License-Identifier: MIT */
/*
 * The writer's last pass before the commit, over what every way of writing
 * a file (finalize, MPI merge, a rank's own file, merge, recover) has put:
 * region_table/names keeps only regions that have a row (upstream's reader
 * fails on a name without one; the others go to our uncalled_names), and
 * exclusive_totals gets each row's exclusive ns, nested per thread lane
 * exactly as the reader's call-stack reconstruction does (reader/callstack.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nest.h"
#include "writer-internal.h"

struct index_cols {
	uint64_t n;
	uint32_t *region, *rank;
	uint64_t *offset, *count;
};

/* One rank's events, in the concatenation of its rows. */
struct rank_events {
	const int64_t *s, *e;  /* s_buf/e_buf, or the caller's arrays */
	int64_t *s_buf, *e_buf, *lane;
	uint32_t *row;   /* local row of each event */
	uint32_t *pos;   /* region position of each event (ties: input order) */
	uint64_t *order;
	uint64_t n;
};

static void free_cols(struct index_cols *c)
{
	free(c->region);
	free(c->rank);
	free(c->offset);
	free(c->count);
}

static int read_cols(struct sp_writer *w, struct index_cols *c)
{
	uint64_t n = w->layout.nrows;
	c->n = n;
	c->region = malloc(n * sizeof *c->region + 1);
	c->rank = malloc(n * sizeof *c->rank + 1);
	c->offset = malloc(n * sizeof *c->offset + 1);
	c->count = malloc(n * sizeof *c->count + 1);
	if (!c->region || !c->rank || !c->offset || !c->count)
		return -ENOMEM;
	int ret = sp_writer_get_range(w->g_index, SP_IDX_REGION_IDS, 0, n, c->region);
	ret = ret ? ret : sp_writer_get_range(w->g_index, SP_IDX_RANKS, 0, n, c->rank);
	ret = ret ? ret : sp_writer_get_range(w->g_index, SP_IDX_EVENT_OFFSETS, 0, n, c->offset);
	ret = ret ? ret : sp_writer_get_range(w->g_index, SP_IDX_EVENT_COUNTS, 0, n, c->count);
	for (uint64_t i = 0; !ret && i < n; i++)
		if (c->region[i] >= w->layout.nnames || c->offset[i] > w->layout.nevents ||
		    c->count[i] > w->layout.nevents - c->offset[i])
			ret = -EINVAL;
	return ret;
}

/* Names with a row, in id order, and the ids remapped to them. */
static int compact_names(struct sp_writer *w, struct index_cols *c)
{
	uint32_t nn = w->layout.nnames, kept = 0, other = 0;
	uint32_t *map = calloc(nn + 1, sizeof *map);
	const char **names = malloc((nn + 1) * sizeof *names);
	const char **uncalled = malloc((nn + 1) * sizeof *uncalled);
	uint8_t *kinds = malloc(nn + 1);
	int ret = map && names && uncalled && kinds ? 0 : -ENOMEM;
	for (uint64_t i = 0; !ret && i < c->n; i++)
		map[c->region[i]] = 1;
	for (uint32_t id = 0; !ret && id < nn; id++) {
		if (!map[id]) {
			uncalled[other++] = w->layout.names[id];
			continue;
		}
		names[kept] = w->layout.names[id];
		if (w->layout.kinds)
			kinds[kept] = w->layout.kinds[id];
		map[id] = kept++;
	}
	if (!ret)
		ret = sp_writer_put_names(w, names, w->layout.kinds ? kinds : NULL, kept, uncalled,
					  other);
	if (!ret && kept < nn) {
		for (uint64_t i = 0; i < c->n; i++)
			c->region[i] = map[c->region[i]];
		ret = sp_writer_put_range(w->g_index, SP_IDX_REGION_IDS, 0, c->n, c->region);
	}
	free(map);
	free(names);
	free(uncalled);
	free(kinds);
	return ret;
}

/* Read the events of rows[0..n) (a rank's) back to back into ev->s/e/lane. */
static int read_rank_events(struct sp_writer *w, const struct index_cols *c,
			    const uint64_t *rows, size_t n, struct rank_events *ev)
{
	bool lanes = w->layout.columns & SP_WCOL_THREAD_IDS;
	uint64_t at = 0;
	int ret = 0;
	for (size_t k = 0; !ret && k < n; k++) {
		uint64_t i = rows[k], m = c->count[i];
		ret = sp_writer_get_range(w->g_events, SP_EV_START_TIMES, c->offset[i], m,
					  ev->s_buf + at);
		if (!ret)
			ret = sp_writer_get_range(w->g_events, SP_EV_END_TIMES, c->offset[i], m,
						  ev->e_buf + at);
		if (!ret && lanes)
			ret = sp_writer_get_range(w->g_events, SP_EV_THREAD_IDS, c->offset[i], m,
						  ev->lane + at);
		for (uint64_t j = 0; j < m; j++) {
			if (!lanes)
				ev->lane[at + j] = 0;
			ev->row[at + j] = (uint32_t)k;
		}
		at += m;
	}
	return ret;
}

/* lane, start asc, end desc, region position, input order: the reader's. */
static int cmp_call(const void *pa, const void *pb, void *arg)
{
	const struct rank_events *ev = arg;
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	if (ev->lane[a] != ev->lane[b])
		return ev->lane[a] < ev->lane[b] ? -1 : 1;
	if (ev->s[a] != ev->s[b])
		return ev->s[a] < ev->s[b] ? -1 : 1;
	if (ev->e[a] != ev->e[b])
		return ev->e[a] > ev->e[b] ? -1 : 1;
	if (ev->pos[a] != ev->pos[b])
		return ev->pos[a] < ev->pos[b] ? -1 : 1;
	return (a > b) - (a < b);
}

/*
 * Nest the rank's calls with a stack (doubled timestamps, a zero-length
 * call ends half a tick late) and sum each row's exclusive ns into excl.
 * Returns false when the calls are not properly nested (or end before
 * they start): the rank's rows then keep -1 and the reader names the calls.
 */
static bool nest_rank(struct rank_events *ev, uint64_t *stack, int64_t *excl)
{
	uint64_t top = 0;
	int64_t lane = 0;
	for (uint64_t k = 0; k < ev->n; k++) {
		uint64_t i = ev->order[k];
		int64_t s = ev->s[i], e = ev->e[i], s2 = 2 * s;
		if (e < s)
			return false;
		if (k == 0 || ev->lane[i] != lane)
			top = 0;
		lane = ev->lane[i];
		while (top > 0) {
			uint64_t p = stack[top - 1];
			if (2 * ev->e[p] + (ev->e[p] == ev->s[p]) > s2)
				break;
			top--;
		}
		excl[ev->row[i]] += e - s;
		if (top) {
			uint64_t p = stack[top - 1];
			if (e > ev->e[p])
				return false;
			excl[ev->row[p]] -= e - s;
		}
		stack[top++] = i;
	}
	return true;
}

static void free_events(struct rank_events *ev)
{
	free(ev->s_buf);
	free(ev->e_buf);
	free(ev->lane);
	free(ev->row);
	free(ev->pos);
	free(ev->order);
}

/* Arrays for ev->n events; s and e only when the caller has none. */
static int alloc_events(struct rank_events *ev, bool times)
{
	uint64_t m = ev->n + 1;
	if (times) {
		ev->s = ev->s_buf = malloc(m * sizeof *ev->s_buf);
		ev->e = ev->e_buf = malloc(m * sizeof *ev->e_buf);
	}
	ev->lane = malloc(m * sizeof *ev->lane);
	ev->row = malloc(m * sizeof *ev->row);
	ev->pos = malloc(m * sizeof *ev->pos);
	ev->order = malloc(m * sizeof *ev->order);
	return ev->s && ev->e && ev->lane && ev->row && ev->pos && ev->order ? 0 : -ENOMEM;
}

/* Sort and nest ev (row, pos and lane filled): excl[k] for its rows
 * [0, nrows), all -1 when they do not nest. */
static int nest_events(struct rank_events *ev, size_t nrows, int64_t *out)
{
	int64_t *excl = calloc(nrows + 1, sizeof *excl);
	uint64_t *stack = malloc((ev->n + 1) * sizeof *stack);
	int ret = excl && stack ? 0 : -ENOMEM;
	for (uint64_t i = 0; !ret && i < ev->n; i++)
		ev->order[i] = i;
	if (!ret)
		qsort_r(ev->order, ev->n, sizeof *ev->order, cmp_call, ev);
	bool nested = !ret && nest_rank(ev, stack, excl);
	for (size_t k = 0; !ret && k < nrows; k++)
		out[k] = nested ? excl[k] : -1;
	free(excl);
	free(stack);
	return ret;
}

/* Exclusive ns of the rows of one rank into out (indexed by file row). */
static int rank_exclusive(struct sp_writer *w, const struct index_cols *c, const uint64_t *rows,
			  size_t n, const uint32_t *region_pos, int64_t *out)
{
	struct rank_events ev = { 0 };
	for (size_t k = 0; k < n; k++)
		ev.n += c->count[rows[k]];
	int64_t *excl = malloc((n + 1) * sizeof *excl);
	int ret = alloc_events(&ev, true);
	if (!ret && !excl)
		ret = -ENOMEM;
	if (!ret)
		ret = read_rank_events(w, c, rows, n, &ev);
	for (uint64_t i = 0; !ret && i < ev.n; i++)
		ev.pos[i] = region_pos[c->region[rows[ev.row[i]]]];
	if (!ret)
		ret = nest_events(&ev, n, excl);
	for (size_t k = 0; !ret && k < n; k++)
		out[rows[k]] = excl[k];
	free(excl);
	free_events(&ev);
	return ret;
}

/* The next call of a row: (start, row) order, so a row's calls with one
 * start come out in its entry order. */
struct merge_heap {
	uint32_t *row;                 /* rows with calls left, a binary heap */
	size_t n;
	const int64_t *start;
	const uint64_t *offset;
	uint64_t *at;                  /* per row: its next call */
};

static bool heap_less(const struct merge_heap *h, uint32_t a, uint32_t b)
{
	int64_t sa = h->start[h->offset[a] + h->at[a]], sb = h->start[h->offset[b] + h->at[b]];
	return sa != sb ? sa < sb : a < b;
}

static void heap_down(struct merge_heap *h, size_t i)
{
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			return;
		if (c + 1 < h->n && heap_less(h, h->row[c + 1], h->row[c]))
			c++;
		if (!heap_less(h, h->row[c], h->row[i]))
			return;
		uint32_t t = h->row[i];
		h->row[i] = h->row[c];
		h->row[c] = t;
		i = c;
	}
}

/*
 * One lane: the rows' calls merged in start order (each row is in entry
 * order, which is start order on one thread) into nest.c's streaming rule,
 * which gives the sort below's result (the unit test nest compares them)
 * without sorting every call: O(calls x log rows). Returns 1 when a row
 * was not in start order (the caller sorts instead).
 */
int sp_writer_exclusive_rows_merged(size_t nrows, const uint64_t *offset, const uint64_t *count,
				    const uint32_t *pos, const int64_t *start, const int64_t *end,
				    int64_t *out)
{
	struct merge_heap h = { .start = start, .offset = offset };
	struct sp_nest nest = { 0 };
	h.row = malloc((nrows + 1) * sizeof *h.row);
	h.at = calloc(nrows + 1, sizeof *h.at);
	int ret = h.row && h.at ? sp_nest_init(&nest, (uint32_t)nrows, pos) : -ENOMEM;
	for (size_t k = 0; !ret && k < nrows; k++)
		if (count[k])
			h.row[h.n++] = (uint32_t)k;
	for (size_t i = h.n; !ret && i-- > 0;)
		heap_down(&h, i);
	while (!ret && h.n && !nest.broken && !nest.disorder) {
		uint32_t k = h.row[0];
		uint64_t i = offset[k] + h.at[k];
		ret = sp_nest_add(&nest, start[i], end[i], k);
		if (++h.at[k] == count[k])
			h.row[0] = h.row[--h.n];
		heap_down(&h, 0);
	}
	if (!ret)
		ret = sp_nest_lane_end(&nest);
	if (!ret && nest.disorder)
		ret = 1;
	for (size_t k = 0; !ret && k < nrows; k++)
		out[k] = nest.broken ? -1 : nest.excl[k];
	sp_nest_free(&nest);
	free(h.row);
	free(h.at);
	return ret;
}

int sp_writer_exclusive_rows(size_t nrows, const uint64_t *offset, const uint64_t *count,
			     const uint32_t *pos, const int64_t *start, const int64_t *end,
			     const uint32_t *lane, int64_t *out)
{
	bool one_lane = true, seen = false;
	uint32_t first = 0;
	for (size_t k = 0; lane && one_lane && k < nrows; k++)
		for (uint64_t j = 0; one_lane && j < count[k]; j++) {
			if (!seen)
				first = lane[offset[k] + j];
			seen = true;
			one_lane = lane[offset[k] + j] == first;
		}
	if (one_lane && nrows) {
		int r = sp_writer_exclusive_rows_merged(nrows, offset, count, pos, start, end, out);
		if (r <= 0)
			return r;
	}
	return sp_writer_exclusive_rows_sorted(nrows, offset, count, pos, start, end, lane, out);
}

int sp_writer_exclusive_rows_sorted(size_t nrows, const uint64_t *offset, const uint64_t *count,
				    const uint32_t *pos, const int64_t *start, const int64_t *end,
				    const uint32_t *lane, int64_t *out)
{
	struct rank_events ev = { 0 };
	bool packed = true; /* rows back to back from 0: the times as they are */
	for (size_t k = 0; k < nrows; k++) {
		packed = packed && offset[k] == ev.n;
		ev.n += count[k];
	}
	if (packed) {
		ev.s = start;
		ev.e = end;
	}
	int ret = alloc_events(&ev, !packed);
	for (size_t k = 0, at = 0; !ret && k < nrows; k++) {
		for (uint64_t j = 0; j < count[k]; j++, at++) {
			uint64_t i = offset[k] + j;
			if (!packed) {
				ev.s_buf[at] = start[i];
				ev.e_buf[at] = end[i];
			}
			ev.lane[at] = lane ? lane[i] : 0;
			ev.row[at] = (uint32_t)k;
			ev.pos[at] = pos[k];
		}
	}
	if (!ret)
		ret = nest_events(&ev, nrows, out);
	free_events(&ev);
	return ret;
}

struct pos_key {
	double first_start;
	uint32_t id;
};

static int cmp_pos(const void *pa, const void *pb)
{
	const struct pos_key *a = pa, *b = pb;
	if (a->first_start != b->first_start)
		return a->first_start < b->first_start ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

double sp_writer_region_key(const int64_t *start, uint64_t n)
{
	if (n == 0)
		return 0.0;
	int64_t mn = start[0];
	for (uint64_t j = 1; j < n; j++)
		mn = start[j] < mn ? start[j] : mn;
	return (double)mn / 1e9;
}

int sp_writer_region_order(const double *first_start, uint32_t n, uint32_t *pos)
{
	struct pos_key *key = malloc(((size_t)n + 1) * sizeof *key);
	if (!key)
		return -ENOMEM;
	for (uint32_t id = 0; id < n; id++)
		key[id] = (struct pos_key){ first_start[id], id };
	qsort(key, n, sizeof *key, cmp_pos);
	for (uint32_t p = 0; p < n; p++)
		pos[key[p].id] = p;
	free(key);
	return 0;
}

/*
 * Region positions as the reader orders regions (sp_reader_regions): by the
 * smallest first start in seconds over the region's rows (0.0 for a row
 * without calls), ties in id order. Only ties of identical calls of two
 * regions depend on it (the one listed first becomes the parent).
 */
static int region_positions(struct sp_writer *w, const struct index_cols *c, uint32_t nregions,
			    uint32_t *pos)
{
	double *key = malloc((nregions + 1) * sizeof *key);
	bool *seen = calloc(nregions + 1, sizeof *seen);
	int64_t *buf = NULL;
	size_t cap = 0;
	int ret = key && seen ? 0 : -ENOMEM;
	for (uint32_t id = 0; id < nregions && key; id++)
		key[id] = 0.0;
	for (uint64_t i = 0; !ret && i < c->n; i++) {
		uint64_t m = c->count[i];
		if (m > cap) {
			free(buf);
			cap = m;
			buf = malloc(cap * sizeof *buf);
			if (!buf)
				ret = -ENOMEM;
		}
		if (!ret && m)
			ret = sp_writer_get_range(w->g_events, SP_EV_START_TIMES, c->offset[i], m, buf);
		double fs = ret ? 0.0 : sp_writer_region_key(buf, m);
		uint32_t r = c->region[i];
		if (!seen[r] || fs < key[r])
			key[r] = fs;
		seen[r] = true;
	}
	if (!ret)
		ret = sp_writer_region_order(key, nregions, pos);
	free(key);
	free(seen);
	free(buf);
	return ret;
}

static int cmp_by_rank(const void *pa, const void *pb, void *arg)
{
	const uint32_t *rank = arg;
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	if (rank[a] != rank[b])
		return rank[a] < rank[b] ? -1 : 1;
	return (a > b) - (a < b);
}

static int exclusive_totals(struct sp_writer *w, const struct index_cols *c, uint32_t nregions)
{
	uint64_t n = c->n;
	int64_t *out = malloc((n + 1) * sizeof *out);
	uint64_t *rows = malloc((n + 1) * sizeof *rows);
	uint32_t *pos = malloc((nregions + 1) * sizeof *pos);
	int ret = out && rows && pos ? 0 : -ENOMEM;
	if (!ret)
		ret = region_positions(w, c, nregions, pos);
	for (uint64_t i = 0; !ret && i < n; i++) {
		out[i] = -1;
		rows[i] = i;
	}
	if (!ret)
		qsort_r(rows, n, sizeof *rows, cmp_by_rank, c->rank);
	for (uint64_t a = 0, b; !ret && a < n; a = b) {
		for (b = a; b < n && c->rank[rows[b]] == c->rank[rows[a]]; b++)
			;
		ret = rank_exclusive(w, c, rows + a, b - a, pos, out);
	}
	if (!ret)
		ret = sp_writer_put_range(w->g_index, SP_IDX_EXCLUSIVE_TOTALS, 0, n, out);
	free(out);
	free(rows);
	free(pos);
	return ret;
}

int sp_writer_finish_index(struct sp_writer *w)
{
	struct index_cols c = { 0 };
	int ret = read_cols(w, &c);
	if (!ret)
		ret = compact_names(w, &c);
	if (!ret && c.n && !w->excl_given) {
		uint32_t nregions = 0;
		for (uint64_t i = 0; i < c.n; i++)
			nregions = c.region[i] + 1 > nregions ? c.region[i] + 1 : nregions;
		ret = exclusive_totals(w, &c, nregions);
	}
	free_cols(&c);
	return ret;
}
