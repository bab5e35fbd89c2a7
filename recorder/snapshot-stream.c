/* SPDX-License-Identifier: MIT */
/*
 * The snapshot's second pass straight into the output file (snapshot.h,
 * sp_snapshot_stream): each row's times go through a small block buffer to
 * their place in the file's columns, the calls are nested on the way for
 * exclusive_totals (nest.h), and spilled events are read a piece at a time,
 * so memory is bounded by the rows, not the events.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nest.h"
#include "snapshot-internal.h"
#include "sp-io.h"
#include "writer.h"

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
	int ret = sp_pwrite_full(fd, st->s, n * sizeof(int64_t), off_start + at);
	if (!ret)
		ret = sp_pwrite_full(fd, st->e, n * sizeof(int64_t), off_end + at);
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

/* A recorded tick as the file's ns: the clock's map, then the caller's. */
static inline int64_t conv(const struct sp_snapshot_plan *p, const struct sp_stream_part *o,
			   int64_t tick)
{
	int64_t ns = sp_clock_to_ns(&p->cm, tick);
	return o && o->map ? o->map(o->map_ctx, ns) : ns;
}

int64_t sp_snapshot_plan_first_ns(const struct sp_snapshot_plan *p, const struct sp_snap_row *row,
				  const struct sp_stream_part *o)
{
	return row->count ? conv(p, o, p->first_tick[row->region]) : 0;
}

/*
 * The region positions the commit nests by (sp_writer_region_order over the
 * rows' first starts, 0.0 for a row without calls): rows are the file's
 * regions, in order, once names without a row are dropped.
 */
static int row_positions(const struct sp_snapshot *s, const struct sp_snapshot_plan *p,
			 uint32_t *pos)
{
	double *key = malloc(((size_t)s->nrows + 1) * sizeof *key);
	if (!key)
		return -ENOMEM;
	for (uint32_t r = 0; r < s->nrows; r++) {
		const struct sp_snap_row *row = &s->rows[r];
		key[r] = row->count ? (double)sp_clock_to_ns(&p->cm, p->first_tick[row->region]) / 1e9
				    : 0.0;
	}
	int ret = sp_writer_region_order(key, s->nrows, pos);
	free(key);
	return ret;
}

/* Each row's thread into the thread column (a row of one thread). */
static int write_thread_column(const struct sp_snapshot *s, const struct sp_snapshot_plan *p,
			       const struct sp_writer_times *t, const uint8_t *in_mem)
{
	/* Shared rows get theirs in the merge. */
	enum { BLOCK = 4096 };
	int64_t *v = malloc(BLOCK * sizeof *v);
	int ret = v ? 0 : -ENOMEM;
	for (uint32_t r = 0; !ret && r < s->nrows; r++) {
		const struct sp_snap_row *row = &s->rows[r];
		if (p->multi[row->region] || in_mem[r])
			continue;
		for (uint32_t i = 0; row->count && i < BLOCK; i++)
			v[i] = p->last[row->region];
		for (uint64_t done = 0; !ret && done < row->count; done += BLOCK) {
			uint64_t m = row->count - done < BLOCK ? row->count - done : BLOCK;
			ret = sp_pwrite_full(t->fd, v, m * sizeof *v,
					 t->thread + (row->offset + done) * sizeof *v);
		}
	}
	free(v);
	return ret;
}

/*
 * Rows that several threads recorded must be in the fill's order (start,
 * thread, entry), while the stream meets them thread after thread. Their
 * calls go in that order to a temporary file beside the output, each
 * thread's run of a row one segment in entry (so start) order; a k-way
 * merge per row then writes them to the file's columns with a small buffer
 * per segment. Disk, not memory, grows with the events.
 */
struct seg {
	uint32_t thread;
	uint64_t first, n;        /* the row's events [first, first+n) in the temporary */
};

struct multi {
	int fd;                   /* the temporary (O_TMPFILE), -1: no such rows */
	uint64_t nev;             /* events of such rows: starts, then as many ends */
	uint64_t *area;           /* per row: its first slot, NO_AREA for other rows */
	uint32_t *cur;            /* per row: its current segment + 1, 0 none */
	uint32_t *seg_row;        /* per segment: its row */
	struct seg *segs;
	size_t nsegs, cap;
};
#define NO_AREA UINT64_MAX

static void multi_free(struct multi *m)
{
	if (m->fd >= 0)
		close(m->fd);
	free(m->area);
	free(m->cur);
	free(m->seg_row);
	free(m->segs);
	memset(m, 0, sizeof *m);
	m->fd = -1;
}

int sp_stream_tmpfile(int dirfd)
{
	/* SCOPE_PROFILER_TEST_NO_TMPFILE, for the tests: 1 = file systems
	 * without O_TMPFILE (the in-memory path); beside = none where the
	 * output goes (the temporary directory's). */
	const char *no = getenv("SCOPE_PROFILER_TEST_NO_TMPFILE");
	if (no && !strcmp(no, "1"))
		return -1;
	bool beside = !no || strcmp(no, "beside") != 0;
	int fd = beside ? openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600) : -1;
	if (fd < 0) { /* NFS has none: the local temporary directory */
		const char *tmp = getenv("TMPDIR");
		fd = open(tmp && *tmp ? tmp : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	}
	return fd;
}

bool sp_snapshot_plan_shares_rows(const struct sp_snapshot *s, const struct sp_snapshot_plan *p)
{
	for (uint32_t r = 0; r < s->nrows; r++)
		if (p->multi[s->rows[r].region] && !p->has_aux[s->rows[r].region])
			return true;
	return false;
}

/* The temporary and the rows' areas; -ENOTSUP when it cannot be made (the
 * caller fills in memory instead). */
static int multi_init(struct multi *m, const struct sp_snapshot *s,
		      const struct sp_snapshot_plan *p, const struct sp_writer_times *t,
		      const uint8_t *in_mem, bool part)
{
	memset(m, 0, sizeof *m);
	m->fd = -1;
	bool any = false;
	for (uint32_t r = 0; r < s->nrows; r++)
		any |= p->multi[s->rows[r].region] && !in_mem[r];
	if (!any)
		return 0;
	if (p->any_aux && !part)
		return -ENOTSUP; /* extension indexes follow the file's order: fill */
	m->area = malloc(((size_t)s->nrows + 1) * sizeof *m->area);
	m->cur = calloc((size_t)s->nrows + 1, sizeof *m->cur);
	if (!m->area || !m->cur)
		return -ENOMEM;
	for (uint32_t r = 0; r < s->nrows; r++) {
		const struct sp_snap_row *row = &s->rows[r];
		bool shared = p->multi[row->region] && !in_mem[r];
		m->area[r] = shared ? m->nev : NO_AREA;
		m->nev += shared ? row->count : 0;
	}
	m->fd = sp_stream_tmpfile(t->dirfd);
	return m->fd < 0 ? -ENOTSUP : 0;
}

/* An event of a shared row, met in thread ti: which segment it extends. */
static int multi_note(struct multi *m, uint32_t r, uint32_t ti, uint64_t index)
{
	if (m->cur[r] && m->segs[m->cur[r] - 1].thread == ti) {
		m->segs[m->cur[r] - 1].n++;
		return 0;
	}
	if (m->nsegs == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		struct seg *v = realloc(m->segs, cap * sizeof *v);
		uint32_t *w = v ? realloc(m->seg_row, cap * sizeof *w) : NULL;
		if (v)
			m->segs = v;
		if (!w)
			return -ENOMEM;
		m->seg_row = w;
		m->cap = cap;
	}
	m->segs[m->nsegs] = (struct seg){ ti, index, 1 };
	m->seg_row[m->nsegs] = r;
	m->cur[r] = (uint32_t)++m->nsegs;
	return 0;
}

/* A shared row's staged block to its area of the temporary. */
static int flush_tmp(struct stage *st, const struct multi *m, uint32_t r)
{
	uint32_t n = st->n;
	uint64_t at = (m->area[r] + st->done) * sizeof(int64_t);
	int ret = n ? sp_pwrite_full(m->fd, st->s, n * sizeof(int64_t), at) : 0;
	if (!ret && n)
		ret = sp_pwrite_full(m->fd, st->e, n * sizeof(int64_t), m->nev * sizeof(int64_t) + at);
	st->done += n;
	st->n = 0;
	return ret;
}

/* One segment's read-ahead during the merge. */
struct seg_reader {
	int64_t *s, *e;
	uint32_t thread, at, len;
	uint64_t next, left;      /* slot of the next read, events not yet read */
};

enum { SEG_BLOCK = 512 };

static int seg_fill(struct seg_reader *g, const struct multi *m)
{
	uint32_t n = (uint32_t)(g->left < SEG_BLOCK ? g->left : SEG_BLOCK);
	int ret = sp_pread_full(m->fd, g->s, n * sizeof(int64_t), g->next * sizeof(int64_t));
	if (!ret)
		ret = sp_pread_full(m->fd, g->e, n * sizeof(int64_t),
				   (m->nev + g->next) * sizeof(int64_t));
	g->at = 0;
	g->len = n;
	g->next += n;
	g->left -= n;
	return ret;
}

static bool seg_less(const struct seg_reader *a, const struct seg_reader *b)
{
	int64_t x = a->s[a->at], y = b->s[b->at];
	return x != y ? x < y : a->thread < b->thread;
}

static void heap_down(struct seg_reader **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, best = i;
		if (l < n && seg_less(h[l], h[best]))
			best = l;
		if (l + 1 < n && seg_less(h[l + 1], h[best]))
			best = l + 1;
		if (best == i)
			return;
		struct seg_reader *x = h[i];
		h[i] = h[best];
		h[best] = x;
		i = best;
	}
}

/*
 * Merge shared row r from its segments into the file (through the row's
 * stage, so the summary is the fill's, and its thread ids alongside).
 */
static int merge_row(const struct multi *m, uint32_t r, const struct sp_snap_row *row,
		     struct stage *st, int64_t *tid, const struct sp_writer_times *t)
{
	size_t ns = 0;
	for (size_t i = 0; i < m->nsegs; i++)
		ns += m->seg_row[i] == r;
	struct seg_reader *g = calloc(ns + 1, sizeof *g);
	struct seg_reader **h = calloc(ns + 1, sizeof *h);
	int64_t *buf = malloc((ns + 1) * 2 * SEG_BLOCK * sizeof *buf);
	int ret = g && h && buf ? 0 : -ENOMEM;
	size_t nh = 0;
	for (size_t i = 0, k = 0; !ret && i < m->nsegs; i++) {
		if (m->seg_row[i] != r)
			continue;
		g[k] = (struct seg_reader){ .s = buf + 2 * k * SEG_BLOCK,
					    .e = buf + (2 * k + 1) * SEG_BLOCK,
					    .thread = m->segs[i].thread,
					    .next = m->area[r] + m->segs[i].first,
					    .left = m->segs[i].n };
		ret = seg_fill(&g[k], m);
		h[nh++] = &g[k++];
	}
	for (size_t i = nh; !ret && i-- > 0;)
		heap_down(h, nh, i);
	*st = (struct stage){ .s = st->s, .e = st->e, .cap = st->cap, .minimum = INT64_MAX,
			      .maximum = INT64_MIN, .start_min = INT64_MAX, .end_max = INT64_MIN };
	while (!ret && nh) {
		struct seg_reader *x = h[0];
		st->s[st->n] = x->s[x->at];
		st->e[st->n] = x->e[x->at];
		tid[st->n] = x->thread;
		if (++x->at == x->len && x->left)
			ret = seg_fill(x, m);
		if (x->at == x->len)
			h[0] = h[--nh];
		heap_down(h, nh, 0);
		if (!ret && (++st->n == st->cap || !nh)) {
			ret = sp_pwrite_full(t->fd, tid, st->n * sizeof *tid,
					 t->thread + (row->offset + st->done) * sizeof *tid);
			if (!ret)
				ret = flush_stage(st, row->offset, t->fd, t->start, t->end);
		}
	}
	free(g);
	free(h);
	free(buf);
	return ret;
}

static int merge_rows(const struct multi *m, struct sp_snapshot *s, struct stage *stages,
		      const struct sp_writer_times *t)
{
	int64_t *tid = malloc(STAGE_MAX * sizeof *tid);
	int ret = tid ? 0 : -ENOMEM;
	for (uint32_t r = 0; !ret && r < s->nrows; r++)
		if (m->area[r] != NO_AREA && s->rows[r].count)
			ret = merge_row(m, r, &s->rows[r], &stages[r], tid, t);
	free(tid);
	return ret;
}

/* Pass 2 into the file: every thread's calls in entry order, each into its
 * row's stage (or, for a shared row, the temporary) and through the
 * nesting. */
static int stream_events(struct sp_snapshot *s, struct sp_snapshot_plan *p,
			 const struct sp_writer_times *t, struct stage *stages,
			 const uint32_t *row_of, struct sp_nest *nest, struct multi *mu,
			 const uint8_t *in_mem, const struct sp_stream_part *o)
{
	int ret = 0;
	s->first_start_ns = INT64_MAX;
	for (uint32_t ti = 0; !ret && ti < p->nth; ti++) {
		if (!p->th[ti])
			continue;
		struct sp_event_iter it = { 0 };
		const struct sp_event *ev;
		size_t m;
		while (!ret && (m = sp_thread_next_chunk(p->th[ti], &it, &ev)) > 0) {
			for (size_t i = 0; !ret && i < m; i++) {
				if (!sp_event_complete(&ev[i], p->nreg))
					continue;
				uint32_t k = p->map[ev[i].region], r = row_of[k];
				struct stage *st = &stages[r];
				bool shared = mu->area && mu->area[r] != NO_AREA;
				int64_t a = conv(p, o, ev[i].start);
				int64_t b = conv(p, o, ev[i].end);
				if (a < s->first_start_ns)
					s->first_start_ns = a;
				if (in_mem[r]) { /* its times are in memory: nested only */
					ret = sp_nest_add(nest, a, b, r);
					continue;
				}
				uint64_t at = p->fill[k]++;
				if (shared)
					ret = multi_note(mu, r, ti, st->done + st->n);
				st->s[st->n] = a;
				st->e[st->n] = b;
				if (s->aux && !o)
					s->aux[at] = ev[i].aux;
				if (!ret)
					ret = sp_nest_add(nest, a, b, r);
				if (!ret && ++st->n == st->cap)
					ret = shared ? flush_tmp(st, mu, r)
						     : flush_stage(st, s->rows[r].offset, t->fd,
								   t->start, t->end);
			}
		}
		if (!ret && it.err)
			ret = it.err;
		if (!ret)
			ret = sp_nest_lane_end(nest);
	}
	for (uint32_t r = 0; !ret && r < s->nrows; r++)
		ret = in_mem[r] ? 0
		      : mu->area && mu->area[r] != NO_AREA
			      ? flush_tmp(&stages[r], mu, r)
			      : flush_stage(&stages[r], s->rows[r].offset, t->fd, t->start, t->end);
	if (!ret && mu->area)
		ret = merge_rows(mu, s, stages, t);
	if (!ret && t->thread != SP_RAW_ABSENT)
		ret = write_thread_column(s, p, t, in_mem);
	return ret;
}

/* The stream, whole (o NULL: the file is this process's alone, s is freed
 * on an error) or a part (sp_snapshot_stream_part). */
static int stream(struct sp_snapshot *s, struct sp_snapshot_plan *p,
		  const struct sp_writer_times *t, const struct sp_stream_part *o)
{
	struct multi mu = { .fd = -1 };
	uint32_t rows = s->nrows ? s->nrows : 1;
	uint8_t *in_mem = calloc(rows, 1);
	for (uint32_t r = 0; o && in_mem && r < s->nrows; r++)
		in_mem[r] = p->has_aux[s->rows[r].region] && s->rows[r].offset < s->nmem;
	/* A thread column exactly when several threads recorded; a part
	 * writes one whenever the file has it. */
	bool col = t->thread != SP_RAW_ABSENT;
	int ret = !in_mem ? -ENOMEM
		  : (s->threads_with_events > 1 && !col) || (!o && s->threads_with_events <= 1 && col)
			  ? -EINVAL
			  : multi_init(&mu, s, p, t, in_mem, o != NULL);
	if (ret) {
		multi_free(&mu);
		free(in_mem);
		if (ret == -ENOTSUP && !o)
			return ret; /* the plan is left to fill */
		sp_snapshot_plan_free(p); /* consumed, as on every other error */
		if (!o)
			sp_snapshot_free(s);
		return ret;
	}
	size_t n = s->nevents ? s->nevents : 1;
	size_t per = STAGE_EVENTS / rows;
	per = per < STAGE_MIN ? STAGE_MIN : per > STAGE_MAX ? STAGE_MAX : per;
	size_t staged = 0;
	for (uint32_t r = 0; r < s->nrows; r++)
		staged += in_mem[r] ? 0 : s->rows[r].count < per ? s->rows[r].count : per;
	struct stage *stages = calloc(rows, sizeof *stages);
	uint32_t *row_of = calloc(s->nnames + 1, sizeof *row_of);
	uint32_t *pos = calloc(rows, sizeof *pos);
	int64_t *buf = malloc((staged + 1) * 2 * sizeof *buf), *at_buf = buf;
	/* Extension records (MPI) keep an index per event in memory (a part
	 * has them in memory already). */
	s->aux = !o && p->any_aux ? malloc(n * sizeof *s->aux) : s->aux;
	struct sp_nest nest = { 0 };
	ret = stages && row_of && pos && buf && (s->aux || !p->any_aux) ? 0 : -ENOMEM;
	if (!ret && o)
		memcpy(pos, o->pos, s->nrows * sizeof *pos);
	else if (!ret)
		ret = row_positions(s, p, pos);
	if (!ret)
		ret = sp_nest_init(&nest, s->nrows, pos);
	for (uint32_t r = 0; !ret && r < s->nrows; r++) {
		uint32_t cap = in_mem[r] ? 0
			       : (uint32_t)(s->rows[r].count < per ? s->rows[r].count : per);
		row_of[s->rows[r].region] = r;
		stages[r] = (struct stage){ .s = at_buf, .e = at_buf + cap, .cap = cap,
					    .minimum = INT64_MAX, .maximum = INT64_MIN,
					    .start_min = INT64_MAX, .end_max = INT64_MIN };
		at_buf += 2 * (size_t)cap;
	}
	if (!ret)
		ret = stream_events(s, p, t, stages, row_of, &nest, &mu, in_mem, o);
	for (uint32_t r = 0; !ret && r < s->nrows; r++) {
		if (!in_mem[r])
			stage_summary(&stages[r], &s->rows[r].summary);
		s->rows[r].exclusive_ns = nest.broken ? -1 : nest.excl[r];
	}
	if (!ret && !nest.disorder)
		s->exclusive_known = true;
	if (nest.excl)
		sp_nest_free(&nest);
	free(stages);
	free(row_of);
	free(pos);
	free(buf);
	free(in_mem);
	multi_free(&mu);
	sp_snapshot_plan_free(p);
	if (ret) {
		if (!o)
			sp_snapshot_free(s);
		return ret;
	}
	if (!o)
		s->times_in_file = true;
	return 0;
}

int sp_snapshot_stream(struct sp_snapshot *s, struct sp_snapshot_plan *p,
		       const struct sp_writer_times *t)
{
	return stream(s, p, t, NULL);
}

int sp_snapshot_stream_part(struct sp_snapshot *s, struct sp_snapshot_plan *p,
			    const struct sp_writer_times *t, const struct sp_stream_part *o)
{
	return stream(s, p, t, o);
}
