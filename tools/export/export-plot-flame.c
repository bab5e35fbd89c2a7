/* SPDX-License-Identifier: MIT */
/*
 * plot-data flame_chart (every kept call of the reconstructed stack, on
 * the time axis) and flame_graph (calls aggregated per call path, frames
 * laid out contiguously from 0). Rank 0 (the lowest rank) by default, as
 * upstream's flame plots; --ranks picks others.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export-plot.h"
#include "export-trie.h"

bool pd_flame_rank(const struct export_ctx *x, const struct export_file *f,
		   uint32_t rank)
{
	const uint32_t *ranks;
	size_t n = sp_reader_ranks(f->r, &ranks);

	if (sp_selection_has_ranks(x->c.sel))
		return sp_selection_match_rank(x->c.sel, rank);
	return n > 0 && rank == ranks[0];
}

static const char *const chart_cols[] = {
	"file", "rank", "call_id", "parent_call_id", "region", "call_path",
	"source_file", "source_lineno", "depth", "start_seconds", "end_seconds",
	"inclusive_duration_seconds", "exclusive_duration_seconds",
};

/* Clipped bounds and exclusive ns of the kept calls (kept: excl >= 0 ... ). */
struct kept_calls {
	bool *kept;
	int64_t *s, *e, *excl;
};

static int keep_calls(struct export_ctx *x, struct export_file *f,
		      const struct sp_call_stack *st, size_t n,
		      struct kept_calls *k)
{
	k->kept = calloc(n ? n : 1, sizeof(*k->kept));
	k->s = malloc((n ? n : 1) * sizeof(int64_t));
	k->e = malloc((n ? n : 1) * sizeof(int64_t));
	k->excl = malloc((n ? n : 1) * sizeof(int64_t));
	if (!k->kept || !k->s || !k->e || !k->excl)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct sp_call c;

		sp_call_stack_get(st, i, &c);
		k->kept[i] = ex_keep(x, f, c.start_ns, c.end_ns) &&
			     (c.parent < 0 || k->kept[c.parent]);
		k->s[i] = c.start_ns;
		k->e[i] = c.end_ns;
		ex_clip(f, &k->s[i], &k->e[i]);
		k->excl[i] = k->e[i] - k->s[i];
		if (k->kept[i] && c.parent >= 0)
			k->excl[c.parent] -= k->e[i] - k->s[i];
	}
	return 0;
}

static void kept_free(struct kept_calls *k)
{
	free(k->kept);
	free(k->s);
	free(k->e);
	free(k->excl);
}

static void chart_row(struct pd_doc *d, struct export_file *f,
		      const struct sp_call *c, const char *path,
		      const struct kept_calls *k, size_t i)
{
	long row = sp_reader_row_find(f->r, c->region, c->rank);
	const struct sp_row *rw = row < 0 ? NULL : sp_reader_row(f->r, (size_t)row);

	pd_row(d);
	pd_str(d, f->label);
	pd_int(d, c->rank);
	pd_int(d, (long long)i);
	if (c->parent < 0)
		pd_null(d);
	else
		pd_int(d, c->parent);
	pd_str(d, sp_reader_region_name(f->r, c->region));
	pd_str(d, path);
	pd_str(d, rw ? rw->source_file : "");
	if (rw && rw->source_lineno >= 0)
		pd_int(d, rw->source_lineno);
	else
		pd_null(d);
	pd_int(d, c->depth);
	pd_sec(d, k->s[i] - f->origin_ns);
	pd_sec(d, k->e[i] - f->origin_ns);
	pd_sec(d, k->e[i] - k->s[i]);
	pd_sec(d, k->excl[i]);
}

static int chart_rank(struct export_ctx *x, struct export_file *f,
		      struct pd_doc *d, uint32_t rank)
{
	struct sp_call_stack *st;
	struct kept_calls k = { 0 };
	int rc = sp_call_stack_build(f->r, rank, INT64_MIN, x->c.sel, &st);
	size_t n, cap = 256;
	char *path = malloc(cap);

	if (rc < 0) {
		free(path);
		return ex_reader_error(x, f, rc);
	}
	n = sp_call_stack_count(st);
	rc = path ? keep_calls(x, f, st, n, &k) : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct sp_call c;
		int len;

		if (!k.kept[i])
			continue;
		sp_call_stack_get(st, i, &c);
		len = sp_call_stack_path(st, f->r, i, path, cap);
		if (len >= 0 && (size_t)len >= cap) {
			char *p = realloc(path, (size_t)len + 1);

			if (!p) {
				rc = -ENOMEM;
				break;
			}
			path = p;
			cap = (size_t)len + 1;
			sp_call_stack_path(st, f->r, i, path, cap);
		}
		chart_row(d, f, &c, path, &k, i);
	}
	kept_free(&k);
	free(path);
	sp_call_stack_destroy(st);
	return rc < 0 ? ex_reader_error(x, f, rc) : 0;
}

int pd_flame_chart(struct export_ctx *x, const struct sp_color_map *colors)
{
	struct pd_doc d;
	int rc = pd_open(x, &d, "flame_chart", "calls", chart_cols, 13, colors), crc;
	const uint32_t *ranks;

	if (rc)
		return rc;
	for (size_t i = 0; rc == 0 && i < x->n_files; i++) {
		size_t n = sp_reader_ranks(x->files[i].r, &ranks);

		for (size_t q = 0; rc == 0 && q < n; q++)
			if (pd_flame_rank(x, &x->files[i], ranks[q]))
				rc = chart_rank(x, &x->files[i], &d, ranks[q]);
	}
	crc = pd_close(&d, rc == 0);
	return rc ? rc : crc;
}

static uint32_t top_root(void *arg, struct ex_trie *t, uint32_t rank, int64_t lane)
{
	return 0;
}

/* " > "-joined names from the top frame to node. */
static void node_path(struct pd_doc *d, struct export_file *f,
		      const struct ex_trie *t, uint32_t node, char **buf,
		      size_t *cap)
{
	size_t len = 0;
	uint32_t chain[512];
	int depth = 0;

	for (uint32_t nd = node; nd != 0 && depth < 512; nd = t->nodes[nd].parent)
		chain[depth++] = nd;
	for (int i = depth - 1; i >= 0; i--) {
		const char *name = sp_reader_region_name(f->r, t->nodes[chain[i]].region);
		size_t need = len + strlen(name) + 4;

		if (need > *cap) {
			char *p = realloc(*buf, 2 * need);

			if (!p)
				break;
			*buf = p;
			*cap = 2 * need;
		}
		len += (size_t)sprintf(*buf + len, "%s%s", len ? " > " : "", name);
	}
	(*buf)[len] = '\0';
}

static void graph_rows(struct pd_doc *d, struct export_file *f, uint32_t rank,
		       const struct ex_trie *t, int64_t *pos, uint32_t *id)
{
	size_t cap = 256;
	char *buf = malloc(cap);
	uint32_t next_id = 0;

	for (uint32_t nd = ex_trie_next(t, 0); buf && nd != EX_NO_NODE;
	     nd = ex_trie_next(t, nd)) {
		const struct ex_node *n = &t->nodes[nd];
		int64_t start = pos[n->parent];

		pos[n->parent] += n->incl;
		pos[nd] = start;
		id[nd] = next_id++;
		node_path(d, f, t, nd, &buf, &cap);
		pd_row(d);
		pd_str(d, f->label);
		pd_int(d, rank);
		pd_int(d, id[nd]);
		if (n->parent == 0)
			pd_null(d);
		else
			pd_int(d, id[n->parent]);
		pd_str(d, sp_reader_region_name(f->r, n->region));
		pd_str(d, buf);
		pd_int(d, ex_trie_depth(t, nd));
		pd_sec(d, start);
		pd_sec(d, start + n->incl);
		pd_sec(d, n->incl);
		pd_sec(d, n->excl);
	}
	free(buf);
}

static int graph_rank(struct export_ctx *x, struct export_file *f,
		      struct pd_doc *d, uint32_t rank)
{
	struct ex_trie t;
	int64_t *pos;
	uint32_t *id;
	int rc;

	if (ex_trie_init(&t) < 0)
		return ex_reader_error(x, f, -ENOMEM);
	rc = ex_trie_add_rank(x, f, &t, rank, top_root, NULL);
	pos = calloc(t.n, sizeof(*pos));
	id = calloc(t.n, sizeof(*id));
	if (rc == 0 && (!pos || !id))
		rc = ex_reader_error(x, f, -ENOMEM);
	if (rc == 0)
		graph_rows(d, f, rank, &t, pos, id);
	free(pos);
	free(id);
	ex_trie_free(&t);
	return rc;
}

int pd_flame_graph(struct export_ctx *x, const struct sp_color_map *colors)
{
	static const char *const cols[] = {
		"file", "rank", "call_id", "parent_call_id", "region", "call_path",
		"depth", "start_seconds", "end_seconds",
		"inclusive_duration_seconds", "exclusive_duration_seconds",
	};
	struct pd_doc d;
	int rc = pd_open(x, &d, "flame_graph", "calls", cols, 11, colors), crc;
	const uint32_t *ranks;

	if (rc)
		return rc;
	for (size_t i = 0; rc == 0 && i < x->n_files; i++) {
		size_t n = sp_reader_ranks(x->files[i].r, &ranks);

		for (size_t q = 0; rc == 0 && q < n; q++)
			if (pd_flame_rank(x, &x->files[i], ranks[q]))
				rc = graph_rank(x, &x->files[i], &d, ranks[q]);
	}
	crc = pd_close(&d, rc == 0);
	return rc ? rc : crc;
}
