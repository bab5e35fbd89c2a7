/* SPDX-License-Identifier: MIT */
/*
 * The streaming call-stack walk's inner loop (callstack.c): the k-way merge
 * of one rank's sorted per-row runs and the nesting step, as always-inline
 * templates over the visitor's callbacks. callstack.c instantiates them
 * with its generic callbacks; a hot visitor (the summary's fold)
 * instantiates them with its own, so no call per event goes through a
 * function pointer (those calls and their frames were a fifth of the fold).
 */
#ifndef SP_CALLSTACK_WALK_H
#define SP_CALLSTACK_WALK_H

#include <errno.h>
#include <stdlib.h>

#include "reader-internal.h"
#include "sp-array.h"

struct walk_run {
	uint64_t base;      /* contiguous events base..base+n */
	uint64_t *idx;      /* or these events */
	uint64_t *own;      /* buffer to free (idx may point into it) */
	uint64_t *lanes;    /* events grouped by lane (stable), owned */
	size_t n_lanes_ev, lane_pos;
	size_t n, pos;
	uint32_t row;
};

/* An open call of the streaming walk: its doubled end (half a tick late
 * when zero-length; the end is e2 >> 1), its exclusive ns so far and the
 * visitor's tag for it (the summary's tree node). */
struct walk_call { uint64_t ev; int64_t e2, excl; uint32_t row, tag; };

struct walk {
	const struct sp_reader *r;
	const int64_t *s, *e;
	struct walk_run *runs;
	size_t n_runs;
	uint32_t rank;
	/* Streaming mode (no call arrays): only the open calls are kept. */
	const struct call_visitor *visit;
	struct walk_call *open;
	size_t n_open, cap_open;
};

static SP_ALWAYS_INLINE uint64_t run_at(const struct walk_run *u, size_t j)
{
	return u->idx ? u->idx[j] : u->base + j;
}

/*
 * The merge's heap holds each run's next start and the run; the end (only
 * looked at when two starts tie, which is rare) is read through the run's
 * next event. 16 bytes an entry: the heap of a few hundred runs stays in
 * L1, and each step moves half as much as with the end inline.
 */
struct walk_head {
	int64_t s;
	size_t run;
};

/* start asc, end desc, run asc: a total order (runs differ). */
static SP_ALWAYS_INLINE bool head_less(const struct walk *c, const uint64_t *next,
				       struct walk_head a, struct walk_head b)
{
	int64_t ea, eb;

	if (a.s != b.s)
		return a.s < b.s;
	ea = c->e[next[a.run]];
	eb = c->e[next[b.run]];
	if (ea != eb)
		return ea > eb;
	return a.run < b.run;
}

/*
 * Put x at heap[i] and move it down to its place (the hole moves, x is
 * written once). heap[n] is a sentinel (start INT64_MAX: timestamps stay
 * below SP_TIME_LIMIT) so every node has two children to choose from, and
 * the choice is a flag, not a branch: which child is smaller is a coin
 * toss the branch predictor loses, once per level.
 */
static SP_ALWAYS_INLINE void sift_down(const struct walk *c, const uint64_t *next,
				       struct walk_head *heap, size_t n, size_t i,
				       struct walk_head x)
{
	for (;;) {
		size_t l = 2 * i + 1, m;
		bool right;

		if (l >= n)
			break;
		right = heap[l + 1].s < heap[l].s;
		if (__builtin_expect(heap[l + 1].s == heap[l].s, 0))
			right = l + 1 < n && head_less(c, next, heap[l + 1], heap[l]);
		m = l + right;
		if (!head_less(c, next, heap[m], x))
			break;
		heap[i] = heap[m];
		i = m;
	}
	heap[i] = x;
}

/*
 * Nesting error: call ec (of row_c) starts inside call ep (of row_p) but
 * ends after it. Returns -SP_E_NESTING with the message set.
 */
int walk_nesting_error(const struct sp_reader *r, uint32_t rank,
		       uint64_t ec, uint32_t row_c, uint64_t ep, uint32_t row_p);

/* Close the open calls above keep, innermost first. */
static SP_ALWAYS_INLINE void walk_close_to(struct walk *c, size_t keep,
					   void (*close)(void *data, uint64_t ev,
							 uint32_t row, int64_t excl,
							 uint32_t tag),
					   void *data)
{
	while (c->n_open > keep) {
		struct walk_call *o = &c->open[--c->n_open];

		close(data, o->ev, o->row, o->excl, o->tag);
	}
}

/*
 * Call ev of row, [s, e], is next in start order: close what ended, nest
 * it under the innermost open call (which must contain it) and open it,
 * with that call's tag (0 at depth 0); open gives the new call's tag.
 * Doubled timestamps: a zero-length call ends half a tick late.
 */
static SP_ALWAYS_INLINE int walk_step(struct walk *c, uint64_t ev, uint32_t row,
				      int64_t s, int64_t e,
				      int (*open)(void *data, uint64_t ev,
						  uint32_t row, size_t depth,
						  uint32_t parent_tag,
						  uint32_t *ret_tag),
				      void (*close)(void *data, uint64_t ev,
						    uint32_t row, int64_t excl,
						    uint32_t tag),
				      void *data)
{
	int64_t s2 = 2 * s, d = e - s;
	size_t top = c->n_open;
	uint32_t tag = 0, parent_tag = 0;
	struct walk_call *o;
	int rc;

	while (top > 0 && c->open[top - 1].e2 <= s2)
		top--;
	if (top < c->n_open)
		walk_close_to(c, top, close, data);
	if (top) {
		struct walk_call *p = &c->open[top - 1];

		if (e > p->e2 >> 1)
			return walk_nesting_error(c->r, c->rank, ev, row, p->ev, p->row);
		p->excl -= d;
		parent_tag = p->tag;
	}
	if ((rc = SP_ARRAY_RESERVE(c->open, c->cap_open, c->n_open + 1, 64)) < 0)
		return rc;
	rc = open(data, ev, row, top, parent_tag, &tag);
	if (rc < 0)
		return rc;
	o = &c->open[c->n_open++];
	o->ev = ev;
	o->e2 = 2 * e + (e == s);
	o->excl = d;
	o->row = row;
	o->tag = tag;
	return 0;
}

/*
 * Merge the sorted runs in (start asc, end desc, run asc) order, handing
 * each event to emit (into cs at *at, or a walk_step). next[k] is run k's
 * next event (a dense array: the run structs are cold).
 */
static SP_ALWAYS_INLINE int walk_merge(struct walk *c, struct sp_call_stack *cs,
				       size_t *at,
				       int (*emit)(struct walk *c,
						   struct sp_call_stack *cs,
						   size_t *at, uint64_t ev,
						   uint32_t row, int64_t s,
						   int64_t e))
{
	struct walk_head *heap = malloc((c->n_runs + 2) * sizeof(*heap));
	uint64_t *next = malloc((c->n_runs + 1) * sizeof(*next));
	size_t n = 0;
	int rc = 0;

	if (!heap || !next) {
		free(heap);
		free(next);
		return -ENOMEM;
	}
	for (size_t k = 0; k < c->n_runs; k++) {
		if (c->runs[k].n == 0)
			continue;
		next[k] = run_at(&c->runs[k], 0);
		heap[n++] = (struct walk_head){ c->s[next[k]], k };
	}
	heap[n] = (struct walk_head){ INT64_MAX, SIZE_MAX };
	for (size_t i = n; i-- > 0;)
		sift_down(c, next, heap, n, i, heap[i]);
	while (n > 0 && rc == 0) {
		size_t k = heap[0].run;
		struct walk_run *u = &c->runs[k];
		uint64_t ev = next[k];

		rc = emit(c, cs, at, ev, u->row, heap[0].s, c->e[ev]);
		if (++u->pos == u->n) {
			struct walk_head last = heap[--n];

			heap[n] = (struct walk_head){ INT64_MAX, SIZE_MAX };
			sift_down(c, next, heap, n, 0, last);
			continue;
		}
		ev = run_at(u, u->pos);
		/* Hundreds of rows are read side by side: fetch each row's
		 * next lines ahead (the loads below were a third of the
		 * merge, waiting on memory). */
		if (!u->idx && (ev & 7) == 0 && u->pos + 16 < u->n) {
			__builtin_prefetch(c->s + ev + 16);
			__builtin_prefetch(c->e + ev + 16);
		}
		next[k] = ev;
		sift_down(c, next, heap, n, 0, (struct walk_head){ c->s[ev], k });
	}
	free(heap);
	free(next);
	return rc;
}

#endif /* SP_CALLSTACK_WALK_H */
