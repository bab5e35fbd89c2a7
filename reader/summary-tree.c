/* SPDX-License-Identifier: MIT */
/*
 * Folds the call stacks of the selected ranks into a call-path tree: node =
 * (parent node, region), a call of the same region as its parent's node
 * stays in that node (collapsed recursion). Per node: calls, inclusive time
 * of the outermost calls, own (exclusive) time, coverage, first/last call,
 * per-rank totals for imbalance, and the pooled durations.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sp-format.h"
#include "summary-tree.h"

#define NONE UINT32_MAX

struct node {
	uint32_t region, parent, first_child, next_sibling;
	bool recursive, any;
	uint64_t calls;
	int64_t total_outer, own, coverage;
	int64_t first_start, first_dur, last_end, last_dur;
	int64_t rank_total;
	uint32_t rank_mark;       /* 1 + index of the last rank seen */
	unsigned n_ranks, imb_n;
	double imb_sum, imb_max;
	size_t dur_off, dur_n;
};

struct summary_tree {
	struct node *nodes;
	size_t n, cap;
	uint64_t *hkeys;          /* (parent << 32 | region) + 1, 0 = empty */
	uint32_t *hvals;
	size_t hcap;
	uint32_t *call_node;      /* all calls of all ranks */
	int64_t *call_dur;
	size_t n_calls, cap_calls;
	int64_t *pool;            /* durations grouped by node */
	uint32_t *touched;
	size_t n_touched;
};

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static int rehash(struct summary_tree *t)
{
	size_t cap = t->hcap ? t->hcap * 2 : 256;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	uint32_t *vals = malloc(cap * sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->hcap; i++) {
		size_t h;

		if (!t->hkeys[i])
			continue;
		for (h = hash64(t->hkeys[i]) & (cap - 1); keys[h]; h = (h + 1) & (cap - 1))
			;
		keys[h] = t->hkeys[i];
		vals[h] = t->hvals[i];
	}
	free(t->hkeys);
	free(t->hvals);
	t->hkeys = keys;
	t->hvals = vals;
	t->hcap = cap;
	return 0;
}

static int new_node(struct summary_tree *t, uint32_t parent, uint32_t region,
		    uint32_t *ret)
{
	struct node *nd;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct node *p = realloc(t->nodes, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		t->nodes = p;
		t->cap = cap;
	}
	nd = &t->nodes[t->n];
	memset(nd, 0, sizeof(*nd));
	nd->region = region;
	nd->parent = parent;
	nd->first_child = NONE;
	nd->next_sibling = NONE;
	if (parent != NONE) { /* append at the end of the sibling list */
		uint32_t *link = &t->nodes[parent].first_child;

		while (*link != NONE)
			link = &t->nodes[*link].next_sibling;
		*link = (uint32_t)t->n;
	}
	*ret = (uint32_t)t->n++;
	return 0;
}

static int child_of(struct summary_tree *t, uint32_t parent, uint32_t region,
		    uint32_t *ret)
{
	uint64_t key = (((uint64_t)parent << 32) | region) + 1;
	size_t h;
	int rc;

	if ((t->n + 1) * 2 > t->hcap && (rc = rehash(t)) < 0)
		return rc;
	for (h = hash64(key) & (t->hcap - 1); t->hkeys[h]; h = (h + 1) & (t->hcap - 1)) {
		if (t->hkeys[h] == key) {
			*ret = t->hvals[h];
			return 0;
		}
	}
	rc = new_node(t, parent, region, ret);
	if (rc == 0) {
		t->hkeys[h] = key;
		t->hvals[h] = *ret;
	}
	return rc;
}

static int push_call(struct summary_tree *t, uint32_t node, int64_t dur)
{
	if (t->n_calls == t->cap_calls) {
		size_t cap = t->cap_calls ? t->cap_calls * 2 : 4096;
		uint32_t *a = realloc(t->call_node, cap * sizeof(*a));
		int64_t *b;

		if (!a)
			return -ENOMEM;
		t->call_node = a;
		b = realloc(t->call_dur, cap * sizeof(*b));
		if (!b)
			return -ENOMEM;
		t->call_dur = b;
		t->cap_calls = cap;
	}
	t->call_node[t->n_calls] = node;
	t->call_dur[t->n_calls++] = dur;
	return 0;
}

static void account(struct summary_tree *t, uint32_t node, bool outer,
		    int64_t s, int64_t e, int64_t excl, uint32_t rank_mark)
{
	struct node *nd = &t->nodes[node];
	int64_t d = e - s;

	nd->calls++;
	nd->own += excl;
	if (outer) {
		nd->total_outer += d;
		nd->rank_total += d;
	}
	if (!nd->any || s < nd->first_start) {
		nd->first_start = s;
		nd->first_dur = d;
	}
	if (!nd->any || e > nd->last_end) {
		nd->last_end = e;
		nd->last_dur = d;
	}
	nd->any = true;
	if (nd->rank_mark != rank_mark) {
		nd->rank_mark = rank_mark;
		nd->n_ranks++;
		t->touched[t->n_touched++] = node;
	}
}

/* Union of the outermost intervals per node (only needed with lanes). */
struct ival { uint32_t node; int64_t s, e; };

static int cmp_ival(const void *a, const void *b)
{
	const struct ival *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return (x->s > y->s) - (x->s < y->s);
}

static void add_coverage(struct summary_tree *t, struct ival *iv, size_t n)
{
	qsort(iv, n, sizeof(*iv), cmp_ival);
	for (size_t i = 0; i < n;) {
		uint32_t node = iv[i].node;
		int64_t s = iv[i].s, e = iv[i].e;

		for (i++; i < n && iv[i].node == node; i++) {
			if (iv[i].s > e) {
				t->nodes[node].coverage += e - s;
				s = iv[i].s;
				e = iv[i].e;
			} else if (iv[i].e > e) {
				e = iv[i].e;
			}
		}
		t->nodes[node].coverage += e - s;
	}
}

static int fold_rank(struct summary_tree *t, const struct sp_reader *r,
		     const struct sp_call_stack *cs, uint32_t rank_mark)
{
	const int64_t *s = r->col[SP_COL_START_TIMES], *e = r->col[SP_COL_END_TIMES];
	uint32_t *node_of = malloc((cs->n + 1) * sizeof(*node_of));
	struct ival *iv = cs->lane ? malloc((cs->n + 1) * sizeof(*iv)) : NULL;
	size_t n_iv = 0;
	int rc = 0;

	t->touched = realloc(t->touched, (t->n + cs->n + 1) * sizeof(*t->touched));
	if (!node_of || !t->touched || (cs->lane && !iv)) {
		free(node_of);
		free(iv);
		return -ENOMEM;
	}
	t->n_touched = 0;
	for (size_t i = 0; i < cs->n && rc == 0; i++) {
		uint32_t region = r->rows[cs->row[i]].region, node;
		uint32_t pnode = cs->parent[i] < 0 ? 0 : node_of[cs->parent[i]];
		bool outer = cs->parent[i] < 0 || t->nodes[pnode].region != region;
		uint64_t ev = cs->ev[i];

		if (outer)
			rc = child_of(t, pnode, region, &node);
		else
			node = pnode;
		if (rc < 0)
			break;
		if (!outer)
			t->nodes[node].recursive = true;
		node_of[i] = node;
		account(t, node, outer, s[ev], e[ev], cs->excl[i], rank_mark);
		if (outer && iv)
			iv[n_iv++] = (struct ival){ node, s[ev], e[ev] };
		rc = push_call(t, node, e[ev] - s[ev]);
	}
	if (rc == 0 && iv)
		add_coverage(t, iv, n_iv);
	for (size_t k = 0; rc == 0 && k < t->n_touched; k++) {
		struct node *nd = &t->nodes[t->touched[k]];

		if (!iv)
			nd->coverage += nd->rank_total;
		if (nd->rank_total > 0) {
			double v = (double)nd->rank_total / SP_NS_PER_S;

			nd->imb_sum += v;
			nd->imb_n++;
			nd->imb_max = v > nd->imb_max ? v : nd->imb_max;
		}
		nd->rank_total = 0;
	}
	free(node_of);
	free(iv);
	return rc;
}

/* Group the pooled durations by node (counting sort). */
static int group_durations(struct summary_tree *t)
{
	size_t off = 0;

	t->pool = malloc((t->n_calls + 1) * sizeof(*t->pool));
	if (!t->pool)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++)
		t->nodes[i].dur_n = 0;
	for (size_t i = 0; i < t->n_calls; i++)
		t->nodes[t->call_node[i]].dur_n++;
	for (size_t i = 0; i < t->n; i++) {
		t->nodes[i].dur_off = off;
		off += t->nodes[i].dur_n;
		t->nodes[i].dur_n = 0;
	}
	for (size_t i = 0; i < t->n_calls; i++) {
		struct node *nd = &t->nodes[t->call_node[i]];

		t->pool[nd->dur_off + nd->dur_n++] = t->call_dur[i];
	}
	free(t->call_node);
	free(t->call_dur);
	t->call_node = NULL;
	t->call_dur = NULL;
	return 0;
}

int summary_tree_build(struct sp_reader *r, const struct sp_selection *sel,
		       struct summary_tree **ret)
{
	struct summary_tree *t = calloc(1, sizeof(*t));
	uint32_t *order = NULL, root;
	size_t *rows = NULL;
	int n, rc;

	if (!t)
		return -ENOMEM;
	rc = new_node(t, NONE, NONE, &root);
	n = rc < 0 ? rc : sp_reader_regions(r, NULL, &order);
	rc = n < 0 ? n : 0;
	if (rc == 0 && !(rows = malloc(((size_t)n + 1) * sizeof(*rows))))
		rc = -ENOMEM;
	for (size_t k = 0; rc == 0 && k < r->n_ranks; k++) {
		struct sp_call_stack *cs;
		size_t nr = 0;

		if (!sp_selection_match_rank(sel, r->ranks[k]))
			continue;
		for (int i = 0; i < n; i++) {
			long row = sp_reader_row_find(r, order[i], r->ranks[k]);

			if (row >= 0)
				rows[nr++] = (size_t)row;
		}
		cs = call_stack_from_rows(r, r->ranks[k], INT64_MIN, rows, nr, &rc);
		if (!cs)
			break;
		rc = fold_rank(t, r, cs, (uint32_t)k + 1);
		sp_call_stack_destroy(cs);
	}
	if (rc == 0)
		rc = group_durations(t);
	free(rows);
	free(order);
	if (rc < 0) {
		summary_tree_destroy(t);
		return rc;
	}
	*ret = t;
	return 0;
}

void summary_tree_destroy(struct summary_tree *t)
{
	if (!t)
		return;
	free(t->nodes);
	free(t->hkeys);
	free(t->hvals);
	free(t->call_node);
	free(t->call_dur);
	free(t->pool);
	free(t->touched);
	free(t);
}

/* ---- rows -------------------------------------------------------------- */

static void node_row(struct summary_tree *t, const struct sp_reader *r,
		     uint32_t id, struct sp_summary_row *row)
{
	const struct node *nd = &t->nodes[id];
	int64_t *d = t->pool + nd->dur_off, mn, mx;
	double mean, m2 = 0, p[3];

	memset(row, 0, sizeof(*row));
	row->name = r->names[nd->region];
	row->region = nd->region;
	row->recursive = nd->recursive;
	row->num_ranks = nd->n_ranks;
	row->calls = nd->calls;
	row->total_ns = nd->total_outer;
	row->coverage_ns = nd->coverage;
	row->percent = NAN;
	if (nd->dur_n == 0) {
		row->total = row->avg = row->min = row->max = row->std = NAN;
		row->p50 = row->p95 = row->p99 = row->first = row->last = NAN;
		row->imbalance = row->first_start = NAN;
		return;
	}
	mn = mx = d[0];
	mean = 0;
	for (size_t i = 0; i < nd->dur_n; i++) {
		mean += (double)d[i];
		mn = d[i] < mn ? d[i] : mn;
		mx = d[i] > mx ? d[i] : mx;
	}
	mean /= (double)nd->dur_n;
	for (size_t i = 0; i < nd->dur_n; i++)
		m2 += ((double)d[i] - mean) * ((double)d[i] - mean);
	percentiles3_ns(d, nd->dur_n, p);
	row->total = (double)nd->total_outer / SP_NS_PER_S;
	row->avg = mean / SP_NS_PER_S;
	row->min = (double)mn / SP_NS_PER_S;
	row->max = (double)mx / SP_NS_PER_S;
	row->std = sqrt(m2 / (double)nd->dur_n) / SP_NS_PER_S;
	row->p50 = p[0];
	row->p95 = p[1];
	row->p99 = p[2];
	row->first = (double)nd->first_dur / SP_NS_PER_S;
	row->last = (double)nd->last_dur / SP_NS_PER_S;
	row->imbalance = nd->imb_n >= 2
		? (nd->imb_max / (nd->imb_sum / nd->imb_n) - 1) * 100 : 0.0;
	row->first_start = (double)nd->first_start / SP_NS_PER_S;
}

struct emit_ctx {
	struct summary_tree *t;
	const struct sp_reader *r;
	const struct sp_selection *sel;
	enum sp_sort_key sort;
	struct sp_summary *s;
	struct sp_summary_row *rows; /* per node */
	bool *kept;
};

/* Kept descendants reached through filtered-out nodes. */
static int collect(struct emit_ctx *c, uint32_t id, uint32_t **list,
		   size_t *n, size_t *cap)
{
	for (uint32_t k = c->t->nodes[id].first_child; k != NONE;
	     k = c->t->nodes[k].next_sibling) {
		if (!c->kept[k]) {
			if (collect(c, k, list, n, cap) < 0)
				return -ENOMEM;
			continue;
		}
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 8;
			uint32_t *p = realloc(*list, nc * sizeof(*p));

			if (!p)
				return -ENOMEM;
			*list = p;
			*cap = nc;
		}
		(*list)[(*n)++] = k;
	}
	return 0;
}

static int cmp_nodes(const void *a, const void *b, void *ctx)
{
	const struct emit_ctx *c = ctx;

	return summary_row_cmp(&c->rows[*(const uint32_t *)a],
			       &c->rows[*(const uint32_t *)b], c->sort);
}

static int emit(struct emit_ctx *c, uint32_t id, int depth)
{
	uint32_t *list = NULL;
	size_t n = 0, cap = 0;
	struct sp_summary_row *row;
	int rc = collect(c, id, &list, &n, &cap);

	if (rc < 0 || n == 0) {
		free(list);
		return rc;
	}
	qsort_r(list, n, sizeof(*list), cmp_nodes, c);
	if (id != 0) { /* the "(own)" row of a node with children */
		const struct node *nd = &c->t->nodes[id];

		if (!(row = summary_add_row(c->s))) {
			free(list);
			return -ENOMEM;
		}
		row->name = c->r->names[nd->region];
		row->region = nd->region;
		row->own = true;
		row->depth = depth;
		row->num_ranks = nd->n_ranks;
		row->calls = nd->calls;
		row->total_ns = nd->own;
		row->coverage_ns = nd->own;
		row->total = (double)nd->own / SP_NS_PER_S;
		row->avg = nd->calls ? row->total / (double)nd->calls : NAN;
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (!(row = summary_add_row(c->s))) {
			rc = -ENOMEM;
			break;
		}
		*row = c->rows[list[i]];
		row->depth = depth;
		rc = emit(c, list[i], depth + 1);
	}
	free(list);
	return rc;
}

int summary_tree_rows(struct summary_tree *t, struct sp_reader *r,
		      const struct sp_selection *sel, enum sp_sort_key sort,
		      struct sp_summary *s)
{
	struct emit_ctx c = { t, r, sel, sort, s, NULL, NULL };
	double session = NAN;
	size_t first = sp_summary_count(s);
	int rc;

	c.rows = malloc(t->n * sizeof(*c.rows));
	c.kept = malloc(t->n * sizeof(*c.kept));
	if (!c.rows || !c.kept) {
		free(c.rows);
		free(c.kept);
		return -ENOMEM;
	}
	c.kept[0] = true;
	for (uint32_t i = 1; i < t->n; i++) {
		node_row(t, r, i, &c.rows[i]);
		c.kept[i] = sp_selection_match_name(sel, r->names[t->nodes[i].region]);
	}
	rc = emit(&c, 0, 0);
	for (size_t i = first; rc == 0 && i < sp_summary_count(s); i++) {
		const struct sp_summary_row *row = sp_summary_get(s, i);

		if (row->depth == 0 && !row->own &&
		    strcmp(row->name, SP_SESSION_REGION) == 0 && isnan(session))
			session = (double)row->coverage_ns;
	}
	summary_set_session(s, !isnan(session));
	for (size_t i = first; rc == 0 && !isnan(session) &&
			       i < sp_summary_count(s); i++) {
		struct sp_summary_row *row =
			(struct sp_summary_row *)sp_summary_get(s, i);

		row->percent = session > 0
			? (double)row->coverage_ns / session * 100 : NAN;
	}
	free(c.rows);
	free(c.kept);
	return rc;
}
