/* SPDX-License-Identifier: MIT */
/*
 * export folded: folded stacks ("rank 0;main;solve 1234") for flamegraph.pl,
 * inferno and speedscope. One line per distinct call path with its
 * exclusive time in nanoseconds, summed over calls; the path starts with a
 * "rank N" frame (and a thread frame with lanes) unless --merge-ranks.
 * Calls come from each rank's reconstructed stack; a call dropped by
 * --min-duration or the window takes its descendants with it, and its time
 * stays with its parent.
 */
#include <inttypes.h>
#include <string.h>

#include "export-trie.h"

struct root_ctx {
	struct export_ctx *x;
	struct export_file *f;
};

/* "rank N" (unless merged), then the thread frame when there are lanes. */
static uint32_t lane_root(void *arg, struct ex_trie *t, uint32_t rank,
			  int64_t lane)
{
	struct root_ctx *c = arg;
	const char *tname;
	char buf[160];
	uint32_t root = 0;

	if (!c->x->merge_ranks) {
		snprintf(buf, sizeof(buf), "rank %" PRIu32, rank);
		root = ex_trie_label(t, root, buf);
	}
	if (root == EX_NO_NODE || !ex_has_lanes(c->f))
		return root;
	tname = ex_thread_name(c->f, rank, lane);
	if (tname)
		snprintf(buf, sizeof(buf), "%s", tname);
	else
		snprintf(buf, sizeof(buf), "thread %" PRId64, lane);
	return ex_trie_label(t, root, buf);
}

/* A frame name without the separators of the format. */
static void put_frame(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' ? ':' : (*s == '\n' || *s == '\r') ? ' ' : *s, out);
}

static void put_path(FILE *out, struct export_file *f, const struct ex_trie *t,
		     uint32_t node)
{
	const struct ex_node *nd = &t->nodes[node];

	if (nd->parent != 0) {
		put_path(out, f, t, nd->parent);
		fputc(';', out);
	}
	put_frame(out, nd->label ? nd->label : sp_reader_region_name(f->r, nd->region));
}

int export_folded_write(struct export_ctx *x, struct export_file *f, FILE *out)
{
	struct root_ctx rc_ = { x, f };
	struct ex_trie t;
	const uint32_t *ranks;
	size_t n_ranks = sp_reader_ranks(f->r, &ranks);
	int rc = 0;

	if (ex_trie_init(&t) < 0)
		return ex_reader_error(x, f, -ENOMEM);
	for (size_t k = 0; k < n_ranks && rc == 0; k++)
		if (sp_selection_match_rank(x->c.sel, ranks[k]))
			rc = ex_trie_add_rank(x, f, &t, ranks[k], lane_root, &rc_);
	for (uint32_t nd = ex_trie_next(&t, 0); rc == 0 && nd != EX_NO_NODE;
	     nd = ex_trie_next(&t, nd)) {
		if (t.nodes[nd].excl <= 0)
			continue;
		put_path(out, f, &t, nd);
		fprintf(out, " %" PRId64 "\n", t.nodes[nd].excl);
	}
	ex_trie_free(&t);
	return rc;
}
