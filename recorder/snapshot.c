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
static uint32_t count_events(struct sp_rec_thread **th, uint32_t nth, uint32_t nreg,
			     const uint32_t *map, uint64_t *count, uint32_t *last_thread,
			     uint8_t *multi, bool *any_aux)
{
	uint32_t with_events = 0;
	for (uint32_t ti = 0; ti < nth; ti++) {
		if (!th[ti])
			continue;
		const struct sp_chunk *cur = NULL;
		const struct sp_event *ev;
		size_t n;
		uint64_t complete = 0;
		while ((n = sp_thread_next_chunk(th[ti], &cur, &ev)) > 0) {
			for (size_t i = 0; i < n; i++) {
				if (!event_complete(&ev[i], nreg))
					continue;
				uint32_t k = map[ev[i].region];
				if (count[k]++ && last_thread[k] != ti)
					multi[k] = 1;
				last_thread[k] = ti;
				*any_aux |= ev[i].aux != 0;
				complete++;
			}
		}
		with_events += complete > 0;
	}
	return with_events;
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
static void scatter(struct sp_snapshot *s, struct sp_rec_thread **th, uint32_t nth, uint32_t nreg,
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

/* What the first pass learned, kept for the second. */
struct sp_snapshot_plan {
	struct sp_clock_map cm;
	uint32_t nreg, nth;
	uint32_t *map, *last;
	uint64_t *count, *fill;
	uint8_t *multi;
	struct sp_rec_thread **th;
	bool any_aux;
};

void sp_snapshot_plan_free(struct sp_snapshot_plan *p)
{
	if (!p)
		return;
	free(p->map);
	free(p->count);
	free(p->fill);
	free(p->last);
	free(p->multi);
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
	p->th = threads_by_index(&p->nth);
	int ret = (p->map && p->count && p->fill && p->last && p->multi && p->th) ? 0 : -ENOMEM;
	if (!ret)
		ret = build_names(s, nreg, p->map);
	if (!ret) {
		s->threads_with_events = count_events(p->th, p->nth, nreg, p->map, p->count,
						      p->last, p->multi, &p->any_aux);
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
	if (!ret) {
		scatter(s, p->th, p->nth, p->nreg, p->map, p->fill, &p->cm);
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

/* ---- streaming into the file --------------------------------------------- */

/* Staged events of one row, and its summary so far. */
struct stage {
	int64_t *s, *e;           /* block buffers */
	uint32_t n, cap;          /* events in the block, block size */
	uint64_t done;            /* events of the row written */
	int64_t total, minimum, maximum, start_min, end_max, first, last;
	double mean, m2;          /* of the written blocks (Chan et al.) */
};

/* Events staged per row: 1 MiB of times over all rows, 64..4096 a row,
 * never more than the row holds (many small rows stay small). */
enum { STAGE_EVENTS = 65536, STAGE_MIN = 64, STAGE_MAX = 4096 };

static int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/*
 * Write a row's block at its place, then fold it into the row's summary:
 * two passes over the (cached) block, blocks combined by Chan's pairwise
 * update. A row of one block gets exactly sp_summary_compute's numbers.
 */
static int flush_stage(struct stage *st, uint64_t row_offset, int fd, uint64_t off_start,
		       uint64_t off_end)
{
	uint32_t n = st->n;
	if (n == 0)
		return 0;
	uint64_t at = (row_offset + st->done) * sizeof(int64_t);
	int ret = pwrite_all(fd, st->s, n * sizeof(int64_t), off_start + at);
	if (!ret)
		ret = pwrite_all(fd, st->e, n * sizeof(int64_t), off_end + at);
	if (ret)
		return ret;
	int64_t total = 0;
	for (uint32_t i = 0; i < n; i++) {
		int64_t d = st->e[i] - st->s[i];
		total += d;
		st->minimum = d < st->minimum ? d : st->minimum;
		st->maximum = d > st->maximum ? d : st->maximum;
		st->start_min = st->s[i] < st->start_min ? st->s[i] : st->start_min;
		st->end_max = st->e[i] > st->end_max ? st->e[i] : st->end_max;
	}
	double mean = (double)total / (double)n, m2 = 0;
	for (uint32_t i = 0; i < n; i++) {
		double dev = (double)(st->e[i] - st->s[i]) - mean;
		m2 += dev * dev;
	}
	if (st->done == 0) {
		st->first = st->e[0] - st->s[0];
		st->mean = mean;
		st->m2 = m2;
	} else {
		double na = (double)st->done, nb = (double)n, delta = mean - st->mean;
		st->mean += delta * nb / (na + nb);
		st->m2 += m2 + delta * delta * na * nb / (na + nb);
	}
	st->last = st->e[n - 1] - st->s[n - 1];
	st->total += total;
	st->done += n;
	st->n = 0;
	return 0;
}

static void stage_summary(const struct stage *st, struct sp_summary_record *out)
{
	memset(out, 0, sizeof *out);
	if (!st->done)
		return;
	*out = (struct sp_summary_record){
		.total = st->total, .minimum = st->minimum, .maximum = st->maximum,
		.first = st->first, .last = st->last, .start_minimum = st->start_min,
		.end_maximum = st->end_max,
		.mean = (double)st->total / (double)st->done, .m2 = st->m2,
	};
}

int sp_snapshot_stream(struct sp_snapshot *s, struct sp_snapshot_plan *p, int fd,
		       uint64_t off_start, uint64_t off_end)
{
	for (uint32_t k = 0; k < s->nnames; k++)
		if (p->multi[k])
			return -ENOTSUP; /* rows to sort: sp_snapshot_fill */
	size_t n = s->nevents ? s->nevents : 1;
	uint32_t rows = s->nrows ? s->nrows : 1;
	size_t per = STAGE_EVENTS / rows;
	per = per < STAGE_MIN ? STAGE_MIN : per > STAGE_MAX ? STAGE_MAX : per;
	size_t staged = 0;
	for (uint32_t r = 0; r < s->nrows; r++)
		staged += s->rows[r].count < per ? s->rows[r].count : per;
	struct stage *stages = calloc(rows, sizeof *stages);
	uint32_t *row_of = calloc(s->nnames + 1, sizeof *row_of);
	int64_t *buf = malloc((staged + 1) * 2 * sizeof *buf), *at_buf = buf;
	/* A thread column only when several threads recorded. */
	s->thread = s->threads_with_events > 1 ? malloc(n * sizeof *s->thread) : NULL;
	s->aux = p->any_aux ? malloc(n * sizeof *s->aux) : NULL;
	int ret = stages && row_of && buf && (s->thread || s->threads_with_events <= 1) &&
			  (s->aux || !p->any_aux) ? 0 : -ENOMEM;
	for (uint32_t r = 0; !ret && r < s->nrows; r++) {
		uint32_t cap = (uint32_t)(s->rows[r].count < per ? s->rows[r].count : per);
		row_of[s->rows[r].region] = r;
		stages[r] = (struct stage){ .s = at_buf, .e = at_buf + cap, .cap = cap,
					    .minimum = INT64_MAX, .maximum = INT64_MIN,
					    .start_min = INT64_MAX, .end_max = INT64_MIN };
		at_buf += 2 * (size_t)cap;
	}
	s->first_start_ns = INT64_MAX;
	for (uint32_t ti = 0; !ret && ti < p->nth; ti++) {
		if (!p->th[ti])
			continue;
		const struct sp_chunk *cur = NULL;
		const struct sp_event *ev;
		size_t m;
		while (!ret && (m = sp_thread_next_chunk(p->th[ti], &cur, &ev)) > 0) {
			for (size_t i = 0; !ret && i < m; i++) {
				if (!event_complete(&ev[i], p->nreg))
					continue;
				uint32_t k = p->map[ev[i].region];
				uint64_t at = p->fill[k]++;
				struct stage *st = &stages[row_of[k]];
				int64_t a = sp_clock_to_ns(&p->cm, ev[i].start);
				st->s[st->n] = a;
				st->e[st->n] = sp_clock_to_ns(&p->cm, ev[i].end);
				if (s->thread)
					s->thread[at] = ti;
				if (s->aux)
					s->aux[at] = ev[i].aux;
				if (a < s->first_start_ns)
					s->first_start_ns = a;
				if (++st->n == st->cap)
					ret = flush_stage(st, s->rows[row_of[k]].offset, fd,
							  off_start, off_end);
			}
		}
	}
	for (uint32_t r = 0; !ret && r < s->nrows; r++)
		ret = flush_stage(&stages[r], s->rows[r].offset, fd, off_start, off_end);
	for (uint32_t r = 0; !ret && r < s->nrows; r++)
		stage_summary(&stages[r], &s->rows[r].summary);
	free(stages);
	free(row_of);
	free(buf);
	sp_snapshot_plan_free(p);
	if (ret) {
		sp_snapshot_free(s);
		return ret;
	}
	s->times_in_file = true;
	return 0;
}

int sp_snapshot_take(struct sp_snapshot *s)
{
	struct sp_snapshot_plan *p;
	int ret = sp_snapshot_plan(s, &p);
	return ret ? ret : sp_snapshot_fill(s, p);
}
