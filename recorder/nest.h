/* SPDX-License-Identifier: MIT */
/*
 * Exclusive ns per row from calls that stream past, lane (thread) by lane,
 * in start order: the same nesting as the commit's exclusive_totals pass
 * (writer-finish.c), with memory for the open calls only. Used by the
 * snapshot's stream into the file, so that the commit need not read every
 * event back.
 */
#ifndef SP_NEST_H
#define SP_NEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

struct sp_nest_call {
	int64_t s, e;
	uint32_t row;
};

struct sp_nest {
	int64_t *excl;              /* per row */
	uint32_t nrows;
	const uint32_t *pos;        /* region position per row (sp_writer_region_order) */
	bool broken;                /* calls do not nest: every row's result is -1 */
	bool disorder;              /* a lane was not in start order: no result */
	struct sp_nest_call *stack; /* the lane's open calls */
	size_t top, stack_cap;
	struct sp_nest_call *run;   /* calls with the current start, to sort */
	size_t nrun, run_cap;
};

/* Returns 0 or -ENOMEM. pos must outlive n. */
SP_HIDDEN int sp_nest_init(struct sp_nest *n, uint32_t nrows, const uint32_t *pos);
/* The next call of the current lane (start order). Returns 0 or -ENOMEM. */
SP_HIDDEN int sp_nest_add(struct sp_nest *n, int64_t s, int64_t e, uint32_t row);
/* The current lane is complete; the next call starts another. */
SP_HIDDEN int sp_nest_lane_end(struct sp_nest *n);
SP_HIDDEN void sp_nest_free(struct sp_nest *n);

#endif /* SP_NEST_H */
