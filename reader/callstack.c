/* SPDX-License-Identifier: MIT */
/*
 * Call-stack reconstruction from timestamp containment (§3.5), per rank and
 * per thread lane: order calls by start asc, end desc, input order (k-way
 * merge of the already-sorted per-region runs), nest them with a stack
 * using the half-tick rule for zero-length calls, check that every child
 * ends inside its parent, and compute exclusive time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "callstack-walk.h"
#include "reader-internal.h"
#include "sp-array.h"
#include "sp-map.h"

/* start asc, end desc, then input order (a < b). */
static inline bool before(const struct walk *c, uint64_t a, uint64_t b,
			  bool input_a_first)
{
	if (c->s[a] != c->s[b])
		return c->s[a] < c->s[b];
	if (c->e[a] != c->e[b])
		return c->e[a] > c->e[b];
	return input_a_first;
}

static int cmp_events(const void *pa, const void *pb, void *arg)
{
	const struct walk *c = arg;
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	if (a == b)
		return 0;
	return before(c, a, b, a < b) ? -1 : 1;
}

/*
 * Make each run sorted; copy and sort only the runs that are not. A run in
 * entry order (starts non-decreasing) is out of order only among equal
 * starts (a zero-length call before a longer one starting with it): only
 * those groups are sorted, so a run costs linear time, not a sort of all
 * its events; the whole run is sorted only when its starts go backwards.
 */
static int sort_runs(struct walk *c)
{
	for (size_t k = 0; k < c->n_runs; k++) {
		struct walk_run *u = &c->runs[k];
		/* A whole row in file order: the basics checked it. */
		bool sorted = true, entry = true, whole = !u->idx &&
			u->n == c->r->rows[u->row].count;

		if (whole && c->r->basic[u->row].sorted)
			continue;
		for (size_t j = 1; j < u->n && entry; j++) {
			uint64_t a = run_at(u, j - 1), b = run_at(u, j);

			sorted &= before(c, a, b, true);
			entry = c->s[a] <= c->s[b];
		}
		if (sorted && entry)
			continue;
		if (!u->idx) {
			u->own = malloc(u->n * sizeof(*u->idx));
			if (!u->own)
				return -ENOMEM;
			u->idx = u->own;
			for (size_t j = 0; j < u->n; j++)
				u->idx[j] = u->base + j;
		}
		if (!entry) {
			qsort_r(u->idx, u->n, sizeof(*u->idx), cmp_events, c);
			continue;
		}
		for (size_t j = 0; j < u->n;) {
			size_t g = j + 1;

			while (g < u->n && c->s[u->idx[g]] == c->s[u->idx[j]])
				g++;
			if (g - j > 1)
				qsort_r(u->idx + j, g - j, sizeof(*u->idx), cmp_events, c);
			j = g;
		}
	}
	return 0;
}

static inline int stream_step(struct walk *c, uint64_t ev, uint32_t row,
			      int64_t s, int64_t e);

/* Take event ev of row: into cs at *at, or into the streaming step. */
static inline int merge_emit(struct walk *c, struct sp_call_stack *cs,
			     size_t *at, uint64_t ev, uint32_t row, int64_t s,
			     int64_t e)
{
	if (c->visit)
		return stream_step(c, ev, row, s, e);
	cs->ev[*at] = ev;
	cs->row[*at] = row;
	(*at)++;
	return 0;
}

/* Merge the sorted runs into cs->ev / cs->row starting at *at, or (when
 * c->visit is set) straight into the streaming nesting step. */
static int merge_runs(struct walk *c, struct sp_call_stack *cs, size_t *at)
{
	return walk_merge(c, cs, at, merge_emit);
}

int walk_nesting_error(const struct sp_reader *r, uint32_t rank,
		       uint64_t ec, uint32_t row_c, uint64_t ep, uint32_t row_p)
{
	const struct sp_row *rc = &r->rows[row_c], *rp = &r->rows[row_p];
	const int64_t *s = r->col[SP_COL_START_TIMES], *e = r->col[SP_COL_END_TIMES];

	return sp_error(SP_E_NESTING,
			"%s: rank %u: recorded calls are not properly nested: '%s' call %" PRIu64
			" [%" PRId64 ", %" PRId64 "] ns starts inside '%s' call %" PRIu64
			" [%" PRId64 ", %" PRId64 "] ns but ends after it",
			r->path, rank, r->names[rc->region], ec - rc->offset,
			s[ec], e[ec], r->names[rp->region], ep - rp->offset, s[ep],
			e[ep]);
}

static int nesting_error(const struct sp_reader *r, const struct sp_call_stack *cs,
			 size_t child, size_t parent)
{
	return walk_nesting_error(r, cs->rank, cs->ev[child], cs->row[child],
				cs->ev[parent], cs->row[parent]);
}

/*
 * The generic visitor's callbacks for walk_step (data is the walk): a
 * visitor without an open callback only sums exclusive ns per row into its
 * data (inline: the indirect calls were a fifth of the exclusive-time
 * pass).
 */
static inline int any_open(void *data, uint64_t ev, uint32_t row, size_t depth,
			   uint32_t parent_tag, uint32_t *ret_tag)
{
	const struct walk *c = data;

	return c->visit->open ? c->visit->open(c->visit->data, ev, row, depth,
					       parent_tag, ret_tag) : 0;
}

static inline void any_close(void *data, uint64_t ev, uint32_t row, int64_t excl,
			     uint32_t tag)
{
	const struct walk *c = data;

	if (!c->visit->open) {
		int64_t *row_excl = c->visit->data;

		row_excl[row] = sp_add_wrap(row_excl[row], excl);
		return;
	}
	c->visit->close(c->visit->data, ev, row, excl, tag);
}

static inline void stream_close(struct walk *c, size_t keep)
{
	walk_close_to(c, keep, any_close, c);
}

static inline int stream_step(struct walk *c, uint64_t ev, uint32_t row,
			      int64_t s, int64_t e)
{
	return walk_step(c, ev, row, s, e, any_open, any_close, c);
}

/* Depth, parent and exclusive time of calls [from, to) (one lane). */
static int nest(const struct sp_reader *r, struct sp_call_stack *cs,
		size_t from, size_t to, size_t *stack)
{
	const int64_t *s = r->col[SP_COL_START_TIMES], *e = r->col[SP_COL_END_TIMES];
	size_t top = 0;

	for (size_t i = from; i < to; i++) {
		uint64_t ev = cs->ev[i];
		/* Doubled timestamps; zero-length calls end half a tick late. */
		int64_t s2 = 2 * s[ev];

		while (top > 0) {
			uint64_t p = cs->ev[stack[top - 1]];
			int64_t e2 = 2 * e[p] + (e[p] == s[p]);

			if (e2 > s2)
				break;
			top--;
		}
		cs->depth[i] = (int32_t)top;
		cs->parent[i] = top ? (int64_t)stack[top - 1] : -1;
		cs->excl[i] = e[ev] - s[ev];
		if (top) {
			size_t p = stack[top - 1];

			if (e[ev] > e[cs->ev[p]])
				return nesting_error(r, cs, i, p);
			cs->excl[p] -= e[ev] - s[ev];
		}
		stack[top++] = i;
	}
	return 0;
}

static int check_order(const struct sp_reader *r, uint32_t rank,
		       const size_t *rows, size_t n_rows, size_t *ret_total)
{
	const int64_t *s = r->col[SP_COL_START_TIMES], *e = r->col[SP_COL_END_TIMES];
	size_t total = 0;

	for (size_t i = 0; i < n_rows; i++) {
		const struct sp_row *row = &r->rows[rows[i]];

		total += row->count;
		/* The basics hold each row's shortest call: scan only a row
		 * that has a negative one, to name it. */
		if (row->count == 0 || r->basic[rows[i]].min >= 0)
			continue;
		for (uint64_t k = row->offset; k < row->offset + row->count; k++)
			if (e[k] < s[k])
				return sp_error(SP_E_NESTING,
						"%s: rank %u: '%s' call %" PRIu64 " [%" PRId64 ", %" PRId64 "] ns ends before it starts",
						r->path, rank, r->names[row->region],
						k - row->offset, s[k], e[k]);
	}
	*ret_total = total;
	return 0;
}

static struct sp_call_stack *alloc_stack(size_t n, bool lanes)
{
	struct sp_call_stack *cs = calloc(1, sizeof(*cs));

	if (!cs)
		return NULL;
	cs->ev = malloc((n + 1) * sizeof(*cs->ev));
	cs->row = malloc((n + 1) * sizeof(*cs->row));
	cs->depth = malloc((n + 1) * sizeof(*cs->depth));
	cs->parent = malloc((n + 1) * sizeof(*cs->parent));
	cs->excl = malloc((n + 1) * sizeof(*cs->excl));
	cs->lane = lanes ? malloc((n + 1) * sizeof(*cs->lane)) : NULL;
	if (!cs->ev || !cs->row || !cs->depth || !cs->parent || !cs->excl ||
	    (lanes && !cs->lane)) {
		sp_call_stack_destroy(cs);
		return NULL;
	}
	cs->n = n;
	return cs;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * Distinct lane ids among the events of the rows (sorted): a set of the ids
 * seen (lanes are few, events many: no sort of the events), then a sort of
 * the distinct ids.
 */
static int64_t *collect_lanes(const struct sp_reader *r, const size_t *rows,
			      size_t n_rows, size_t total, size_t *ret_n)
{
	const int64_t *t = r->col[SP_COL_THREAD_IDS];
	struct sp_map seen = { 0 };
	int64_t *lanes = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < n_rows; i++) {
		const struct sp_row *row = &r->rows[rows[i]];
		int64_t last = 0;

		for (uint64_t k = row->offset; k < row->offset + row->count; k++) {
			if (k > row->offset && t[k] == last)
				continue;
			last = t[k];
			if (sp_map_find(&seen, (uint64_t)t[k]))
				continue;
			if (sp_map_put(&seen, (uint64_t)t[k], 0) < 0 ||
			    SP_ARRAY_RESERVE(lanes, cap, n + 1, 16) < 0)
				goto fail;
			lanes[n++] = t[k];
		}
	}
	sp_map_free(&seen);
	if (!lanes && !(lanes = malloc(sizeof(*lanes)))) /* callers expect non-NULL */
		return NULL;
	qsort(lanes, n, sizeof(*lanes), cmp_i64);
	(void)total;
	*ret_n = n;
	return lanes;
fail:
	sp_map_free(&seen);
	free(lanes);
	return NULL;
}

struct lane_sort_ctx {
	const int64_t *t;
};

static int cmp_lane_ev(const void *pa, const void *pb, void *arg)
{
	const int64_t *t = arg;
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	if (t[a] != t[b])
		return t[a] < t[b] ? -1 : 1;
	return (a > b) - (a < b);
}

/* Index of lane id v in the sorted distinct ids. */
static size_t lane_index(const int64_t *ids, size_t n, int64_t v)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ids[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Set up one run per row. With lanes, each run's events are grouped by lane
 * once (stable), so each lane's slice is contiguous: a counting partition
 * by lane (O(events log lanes)), or a sort of the row when it has fewer
 * events than the rank has lanes; not O(lanes x events).
 */
static int init_runs(struct walk *c, const size_t *rows, size_t n_rows,
		     const int64_t *lane_ids, size_t n_lanes)
{
	const int64_t *t = c->r->col[SP_COL_THREAD_IDS];
	size_t *at = lane_ids ? calloc(n_lanes + 1, sizeof(*at)) : NULL;

	if (lane_ids && !at)
		return -ENOMEM;
	for (size_t i = 0; i < n_rows; i++) {
		const struct sp_row *row = &c->r->rows[rows[i]];
		struct walk_run *u = &c->runs[i];

		memset(u, 0, sizeof(*u));
		u->row = (uint32_t)rows[i];
		u->base = row->offset;
		u->n = row->count;
		if (!lane_ids)
			continue;
		u->lanes = malloc((row->count + 1) * sizeof(*u->lanes));
		if (!u->lanes) {
			free(at);
			return -ENOMEM;
		}
		u->n_lanes_ev = row->count;
		if (row->count < n_lanes) {
			for (uint64_t k = 0; k < row->count; k++)
				u->lanes[k] = row->offset + k;
			qsort_r(u->lanes, row->count, sizeof(*u->lanes), cmp_lane_ev,
				(void *)t);
			continue;
		}
		memset(at, 0, (n_lanes + 1) * sizeof(*at));
		for (uint64_t k = row->offset; k < row->offset + row->count; k++)
			at[lane_index(lane_ids, n_lanes, t[k]) + 1]++;
		for (size_t l = 0; l < n_lanes; l++)
			at[l + 1] += at[l];
		for (uint64_t k = row->offset; k < row->offset + row->count; k++)
			u->lanes[at[lane_index(lane_ids, n_lanes, t[k])]++] = k;
	}
	free(at);
	c->n_runs = n_rows;
	return 0;
}

/* Point each run at its events of the lane (lanes visited ascending). */
static void lane_runs(struct walk *c, bool lanes, int64_t lane)
{
	const int64_t *t = c->r->col[SP_COL_THREAD_IDS];

	for (size_t i = 0; i < c->n_runs; i++) {
		struct walk_run *u = &c->runs[i];

		free(u->own);
		u->own = NULL;
		u->pos = 0;
		if (!lanes) {
			u->idx = NULL;
			continue;
		}
		while (u->lane_pos < u->n_lanes_ev && t[u->lanes[u->lane_pos]] < lane)
			u->lane_pos++;
		u->idx = u->lanes + u->lane_pos;
		u->n = 0;
		while (u->lane_pos < u->n_lanes_ev && t[u->lanes[u->lane_pos]] == lane) {
			u->lane_pos++;
			u->n++;
		}
	}
}

static void free_runs(struct walk *c)
{
	for (size_t i = 0; i < c->n_runs; i++) {
		free(c->runs[i].own);
		free(c->runs[i].lanes);
		c->runs[i].own = c->runs[i].lanes = NULL;
	}
}

static int build_lanes(struct walk *c, struct sp_call_stack *cs,
		       const size_t *rows, size_t n_rows, const int64_t *lanes,
		       size_t n_lanes, int64_t only)
{
	size_t *stack = malloc(((cs ? cs->n : 0) + 1) * sizeof(*stack)), at = 0;
	int rc = 0;

	if (!stack)
		return -ENOMEM;
	rc = init_runs(c, rows, n_rows, lanes, n_lanes);
	for (size_t l = 0; l < (lanes ? n_lanes : 1) && rc == 0; l++) {
		size_t from = at;

		if (lanes && only != INT64_MIN && lanes[l] != only)
			continue;
		lane_runs(c, lanes != NULL, lanes ? lanes[l] : -1);
		rc = sort_runs(c);
		if (rc == 0 && c->visit && c->visit->merge)
			rc = c->visit->merge(c);
		else if (rc == 0)
			rc = merge_runs(c, cs, &at);
		for (size_t i = from; rc == 0 && cs && cs->lane && i < at; i++)
			cs->lane[i] = lanes[l];
		if (rc == 0 && c->visit)
			stream_close(c, 0);
		else if (rc == 0)
			rc = nest(c->r, cs, from, at, stack);
	}
	free_runs(c);
	if (cs)
		cs->n = at;
	free(stack);
	c->n_open = 0;
	return rc;
}

struct sp_call_stack *call_stack_from_rows(const struct sp_reader *r,
					   uint32_t rank, int64_t lane,
					   const size_t *rows, size_t n_rows,
					   int *ret_err)
{
	bool lanes = r->col[SP_COL_THREAD_IDS] != NULL;
	struct walk c = { r, r->col[SP_COL_START_TIMES], r->col[SP_COL_END_TIMES],
			 NULL, 0, rank, NULL, NULL, 0, 0 };
	struct sp_call_stack *cs = NULL;
	int64_t *lane_ids = NULL;
	size_t total = 0, n_lanes = 0;
	int rc;

	rc = check_order(r, rank, rows, n_rows, &total);
	if (rc == 0 && !(cs = alloc_stack(total, lanes)))
		rc = -ENOMEM;
	if (rc == 0 && lanes &&
	    !(lane_ids = collect_lanes(r, rows, n_rows, total, &n_lanes)))
		rc = -ENOMEM;
	if (rc == 0 && !(c.runs = calloc(n_rows + 1, sizeof(*c.runs))))
		rc = -ENOMEM;
	if (rc == 0) {
		cs->rank = rank;
		cs->r = r;
		rc = build_lanes(&c, cs, rows, n_rows, lane_ids, n_lanes,
				 lanes ? lane : INT64_MIN);
	}
	free(c.runs);
	free(lane_ids);
	if (rc < 0) {
		sp_call_stack_destroy(cs);
		*ret_err = rc;
		return NULL;
	}
	return cs;
}

int visit_rows(const struct sp_reader *r, uint32_t rank, const size_t *rows,
	       size_t n_rows, const struct call_visitor *visit)
{
	return visit_rows_lane(r, rank, INT64_MIN, rows, n_rows, visit);
}

int visit_rows_lane(const struct sp_reader *r, uint32_t rank, int64_t only,
		    const size_t *rows, size_t n_rows,
		    const struct call_visitor *visit)
{
	bool lanes = r->col[SP_COL_THREAD_IDS] != NULL;
	struct walk c = { r, r->col[SP_COL_START_TIMES], r->col[SP_COL_END_TIMES],
			 NULL, 0, rank, visit, NULL, 0, 0 };
	int64_t *lane_ids = NULL;
	size_t total = 0, n_lanes = 0;
	int rc;

	rc = check_order(r, rank, rows, n_rows, &total);
	if (rc == 0 && lanes &&
	    !(lane_ids = collect_lanes(r, rows, n_rows, total, &n_lanes)))
		rc = -ENOMEM;
	if (rc == 0 && !(c.runs = calloc(n_rows + 1, sizeof(*c.runs))))
		rc = -ENOMEM;
	if (rc == 0)
		rc = build_lanes(&c, NULL, rows, n_rows, lane_ids, n_lanes,
				 lanes ? only : INT64_MIN);
	free(c.runs);
	free(c.open);
	free(lane_ids);
	return rc;
}

int exclusive_from_rows(const struct sp_reader *r, uint32_t rank,
			const size_t *rows, size_t n_rows, int64_t *row_excl)
{
	struct call_visitor v = { row_excl, NULL, NULL, NULL };

	return visit_rows(r, rank, rows, n_rows, &v);
}
