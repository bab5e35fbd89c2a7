/* SPDX-License-Identifier: MIT */
/*
 * Snapshot: turns the per-thread event chunks into the file's columnar
 * arrangement with a two-pass counting sort (count per region, then
 * scatter), so the cost is linear in the events. Regions that share a name
 * (a static function and a namesake elsewhere) become one row.
 */
#define _GNU_SOURCE
#include "snapshot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder.h"

/* Region id -> output name index, deduplicating names with a small hash. */
static int build_names(struct sp_snapshot *s, uint32_t nreg, uint32_t *map)
{
	size_t cap = 64;
	while (cap < 2 * (size_t)nreg)
		cap *= 2;
	uint32_t *slots = malloc(cap * sizeof *slots);
	s->names = calloc(nreg ? nreg : 1, sizeof *s->names);
	if (!slots || !s->names) {
		free(slots);
		return -ENOMEM;
	}
	memset(slots, 0xff, cap * sizeof *slots);
	for (uint32_t id = 0; id < nreg; id++) {
		struct sp_region *r = sp_region_get(id);
		char buf[64];
		const char *name = r->name;
		if (!name) {
			snprintf(buf, sizeof buf, "0x%jx", (uintmax_t)r->addr);
			name = buf;
		}
		uint64_t h = 1469598103934665603ull;
		for (const char *p = name; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ull;
		size_t i = h & (cap - 1);
		while (slots[i] != UINT32_MAX && strcmp(s->names[slots[i]], name) != 0)
			i = (i + 1) & (cap - 1);
		if (slots[i] == UINT32_MAX) {
			slots[i] = s->nnames;
			s->names[s->nnames] = strdup(name);
			if (!s->names[s->nnames]) {
				free(slots);
				return -ENOMEM;
			}
			s->nnames++;
		}
		map[id] = slots[i];
	}
	free(slots);
	return 0;
}

/* Threads in index order (the global list is newest first). */
static struct sp_thread **threads_by_index(uint32_t *ret_n)
{
	uint32_t n = sp_thread_count();
	struct sp_thread **v = calloc(n ? n : 1, sizeof *v);
	if (!v)
		return NULL;
	for (struct sp_thread *t = sp_thread_first(); t; t = t->next)
		if (t->index < n)
			v[t->index] = t;
	*ret_n = n;
	return v;
}

static bool event_complete(const struct sp_event *e, uint32_t nreg)
{
	return e->region < nreg && e->end != SP_OPEN;
}

static int cmp_slot(const void *pa, const void *pb, void *ctx)
{
	const struct sp_snapshot *s = ctx;
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	if (s->start[a] != s->start[b])
		return s->start[a] < s->start[b] ? -1 : 1;
	if (s->thread[a] != s->thread[b])
		return s->thread[a] < s->thread[b] ? -1 : 1;
	return a < b ? -1 : a > b; /* same thread: keep entry order */
}

/* Put a row's events from several threads into start order. */
static int sort_row(struct sp_snapshot *s, const struct sp_snap_row *row)
{
	uint64_t n = row->count, o = row->offset;
	uint64_t *perm = malloc(n * sizeof *perm);
	int64_t *tmp = malloc(n * sizeof *tmp);
	uint32_t *tmp32 = malloc(n * sizeof *tmp32);
	if (!perm || !tmp || !tmp32) {
		free(perm);
		free(tmp);
		free(tmp32);
		return -ENOMEM;
	}
	for (uint64_t i = 0; i < n; i++)
		perm[i] = o + i;
	qsort_r(perm, n, sizeof *perm, cmp_slot, s);
#define PERMUTE(arr, buf)                         \
	do {                                      \
		for (uint64_t i = 0; i < n; i++)  \
			buf[i] = arr[perm[i]];    \
		memcpy(arr + o, buf, n * sizeof *buf); \
	} while (0)
	PERMUTE(s->start, tmp);
	PERMUTE(s->end, tmp);
	PERMUTE(s->thread, tmp32);
	if (s->aux)
		PERMUTE(s->aux, tmp32);
#undef PERMUTE
	free(perm);
	free(tmp);
	free(tmp32);
	return 0;
}

/* Pass 1: events per output name, and which names saw several threads. */
static void count_events(struct sp_thread **th, uint32_t nth, uint32_t nreg, const uint32_t *map,
			 uint64_t *count, uint32_t *last_thread, uint8_t *multi, bool *any_aux)
{
	for (uint32_t ti = 0; ti < nth; ti++) {
		if (!th[ti])
			continue;
		const struct sp_chunk *cur = NULL;
		const struct sp_event *ev;
		size_t n;
		while ((n = sp_thread_next_chunk(th[ti], &cur, &ev)) > 0) {
			for (size_t i = 0; i < n; i++) {
				if (!event_complete(&ev[i], nreg))
					continue;
				uint32_t k = map[ev[i].region];
				if (count[k]++ && last_thread[k] != ti)
					multi[k] = 1;
				last_thread[k] = ti;
				*any_aux |= ev[i].aux != 0;
			}
		}
	}
}

static int alloc_columns(struct sp_snapshot *s, bool any_aux)
{
	size_t n = s->nevents ? s->nevents : 1;
	s->start = malloc(n * sizeof *s->start);
	s->end = malloc(n * sizeof *s->end);
	s->thread = malloc(n * sizeof *s->thread);
	s->aux = any_aux ? malloc(n * sizeof *s->aux) : NULL;
	return s->start && s->end && s->thread && (!any_aux || s->aux) ? 0 : -ENOMEM;
}

/* Pass 2: scatter events into their rows, converting ticks to ns. */
static void scatter(struct sp_snapshot *s, struct sp_thread **th, uint32_t nth, uint32_t nreg,
		    const uint32_t *map, uint64_t *fill, const struct sp_clock_map *cm)
{
	s->first_start_ns = INT64_MAX;
	for (uint32_t ti = 0; ti < nth; ti++) {
		if (!th[ti])
			continue;
		const struct sp_chunk *cur = NULL;
		const struct sp_event *ev;
		size_t n;
		while ((n = sp_thread_next_chunk(th[ti], &cur, &ev)) > 0) {
			for (size_t i = 0; i < n; i++) {
				if (!event_complete(&ev[i], nreg))
					continue;
				uint64_t at = fill[map[ev[i].region]]++;
				s->start[at] = sp_clock_to_ns(cm, ev[i].start);
				s->end[at] = sp_clock_to_ns(cm, ev[i].end);
				s->thread[at] = ti;
				if (s->aux)
					s->aux[at] = ev[i].aux;
				if (s->start[at] < s->first_start_ns)
					s->first_start_ns = s->start[at];
			}
		}
	}
}

static int build_rows(struct sp_snapshot *s, uint32_t nreg, const uint32_t *map,
		      const uint64_t *count, uint64_t *fill)
{
	uint64_t *dropped = calloc(s->nnames + 1, sizeof *dropped);
	uint64_t *thr_calls = calloc(s->nnames + 1, sizeof *thr_calls);
	int64_t *thr_ns = calloc(s->nnames + 1, sizeof *thr_ns);
	const struct sp_region **src = calloc(s->nnames + 1, sizeof *src);
	s->rows = calloc(s->nnames + 1, sizeof *s->rows);
	int ret = (dropped && thr_calls && thr_ns && src && s->rows) ? 0 : -ENOMEM;
	if (ret)
		goto out;
	for (uint32_t id = 0; id < nreg; id++) {
		const struct sp_region *r = sp_region_get(id);
		uint32_t k = map[id];
		dropped[k] += atomic_load(&r->dropped);
		thr_calls[k] += atomic_load(&r->throttled_calls);
		thr_ns[k] += atomic_load(&r->throttled_ns);
		if (!src[k] || (!src[k]->source_file && r->source_file))
			src[k] = r;
	}
	uint64_t off = 0;
	for (uint32_t k = 0; k < s->nnames; k++) {
		fill[k] = off;
		if (!count[k] && !dropped[k] && !thr_calls[k])
			continue;
		struct sp_snap_row *row = &s->rows[s->nrows++];
		row->region = k;
		row->offset = off;
		row->count = count[k];
		row->dropped = dropped[k];
		row->throttled_calls = thr_calls[k];
		row->throttled_ns = thr_ns[k];
		row->source_file = src[k] ? src[k]->source_file : NULL;
		row->source_line = src[k] ? src[k]->source_line : -1;
		off += count[k];
	}
out:
	free(dropped);
	free(thr_calls);
	free(thr_ns);
	free(src);
	return ret;
}

static void take_threads(struct sp_snapshot *s, struct sp_thread **th, uint32_t nth)
{
	s->threads = calloc(nth ? nth : 1, sizeof *s->threads);
	if (!s->threads)
		return;
	for (uint32_t i = 0; i < nth; i++) {
		if (!th[i])
			continue;
		struct sp_snap_thread *o = &s->threads[s->nthreads++];
		o->index = th[i]->index;
		o->ident = th[i]->ident;
		o->native_id = th[i]->native_id;
		o->start_ns = th[i]->start_ns;
		o->end_ns = th[i]->end_ns;
	}
}

int sp_snapshot_take(struct sp_snapshot *s)
{
	memset(s, 0, sizeof *s);
	struct sp_clock_map cm;
	sp_clock_map_now(&cm);
	uint32_t nreg = sp_region_count(), nth = 0;
	uint32_t *map = calloc(nreg + 1, sizeof *map);
	uint64_t *count = calloc(nreg + 1, sizeof *count);
	uint64_t *fill = calloc(nreg + 1, sizeof *fill);
	uint32_t *last = calloc(nreg + 1, sizeof *last);
	uint8_t *multi = calloc(nreg + 1, 1);
	struct sp_thread **th = threads_by_index(&nth);
	bool any_aux = false;
	int ret = (map && count && fill && last && multi && th) ? 0 : -ENOMEM;
	if (!ret)
		ret = build_names(s, nreg, map);
	if (!ret) {
		count_events(th, nth, nreg, map, count, last, multi, &any_aux);
		for (uint32_t k = 0; k < s->nnames; k++)
			s->nevents += count[k];
		ret = alloc_columns(s, any_aux);
	}
	if (!ret)
		ret = build_rows(s, nreg, map, count, fill);
	if (!ret) {
		scatter(s, th, nth, nreg, map, fill, &cm);
		for (uint32_t r = 0; !ret && r < s->nrows; r++) {
			struct sp_snap_row *row = &s->rows[r];
			if (multi[row->region])
				ret = sort_row(s, row);
			sp_summary_compute(&row->summary, s->start + row->offset,
					   s->end + row->offset, row->count);
		}
		take_threads(s, th, nth);
		s->dropped = sp_thread_dropped_total();
		/* Threads that produced at least one complete event. */
		uint8_t *seen = calloc(nth + 1, 1);
		if (seen) {
			for (uint64_t e = 0; e < s->nevents; e++)
				seen[s->thread[e]] = 1;
			for (uint32_t i = 0; i < nth; i++)
				s->threads_with_events += seen[i];
			free(seen);
		}
	}
	free(map);
	free(count);
	free(fill);
	free(last);
	free(multi);
	free(th);
	if (ret)
		sp_snapshot_free(s);
	return ret;
}
