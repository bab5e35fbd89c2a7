/* SPDX-License-Identifier: MIT */
/*
 * Folds the call stacks of the selected ranks into a call-path tree: node =
 * (parent node, region), a call of the same region as its parent's node
 * stays in that node (collapsed recursion). Per node: calls, inclusive time
 * of the outermost calls, own (exclusive) time, coverage, first/last call,
 * per-rank totals for imbalance, and the pooled durations. Each rank is
 * folded into its own tree (on several threads for big files), then the
 * rank trees are merged in rank order; their durations stay where they
 * are, the merged nodes only list them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "callstack-walk.h"
#include "sp-array.h"
#include "sp-format.h"
#include "sp-map.h"
#include "summary-tree.h"

#define NONE SUMMARY_NONE

static int new_node(struct summary_tree *t, uint32_t parent, uint32_t region,
		    uint32_t *ret)
{
	struct node *nd;

	if (SP_ARRAY_RESERVE(t->nodes, t->cap, t->n + 1, 64) < 0)
		return -ENOMEM;
	nd = &t->nodes[t->n];
	memset(nd, 0, sizeof(*nd));
	nd->region = region;
	nd->parent = parent;
	nd->first_child = NONE;
	nd->next_sibling = NONE;
	nd->last_region = NONE;
	nd->last_child = NONE;
	nd->tail = NONE;
	if (parent != NONE) { /* append at the end of the sibling list */
		struct node *p = &t->nodes[parent];

		if (p->tail == NONE)
			p->first_child = (uint32_t)t->n;
		else
			t->nodes[p->tail].next_sibling = (uint32_t)t->n;
		p->tail = (uint32_t)t->n;
	}
	*ret = (uint32_t)t->n++;
	return 0;
}

static int child_lookup(struct summary_tree *t, uint32_t parent,
			uint32_t region, uint64_t key, uint32_t *ret);

static inline int child_of(struct summary_tree *t, uint32_t parent, uint32_t region,
		    uint32_t *ret)
{
	uint64_t key = (((uint64_t)parent << 32) | region) + 1;
	int rc;

	if (t->nodes[parent].last_region == region &&
	    t->nodes[parent].last_child != NONE) {
		*ret = t->nodes[parent].last_child;
		return 0;
	}
	rc = child_lookup(t, parent, region, key, ret);
	if (rc == 0) {
		t->nodes[parent].last_region = region;
		t->nodes[parent].last_child = *ret;
	}
	return rc;
}

static int child_lookup(struct summary_tree *t, uint32_t parent,
			uint32_t region, uint64_t key, uint32_t *ret)
{
	const uint32_t *found = sp_map_find(&t->children, key);
	int rc;

	if (found) {
		*ret = *found;
		return 0;
	}
	/* Room first, so a failure leaves no node without its entry. */
	if ((rc = sp_map_reserve(&t->children, t->children.n + 1)) < 0)
		return rc;
	rc = new_node(t, parent, region, ret);
	if (rc == 0)
		rc = sp_map_put(&t->children, key, *ret);
	return rc;
}

static int push_dur(struct node *nd, int64_t dur)
{
	if (SP_ARRAY_RESERVE(nd->dur, nd->dur_cap, nd->dur_n + 1, 16) < 0)
		return -ENOMEM;
	nd->dur[nd->dur_n++] = dur;
	return 0;
}

static uint64_t dsum_add(uint64_t a, uint64_t b)
{
	return a >= DSUM_EXACT || b >= DSUM_EXACT - a ? DSUM_EXACT : a + b;
}

static SP_ALWAYS_INLINE int account(struct summary_tree *t, uint32_t node, bool outer,
		   int64_t s, int64_t e, uint32_t rank_mark)
{
	struct node *nd = &t->nodes[node];
	int64_t d = e - s;

	nd->calls++;
	if (nd->calls == 1 || d < nd->dmin)
		nd->dmin = d;
	if (nd->calls == 1 || d > nd->dmax)
		nd->dmax = d;
	nd->dsum = dsum_add(nd->dsum, (uint64_t)d);
	if (outer) {
		nd->total_outer = sp_add_wrap(nd->total_outer, d);
		nd->rank_total = sp_add_wrap(nd->rank_total, d);
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
		if (SP_ARRAY_RESERVE(t->touched, t->cap_touched, t->n_touched + 1, 64) < 0)
			return -ENOMEM;
		nd->rank_mark = rank_mark;
		nd->n_ranks++;
		t->touched[t->n_touched++] = node;
	}
	return t->spread ? push_dur(nd, d) : 0;
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
		struct node *nd = &t->nodes[node];

		for (i++; i < n && iv[i].node == node; i++) {
			if (iv[i].s > e) {
				nd->coverage = sp_add_wrap(nd->coverage, e - s);
				s = iv[i].s;
				e = iv[i].e;
			} else if (iv[i].e > e) {
				e = iv[i].e;
			}
		}
		nd->coverage = sp_add_wrap(nd->coverage, e - s);
	}
}

/* Streaming fold of one rank's calls (a call_visitor). */
struct fold {
	struct summary_tree *t;
	const struct sp_reader *r;
	const int64_t *s, *e;
	uint32_t rank_mark;
	struct ival *iv;          /* outermost intervals (lanes only) */
	size_t n_iv, cap_iv;
	bool lanes;
	int64_t *row_excl;        /* exclusive ns per row, or NULL */
	const uint32_t *region_of; /* region of each row (a compact copy:
				    * the rows themselves are cache misses) */
};

/* The walk keeps each open call's node as its tag (pnode: the parent's,
 * the root at depth 0). */
static SP_ALWAYS_INLINE int fold_open(void *data, uint64_t ev, uint32_t row,
				      size_t depth, uint32_t pnode, uint32_t *ret_node)
{
	struct fold *f = data;
	struct summary_tree *t = f->t;
	uint32_t region = f->region_of[row], node;
	bool outer = depth == 0 || t->nodes[pnode].region != region;
	int rc;

	if (outer) {
		rc = child_of(t, pnode, region, &node);
		if (rc < 0)
			return rc;
	} else {
		node = pnode;
		t->nodes[node].recursive = true;
	}
	*ret_node = node;
	if (outer && f->lanes) {
		if (SP_ARRAY_RESERVE(f->iv, f->cap_iv, f->n_iv + 1, 256) < 0)
			return -ENOMEM;
		f->iv[f->n_iv++] = (struct ival){ node, f->s[ev], f->e[ev] };
	}
	return account(t, node, outer, f->s[ev], f->e[ev], f->rank_mark);
}

static inline void fold_close(void *data, uint64_t ev, uint32_t row, int64_t excl,
			      uint32_t node)
{
	struct fold *f = data;
	struct node *nd = &f->t->nodes[node];

	nd->own = sp_add_wrap(nd->own, excl);
	if (f->row_excl)
		f->row_excl[row] = sp_add_wrap(f->row_excl[row], excl);
}

/* The walk's merge with fold_open and fold_close inlined (callstack-walk.h). */
static inline int fold_emit(struct walk *c, struct sp_call_stack *cs, size_t *at,
			    uint64_t ev, uint32_t row, int64_t s, int64_t e)
{
	return walk_step(c, ev, row, s, e, fold_open, fold_close, c->visit->data);
}

static int fold_merge(struct walk *c)
{
	return walk_merge(c, NULL, NULL, fold_emit);
}

/* Per-rank totals into coverage (without lanes) and imbalance. */
static void end_rank(struct summary_tree *t, bool lanes)
{
	for (size_t k = 0; k < t->n_touched; k++) {
		struct node *nd = &t->nodes[t->touched[k]];

		if (!lanes)
			nd->coverage = sp_add_wrap(nd->coverage, nd->rank_total);
		if (nd->rank_total > 0) {
			double v = (double)nd->rank_total / SP_NS_PER_S;

			nd->imb_sum += v;
			nd->imb_n++;
			nd->imb_max = v > nd->imb_max ? v : nd->imb_max;
		}
		nd->rank_total = 0;
	}
	t->n_touched = 0;
}

/*
 * One rank's tree: its calls folded from the streaming walk. *ret_msg gets
 * the (malloc'ed) message of a nesting error (the walk may run on another
 * thread, whose last error is not the caller's). With sums (row-indexed,
 * this thread's), the rank's exclusive times come out of the same walk.
 */
static int rank_tree(struct sp_reader *r, size_t slot, const uint32_t *pos,
		     const uint32_t *region_of, size_t *rows, int64_t *sums,
		     bool spread, struct summary_tree **ret, char **ret_msg)
{
	struct summary_tree *t = calloc(1, sizeof(*t));
	struct fold f = { .t = t, .r = r, .s = r->col[SP_COL_START_TIMES],
			  .e = r->col[SP_COL_END_TIMES],
			  .lanes = r->col[SP_COL_THREAD_IDS] != NULL,
			  .rank_mark = (uint32_t)slot + 1, .row_excl = sums,
			  .region_of = region_of };
	struct call_visitor v = { &f, fold_open, fold_close, fold_merge };
	uint32_t root;
	size_t nr = 0;
	int rc;

	if (!t)
		return -ENOMEM;
	t->spread = spread;
	rc = new_node(t, NONE, NONE, &root);
	if (rc == 0) {
		nr = reader_rank_rows(r, slot, pos, rows);
		for (size_t i = 0; sums && i < nr; i++)
			sums[rows[i]] = 0;
		rc = visit_rows(r, r->ranks[slot], rows, nr, &v);
		if (rc < 0 && rc != -ENOMEM)
			*ret_msg = strdup(sp_reader_last_error());
	}
	if (rc == 0 && f.lanes)
		add_coverage(t, f.iv, f.n_iv);
	if (rc == 0)
		end_rank(t, f.lanes);
	if (rc == 0 && sums)
		exclusive_from_sums(r, rows, nr, sums);
	free(f.iv);
	if (rc < 0) {
		summary_tree_destroy(t);
		return rc;
	}
	*ret = t;
	return 0;
}

static int push_part(struct node *nd, const int64_t *dur, size_t n)
{
	if (SP_ARRAY_RESERVE(nd->parts, nd->cap_parts, nd->n_parts + 1, 4) < 0)
		return -ENOMEM;
	nd->parts[nd->n_parts++] = (struct dur_slice){ NULL, dur, 0, n };
	nd->dur_n += n;
	return 0;
}

/*
 * Fold rank tree l into the merged tree g. Ranks merge in rank order and
 * each rank's nodes in creation order, so the merged nodes are created,
 * ordered and summed exactly as one walk over the ranks would.
 */
static int merge_rank(struct summary_tree *g, const struct summary_tree *l)
{
	uint32_t *gid = malloc((l->n + 1) * sizeof(*gid));
	int rc = 0;

	if (!gid)
		return -ENOMEM;
	gid[0] = 0;
	for (uint32_t i = 1; rc == 0 && i < l->n; i++) {
		const struct node *ln = &l->nodes[i];
		struct node *gn;

		rc = child_of(g, gid[ln->parent], ln->region, &gid[i]);
		if (rc < 0)
			break;
		gn = &g->nodes[gid[i]];
		gn->recursive |= ln->recursive;
		gn->calls += ln->calls;
		gn->total_outer = sp_add_wrap(gn->total_outer, ln->total_outer);
		gn->own = sp_add_wrap(gn->own, ln->own);
		gn->coverage = sp_add_wrap(gn->coverage, ln->coverage);
		if (ln->any && (!gn->any || ln->first_start < gn->first_start)) {
			gn->first_start = ln->first_start;
			gn->first_dur = ln->first_dur;
		}
		if (ln->any && (!gn->any || ln->last_end > gn->last_end)) {
			gn->last_end = ln->last_end;
			gn->last_dur = ln->last_dur;
		}
		gn->any |= ln->any;
		gn->n_ranks += ln->n_ranks;
		gn->imb_sum += ln->imb_sum;
		gn->imb_n += ln->imb_n;
		gn->imb_max = ln->imb_max > gn->imb_max ? ln->imb_max : gn->imb_max;
		if (ln->calls && (gn->calls == ln->calls || ln->dmin < gn->dmin))
			gn->dmin = ln->dmin;
		if (ln->calls && (gn->calls == ln->calls || ln->dmax > gn->dmax))
			gn->dmax = ln->dmax;
		gn->dsum = dsum_add(gn->dsum, ln->dsum);
		if (ln->dur_n)
			rc = push_part(gn, ln->dur, ln->dur_n);
	}
	free(gid);
	return rc;
}

/* Ranks are folded independently (on several threads for big files). */
struct tree_work {
	struct sp_reader *r;
	const struct sp_selection *sel;
	const uint32_t *pos;
	struct summary_tree **trees; /* per rank slot */
	int *rcs;
	char **msgs;
	atomic_size_t next;
	atomic_size_t failed;      /* lowest failing rank slot, or SIZE_MAX */
	bool excl;                 /* exclusive times wanted from the walks */
	bool spread;
	uint32_t *region_of;       /* region of each row */
	atomic_size_t excl_ranks;  /* ranks whose exclusive times are set */
};

static void *tree_worker(void *arg)
{
	struct tree_work *w = arg;
	size_t *rows = malloc((w->r->n_rows + 1) * sizeof(*rows)), k;
	/* Per thread, as in exclusive.c (rows of two ranks share lines). */
	int64_t *sums = w->excl ? malloc((w->r->n_rows + 1) * sizeof(*sums)) : NULL;

	while ((k = atomic_fetch_add(&w->next, 1)) < w->r->n_ranks) {
		if (!sp_selection_match_rank(w->sel, w->r->ranks[k]))
			continue;
		/* Ranks after a failed one do not matter (the first is
		 * reported); the ones before it always run. */
		if (k > atomic_load(&w->failed)) {
			w->rcs[k] = -ECANCELED;
			continue;
		}
		w->rcs[k] = rows ? rank_tree(w->r, k, w->pos, w->region_of, rows, sums,
					     w->spread, &w->trees[k], &w->msgs[k])
				 : -ENOMEM;
		if (w->rcs[k] == 0 && sums)
			atomic_fetch_add(&w->excl_ranks, 1);
		for (size_t f = atomic_load(&w->failed); w->rcs[k] < 0 && k < f;)
			if (atomic_compare_exchange_weak(&w->failed, &f, k))
				break;
	}
	free(sums);
	free(rows);
	return NULL;
}

int summary_tree_build(struct sp_reader *r, const struct sp_selection *sel,
		       bool spread, struct summary_tree **ret)
{
	struct summary_tree *t = calloc(1, sizeof(*t));
	struct tree_work w = { r, sel, NULL, NULL, NULL, NULL, 0, SIZE_MAX,
			       !r->exclusive_done, spread, NULL, 0 };
	uint32_t root;
	int n, rc;

	if (!t)
		return -ENOMEM;
	t->spread = spread;
	rc = new_node(t, NONE, NONE, &root);
	n = rc < 0 ? rc : reader_region_positions(r, NULL, (uint32_t **)&w.pos);
	rc = n < 0 ? n : 0;
	t->ranks = calloc(r->n_ranks + 1, sizeof(*t->ranks));
	w.rcs = calloc(r->n_ranks + 1, sizeof(*w.rcs));
	w.msgs = calloc(r->n_ranks + 1, sizeof(*w.msgs));
	w.region_of = malloc((r->n_rows + 1) * sizeof(*w.region_of));
	if (rc == 0 && (!t->ranks || !w.rcs || !w.msgs || !w.region_of))
		rc = -ENOMEM;
	for (size_t i = 0; rc == 0 && i < r->n_rows; i++)
		w.region_of[i] = r->rows[i].region;
	if (rc == 0) {
		w.trees = t->ranks;
		t->n_ranks = r->n_ranks;
		reader_parallel(r, r->n_ranks, tree_worker, &w);
	}
	/* Merge in rank order; the first failing rank is the one reported. */
	for (size_t k = 0; rc == 0 && k < r->n_ranks; k++) {
		if (w.rcs[k] < 0) {
			rc = w.rcs[k];
			if (w.msgs[k])
				sp_error(-rc, "%s", w.msgs[k]);
		} else if (t->ranks[k]) {
			rc = merge_rank(t, t->ranks[k]);
		}
	}
	/* Every rank walked: the exclusive times are known too (a rank that
	 * failed or was not selected leaves them to exclusive.c). */
	if (rc == 0 && w.excl && atomic_load(&w.excl_ranks) == r->n_ranks)
		r->exclusive_done = true;
	for (size_t k = 0; w.msgs && k < r->n_ranks; k++)
		free(w.msgs[k]);
	free(w.msgs);
	free(w.rcs);
	free(w.region_of);
	free((void *)w.pos);
	if (rc < 0) {
		summary_tree_destroy(t);
		return rc;
	}
	*ret = t;
	return 0;
}

bool summary_tree_exact(const struct summary_tree *t)
{
	for (size_t i = 1; i < t->n; i++)
		if (t->nodes[i].dsum >= DSUM_EXACT)
			return false;
	return true;
}

void summary_tree_destroy(struct summary_tree *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->nodes[i].dur);
		free(t->nodes[i].parts);
	}
	for (size_t k = 0; k < t->n_ranks; k++)
		summary_tree_destroy(t->ranks[k]);
	free(t->ranks);
	free(t->nodes);
	sp_map_free(&t->children);
	free(t->touched);
	free(t);
}
