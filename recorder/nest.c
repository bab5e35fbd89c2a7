/* SPDX-License-Identifier: MIT */
/*
 * Exclusive time while the calls stream past (nest.h): the rule of the
 * commit's pass (writer-finish.c, nest_rank) and of the reader's call-stack
 * reconstruction, without holding the events. A thread's calls arrive in
 * entry order, which is start order; the commit sorts by (start asc, end
 * desc, region position, input order), so only a run of calls with one
 * start needs sorting, and it is short (calls entered within one tick).
 */
#define _GNU_SOURCE
#include "nest.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int grow(struct sp_nest_call **v, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	struct sp_nest_call *n = realloc(*v, c * sizeof *n);
	if (!n)
		return -ENOMEM;
	*v = n;
	*cap = c;
	return 0;
}

int sp_nest_init(struct sp_nest *n, uint32_t nrows, const uint32_t *pos)
{
	memset(n, 0, sizeof *n);
	n->nrows = nrows;
	n->pos = pos;
	n->excl = calloc((size_t)nrows + 1, sizeof *n->excl);
	return n->excl ? 0 : -ENOMEM;
}

/* One call onto the lane's stack (writer-finish.c's nest_rank, step k). */
static int nest_one(struct sp_nest *n, const struct sp_nest_call *c)
{
	int64_t s2 = 2 * c->s;
	if (c->e < c->s) {
		n->broken = true;
		return 0;
	}
	while (n->top > 0) {
		const struct sp_nest_call *p = &n->stack[n->top - 1];
		if (2 * p->e + (p->e == p->s) > s2)
			break;
		n->top--;
	}
	n->excl[c->row] += c->e - c->s;
	if (n->top) {
		const struct sp_nest_call *p = &n->stack[n->top - 1];
		if (c->e > p->e) {
			n->broken = true;
			return 0;
		}
		n->excl[p->row] -= c->e - c->s;
	}
	int ret = grow(&n->stack, &n->stack_cap, n->top + 1);
	if (!ret)
		n->stack[n->top++] = *c;
	return ret;
}

/* The commit's order within one start: end desc, then region position;
 * equal calls keep their entry order (insertion sort is stable). */
static bool before(const struct sp_nest *n, const struct sp_nest_call *a,
		   const struct sp_nest_call *b)
{
	if (a->e != b->e)
		return a->e > b->e;
	return n->pos[a->row] < n->pos[b->row];
}

static int flush_run(struct sp_nest *n)
{
	struct sp_nest_call *r = n->run;
	for (size_t i = 1; i < n->nrun; i++) {
		struct sp_nest_call x = r[i];
		size_t j = i;
		for (; j > 0 && before(n, &x, &r[j - 1]); j--)
			r[j] = r[j - 1];
		r[j] = x;
	}
	int ret = 0;
	for (size_t i = 0; !ret && !n->broken && i < n->nrun; i++)
		ret = nest_one(n, &r[i]);
	n->nrun = 0;
	return ret;
}

int sp_nest_add(struct sp_nest *n, int64_t s, int64_t e, uint32_t row)
{
	if (n->broken || n->disorder)
		return 0;
	if (n->nrun && s != n->run[0].s) {
		if (s < n->run[0].s) {
			n->disorder = true; /* not start order: the commit nests instead */
			return 0;
		}
		int ret = flush_run(n);
		if (ret)
			return ret;
	}
	int ret = grow(&n->run, &n->run_cap, n->nrun + 1);
	if (!ret)
		n->run[n->nrun++] = (struct sp_nest_call){ s, e, row };
	return ret;
}

int sp_nest_lane_end(struct sp_nest *n)
{
	int ret = n->broken || n->disorder ? 0 : flush_run(n);
	n->nrun = 0;
	n->top = 0;
	return ret;
}

void sp_nest_free(struct sp_nest *n)
{
	free(n->excl);
	free(n->stack);
	free(n->run);
	memset(n, 0, sizeof *n);
}
