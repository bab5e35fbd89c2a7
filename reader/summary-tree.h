/* SPDX-License-Identifier: MIT */
/*
 * Internal interface between summary.c (ordering, public API),
 * summary-tree.c (folding call stacks into a call-path tree) and
 * summary-rows.c (the tree's rows).
 */
#ifndef SP_SUMMARY_TREE_H
#define SP_SUMMARY_TREE_H

#include "reader-internal.h"
#include "sp-map.h"

/* The tree (built in summary-tree.c, turned into rows in summary-rows.c). */
#define SUMMARY_NONE UINT32_MAX

struct node {
	uint32_t region, parent, first_child, next_sibling;
	bool recursive, any;
	uint64_t calls;
	int64_t total_outer, own, coverage;
	int64_t first_start, first_dur, last_end, last_dur;
	int64_t rank_total;
	uint32_t rank_mark;       /* 1 + index of the last rank seen */
	uint32_t last_region, last_child; /* child_of() cache (hot in loops) */
	uint32_t tail;            /* the last of its children, for appending */
	unsigned n_ranks, imb_n;
	double imb_sum, imb_max;
	int64_t dmin, dmax;       /* shortest, longest call */
	uint64_t dsum;            /* sum of the calls' durations, saturated */
	int64_t *dur;             /* durations of the node's calls, in order
				   * (only with spread) */
	size_t dur_n, dur_cap;    /* (merged tree: dur_n counts the parts') */
	struct dur_slice *parts;  /* merged tree: the ranks' dur, rank order */
	size_t n_parts, cap_parts;
};

/*
 * Sums of durations saturate at DSUM_EXACT: below it every partial sum of
 * the (non-negative) durations is an exact double, so the mean summed in
 * doubles call by call equals dsum / calls (node_row takes it so, without
 * a pass over the durations), and a tree without spread gives the same
 * averages.
 */
#define DSUM_EXACT ((uint64_t)1 << 53)

struct summary_tree {
	struct node *nodes;
	size_t n, cap;
	struct sp_map children;   /* (parent << 32 | region) + 1 -> node */
	uint32_t *touched;        /* nodes seen on the current rank */
	size_t n_touched, cap_touched;
	struct summary_tree **ranks; /* merged tree: per-rank trees (owned) */
	size_t n_ranks;
	bool spread;              /* durations kept: std and percentiles */
};

/*
 * Nest every selected rank; -SP_E_NESTING if some rank cannot be nested.
 * Without spread the calls' durations are not kept (rows get no std and
 * percentiles): memory O(call paths) instead of 8 bytes per call.
 */
int summary_tree_build(struct sp_reader *r, const struct sp_selection *sel,
		       bool spread, struct summary_tree **ret);
/* Can rows of a tree without spread have the averages a tree with spread
 * gives (every node's sum of durations below 2^53 ns)? */
bool summary_tree_exact(const struct summary_tree *t);
/* Append the rows of the tree to s (depth-first, siblings sorted). */
int summary_tree_rows(struct summary_tree *t, struct sp_reader *r,
		      const struct sp_selection *sel, enum sp_sort_key sort,
		      struct sp_summary *s);
void summary_tree_destroy(struct summary_tree *t);

/*
 * Exclusive ns of the rows of one rank from a walk over all regions that
 * summed each call's exclusive ns into sums[row] (the tree's walk is the
 * exclusive-time walk too): written as reader_compute_exclusive would
 * (exclusive.c).
 */
void exclusive_from_sums(struct sp_reader *r, const size_t *rows, size_t n,
			 const int64_t *sums);

/* From summary.c */
struct sp_summary_row *summary_add_row(struct sp_summary *s);
void summary_set_session(struct sp_summary *s, bool has_session);
int summary_row_cmp(const struct sp_summary_row *a,
		    const struct sp_summary_row *b, enum sp_sort_key key);

#endif /* SP_SUMMARY_TREE_H */
