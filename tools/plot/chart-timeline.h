/* SPDX-License-Identifier: MIT */
/*
 * Between chart-timeline.c (the timeline's calls, lanes and bars) and
 * chart-timeline-agg.c (their per-pixel aggregation).
 */
#ifndef SP_CHART_TIMELINE_H
#define SP_CHART_TIMELINE_H

#include <errno.h>

#include "charts.h"

struct tl_call {
	int64_t thread;
	int32_t depth;
	uint32_t region;
	int64_t s, e;
};

/* The stack's calls are not in the shape add_rank_walk needs. */
#define NOT_IN_ORDER (-ERANGE)

/*
 * The previous rank's lane when it was its only one: ranks of one run nest
 * alike, so the next rank is binned in one walk with that depth taken on
 * trust (try_guess), and the first walk is needed only when it was wrong.
 */
struct lane_guess {
	bool valid;
	int32_t max;
};

/* Append bar b to t (cap: the bars' capacity). 0 or -ENOMEM. */
int timeline_push_bar(struct timeline *t, size_t *cap, struct tl_bar b);

/* Aggregate the calls (sorted by depth, start) of one lane per pixel into
 * rows bars of t. 0 or -ENOMEM. */
int aggregate_lane(struct timeline *t, size_t *cap, const struct tl_call *c,
		   size_t n, int32_t rows, double width);

/*
 * The aggregated lanes of one rank from walks over its calls (g: the
 * previous rank's depth, updated). 0; NOT_IN_ORDER (nothing added) when
 * the calls are not in the needed shape or a lane is too deep;
 * -SP_E_NESTING, -ENOENT as the walk; -ENOMEM.
 */
int add_rank_walk(struct timeline *t, size_t *cap, const struct sp_reader *r,
		  uint32_t rank, const struct sp_selection *sel, double width,
		  struct lane_guess *g);

#endif /* SP_CHART_TIMELINE_H */
