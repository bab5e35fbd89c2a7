/* SPDX-License-Identifier: MIT */
/*
 * Spill file reader: one pass over the records (skipping holes left by a
 * kill mid-write or a full disk), events placed by their sequence number (so a record
 * written twice counts once), CLOSE records applied last. Then, for
 * recovery, the same rows-per-name arrangement as a snapshot.
 */
#define _GNU_SOURCE
#include "spill-read.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sp-io.h"

#define ALIGN8(n) (((n) + 7u) & ~(uint64_t)7u)
#define MAX_SEQ (1ull << 40)

/* Entries a table read from the file may have (events of a thread, region
 * ids): each takes 8 bytes or more in a real file, so a small hostile file
 * cannot make us allocate gigabytes; the slack covers holes. */
static uint64_t table_bound(const struct sp_spill_data *d)
{
	return d->file_bytes / 8 + 65536;
}

static struct sp_spill_tdata *thread_of(struct sp_spill_data *d, uint32_t index)
{
	for (uint32_t i = 0; i < d->nthreads; i++)
		if (d->threads[i].index == index)
			return &d->threads[i];
	struct sp_spill_tdata *v = realloc(d->threads, (d->nthreads + 1) * sizeof *v);
	if (!v)
		return NULL;
	d->threads = v;
	v[d->nthreads] = (struct sp_spill_tdata){ .index = index };
	return &v[d->nthreads++];
}

static int reserve_events(struct sp_spill_tdata *t, uint64_t n)
{
	if (n > MAX_SEQ)
		return -EBADMSG;
	if (n > t->cap) {
		uint64_t cap = t->cap ? t->cap : 4096;
		while (cap < n)
			cap *= 2;
		struct sp_spill_event *v = realloc(t->ev, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		for (uint64_t i = t->cap; i < cap; i++)
			v[i] = (struct sp_spill_event){ SP_SPILL_OPEN, SP_SPILL_OPEN, SP_SPILL_NO_REGION, 0 };
		t->ev = v;
		t->cap = cap;
	}
	if (n > t->n)
		t->n = n;
	return 0;
}

static int add_span(struct sp_spill_tdata *t, uint64_t off, uint64_t first_seq, uint64_t n)
{
	if (t->nspans == t->spans_cap) {
		uint64_t cap = t->spans_cap ? 2 * t->spans_cap : 64;
		struct sp_spill_span *v = realloc(t->spans, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		t->spans = v;
		t->spans_cap = cap;
	}
	t->spans[t->nspans++] = (struct sp_spill_span){ off, first_seq, n };
	if (first_seq + n > t->n)
		t->n = first_seq + n;
	return 0;
}

static struct sp_spill_rdata *region_of(struct sp_spill_data *d, uint32_t id)
{
	if (id >= 1u << 24 || id >= table_bound(d))
		return NULL;
	if (id >= d->nregions) {
		struct sp_spill_rdata *v = realloc(d->regions, (id + 1) * sizeof *v);
		if (!v)
			return NULL;
		memset(v + d->nregions, 0, (id + 1 - d->nregions) * sizeof *v);
		d->regions = v;
		d->nregions = id + 1;
	}
	return &d->regions[id];
}

static void clock_point(struct sp_spill_data *d, int64_t tick, int64_t ns)
{
	if (ns > d->last_ns) {
		d->last_ns = ns;
		d->last_tick = tick;
	}
}

struct pending {
	struct sp_spill_close *v;
	uint32_t *thread;
	size_t n, cap;
};

/* One record's payload. Returns 0, or -EBADMSG for a malformed record
 * (skipped like a hole), or -ENOMEM. Long: one short case per record type
 * of the spill format (sp-spill.h), each checking its own lengths. */
static int handle(struct sp_spill_data *d, const struct sp_spill_rec *h, const char *p,
		  uint64_t payload_off, struct pending *cl)
{
	switch (h->type) {
	case SP_SPILL_REGION: {
		struct sp_spill_region r;
		if (h->bytes < sizeof r)
			return -EBADMSG;
		memcpy(&r, p, sizeof r);
		if (r.name_bytes != h->bytes - sizeof r || r.kind >= SP_KIND_COUNT)
			return -EBADMSG;
		if (r.id >= 1u << 24 || r.id >= table_bound(d))
			return -EBADMSG;
		struct sp_spill_rdata *o = region_of(d, r.id);
		if (!o)
			return -ENOMEM;
		free(o->name);
		o->name = r.name_bytes ? strndup(p + sizeof r, r.name_bytes) : NULL;
		o->present = true;
		o->kind = r.kind;
		o->addr = r.addr;
		o->module = r.module;
		return 0;
	}
	case SP_SPILL_EVENTS: {
		struct sp_spill_events e;
		if (h->bytes < sizeof e)
			return -EBADMSG;
		memcpy(&e, p, sizeof e);
		if ((uint64_t)e.n * sizeof(struct sp_spill_event) != h->bytes - sizeof e)
			return -EBADMSG;
		struct sp_spill_tdata *t = thread_of(d, h->thread);
		if (!t)
			return -ENOMEM;
		if (e.first_seq > MAX_SEQ || e.first_seq + e.n > table_bound(d))
			return -EBADMSG; /* (first_seq + n cannot wrap past MAX_SEQ) */
		if (d->indexed) {
			clock_point(d, e.tick, e.ns);
			return e.n ? add_span(t, payload_off + sizeof e, e.first_seq, e.n) : 0;
		}
		int ret = reserve_events(t, e.first_seq + e.n);
		if (ret)
			return ret;
		if (e.n) /* an empty record may come before any event array */
			memcpy(t->ev + e.first_seq, p + sizeof e,
			       (size_t)e.n * sizeof(struct sp_spill_event));
		clock_point(d, e.tick, e.ns);
		return 0;
	}
	case SP_SPILL_CLOSE: {
		size_t n = h->bytes / sizeof(struct sp_spill_close);
		if (n * sizeof(struct sp_spill_close) != h->bytes)
			return -EBADMSG;
		if (n == 0)
			return 0; /* nothing to add (and no array yet to add to) */
		if (cl->n + n > cl->cap) {
			size_t cap = (cl->cap ? cl->cap * 2 : 256) + n;
			void *v = realloc(cl->v, cap * sizeof *cl->v);
			void *t = v ? realloc(cl->thread, cap * sizeof *cl->thread) : NULL;
			if (v)
				cl->v = v;
			if (!v || !t)
				return -ENOMEM;
			cl->thread = t;
			cl->cap = cap;
		}
		memcpy(cl->v + cl->n, p, h->bytes);
		for (size_t i = 0; i < n; i++)
			cl->thread[cl->n + i] = h->thread;
		cl->n += n;
		return 0;
	}
	case SP_SPILL_THREAD: {
		if (h->bytes != sizeof(struct sp_spill_thread))
			return -EBADMSG;
		struct sp_spill_tdata *t = thread_of(d, h->thread);
		if (!t)
			return -ENOMEM;
		memcpy(&t->info, p, sizeof t->info);
		t->has_info = true;
		return 0;
	}
	case SP_SPILL_RANK: {
		struct sp_spill_rank r;
		if (h->bytes != sizeof r)
			return -EBADMSG;
		memcpy(&r, p, sizeof r);
		d->rank = r.rank;
		d->size = r.size;
		return 0;
	}
	case SP_SPILL_DROPS: {
		size_t n = h->bytes / sizeof(struct sp_spill_drop);
		if (n * sizeof(struct sp_spill_drop) != h->bytes)
			return -EBADMSG;
		for (size_t i = 0; i < n; i++) {
			struct sp_spill_drop x;
			memcpy(&x, p + i * sizeof x, sizeof x);
			if (x.region >= 1u << 24 || x.region >= table_bound(d))
				return -EBADMSG;
			struct sp_spill_rdata *o = region_of(d, x.region);
			if (!o)
				return -ENOMEM;
			o->dropped = x.dropped;
		}
		return 0;
	}
	case SP_SPILL_TRAILER:
		if (h->bytes != sizeof d->trailer)
			return -EBADMSG;
		memcpy(&d->trailer, p, sizeof d->trailer);
		d->partial = true;
		clock_point(d, d->trailer.tick, d->trailer.ns);
		return 0;
	case SP_SPILL_MODULE: {
		struct sp_spill_module m;
		if (h->bytes < sizeof m)
			return -EBADMSG;
		memcpy(&m, p, sizeof m);
		if (m.path_bytes != h->bytes - sizeof m)
			return -EBADMSG;
		struct sp_spill_mdata *v = realloc(d->modules, (d->nmodules + 1) * sizeof *v);
		if (!v)
			return -ENOMEM;
		d->modules = v;
		v[d->nmodules++] = (struct sp_spill_mdata){ m.index, m.bias,
							    strndup(p + sizeof m, m.path_bytes) };
		return 0;
	}
	case SP_SPILL_MODULE_ID: {
		struct sp_spill_module_id m;
		if (h->bytes < sizeof m)
			return -EBADMSG;
		memcpy(&m, p, sizeof m);
		if (m.build_id_bytes != h->bytes - sizeof m ||
		    m.build_id_bytes > SP_SPILL_BUILD_ID_MAX)
			return -EBADMSG;
		for (uint32_t i = d->nmodules; i-- > 0;) {
			if (d->modules[i].index != m.index)
				continue;
			d->modules[i].build_id_bytes = m.build_id_bytes;
			memcpy(d->modules[i].build_id, p + sizeof m, m.build_id_bytes);
			break;
		}
		return 0;
	}
	case SP_SPILL_TREE:
		if (h->bytes != sizeof d->tree)
			return -EBADMSG;
		memcpy(d->tree, p, sizeof d->tree);
		d->tree[sizeof d->tree - 1] = '\0';
		return 0;
	default:
		return -EBADMSG;
	}
}

/*
 * The file is read with pread(2) through a window, not mapped: a spill cut
 * by a full disk can have holes (byte ranges reserved by a writer whose
 * write failed, followed by records of others), and on a full tmpfs a
 * fault on a hole page of a mapping is SIGBUS, while read(2) of a hole
 * returns zeros. A record is at most a few MiB (EVENTS: 64 Ki events), so
 * a header that claims more is damage, skipped like a hole.
 */
#define WINDOW_BYTES (4u << 20)
#define REC_MAX_BYTES (64u << 20)

struct source {
	int fd;
	uint64_t size;
	size_t window;  /* bytes read ahead (an index skips the events: small) */
	char *buf;
	size_t cap;
	uint64_t off;   /* file offset of buf[0] */
	size_t len;     /* valid bytes in buf */
};

/* Bytes [pos, pos+n) of the file (pos + n <= size), or NULL with *ret set
 * (-errno, or 0 when the file is shorter than its size said). */
static const char *need(struct source *s, uint64_t pos, size_t n, int *ret)
{
	if (pos >= s->off && pos + n <= s->off + s->len)
		return s->buf + (pos - s->off);
	size_t want = n > s->window ? n : s->window;
	if (want > s->size - pos)
		want = (size_t)(s->size - pos);
	if (want > s->cap) {
		char *v = realloc(s->buf, want);
		if (!v) {
			*ret = -ENOMEM;
			return NULL;
		}
		s->buf = v;
		s->cap = want;
	}
	size_t got = 0;
	while (got < want) {
		ssize_t r = pread(s->fd, s->buf + got, want - got, (off_t)(pos + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			*ret = -errno;
			return NULL;
		}
		if (r == 0)
			break; /* truncated meanwhile: read what is there */
		got += (size_t)r;
	}
	s->off = pos;
	s->len = got;
	return got >= n ? s->buf : NULL;
}

struct close_at {
	struct sp_spill_close c;
	uint64_t order;
};

static int cmp_close(const void *pa, const void *pb)
{
	const struct close_at *a = pa, *b = pb;
	if (a->c.seq != b->c.seq)
		return a->c.seq < b->c.seq ? -1 : 1;
	return (a->order > b->order) - (a->order < b->order);
}

/* An index keeps each thread's CLOSE entries sorted by seq, file order
 * among equal seqs (the last one applied wins, as in a full read). */
static int index_closes(struct sp_spill_data *d, const struct pending *cl)
{
	struct close_at *v = malloc((cl->n + 1) * sizeof *v);
	if (!v)
		return -ENOMEM;
	int ret = 0;
	for (uint32_t ti = 0; !ret && ti < d->nthreads; ti++) {
		struct sp_spill_tdata *t = &d->threads[ti];
		size_t m = 0;
		for (size_t i = 0; i < cl->n; i++)
			if (cl->thread[i] == t->index)
				v[m++] = (struct close_at){ cl->v[i], i };
		if (!m)
			continue;
		qsort(v, m, sizeof *v, cmp_close);
		t->closes = malloc(m * sizeof *t->closes);
		if (!t->closes) {
			ret = -ENOMEM;
			break;
		}
		for (size_t i = 0; i < m; i++)
			t->closes[i] = v[i].c;
		t->ncloses = m;
	}
	free(v);
	return ret;
}

static int parse(struct sp_spill_data *d, struct source *src)
{
	int ret = 0;
	const char *buf = src->size >= sizeof d->hdr ? need(src, 0, sizeof d->hdr, &ret) : NULL;
	if (!buf)
		return ret ? ret : SP_SPILL_ENOTSPILL;
	if (memcmp(buf, SP_SPILL_MAGIC, 8) != 0)
		return SP_SPILL_ENOTSPILL;
	memcpy(&d->hdr, buf, sizeof d->hdr);
	if (d->hdr.version != SP_SPILL_VERSION)
		return SP_SPILL_EVERSION;
	if (d->hdr.header_bytes < sizeof d->hdr || d->hdr.header_bytes > src->size)
		return SP_SPILL_ENOTSPILL;
	d->rank = d->hdr.rank;
	d->last_tick = d->hdr.tick0;
	d->last_ns = d->hdr.ns0;
	struct pending cl = { 0 };
	uint64_t pos = ALIGN8(d->hdr.header_bytes), size = src->size;
	while (!ret && pos + sizeof(struct sp_spill_rec) <= size) {
		struct sp_spill_rec h;
		const char *p = need(src, pos, sizeof h, &ret);
		if (!p)
			break;
		memcpy(&h, p, sizeof h);
		uint64_t end = pos + sizeof h + h.bytes;
		if (h.magic == SP_SPILL_REC_MAGIC && end <= size && h.bytes <= REC_MAX_BYTES) {
			/* An index reads an EVENTS record's own header, not its events
			 * (handle() checks the length against the count). */
			size_t want = d->indexed && h.type == SP_SPILL_EVENTS &&
					      h.bytes >= sizeof(struct sp_spill_events)
					      ? sizeof(struct sp_spill_events) : h.bytes;
			p = need(src, pos, sizeof h + want, &ret);
			if (!p)
				break;
			int r = handle(d, &h, p + sizeof h, pos + sizeof h, &cl);
			if (r == 0) {
				pos = ALIGN8(end);
				continue;
			}
			if (r != -EBADMSG)
				ret = r;
		}
		pos += 8;
		d->skipped_bytes += 8;
	}
	if (!ret && d->indexed)
		ret = index_closes(d, &cl);
	for (size_t i = 0; !ret && !d->indexed && i < cl.n; i++) {
		struct sp_spill_tdata *t = thread_of(d, cl.thread[i]);
		const struct sp_spill_close *c = &cl.v[i];
		if (t && c->seq < t->n && t->ev[c->seq].region != SP_SPILL_NO_REGION) {
			t->ev[c->seq].end = c->end;
			t->ev[c->seq].region = c->region;
		}
	}
	free(cl.v);
	free(cl.thread);
	if (d->partial)
		d->dropped = d->trailer.dropped;
	else
		for (uint32_t i = 0; i < d->nregions; i++)
			d->dropped += d->regions[i].dropped;
	return ret;
}

int sp_spill_read(const char *path, struct sp_spill_data *ret_data)
{
	memset(ret_data, 0, sizeof *ret_data);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	int ret = fstat(fd, &st) < 0 ? -errno : 0;
	if (!ret) {
		struct source src = { .fd = fd, .size = (uint64_t)st.st_size,
				      .window = WINDOW_BYTES };
		ret_data->file_bytes = (uint64_t)st.st_size;
		ret = parse(ret_data, &src);
		free(src.buf);
	}
	close(fd);
	if (ret)
		sp_spill_data_free(ret_data);
	return ret;
}

/* Read ahead by an index: the small records between EVENTS records. */
#define INDEX_WINDOW_BYTES (64u << 10)

int sp_spill_index(int fd, struct sp_spill_data *ret_data)
{
	memset(ret_data, 0, sizeof *ret_data);
	ret_data->indexed = true;
	struct stat st;
	int ret = fstat(fd, &st) < 0 ? -errno : 0;
	if (!ret) {
		struct source src = { .fd = fd, .size = (uint64_t)st.st_size,
				      .window = INDEX_WINDOW_BYTES };
		ret_data->file_bytes = (uint64_t)st.st_size;
		ret = parse(ret_data, &src);
		free(src.buf);
	}
	if (ret)
		sp_spill_data_free(ret_data);
	return ret;
}

int sp_spill_read_events(int fd, const struct sp_spill_tdata *t, uint64_t first, size_t n,
			 struct sp_spill_event *out)
{
	const size_t ev = sizeof(struct sp_spill_event);
	for (size_t i = 0; i < n; i++)
		out[i] = (struct sp_spill_event){ SP_SPILL_OPEN, SP_SPILL_OPEN, SP_SPILL_NO_REGION, 0 };
	uint64_t last = first + n;
	for (uint64_t k = 0; k < t->nspans; k++) {
		const struct sp_spill_span *sp = &t->spans[k];
		uint64_t lo = sp->first_seq > first ? sp->first_seq : first;
		uint64_t hi = sp->first_seq + sp->n < last ? sp->first_seq + sp->n : last;
		if (lo >= hi)
			continue;
		int ret = sp_pread_full(fd, out + (lo - first), (size_t)(hi - lo) * ev,
				    sp->off + (lo - sp->first_seq) * ev);
		if (ret)
			return ret;
	}
	/* The first CLOSE entry at or after `first`, then those in range. */
	uint64_t a = 0, b = t->ncloses;
	while (a < b) {
		uint64_t m = a + (b - a) / 2;
		if (t->closes[m].seq < first)
			a = m + 1;
		else
			b = m;
	}
	for (; a < t->ncloses && t->closes[a].seq < last; a++) {
		struct sp_spill_event *e = &out[t->closes[a].seq - first];
		if (e->region == SP_SPILL_NO_REGION)
			continue;
		e->end = t->closes[a].end;
		e->region = t->closes[a].region;
	}
	return 0;
}

void sp_spill_data_free(struct sp_spill_data *d)
{
	if (!d)
		return;
	for (uint32_t i = 0; i < d->nthreads; i++) {
		free(d->threads[i].ev);
		free(d->threads[i].spans);
		free(d->threads[i].closes);
	}
	free(d->threads);
	for (uint32_t i = 0; i < d->nregions; i++)
		free(d->regions[i].name);
	free(d->regions);
	for (uint32_t i = 0; i < d->nmodules; i++)
		free(d->modules[i].path);
	free(d->modules);
	memset(d, 0, sizeof *d);
}

int64_t sp_spill_ns(const struct sp_spill_data *d, int64_t tick)
{
	if (!d->hdr.clock_tsc)
		return tick;
	/* In double, saturated: a hostile file's pairs and ticks may be anything. */
	double k = d->last_tick > d->hdr.tick0
			   ? ((double)d->last_ns - (double)d->hdr.ns0) /
				     ((double)d->last_tick - (double)d->hdr.tick0)
			   : 1.0;
	double v = (double)d->hdr.ns0 +
		   __builtin_floor(((double)tick - (double)d->hdr.tick0) * k);
	if (!(v > -9.2e18)) /* also NaN */
		return v != v ? 0 : -INT64_MAX;
	return v < 9.2e18 ? (int64_t)v : INT64_MAX;
}

/* The header of the spill file open at fd, when it is one of this version
 * (a header of at most 4 KiB). */
static bool header_at(int fd, struct sp_spill_header *h)
{
	return pread(fd, h, sizeof *h, 0) == (ssize_t)sizeof *h &&
	       !memcmp(h->magic, SP_SPILL_MAGIC, 8) && h->version == SP_SPILL_VERSION &&
	       h->header_bytes >= sizeof *h && h->header_bytes <= 4096;
}

bool sp_spill_fd_of_tree(int fd, void *tree)
{
	struct sp_spill_header h;
	struct {
		struct sp_spill_rec r;
		struct sp_spill_tree t;
	} first;
	if (!header_at(fd, &h))
		return false;
	if (pread(fd, &first, sizeof first, (off_t)ALIGN8(h.header_bytes)) != (ssize_t)sizeof first)
		return false;
	if (first.r.magic != SP_SPILL_REC_MAGIC || first.r.type != SP_SPILL_TREE ||
	    first.r.bytes != sizeof first.t)
		return false;
	first.t.id[sizeof first.t.id - 1] = '\0';
	return strcmp(first.t.id, (const char *)tree) == 0;
}

bool sp_spill_fd_has_region(int fd)
{
	struct sp_spill_header h;
	struct stat st;
	if (fstat(fd, &st) < 0 || !header_at(fd, &h))
		return true; /* cannot tell: not taken for an empty one */
	uint64_t pos = ALIGN8(h.header_bytes), size = (uint64_t)st.st_size, skipped = 0;
	while (pos + sizeof(struct sp_spill_rec) <= size) {
		struct sp_spill_rec r;
		if (pread(fd, &r, sizeof r, (off_t)pos) != (ssize_t)sizeof r)
			return true;
		if (r.magic == SP_SPILL_REC_MAGIC && r.bytes <= REC_MAX_BYTES &&
		    pos + sizeof r + r.bytes <= size) {
			if (r.type == SP_SPILL_REGION)
				return true;
			pos = ALIGN8(pos + sizeof r + r.bytes);
			continue;
		}
		pos += 8; /* a hole, as parse() skips it */
		if ((skipped += 8) >= (1u << 20))
			return true;
	}
	return false;
}
