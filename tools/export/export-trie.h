/* SPDX-License-Identifier: MIT */
/*
 * Call-path trie for the aggregated exports (folded stacks, flame graph):
 * one node per distinct path, children in first-seen order, with summed
 * inclusive/exclusive time and call counts of the kept calls.
 */
#ifndef SP_EXPORT_TRIE_H
#define SP_EXPORT_TRIE_H

#include "export.h"
#include "sp-map.h"

#define EX_NO_NODE UINT32_MAX
#define EX_LABEL UINT32_MAX   /* region of a labelled frame ("rank 3") */

struct ex_node {
	uint32_t parent, region;
	uint32_t first_child, last_child, next_sibling;
	int64_t incl, excl;       /* ns, summed over calls */
	uint64_t calls;
	char *label;              /* labelled frames only */
};

struct ex_trie {
	struct ex_node *nodes;    /* nodes[0] is the root */
	size_t n, cap;
	struct sp_map children;   /* (parent << 32 | region) + 1 -> node */
};

/* Root of the top calls of a lane (EX_NO_NODE on ENOMEM). */
typedef uint32_t (*ex_root_fn)(void *arg, struct ex_trie *t, uint32_t rank,
			       int64_t lane);

/* 0 or -ENOMEM. */
int ex_trie_init(struct ex_trie *t);
void ex_trie_free(struct ex_trie *t);
/* Child of parent for region / with label, created on first use. */
uint32_t ex_trie_child(struct ex_trie *t, uint32_t parent, uint32_t region);
uint32_t ex_trie_label(struct ex_trie *t, uint32_t parent, const char *label);
/* Pre-order successor of node (start with 0, the root); EX_NO_NODE at end. */
uint32_t ex_trie_next(const struct ex_trie *t, uint32_t node);
/* Depth of node counting region frames only (0 = a top region). */
int ex_trie_depth(const struct ex_trie *t, uint32_t node);

/*
 * Add the calls of one rank that pass --min-duration and the window (and
 * whose parent was kept), clipped to the window. A dropped call's time
 * stays in its parent's exclusive time. Returns 0 or EXIT_USAGE (reported).
 */
int ex_trie_add_rank(struct export_ctx *x, struct export_file *f,
		     struct ex_trie *t, uint32_t rank, ex_root_fn root,
		     void *arg);

#endif /* SP_EXPORT_TRIE_H */
