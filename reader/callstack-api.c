/* SPDX-License-Identifier: MIT */
/*
 * The public call-stack object (sp_call_stack_build, _get, _path) and the
 * streaming walk (sp_call_stack_walk) over one rank's rows; the
 * reconstruction itself is callstack.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "callstack-walk.h"
#include "reader-internal.h"

/* The rank's rows of the selected regions (free *ret_rows). 0 or -errno. */
static int selected_rank_rows(const struct sp_reader *r, uint32_t rank,
			      const struct sp_selection *sel, size_t **ret_rows,
			      size_t *ret_n)
{
	uint32_t *pos = NULL;
	long slot = reader_rank_slot(r, rank);
	int count;

	if (slot < 0)
		return sp_error(ENOENT, "%s: no rank %u in the file", r->path, rank);
	count = reader_region_positions(r, sel, &pos);
	if (count < 0)
		return count;
	*ret_rows = malloc((r->rank_off[slot + 1] - r->rank_off[slot] + 1) * sizeof(**ret_rows));
	if (!*ret_rows) {
		free(pos);
		return -ENOMEM;
	}
	*ret_n = reader_rank_rows(r, (size_t)slot, pos, *ret_rows);
	free(pos);
	return 0;
}

int sp_call_stack_build(const struct sp_reader *r, uint32_t rank,
			int64_t lane, const struct sp_selection *sel,
			struct sp_call_stack **ret)
{
	size_t *rows, n;
	struct sp_call_stack *cs;
	int rc = selected_rank_rows(r, rank, sel, &rows, &n);

	if (rc < 0)
		return rc;
	cs = call_stack_from_rows(r, rank, lane, rows, n, &rc);
	free(rows);
	if (!cs)
		return rc;
	*ret = cs;
	return 0;
}

/* sp_call_stack_walk: each opened call as an sp_call for the callback. */
struct walk_ctx {
	const struct sp_reader *r;
	uint32_t rank;
	int (*fn)(void *data, const struct sp_call *call);
	void *data;
};

static SP_ALWAYS_INLINE int walk_open(void *data, uint64_t ev, uint32_t row, size_t depth,
				      uint32_t parent_tag, uint32_t *ret_tag)
{
	const struct walk_ctx *w = data;
	const struct sp_reader *r = w->r;
	const struct sp_row *rw = &r->rows[row];
	const int64_t *t = r->col[SP_COL_THREAD_IDS];
	struct sp_call c = {
		.region = rw->region, .rank = w->rank, .lane = t ? t[ev] : -1,
		.call_index = ev - rw->offset, .event = ev,
		.start_ns = r->col[SP_COL_START_TIMES][ev],
		.end_ns = r->col[SP_COL_END_TIMES][ev],
		.depth = (int32_t)depth, .parent = -1,
	};

	return w->fn(w->data, &c);
}

static inline void walk_close(void *data, uint64_t ev, uint32_t row, int64_t excl,
			      uint32_t tag)
{
}

/* The walk's merge with walk_open and walk_close inlined (callstack-walk.h). */
static inline int walk_emit(struct walk *c, struct sp_call_stack *cs, size_t *at,
			    uint64_t ev, uint32_t row, int64_t s, int64_t e)
{
	return walk_step(c, ev, row, s, e, walk_open, walk_close, c->visit->data);
}

static int walk_merge_lane(struct walk *c)
{
	return walk_merge(c, NULL, NULL, walk_emit);
}

int sp_call_stack_walk(const struct sp_reader *r, uint32_t rank, int64_t lane,
		       const struct sp_selection *sel,
		       int (*fn)(void *data, const struct sp_call *call),
		       void *data)
{
	struct walk_ctx w = { r, rank, fn, data };
	struct call_visitor v = { &w, walk_open, walk_close, walk_merge_lane };
	size_t *rows, n;
	int rc = selected_rank_rows(r, rank, sel, &rows, &n);

	if (rc < 0)
		return rc;
	rc = visit_rows_lane(r, rank, lane, rows, n, &v);
	free(rows);
	return rc;
}

void sp_call_stack_destroy(struct sp_call_stack *cs)
{
	if (!cs)
		return;
	free(cs->ev);
	free(cs->row);
	free(cs->depth);
	free(cs->parent);
	free(cs->excl);
	free(cs->lane);
	free(cs);
}

size_t sp_call_stack_count(const struct sp_call_stack *cs)
{
	return cs->n;
}

int sp_call_stack_get(const struct sp_call_stack *cs, size_t i,
		      struct sp_call *ret)
{
	const struct sp_reader *r = cs->r;
	const struct sp_row *row;
	uint64_t ev;

	if (i >= cs->n)
		return -ENOENT;
	row = &r->rows[cs->row[i]];
	ev = cs->ev[i];
	ret->region = row->region;
	ret->rank = cs->rank;
	ret->lane = cs->lane ? cs->lane[i] : -1;
	ret->call_index = ev - row->offset;
	ret->event = ev;
	ret->start_ns = r->col[SP_COL_START_TIMES][ev];
	ret->end_ns = r->col[SP_COL_END_TIMES][ev];
	ret->exclusive_ns = cs->excl[i];
	ret->depth = cs->depth[i];
	ret->parent = cs->parent[i];
	return 0;
}

int sp_call_stack_path(const struct sp_call_stack *cs,
		       const struct sp_reader *r, size_t i, char *buf,
		       size_t size)
{
	size_t chain[4096], n = 0, len = 0;
	int64_t c = (int64_t)i;

	if (i >= cs->n)
		return -EINVAL;
	if (r != cs->r)
		r = cs->r;
	while (c >= 0 && n < sizeof(chain) / sizeof(chain[0])) {
		chain[n++] = (size_t)c;
		c = cs->parent[c];
	}
	if (size)
		buf[0] = '\0';
	while (n-- > 0) {
		const char *name = r->names[r->rows[cs->row[chain[n]]].region];
		int w = snprintf(len < size ? buf + len : NULL,
				 len < size ? size - len : 0, "%s%s",
				 name, n ? " > " : "");

		len += (size_t)w;
	}
	return (int)len;
}
