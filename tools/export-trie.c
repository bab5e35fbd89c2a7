/* SPDX-License-Identifier: MIT */
/*
 * Call-path trie shared by export folded and plot-data flame_graph: nodes
 * in an array, a small open-addressing hash from (parent, region) to the
 * child, and the accumulation of one rank's reconstructed calls.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export-trie.h"

static uint64_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

static int hash_grow(struct ex_trie *t)
{
	size_t cap = t->hcap ? 2 * t->hcap : 1024;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	uint32_t *vals = malloc(cap * sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->hcap; i++) {
		size_t h;

		if (!t->keys[i])
			continue;
		for (h = hash64(t->keys[i]) & (cap - 1); keys[h]; h = (h + 1) & (cap - 1))
			;
		keys[h] = t->keys[i];
		vals[h] = t->vals[i];
	}
	free(t->keys);
	free(t->vals);
	t->keys = keys;
	t->vals = vals;
	t->hcap = cap;
	return 0;
}

/* Append a node under parent. Its index, or EX_NO_NODE on ENOMEM. */
static uint32_t add_node(struct ex_trie *t, uint32_t parent, uint32_t region,
			 const char *label)
{
	struct ex_node *nd;

	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct ex_node *p = realloc(t->nodes, cap * sizeof(*p));

		if (!p || cap >= EX_NO_NODE)
			return EX_NO_NODE;
		t->nodes = p;
		t->cap = cap;
	}
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
	free(t->keys);
	free(t->vals);
	memset(t, 0, sizeof(*t));
}

uint32_t ex_trie_child(struct ex_trie *t, uint32_t parent, uint32_t region)
{
	uint64_t key = ((uint64_t)parent << 32 | region) + 1;
	size_t h;

	if ((t->n + 1) * 2 > t->hcap && hash_grow(t) < 0)
		return EX_NO_NODE;
	for (h = hash64(key) & (t->hcap - 1); t->keys[h]; h = (h + 1) & (t->hcap - 1))
		if (t->keys[h] == key)
			return t->vals[h];
	if (add_node(t, parent, region, NULL) == EX_NO_NODE)
		return EX_NO_NODE;
	t->keys[h] = key;
	t->vals[h] = (uint32_t)(t->n - 1);
	return t->vals[h];
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
