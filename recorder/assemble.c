/* SPDX-License-Identifier: MIT */
/*
 * Multi-rank write of snapshots: a name table unified over the ranks (one
 * hash), rows and events rank after rank (the MPI values of MPI rows only,
 * row layout), the thread table when any rank ran several threads, then
 * the given metadata.
 */
#define _GNU_SOURCE
#include "assemble.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "metadata.h"
#include "writer.h"

struct names {
	char **v;
	uint32_t n, cap;
	uint32_t *slots;
	size_t nslots;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int names_add(struct names *t, const char *name, uint32_t *ret_id)
{
	if (2 * ((size_t)t->n + 1) > t->nslots) {
		size_t ns = t->nslots ? t->nslots * 2 : 256;
		uint32_t *sl = malloc(ns * sizeof *sl);
		if (!sl)
			return -ENOMEM;
		memset(sl, 0xff, ns * sizeof *sl);
		for (uint32_t i = 0; i < t->n; i++) {
			size_t k = hash(t->v[i]) & (ns - 1);
			while (sl[k] != UINT32_MAX)
				k = (k + 1) & (ns - 1);
			sl[k] = i;
		}
		free(t->slots);
		t->slots = sl;
		t->nslots = ns;
	}
	size_t k = hash(name) & (t->nslots - 1);
	while (t->slots[k] != UINT32_MAX && strcmp(t->v[t->slots[k]], name) != 0)
		k = (k + 1) & (t->nslots - 1);
	if (t->slots[k] == UINT32_MAX) {
		if (t->n == t->cap) {
			uint32_t cap = t->cap ? 2 * t->cap : 64;
			char **v = realloc(t->v, cap * sizeof *v);
			if (!v)
				return -ENOMEM;
			t->v = v;
			t->cap = cap;
		}
		if (!(t->v[t->n] = strdup(name)))
			return -ENOMEM;
		t->slots[k] = t->n++;
	}
	*ret_id = t->slots[k];
	return 0;
}

static void names_free(struct names *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	free(t->slots);
}

/* The kind of each unified name: the first rank's that has a row of it.
 * NULL (no region_table/kinds) when a rank's snapshot has no kinds or
 * out of memory. */
static uint8_t *unified_kinds(const struct sp_asm_rank *ranks, size_t n, uint32_t *const *maps,
			      uint32_t nnames)
{
	uint8_t *k = malloc((size_t)nnames + 1);
	for (size_t r = 0; k && r < n; r++)
		if (!ranks[r].s->kinds) {
			free(k);
			return NULL;
		}
	if (k)
		memset(k, 0xff, (size_t)nnames + 1);
	for (size_t r = 0; k && r < n; r++) {
		const struct sp_snapshot *s = ranks[r].s;
		for (uint32_t i = 0; i < s->nrows; i++) {
			uint32_t g = maps[r][s->rows[i].region];
			if (k[g] == 0xff)
				k[g] = s->kinds[s->rows[i].region];
		}
	}
	return k;
}

static int to_meta(struct sp_meta *m, const struct sp_asm_meta *v, size_t n)
{
	int ret = 0;
	for (size_t i = 0; !ret && i < n; i++) {
		switch (v[i].type) {
		case SP_ASM_INT:
			ret = sp_meta_set_int(m, v[i].key, v[i].i);
			break;
		case SP_ASM_DOUBLE:
			ret = sp_meta_set_double(m, v[i].key, v[i].d);
			break;
		case SP_ASM_STR:
			ret = sp_meta_set_str(m, v[i].key, v[i].s ? v[i].s : "");
			break;
		case SP_ASM_STRLIST:
			ret = sp_meta_set_strlist(m, v[i].key, v[i].list, v[i].n);
			break;
		}
	}
	return ret;
}

/* The rank's MPI offsets lie inside its nmpi values. */
static bool mpi_offsets_ok(const struct sp_asm_rank *r)
{
	for (uint32_t i = 0; r->mpi_offsets && i < r->s->nrows; i++) {
		int64_t o = r->mpi_offsets[i];
		if (o < -1 || (o >= 0 && ((uint64_t)o > r->nmpi ||
					  r->s->rows[i].count > r->nmpi - (uint64_t)o)))
			return false;
	}
	return r->mpi_offsets || r->nmpi == 0;
}

/* Rows, events, MPI values and threads of one rank at the running positions. */
static int put_rank(struct sp_writer *w, unsigned cols, const struct sp_asm_rank *r,
		    const uint32_t *map, uint64_t row_at, uint64_t ev_at, uint64_t thr_at,
		    uint64_t mpi_at)
{
	const struct sp_snapshot *s = r->s;
	struct sp_writer_row *rows = calloc(s->nrows + 1, sizeof *rows);
	int64_t *tids = malloc((s->nevents + 1) * sizeof *tids);
	int ret = rows && tids ? 0 : -ENOMEM;
	for (uint32_t i = 0; !ret && i < s->nrows; i++) {
		const struct sp_snap_row *row = &s->rows[i];
		int64_t mo = r->mpi_offsets ? r->mpi_offsets[i] : -1;
		rows[i] = (struct sp_writer_row){
			.region = map[row->region], .rank = r->rank, .offset = ev_at + row->offset,
			.count = row->count, .source_line = row->source_line,
			.source_file = row->source_file, .summary = row->summary,
			.dropped = row->dropped, .throttled_calls = row->throttled_calls,
			.throttled_ns = row->throttled_ns, .throttle_timed = row->throttle_timed,
			.throttled_ci_ns = row->throttled_ci_ns,
			.throttled_since_ns = row->throttled_since_ns,
			.patched_since_ns = row->patched_since_ns,
			.mpi_offset = mo < 0 ? -1 : (int64_t)mpi_at + mo };
	}
	if (!ret && s->nrows)
		ret = sp_writer_put_rows(w, row_at, s->nrows, rows);
	if (!ret && s->nevents) {
		for (uint64_t i = 0; i < s->nevents; i++)
			tids[i] = s->thread[i];
		struct sp_writer_events ev = { .start = s->start, .end = s->end, .thread_ids = tids };
		ret = sp_writer_put_events(w, ev_at, s->nevents, &ev);
	}
	if (!ret && (cols & SP_COL_MPI) && r->nmpi) {
		struct sp_writer_mpi m = { .bytes = r->mpi_bytes, .peers = r->mpi_peers,
			.roots = r->mpi_roots, .tags = r->mpi_tags, .comms = r->mpi_comms };
		ret = sp_writer_put_mpi(w, mpi_at, r->nmpi, &m);
	}
	if (!ret && (cols & SP_COL_THREAD_IDS) && s->nthreads) {
		struct sp_writer_thread *t = calloc(s->nthreads, sizeof *t);
		if (!t)
			ret = -ENOMEM;
		for (uint32_t i = 0; !ret && i < s->nthreads; i++)
			t[i] = (struct sp_writer_thread){ .rank = r->rank, .index = s->threads[i].index,
				.ident = s->threads[i].ident, .native_id = s->threads[i].native_id,
				.start_ns = s->threads[i].start_ns, .end_ns = s->threads[i].end_ns,
				.cpu_ns = -1 };
		if (!ret)
			ret = sp_writer_put_threads(w, thr_at, s->nthreads, t);
		free(t);
	}
	free(rows);
	free(tids);
	return ret;
}

int sp_assemble_write(const char *path, const struct sp_asm_rank *ranks, size_t n,
		      const struct sp_asm_meta *meta, size_t nmeta)
{
	struct names t = { 0 };
	uint32_t **maps = calloc(n + 1, sizeof *maps);
	struct sp_writer_layout layout = { 0 };
	uint64_t dropped = 0;
	int ret = maps ? 0 : -ENOMEM;
	for (size_t r = 0; !ret && r < n; r++) {
		const struct sp_snapshot *s = ranks[r].s;
		if (!(maps[r] = calloc(s->nnames + 1, sizeof *maps[r])))
			ret = -ENOMEM;
		/* Names of rows only: a rank's unused names do not enter the table. */
		for (uint32_t i = 0; !ret && i < s->nrows; i++)
			ret = names_add(&t, s->names[s->rows[i].region], &maps[r][s->rows[i].region]);
		layout.nrows += s->nrows;
		layout.nevents += s->nevents;
		layout.nthreads += s->nthreads;
		dropped += s->dropped;
		if (s->threads_with_events > 1)
			layout.columns |= SP_COL_THREAD_IDS;
		if (!mpi_offsets_ok(&ranks[r]))
			ret = -EINVAL;
		if (ranks[r].mpi_offsets)
			layout.columns |= SP_COL_MPI;
		layout.nmpi += ranks[r].nmpi;
		for (uint32_t i = 0; i < s->nrows; i++) {
			if (s->rows[i].dropped)
				layout.columns |= SP_COL_DROPPED;
			if (s->rows[i].throttled_calls)
				layout.columns |= SP_COL_THROTTLED;
		}
	}
	if (!(layout.columns & SP_COL_THREAD_IDS))
		layout.nthreads = 0;
	layout.nnames = t.n;
	layout.names = (const char *const *)t.v;
	uint8_t *kinds = ret ? NULL : unified_kinds(ranks, n, maps, t.n);
	layout.kinds = kinds;
	struct sp_meta m = { 0 };
	if (!ret)
		ret = to_meta(&m, meta, nmeta);
	if (!ret)
		ret = sp_meta_set_int(&m, SP_META_DROPPED, (int64_t)dropped);
	struct sp_writer *w = NULL;
	if (!ret)
		ret = sp_writer_create(path, &layout, &w);
	uint64_t row_at = 0, ev_at = 0, thr_at = 0, mpi_at = 0;
	for (size_t r = 0; !ret && r < n; r++) {
		ret = put_rank(w, layout.columns, &ranks[r], maps[r], row_at, ev_at, thr_at, mpi_at);
		row_at += ranks[r].s->nrows;
		ev_at += ranks[r].s->nevents;
		thr_at += ranks[r].s->nthreads;
		mpi_at += ranks[r].nmpi;
	}
	if (!ret)
		ret = sp_writer_put_metadata(w, &m);
	if (!ret) {
		ret = sp_writer_commit(w);
		w = NULL;
	}
	sp_writer_destroy(w);
	sp_meta_free(&m);
	for (size_t r = 0; maps && r < n; r++)
		free(maps[r]);
	free(maps);
	free(kinds);
	names_free(&t);
	return ret;
}
