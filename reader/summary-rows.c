/* SPDX-License-Identifier: MIT */
/*
 * The rows of a call-path tree (summary-tree.c): per node its statistics
 * (pooled durations with spread, else from the sums), emitted depth first
 * with an "(own)" row first among each node's children, siblings sorted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "sp-array.h"
#include "sp-format.h"
#include "summary-tree.h"

#define NONE SUMMARY_NONE

/* ---- rows -------------------------------------------------------------- */

static void node_row_tail(const struct node *nd, struct sp_summary_row *row)
{
	row->first = (double)nd->first_dur / SP_NS_PER_S;
	row->last = (double)nd->last_dur / SP_NS_PER_S;
	row->imbalance = nd->imb_n >= 2
		? (nd->imb_max / (nd->imb_sum / nd->imb_n) - 1) * 100 : 0.0;
	row->first_start = (double)nd->first_start / SP_NS_PER_S;
}

static int node_row(struct summary_tree *t, const struct sp_reader *r,
		    uint32_t id, struct sp_summary_row *row)
{
	const struct node *nd = &t->nodes[id];
	const struct dur_set ds = { nd->parts, nd->n_parts };
	int64_t mn = INT64_MAX, mx = INT64_MIN;
	double mean = 0, m2 = 0, p[3];
	int rc;

	memset(row, 0, sizeof(*row));
	row->name = r->names[nd->region];
	row->region = nd->region;
	row->recursive = nd->recursive;
	row->num_ranks = nd->n_ranks;
	row->calls = nd->calls;
	row->total_ns = nd->total_outer;
	row->coverage_ns = nd->coverage;
	row->percent = NAN;
	if (nd->calls == 0) {
		row->total = row->avg = row->min = row->max = row->std = NAN;
		row->p50 = row->p95 = row->p99 = row->first = row->last = NAN;
		row->imbalance = row->first_start = NAN;
		return 0;
	}
	if (!t->spread) {
		/* dsum is exact (summary_tree_exact): the same mean. */
		mean = (double)nd->dsum / (double)nd->calls;
		row->total = (double)nd->total_outer / SP_NS_PER_S;
		row->avg = mean / SP_NS_PER_S;
		row->min = (double)nd->dmin / SP_NS_PER_S;
		row->max = (double)nd->dmax / SP_NS_PER_S;
		row->std = row->p50 = row->p95 = row->p99 = NAN;
		node_row_tail(nd, row);
		return 0;
	}
	/* The ranks' durations in rank order, as one pooled array. The
	 * exact sum gives the mean those doubles sum to and the node's
	 * extremes are known: one pass less over the durations. */
	if (nd->dsum < DSUM_EXACT) {
		mean = (double)nd->dsum;
		mn = nd->dmin;
		mx = nd->dmax;
	} else {
		for (size_t i = 0; i < ds.n_slices; i++) {
			const int64_t *d = ds.slice[i].e;

			for (uint64_t k = 0; k < ds.slice[i].hi; k++) {
				mean += (double)d[k];
				mn = d[k] < mn ? d[k] : mn;
				mx = d[k] > mx ? d[k] : mx;
			}
		}
	}
	mean /= (double)nd->dur_n;
	/* The squared deviations come out of the percentiles' counting pass. */
	rc = percentiles3_m2(&ds, nd->dur_n, mn, mx, mean, &m2, p);
	if (rc < 0)
		return rc;
	row->total = (double)nd->total_outer / SP_NS_PER_S;
	row->avg = mean / SP_NS_PER_S;
	row->min = (double)mn / SP_NS_PER_S;
	row->max = (double)mx / SP_NS_PER_S;
	row->std = sqrt(m2 / (double)nd->dur_n) / SP_NS_PER_S;
	row->p50 = p[0];
	row->p95 = p[1];
	row->p99 = p[2];
	node_row_tail(nd, row);
	return 0;
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

static int push_u32(uint32_t **list, size_t *n, size_t *cap, uint32_t v)
{
	if (SP_ARRAY_RESERVE(*list, *cap, *n + 1, 8) < 0)
		return -ENOMEM;
	(*list)[(*n)++] = v;
	return 0;
}

/*
 * Kept descendants of id reached through filtered-out nodes, in depth-first
 * sibling order. Iterative: a hostile file can nest calls 100k levels deep.
 * walk is scratch space for the pending siblings.
 */
static int collect(struct emit_ctx *c, uint32_t id, uint32_t **list,
		   size_t *n, size_t *cap, uint32_t **walk, size_t *walk_cap)
{
	size_t top = 0;
	uint32_t k = c->t->nodes[id].first_child;

	for (;;) {
		if (k == NONE) {
			if (top == 0)
				return 0;
			k = (*walk)[--top];
			continue;
		}
		if (c->kept[k]) {
			if (push_u32(list, n, cap, k) < 0)
				return -ENOMEM;
			k = c->t->nodes[k].next_sibling;
			continue;
		}
		/* Descend into a filtered-out node; resume at its sibling. */
		if (push_u32(walk, &top, walk_cap, c->t->nodes[k].next_sibling) < 0)
			return -ENOMEM;
		k = c->t->nodes[k].first_child;
	}
}

static int cmp_nodes(const void *a, const void *b, void *ctx)
{
	const struct emit_ctx *c = ctx;

	return summary_row_cmp(&c->rows[*(const uint32_t *)a],
			       &c->rows[*(const uint32_t *)b], c->sort);
}

static int own_row(struct emit_ctx *c, uint32_t id, int depth)
{
	const struct node *nd = &c->t->nodes[id];
	struct sp_summary_row *row = summary_add_row(c->s);

	if (!row)
		return -ENOMEM;
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
	return 0;
}

/* One level of the depth-first emission: sorted kept children of a node. */
struct frame {
	uint32_t *list;
	size_t n, i;
};

/*
 * Depth-first rows: a node with kept children gets its "(own)" row first
 * (not the root), then each child row followed by the child's subtree.
 * Iterative with an explicit stack of frames (deep trees).
 */
static int emit(struct emit_ctx *c)
{
	struct frame *fr = NULL;
	size_t depth = 0, cap_fr = 0, walk_cap = 0;
	uint32_t *walk = NULL, id = 0;
	int rc = 0;

	for (;;) {
		uint32_t *list = NULL;
		size_t n = 0, cap = 0;

		/* Enter node id at level depth. */
		rc = collect(c, id, &list, &n, &cap, &walk, &walk_cap);
		if (rc == 0 && n > 0) {
			qsort_r(list, n, sizeof(*list), cmp_nodes, c);
			if (id != 0)
				rc = own_row(c, id, (int)depth);
			if (rc == 0)
				rc = SP_ARRAY_RESERVE(fr, cap_fr, depth + 1, 16);
			if (rc == 0) {
				fr[depth++] = (struct frame){ list, n, 0 };
				list = NULL;
			}
		}
		free(list);
		if (rc < 0)
			break;
		/* Next child to emit: climb while levels are exhausted. */
		while (depth > 0 && fr[depth - 1].i == fr[depth - 1].n)
			free(fr[--depth].list);
		if (depth == 0)
			break;
		{
			struct frame *f = &fr[depth - 1];
			struct sp_summary_row *row = summary_add_row(c->s);

			if (!row) {
				rc = -ENOMEM;
				break;
			}
			id = f->list[f->i++];
			*row = c->rows[id];
			row->depth = (int)depth - 1;
		}
	}
	while (depth > 0)
		free(fr[--depth].list);
	free(fr);
	free(walk);
	return rc;
}

/* Node rows are independent (each reads its own durations): threads take
 * the nodes one at a time from a shared counter, as the ranks' trees are
 * built (the nodes' sizes differ by orders of magnitude). */
struct rows_work {
	struct summary_tree *t;
	const struct sp_reader *r;
	struct sp_summary_row *rows;
	atomic_size_t next;
	atomic_int rc;
};

static void *rows_worker(void *arg)
{
	struct rows_work *w = arg;
	size_t i;

	while ((i = atomic_fetch_add(&w->next, 1)) < w->t->n) {
		int rc = node_row(w->t, w->r, (uint32_t)i, &w->rows[i]);

		if (rc < 0)
			atomic_store(&w->rc, rc);
	}
	return NULL;
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
	{
		struct rows_work w = { t, r, c.rows, 1, 0 };

		reader_parallel(r, t->n - 1, rows_worker, &w);
		rc = atomic_load(&w.rc);
	}
	for (uint32_t i = 1; rc == 0 && i < t->n; i++)
		c.kept[i] = sp_selection_match_name(sel, r->names[t->nodes[i].region]);
	if (rc == 0)
		rc = emit(&c);
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
