/* SPDX-License-Identifier: MIT */
/*
 * A read spill file as a snapshot: the complete calls grouped by region
 * name, each row in start order, ticks converted with the file's clock
 * pairs, so `scope-profiler recover` writes it like any finalize would.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spill-read.h"

struct item {
	uint32_t name, thread;
	uint64_t seq;
	int64_t start, end;
};

static int cmp_item(const void *pa, const void *pb)
{
	const struct item *a = pa, *b = pb;
	if (a->name != b->name)
		return a->name < b->name ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Name of region id: its own, else the namer's (with the definition's
 * file and line), else module+0xoffset. */
static char *region_name(const struct sp_spill_data *d, uint32_t id, sp_spill_namer namer,
			 void *ctx, const char **ret_file, int64_t *ret_line)
{
	const struct sp_spill_rdata *r = &d->regions[id];
	if (r->name)
		return strdup(r->name);
	const struct sp_spill_mdata *m = NULL;
	for (uint32_t i = 0; r->module >= 0 && i < d->nmodules; i++)
		if (d->modules[i].index == r->module)
			m = &d->modules[i];
	char *s = namer ? namer(m, r->addr, ctx, ret_file, ret_line) : NULL;
	if (s)
		return s;
	if (m) {
		const char *base = strrchr(m->path, '/');
		if (asprintf(&s, "%s+0x%" PRIx64, base ? base + 1 : m->path, r->addr - m->bias) < 0)
			s = NULL;
	} else if (asprintf(&s, "0x%" PRIx64, r->addr) < 0) {
		s = NULL;
	}
	return s;
}

static int cmp_str_id(const void *pa, const void *pb, void *ctx)
{
	char **names = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	int c = strcmp(names[a], names[b]);
	return c ? c : (a < b ? -1 : a > b);
}

/* Where a name's function is defined (from the namer), by name index. */
struct source {
	const char **file;
	int64_t *line;
};

/* Region id -> unique name index (first-seen order by id). */
static int build_names(struct sp_snapshot *s, const struct sp_spill_data *d, sp_spill_namer namer,
		       void *ctx, uint32_t *map, struct source *src)
{
	uint32_t R = d->nregions;
	const char **file = calloc(R + 1, sizeof *file);
	int64_t *line = malloc((R + 1) * sizeof *line);
	src->file = calloc(R + 1, sizeof *src->file);
	src->line = malloc((R + 1) * sizeof *src->line);
	if (!file || !line || !src->file || !src->line) {
		free(file);
		free(line);
		return -ENOMEM;
	}
	char **raw = calloc(R + 1, sizeof *raw);
	uint32_t *ord = calloc(R + 1, sizeof *ord), n = 0;
	s->names = calloc(R + 1, sizeof *s->names);
	s->kinds = calloc(R + 1, sizeof *s->kinds);
	int ret = raw && ord && s->names && s->kinds ? 0 : -ENOMEM;
	for (uint32_t id = 0; !ret && id < R; id++) {
		map[id] = UINT32_MAX;
		if (!d->regions[id].present)
			continue;
		line[id] = -1;
		if (!(raw[id] = region_name(d, id, namer, ctx, &file[id], &line[id])))
			ret = -ENOMEM;
		ord[n++] = id;
	}
	if (!ret) {
		qsort_r(ord, n, sizeof *ord, cmp_str_id, raw);
		/* The smallest id of each name group gets the name; ids in order. */
		uint32_t *first = calloc(R + 1, sizeof *first);
		if (!first)
			ret = -ENOMEM;
		for (uint32_t i = 0; !ret && i < n; i++)
			first[ord[i]] = (i && strcmp(raw[ord[i]], raw[ord[i - 1]]) == 0)
						? first[ord[i - 1]] : ord[i];
		for (uint32_t id = 0; !ret && id < R; id++) {
			if (!d->regions[id].present)
				continue;
			if (first[id] == id) {
				src->file[s->nnames] = file[id];
				src->line[s->nnames] = line[id];
				map[id] = s->nnames;
				s->kinds[s->nnames] = (uint8_t)d->regions[id].kind;
				s->names[s->nnames++] = raw[id];
				raw[id] = NULL;
			} else {
				map[id] = map[first[id]];
			}
		}
		free(first);
	}
	for (uint32_t id = 0; raw && id < R; id++)
		free(raw[id]);
	free(raw);
	free(ord);
	free(file);
	free(line);
	return ret;
}

static int collect(const struct sp_spill_data *d, const uint32_t *map, struct item **ret_items,
		   uint64_t *ret_n, uint64_t *ret_unclosed)
{
	uint64_t total = 0, n = 0, unclosed = 0;
	for (uint32_t i = 0; i < d->nthreads; i++)
		total += d->threads[i].n;
	struct item *v = malloc((total + 1) * sizeof *v);
	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < d->nthreads; i++) {
		const struct sp_spill_tdata *t = &d->threads[i];
		for (uint64_t q = 0; q < t->n; q++) {
			const struct sp_spill_event *e = &t->ev[q];
			if (e->region >= d->nregions || map[e->region] == UINT32_MAX)
				continue; /* deleted (MIN_DURATION) or never written */
			if (e->end == SP_SPILL_OPEN || e->end < e->start) {
				unclosed++;
				continue;
			}
			v[n++] = (struct item){ map[e->region], t->index, q, sp_spill_ns(d, e->start),
						sp_spill_ns(d, e->end) };
		}
	}
	*ret_items = v;
	*ret_n = n;
	*ret_unclosed = unclosed;
	return 0;
}

static int build_rows(struct sp_snapshot *s, const struct sp_spill_data *d, const uint32_t *map,
		      const struct item *v, uint64_t n, const struct source *src)
{
	uint64_t *count = calloc(s->nnames + 1, sizeof *count);
	uint64_t *dropped = calloc(s->nnames + 1, sizeof *dropped);
	s->rows = calloc(s->nnames + 1, sizeof *s->rows);
	s->start = malloc((n + 1) * sizeof *s->start);
	s->end = malloc((n + 1) * sizeof *s->end);
	s->thread = malloc((n + 1) * sizeof *s->thread);
	int ret = count && dropped && s->rows && s->start && s->end && s->thread ? 0 : -ENOMEM;
	for (uint64_t i = 0; !ret && i < n; i++) {
		count[v[i].name]++;
		s->start[i] = v[i].start;
		s->end[i] = v[i].end;
		s->thread[i] = v[i].thread;
	}
	for (uint32_t id = 0; !ret && id < d->nregions; id++)
		if (map[id] != UINT32_MAX)
			dropped[map[id]] += d->regions[id].dropped;
	uint64_t off = 0;
	for (uint32_t k = 0; !ret && k < s->nnames; k++) {
		if (!count[k] && !dropped[k])
			continue;
		struct sp_snap_row *row = &s->rows[s->nrows++];
		*row = (struct sp_snap_row){ .region = k, .offset = off, .count = count[k],
					     .dropped = dropped[k], .source_line = src->line[k],
					     .source_file = src->file[k] };
		sp_summary_compute(&row->summary, s->start + off, s->end + off, count[k]);
		off += count[k];
	}
	s->nevents = n;
	s->nmem = n;
	free(count);
	free(dropped);
	return ret;
}

int sp_spill_to_snapshot(const struct sp_spill_data *d, sp_spill_namer namer, void *ctx,
			 struct sp_snapshot *ret_snap, uint64_t *ret_unclosed)
{
	struct sp_snapshot *s = ret_snap;
	memset(s, 0, sizeof *s);
	uint32_t *map = calloc(d->nregions + 1, sizeof *map);
	struct item *v = NULL;
	uint64_t n = 0;
	struct source src = { 0 };
	int ret = map ? build_names(s, d, namer, ctx, map, &src) : -ENOMEM;
	if (!ret)
		ret = collect(d, map, &v, &n, ret_unclosed);
	if (!ret) {
		qsort(v, n, sizeof *v, cmp_item);
		ret = build_rows(s, d, map, v, n, &src);
	}
	if (!ret) {
		s->threads = calloc(d->nthreads + 1, sizeof *s->threads);
		uint8_t *seen = calloc(d->nthreads + 1, 1);
		if (!s->threads || !seen)
			ret = -ENOMEM;
		for (uint32_t i = 0; !ret && i < d->nthreads; i++) {
			const struct sp_spill_tdata *t = &d->threads[i];
			s->threads[s->nthreads++] = (struct sp_snap_thread){
				.index = t->index, .ident = t->has_info ? t->info.ident : 0,
				.native_id = t->has_info ? t->info.native_id : 0,
				.start_ns = t->has_info ? t->info.start_ns : d->hdr.start_ns,
				.end_ns = t->has_info && t->info.end_ns ? t->info.end_ns : d->last_ns };
			for (uint64_t e = 0; e < n && !seen[i]; e++)
				seen[i] = v[e].thread == t->index;
			s->threads_with_events += seen[i];
		}
		free(seen);
		s->dropped = d->dropped;
		s->first_start_ns = INT64_MAX;
		for (uint64_t i = 0; i < n; i++)
			if (s->start[i] < s->first_start_ns)
				s->first_start_ns = s->start[i];
	}
	free(map);
	free(v);
	free(src.file);
	free(src.line);
	if (ret)
		sp_snapshot_free(s);
	return ret;
}
