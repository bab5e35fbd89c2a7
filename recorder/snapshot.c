/* SPDX-License-Identifier: MIT */
/*
 * Snapshot: turns the per-thread event chunks into the file's columnar
 * arrangement with a two-pass counting sort (count per region, then
 * scatter), so the cost is linear in the events. The scatter goes into
 * memory (fill) or, for a file of its own, straight into the file's columns
 * through small per-row blocks (stream). Regions that share a name (a
 * static function and a namesake elsewhere) become one row.
 */
#define _GNU_SOURCE
#include "snapshot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder.h"
#include "snapshot-internal.h"

/* Region id -> output name index, deduplicating names with a small hash. */
static int build_names(struct sp_snapshot *s, uint32_t nreg, uint32_t *map)
{
	size_t cap = 64;
	while (cap < 2 * (size_t)nreg)
		cap *= 2;
	uint32_t *slots = malloc(cap * sizeof *slots);
	s->names = calloc(nreg ? nreg : 1, sizeof *s->names);
	s->kinds = calloc(nreg ? nreg : 1, sizeof *s->kinds);
	if (!slots || !s->names || !s->kinds) {
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
			s->kinds[s->nnames] = (uint8_t)r->kind;
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
static struct sp_rec_thread **threads_by_index(uint32_t *ret_n)
{
	uint32_t n = sp_thread_count();
	struct sp_rec_thread **v = calloc(n ? n : 1, sizeof *v);
	if (!v)
		return NULL;
	for (struct sp_rec_thread *t = sp_thread_first(); t; t = t->next)
		if (t->index < n)
			v[t->index] = t;
	*ret_n = n;
	return v;
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

/* Pass 1: events per output name, which names saw several threads, and
 * each name's first start. Returns 0 or -errno (reading spilled events). */
static int count_events(struct sp_snapshot_plan *p, uint32_t *ret_with_events)
{
	uint32_t with_events = 0;
	for (uint32_t ti = 0; ti < p->nth; ti++) {
		if (!p->th[ti])
			continue;
		struct sp_event_iter it = { 0 };
		const struct sp_event *ev;
		size_t n;
		uint64_t complete = 0;
		while ((n = sp_thread_next_chunk(p->th[ti], &it, &ev)) > 0) {
			for (size_t i = 0; i < n; i++) {
				if (!sp_event_complete(&ev[i], p->nreg))
					continue;
				uint32_t k = p->map[ev[i].region];
				if (p->count[k]++ && p->last[k] != ti)
					p->multi[k] = 1;
				if (p->count[k] == 1 || ev[i].start < p->first_tick[k])
					p->first_tick[k] = ev[i].start;
				p->last[k] = ti;
				p->any_aux |= ev[i].aux != 0;
				p->has_aux[k] |= ev[i].aux != 0;
				complete++;
			}
		}
		if (it.err)
			return it.err;
		with_events += complete > 0;
	}
	*ret_with_events = with_events;
	return 0;
}

/* Event arrays of an in-memory snapshot. */
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
static int scatter(struct sp_snapshot *s, struct sp_rec_thread **th, uint32_t nth, uint32_t nreg,
		   const uint32_t *map, uint64_t *fill, const struct sp_clock_map *cm,
		   const uint8_t *only)
{
	s->first_start_ns = INT64_MAX;
	for (uint32_t ti = 0; ti < nth; ti++) {
		if (!th[ti])
			continue;
		struct sp_event_iter it = { 0 };
		const struct sp_event *ev;
		size_t n;
		while ((n = sp_thread_next_chunk(th[ti], &it, &ev)) > 0) {
			for (size_t i = 0; i < n; i++) {
				if (!sp_event_complete(&ev[i], nreg) ||
				    (only && !only[map[ev[i].region]]))
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
		if (it.err)
			return it.err;
	}
	return 0;
}

/* Regions that share a name share a row: timed calls add up, the 95 %
 * half-widths add in quadrature (independent estimates), the earliest
 * throttle time wins, and one unknown interval makes the row's unknown. */
struct thr_extra {
	uint64_t timed;
	double var;
	int64_t since, patched;
	bool unknown;
};

static void thr_extra_add(struct thr_extra *x, const struct sp_region *r)
{
	int64_t ci = atomic_load(&r->throttled_ci_ns);
	int64_t since = atomic_load(&r->throttled_since);
	x->timed += atomic_load(&r->throttle_timed);
	if (ci < 0)
		x->unknown = true;
	else
		x->var += (double)ci * (double)ci;
	if (since > 0 && (!x->since || since < x->since))
		x->since = since;
	int64_t patched = atomic_load(&r->patched_since);
	if (patched > 0 && (!x->patched || patched < x->patched))
		x->patched = patched;
}

static int build_rows(struct sp_snapshot *s, uint32_t nreg, const uint32_t *map,
		      const uint64_t *count, uint64_t *fill)
{
	uint64_t *dropped = calloc(s->nnames + 1, sizeof *dropped);
	uint64_t *thr_calls = calloc(s->nnames + 1, sizeof *thr_calls);
	int64_t *thr_ns = calloc(s->nnames + 1, sizeof *thr_ns);
	struct thr_extra *extra = calloc(s->nnames + 1, sizeof *extra);
	const struct sp_region **src = calloc(s->nnames + 1, sizeof *src);
	s->rows = calloc(s->nnames + 1, sizeof *s->rows);
	int ret = (dropped && thr_calls && thr_ns && extra && src && s->rows) ? 0 : -ENOMEM;
	if (ret)
		goto out;
	for (uint32_t id = 0; id < nreg; id++) {
		const struct sp_region *r = sp_region_get(id);
		uint32_t k = map[id];
		dropped[k] += atomic_load(&r->dropped);
		thr_calls[k] += atomic_load(&r->throttled_calls);
		thr_ns[k] += atomic_load(&r->throttled_ns);
		thr_extra_add(&extra[k], r);
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
		row->throttle_timed = extra[k].timed;
		row->throttled_ci_ns = extra[k].unknown ? -1 : (int64_t)llround(sqrt(extra[k].var));
		row->throttled_since_ns = extra[k].since ? extra[k].since : -1;
		row->patched_since_ns = extra[k].patched ? extra[k].patched : -1;
		row->source_file = src[k] ? src[k]->source_file : NULL;
		row->source_line = src[k] ? src[k]->source_line : -1;
		off += count[k];
	}
out:
	free(dropped);
	free(thr_calls);
	free(thr_ns);
	free(extra);
	free(src);
	return ret;
}

static void take_threads(struct sp_snapshot *s, struct sp_rec_thread **th, uint32_t nth)
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
		o->end_ns = th[i]->end_ns ? th[i]->end_ns : sp_monotonic_ns(); /* still alive */
	}
}

void sp_snapshot_plan_free(struct sp_snapshot_plan *p)
{
	if (!p)
		return;
	free(p->map);
	free(p->count);
	free(p->fill);
	free(p->last);
	free(p->first_tick);
	free(p->multi);
	free(p->has_aux);
	free(p->th);
	free(p);
}

int sp_snapshot_plan(struct sp_snapshot *s, struct sp_snapshot_plan **ret_plan)
{
	memset(s, 0, sizeof *s);
	struct sp_snapshot_plan *p = calloc(1, sizeof *p);
	if (!p)
		return -ENOMEM;
	sp_clock_map_now(&p->cm);
	p->nreg = sp_region_count();
	uint32_t nreg = p->nreg;
	p->map = calloc(nreg + 1, sizeof *p->map);
	p->count = calloc(nreg + 1, sizeof *p->count);
	p->fill = calloc(nreg + 1, sizeof *p->fill);
	p->last = calloc(nreg + 1, sizeof *p->last);
	p->multi = calloc(nreg + 1, 1);
	p->has_aux = calloc(nreg + 1, 1);
	p->first_tick = calloc(nreg + 1, sizeof *p->first_tick);
	p->th = threads_by_index(&p->nth);
	int ret = (p->map && p->count && p->fill && p->last && p->multi && p->has_aux &&
		   p->first_tick && p->th) ? 0 : -ENOMEM;
	if (!ret)
		ret = build_names(s, nreg, p->map);
	if (!ret)
		ret = count_events(p, &s->threads_with_events);
	if (!ret) {
		for (uint32_t k = 0; k < s->nnames; k++)
			s->nevents += p->count[k];
		ret = build_rows(s, nreg, p->map, p->count, p->fill);
	}
	if (!ret) {
		take_threads(s, p->th, p->nth);
		s->dropped = sp_thread_dropped_total();
	}
	if (ret) {
		sp_snapshot_plan_free(p);
		sp_snapshot_free(s);
		return ret;
	}
	*ret_plan = p;
	return 0;
}

int sp_snapshot_fill(struct sp_snapshot *s, struct sp_snapshot_plan *p)
{
	int ret = alloc_columns(s, p->any_aux);
	if (!ret)
		ret = scatter(s, p->th, p->nth, p->nreg, p->map, p->fill, &p->cm, NULL);
	if (!ret) {
		s->nmem = s->nevents;
		for (uint32_t r = 0; !ret && r < s->nrows; r++) {
			struct sp_snap_row *row = &s->rows[r];
			if (p->multi[row->region])
				ret = sort_row(s, row);
			sp_summary_compute(&row->summary, s->start + row->offset,
					   s->end + row->offset, row->count);
		}
	}
	sp_snapshot_plan_free(p);
	if (ret)
		sp_snapshot_free(s);
	return ret;
}

int sp_snapshot_fill_aux(struct sp_snapshot *s, struct sp_snapshot_plan *p)
{
	/* The rows with extension records first, then the others, each in
	 * name order, and their events back to back in that order (readers
	 * such as upstream's read_h5() take a rank's rows as consecutive
	 * slices of the event columns). */
	struct sp_snap_row *rows = malloc(((size_t)s->nrows + 1) * sizeof *rows);
	if (!rows)
		return -ENOMEM;
	uint64_t off = 0;
	uint32_t k = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t r = 0; r < s->nrows; r++) {
			struct sp_snap_row row = s->rows[r];
			if ((p->has_aux[row.region] != 0) != (pass == 0))
				continue;
			row.offset = off;
			p->fill[row.region] = off;
			off += row.count;
			rows[k++] = row;
		}
		if (pass == 0)
			s->nmem = off;
	}
	memcpy(s->rows, rows, s->nrows * sizeof *rows);
	free(rows);
	size_t n = s->nmem ? s->nmem : 1;
	s->start = malloc(n * sizeof *s->start);
	s->end = malloc(n * sizeof *s->end);
	s->thread = malloc(n * sizeof *s->thread);
	s->aux = p->any_aux ? malloc(n * sizeof *s->aux) : NULL;
	int ret = s->start && s->end && s->thread && (!p->any_aux || s->aux) ? 0 : -ENOMEM;
	if (!ret && s->nmem)
		ret = scatter(s, p->th, p->nth, p->nreg, p->map, p->fill, &p->cm, p->has_aux);
	for (uint32_t r = 0; !ret && r < s->nrows; r++) {
		struct sp_snap_row *row = &s->rows[r];
		if (!p->has_aux[row->region] || !row->count)
			continue;
		if (p->multi[row->region])
			ret = sort_row(s, row);
		sp_summary_compute(&row->summary, s->start + row->offset, s->end + row->offset,
				   row->count);
	}
	if (ret) {
		free(s->start);
		free(s->end);
		free(s->thread);
		free(s->aux);
		s->start = s->end = NULL;
		s->thread = s->aux = NULL;
		s->nmem = 0;
	}
	return ret;
}

int sp_snapshot_take(struct sp_snapshot *s)
{
	struct sp_snapshot_plan *p;
	int ret = sp_snapshot_plan(s, &p);
	return ret ? ret : sp_snapshot_fill(s, p);
}
