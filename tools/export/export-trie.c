/* SPDX-License-Identifier: MIT */
/*
 * Call-path trie shared by export folded and plot-data flame_graph: nodes
 * in an array, a map (struct sp_map) from (parent, region) to the child,
 * and the accumulation of one rank's reconstructed calls.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export-trie.h"
#include "sp-array.h"

/* Append a node under parent. Its index, or EX_NO_NODE on ENOMEM. */
static uint32_t add_node(struct ex_trie *t, uint32_t parent, uint32_t region,
			 const char *label)
{
	struct ex_node *nd;

	if (t->n + 1 >= EX_NO_NODE || SP_ARRAY_RESERVE(t->nodes, t->cap, t->n + 1, 256) < 0)
		return EX_NO_NODE;
	nd = &t->nodes[t->n];
	memset(nd, 0, sizeof(*nd));
	nd->parent = parent;
	nd->region = region;
	nd->first_child = nd->last_child = nd->next_sibling = EX_NO_NODE;
	if (label && !(nd->label = strdup(label)))
		return EX_NO_NODE;
	if (parent != EX_NO_NODE) {
		struct ex_node *pa = &t->nodes[parent];

		if (pa->last_child == EX_NO_NODE)
			pa->first_child = (uint32_t)t->n;
		else
			t->nodes[pa->last_child].next_sibling = (uint32_t)t->n;
		pa->last_child = (uint32_t)t->n;
	}
	return (uint32_t)t->n++;
}

int ex_trie_init(struct ex_trie *t)
{
	memset(t, 0, sizeof(*t));
	return add_node(t, EX_NO_NODE, EX_LABEL, NULL) == EX_NO_NODE ? -ENOMEM : 0;
}

void ex_trie_free(struct ex_trie *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->nodes[i].label);
	free(t->nodes);
	sp_map_free(&t->children);
	memset(t, 0, sizeof(*t));
}

uint32_t ex_trie_child(struct ex_trie *t, uint32_t parent, uint32_t region)
{
	uint64_t key = ((uint64_t)parent << 32 | region) + 1;
	const uint32_t *found = sp_map_find(&t->children, key);

	if (found)
		return *found;
	/* Room first, so a failure leaves no node without its entry. */
	if (sp_map_reserve(&t->children, t->children.n + 1) < 0)
		return EX_NO_NODE;
	uint32_t node = add_node(t, parent, region, NULL);
	if (node == EX_NO_NODE || sp_map_put(&t->children, key, node) < 0)
		return EX_NO_NODE;
	return node;
}

uint32_t ex_trie_label(struct ex_trie *t, uint32_t parent, const char *label)
{
	for (uint32_t c = t->nodes[parent].first_child; c != EX_NO_NODE;
	     c = t->nodes[c].next_sibling)
		if (t->nodes[c].label && strcmp(t->nodes[c].label, label) == 0)
			return c;
	return add_node(t, parent, EX_LABEL, label);
}

uint32_t ex_trie_next(const struct ex_trie *t, uint32_t node)
{
	if (t->nodes[node].first_child != EX_NO_NODE)
		return t->nodes[node].first_child;
	while (node != 0 && t->nodes[node].next_sibling == EX_NO_NODE)
		node = t->nodes[node].parent;
	return node == 0 ? EX_NO_NODE : t->nodes[node].next_sibling;
}

int ex_trie_depth(const struct ex_trie *t, uint32_t node)
{
	int d = -1;

	for (; node != 0; node = t->nodes[node].parent)
		if (!t->nodes[node].label)
			d++;
	return d;
}

/* Kept calls: pass the filter and have a kept parent (pre-order stack). */
int ex_trie_add_rank(struct export_ctx *x, struct export_file *f,
		     struct ex_trie *t, uint32_t rank, ex_root_fn root,
		     void *arg)
{
	struct sp_call_stack *st;
	int rc = sp_call_stack_build(f->r, rank, INT64_MIN, x->c.sel, &st);
	uint32_t *node_of;
	size_t n;

	if (rc < 0)
		return ex_reader_error(x, f, rc);
	n = sp_call_stack_count(st);
	node_of = malloc((n ? n : 1) * sizeof(*node_of));
	for (size_t i = 0; node_of && i < n; i++) {
		struct sp_call c;
		uint32_t parent;
		int64_t s, e;

		sp_call_stack_get(st, i, &c);
		node_of[i] = EX_NO_NODE;
		if (!ex_keep(x, f, c.start_ns, c.end_ns) ||
		    (c.parent >= 0 && node_of[c.parent] == EX_NO_NODE))
			continue;
		parent = c.parent >= 0 ? node_of[c.parent] : root(arg, t, rank, c.lane);
		if (parent == EX_NO_NODE ||
		    (node_of[i] = ex_trie_child(t, parent, c.region)) == EX_NO_NODE) {
			free(node_of);
			node_of = NULL;
			break;
		}
		s = c.start_ns;
		e = c.end_ns;
		ex_clip(f, &s, &e);
		t->nodes[node_of[i]].incl += e - s;
		t->nodes[node_of[i]].excl += e - s;
		t->nodes[node_of[i]].calls++;
		if (c.parent >= 0)
			t->nodes[parent].excl -= e - s;
	}
	sp_call_stack_destroy(st);
	if (!node_of)
		return ex_reader_error(x, f, -ENOMEM);
	free(node_of);
	return 0;
}
