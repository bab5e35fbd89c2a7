/* SPDX-License-Identifier: MIT */
/*
 * Calls counted but not on the timeline (rank_region_index/throttled_counts)
 * shared out over one rank's call-path tree (SP_SUMMARY_THROTTLED). Where a
 * counted call was made is not stored: a region's counted calls and their
 * time go to its paths in proportion to the paths' timeline calls on that
 * rank, and the time leaves the parents' exclusive time, which holds it
 * because those calls were not on the timeline (docs/SUMMARY.md).
 */
#include <errno.h>
#include <stdlib.h>

#include "sp-array.h"
#include "sp-map.h"
#include "summary-tree.h"

/* One region of the rank with counted-only calls. */
struct thr_region {
	uint64_t count;           /* counted-only calls */
	int64_t ns;               /* their time */
	uint64_t timeline;        /* its timeline calls, all its paths */
	uint64_t seen;            /* of those, on the paths given a share */
	uint64_t calls_out;       /* calls and ns given so far */
	int64_t ns_out;
	unsigned paths;
};

/* floor(a * b / c) without overflow; b <= c, so it is at most a. */
static uint64_t scaled(uint64_t a, uint64_t b, uint64_t c)
{
	return (uint64_t)((unsigned __int128)a * b / c);
}

/* The rank's regions with counted calls, indexed by region + 1. */
static int collect(const struct sp_reader *r, const size_t *rows, size_t n_rows,
		   struct sp_map *idx, struct thr_region **ret, size_t *ret_n)
{
	struct thr_region *reg = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < n_rows; i++) {
		const struct sp_row *row = &r->rows[rows[i]];
		uint64_t key = (uint64_t)row->region + 1;
		int64_t ns = row->throttled_total_ns > 0 ? row->throttled_total_ns : 0;
		uint32_t *k;

		if (row->throttled_count <= 0)
			continue;
		if ((k = sp_map_find(idx, key))) { /* a second row of the region */
			reg[*k].count += (uint64_t)row->throttled_count;
			reg[*k].ns = sp_add_wrap(reg[*k].ns, ns);
			continue;
		}
		if (SP_ARRAY_RESERVE(reg, cap, n + 1, 8) < 0 ||
		    sp_map_put(idx, key, (uint32_t)n) < 0) {
			free(reg);
			return -ENOMEM;
		}
		reg[n++] = (struct thr_region){ .count = (uint64_t)row->throttled_count,
						.ns = ns };
	}
	*ret = reg;
	*ret_n = n;
	return 0;
}

/*
 * Node id's share of e (cumulative rounding: the shares add up to the
 * exact count and time). The rank totals carry it into imbalance and
 * coverage; the parent gives up as much of its own time as it has.
 */
static void share(struct summary_tree *t, uint32_t id, struct thr_region *e, bool lanes)
{
	struct node *nd = &t->nodes[id];
	uint64_t seen = e->seen + nd->calls;
	uint64_t calls = scaled(e->count, seen, e->timeline) - e->calls_out;
	int64_t ns = (int64_t)scaled((uint64_t)e->ns, seen, e->timeline) - e->ns_out;

	e->seen = seen;
	e->calls_out += calls;
	e->ns_out += ns;
	nd->thr_calls += calls;
	nd->thr_ns = sp_add_wrap(nd->thr_ns, ns);
	nd->thr_split |= e->paths > 1;
	nd->rank_total = sp_add_wrap(nd->rank_total, ns);
	if (lanes) /* else end_rank() adds rank_total to coverage */
		nd->coverage = sp_add_wrap(nd->coverage, ns);
	if (nd->parent != 0 && nd->parent != SUMMARY_NONE) {
		struct node *p = &t->nodes[nd->parent];
		int64_t room = p->own - p->thr_moved;
		int64_t moved = ns < room ? ns : room > 0 ? room : 0;

		p->thr_moved += moved;
		p->thr_clamped += ns - moved;
	}
}

int summary_tree_throttled(struct summary_tree *t, const struct sp_reader *r,
			   const size_t *rows, size_t n_rows, bool lanes)
{
	struct sp_map idx = { 0 };
	struct thr_region *reg = NULL;
	size_t n = 0;
	int rc = collect(r, rows, n_rows, &idx, &reg, &n);

	/* Pass 0 counts each region's timeline calls and paths, pass 1 shares;
	 * a region without timeline calls on the rank has no path to go to. */
	for (int pass = 0; rc == 0 && n && pass < 2; pass++) {
		for (uint32_t i = 1; i < t->n; i++) {
			const uint32_t *k = sp_map_find(&idx, (uint64_t)t->nodes[i].region + 1);

			if (!k || t->nodes[i].calls == 0)
				continue;
			if (pass == 0) {
				reg[*k].timeline += t->nodes[i].calls;
				reg[*k].paths++;
			} else {
				share(t, i, &reg[*k], lanes);
			}
		}
	}
	sp_map_free(&idx);
	free(reg);
	return rc;
}
