/* SPDX-License-Identifier: MIT */
/*
 * Internal interface between summary.c (rows, ordering, public API) and
 * summary-tree.c (folding call stacks into a call-path tree).
 */
#ifndef SP_SUMMARY_TREE_H
#define SP_SUMMARY_TREE_H

#include "reader-internal.h"

struct summary_tree;

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
