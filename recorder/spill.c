/* SPDX-License-Identifier: MIT */
/*
 * The spill file of this process: raw records (sp-spill.h) appended with
 * pwrite(2) at byte ranges reserved by one atomic add, so threads never
 * lock and a signal handler can append too. Threads spill their chunks at
 * the memory cap (slow path); the handler dumps what is still in memory.
 * The first failed write (disk full, quota, I/O error, short write) stops
 * the spill for good in this process: one warning, no write after it.
 */
#define _GNU_SOURCE
#include "spill.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "sp-spill.h"
#include "spill-read.h"
#include "thread-internal.h"

_Static_assert(sizeof(struct sp_event) == sizeof(struct sp_spill_event), "event layout");
_Static_assert(SP_OPEN == SP_SPILL_OPEN, "open marker");

/* Open calls whose event is already in the file. ev[i] is what the frame
 * points to now (the hot path closes it there); seq[i] its event number. */
struct sp_spill_slots {
	struct sp_event ev[SP_STACK_MAX];
	uint64_t seq[SP_STACK_MAX];
	uint8_t used[SP_STACK_MAX];
};

static int spill_fd = -1;
static bool spill_at_cap;
static pid_t owner;
static char path[4096];
static atomic_uint_least64_t file_end;
static atomic_uint names_written;
static atomic_int dumped;
static atomic_uint_least64_t events_total;
/* Set by the first failed write (its errno): every writer checks it first,
 * so a full disk costs one failing pwrite per thread in flight, not one per
 * later call. `warned` makes the warning one line per process. */
static atomic_int stopped;
static atomic_int warned;
static struct sp_spill_data loaded;
static bool have_loaded;

/* Modules already described by a MODULE record (normal context only). */
static pthread_mutex_t module_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t module_bias[256];
static int nmodules;

#define ALIGN8(n) (((n) + 7u) & ~(size_t)7u)

static int pwrite_all(const void *buf, size_t n, uint64_t off)
{
	const char *p = buf;
	while (n) {
		ssize_t w = pwrite(spill_fd, p, n, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

static size_t append(char *buf, size_t n, size_t cap, const char *s)
{
	while (*s && n < cap)
		buf[n++] = *s++;
	return n;
}

/* The one warning line, written with write(2): async-signal-safe (the
 * handler may be the one that hits the full disk) and no stdio lock taken
 * in the middle of the application's calls. `what` says what happens next. */
static void warn(const char *doing, int err, const char *what)
{
	if (atomic_exchange(&warned, 1))
		return;
	char msg[sizeof path + 256];
	const char *why = strerrordesc_np(err);
	size_t n = append(msg, 0, sizeof msg - 1, "scope-profiler: ");
	n = append(msg, n, sizeof msg - 1, path);
	n = append(msg, n, sizeof msg - 1, doing);
	n = append(msg, n, sizeof msg - 1, why ? why : "unknown error");
	n = append(msg, n, sizeof msg - 1, what);
	msg[n++] = '\n';
	ssize_t w = write(STDERR_FILENO, msg, n);
	(void)w; /* nothing better to do when stderr is gone too */
}

/* The first failure: no writer starts a pwrite after this. */
static void stop(int err)
{
	int none = 0;
	if (!atomic_compare_exchange_strong(&stopped, &none, err))
		return;
	warn(": spill stopped: ", err,
	     atomic_load(&dumped) ? "; the events still in memory are not all in it"
				  : "; later calls past the memory cap (SCOPE_PROFILER_MAX_MEMORY) "
				    "are dropped and counted");
}

/* Append one record: payload a then b, header last, so a record cut short
 * by a kill or a full disk has no header and reads as a hole. Any failure
 * stops the spill (stop()). Async-signal-safe. */
static int put_rec(uint32_t type, uint32_t thread, const void *a, size_t na, const void *b,
		   size_t nb)
{
	if (spill_fd < 0)
		return -EBADF;
	int err = atomic_load_explicit(&stopped, memory_order_relaxed);
	if (err)
		return -err;
	int e = errno;
	struct sp_spill_rec h = { SP_SPILL_REC_MAGIC, type, (uint32_t)(na + nb), thread };
	uint64_t off = atomic_fetch_add(&file_end, ALIGN8(sizeof h + na + nb));
	int ret = na ? pwrite_all(a, na, off + sizeof h) : 0;
	if (!ret && nb)
		ret = pwrite_all(b, nb, off + sizeof h + na);
	if (!ret)
		ret = pwrite_all(&h, sizeof h, off);
	if (ret)
		stop(-ret);
	errno = e;
	return ret;
}

bool sp_spill_active(void)
{
	return spill_fd >= 0 && spill_at_cap && !atomic_load_explicit(&stopped, memory_order_relaxed);
}

const char *sp_spill_path(void)
{
	return path;
}

uint64_t sp_spill_events_total(void)
{
	return atomic_load(&events_total);
}

int sp_spill_open(const char *output, bool at_cap)
{
	if (spill_fd >= 0)
		return 0;
	spill_at_cap = at_cap;
	if (snprintf(path, sizeof path, "%s" SP_SPILL_SUFFIX "pid%d", output, (int)getpid()) >=
	    (int)sizeof path)
		return -ENAMETOOLONG;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		path[0] = '\0';
		return -errno;
	}
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	struct sp_spill_header h = {
		.magic = SP_SPILL_MAGIC, .version = SP_SPILL_VERSION, .header_bytes = sizeof h,
		.pid = getpid(), .rank = -1, .clock_tsc = sp_clock_tsc,
		.start_ns = sp_recorder_start_ns(), .start_realtime_s = rt.tv_sec,
	};
	h.tick0 = sp_ticks();
	h.ns0 = sp_monotonic_ns();
	spill_fd = fd;
	owner = getpid();
	atomic_store(&file_end, ALIGN8(sizeof h));
	atomic_store(&names_written, 0);
	atomic_store(&dumped, 0);
	atomic_store(&stopped, 0);
	atomic_store(&warned, 0);
	atomic_store(&events_total, 0);
	nmodules = 0;
	int ret = pwrite_all(&h, sizeof h, 0);
	if (ret < 0) {
		warn(": could not write the spill file: ", -ret,
		     "; calls past the memory cap (SCOPE_PROFILER_MAX_MEMORY) are dropped and counted");
		sp_spill_remove();
		return ret;
	}
	sp_log(SP_LOG_DEBUG, "spill", "spill file %s open (%s)", path,
	       at_cap ? "written at the memory cap and on fatal signals" : "written on fatal signals");
	return 0;
}

void sp_spill_set_rank(const char *output, int rank, int size)
{
	if (spill_fd < 0)
		return;
	char to[sizeof path];
	if (snprintf(to, sizeof to, "%s" SP_SPILL_SUFFIX "rank%05d", output, rank) < (int)sizeof to &&
	    rename(path, to) == 0)
		memcpy(path, to, sizeof path);
	struct sp_spill_rank r = { rank, size };
	put_rec(SP_SPILL_RANK, 0, &r, sizeof r, NULL, 0);
}

/* MODULE record for a function address (normal context: dladdr locks). */
static int32_t module_of(uintptr_t addr)
{
	Dl_info info;
	struct link_map *lm = NULL;
	if (!dladdr1((void *)addr, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return -1;
	char exe[4096];
	const char *p = lm->l_name;
	if (!p || !*p) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		if (n <= 0)
			return -1;
		exe[n] = '\0';
		p = exe;
	}
	pthread_mutex_lock(&module_lock);
	int32_t i = 0;
	while (i < nmodules && module_bias[i] != lm->l_addr)
		i++;
	if (i == nmodules && nmodules < 256) {
		struct sp_spill_module m = { lm->l_addr, i, (uint32_t)strlen(p) };
		if (put_rec(SP_SPILL_MODULE, 0, &m, sizeof m, p, m.path_bytes) == 0)
			module_bias[nmodules++] = lm->l_addr;
	}
	pthread_mutex_unlock(&module_lock);
	return i < nmodules ? i : -1;
}

/* REGION records for regions created since the last sync. Two threads may
 * both write one: the reader keeps the last, they are identical. */
static void sync_regions(bool may_lock)
{
	uint32_t n = sp_region_count();
	uint32_t from = atomic_load(&names_written);
	for (uint32_t id = from; id < n; id++) {
		const struct sp_region *r = sp_region_get(id);
		if (!r)
			break;
		const char *name = r->name;
		struct sp_spill_region rec = { .id = id, .kind = r->kind, .addr = r->addr,
					       .module = -1,
					       .name_bytes = name ? (uint32_t)strlen(name) : 0 };
		if (!name && r->addr && may_lock)
			rec.module = module_of(r->addr);
		put_rec(SP_SPILL_REGION, 0, &rec, sizeof rec, name, rec.name_bytes);
	}
	while (from < n && !atomic_compare_exchange_weak(&names_written, &from, n))
		;
}

static void put_thread(const struct sp_rec_thread *t)
{
	struct sp_spill_thread r = { t->index, t->ident, t->native_id, t->start_ns, t->end_ns };
	put_rec(SP_SPILL_THREAD, t->index, &r, sizeof r, NULL, 0);
}

/* Events [seq, seq+n) of thread t, in records of at most 64 Ki events;
 * events_total counts those written. */
static int put_events(const struct sp_rec_thread *t, uint64_t seq, const struct sp_event *ev,
		      size_t n)
{
	while (n) {
		size_t k = n < 65536 ? n : 65536;
		struct sp_spill_events h = { .first_seq = seq, .n = (uint32_t)k };
		h.tick = sp_ticks();
		h.ns = sp_monotonic_ns();
		int ret = put_rec(SP_SPILL_EVENTS, t->index, &h, sizeof h, ev, k * sizeof *ev);
		if (ret)
			return ret;
		atomic_fetch_add(&events_total, k);
		seq += k;
		ev += k;
		n -= k;
	}
	return 0;
}

/* CLOSE entries, batched on the stack. slot[i] is the slot that entry i
 * frees once its record is written (NO_SLOT: none): a slot whose CLOSE
 * could not be written stays, and sp_spill_load() applies it from memory. */
#define NO_SLOT UINT16_MAX
struct closes {
	struct sp_rec_thread *t;
	uint32_t n;
	struct sp_spill_close v[64];
	uint16_t slot[64];
};

static void close_flush(struct closes *c)
{
	if (c->n && put_rec(SP_SPILL_CLOSE, c->t->index, c->v, c->n * sizeof *c->v, NULL, 0) == 0)
		for (uint32_t i = 0; i < c->n; i++)
			if (c->slot[i] != NO_SLOT)
				c->t->slots->used[c->slot[i]] = 0;
	c->n = 0;
}

static void close_add(struct closes *c, uint64_t seq, int64_t end, uint32_t region,
		      uint16_t slot)
{
	c->slot[c->n] = slot;
	c->v[c->n++] = (struct sp_spill_close){ seq, end, region, 0 };
	if (c->n == 64)
		close_flush(c);
}

static bool is_slot(const struct sp_rec_thread *t, const struct sp_event *ev)
{
	return t->slots && ev >= t->slots->ev && ev < t->slots->ev + SP_STACK_MAX;
}

/* Write the slots whose call ended (or was deleted) and free them once
 * written. With now != SP_OPEN (signal), still-open ones are written as
 * ending at now and no slot is freed. */
static void harvest(struct sp_rec_thread *t, struct closes *c, int64_t now)
{
	struct sp_spill_slots *s = t->slots;
	for (uint32_t i = 0; s && i < SP_STACK_MAX; i++) {
		if (!s->used[i])
			continue;
		const struct sp_event *e = &s->ev[i];
		if (e->end != SP_OPEN || e->region == SP_NO_REGION)
			close_add(c, s->seq[i], e->end, e->region, now == SP_OPEN ? (uint16_t)i : NO_SLOT);
		else if (now != SP_OPEN)
			close_add(c, s->seq[i], now, e->region, NO_SLOT);
	}
}

/* Open frames whose event is in chunk c (events seq..seq+n-1, now in the
 * file) close into a slot from now on. */
static void move_to_slots(struct sp_rec_thread *t, struct sp_chunk *c, size_t n, uint64_t seq)
{
	for (uint32_t i = 0; i < t->depth && i < SP_STACK_MAX; i++) {
		struct sp_frame *f = &t->stack[i];
		if (!f->ev || f->ev < c->events || f->ev >= c->events + n)
			continue;
		uint32_t k = 0;
		while (k < SP_STACK_MAX && t->slots->used[k])
			k++;
		if (k == SP_STACK_MAX)
			break; /* cannot happen: at most depth slots are open */
		t->slots->used[k] = 1;
		t->slots->ev[k] = *f->ev;
		t->slots->seq[k] = seq + (uint64_t)(f->ev - c->events);
		f->ev = &t->slots->ev[k];
	}
}

/*
 * All chunks are written before any frame moves to a slot: if a write
 * fails, the thread's memory is exactly as before (it keeps its chunks and
 * the caller drops), and the records already written for it are beyond
 * t->spilled, which finalize ignores (the same events come from memory).
 */
int sp_spill_thread(struct sp_rec_thread *t)
{
	if (!sp_spill_active() || getpid() != owner)
		return -EBADF;
	if (!t->slots && !(t->slots = calloc(1, sizeof *t->slots)))
		return -ENOMEM;
	sync_regions(true);
	put_thread(t);
	struct closes cl = { .t = t };
	harvest(t, &cl, SP_OPEN);
	close_flush(&cl);
	uint64_t seq = t->spilled;
	for (struct sp_chunk *c = sp_chunk_oldest_after(t->chunks, NULL); c;
	     c = sp_chunk_oldest_after(t->chunks, c)) {
		size_t n = sp_chunk_count(t, c, t->pos);
		int ret = put_events(t, seq, c->events, n);
		if (ret)
			return ret;
		seq += n;
	}
	seq = t->spilled;
	for (struct sp_chunk *c = sp_chunk_oldest_after(t->chunks, NULL); c;
	     c = sp_chunk_oldest_after(t->chunks, c)) {
		size_t n = sp_chunk_count(t, c, t->pos);
		move_to_slots(t, c, n, seq);
		seq += n;
	}
	t->spilled = seq;
	return 0;
}

/* Event number of an open frame's event in thread t's memory, or
 * UINT64_MAX if it is not there. */
static uint64_t seq_in_memory(const struct sp_rec_thread *t, const struct sp_event *ev)
{
	uint64_t seq = t->spilled;
	for (struct sp_chunk *c = sp_chunk_oldest_after(t->chunks, NULL); c;
	     c = sp_chunk_oldest_after(t->chunks, c)) {
		if (ev >= c->events && ev < c->events + c->capacity)
			return seq + (uint64_t)(ev - c->events);
		seq += c == t->chunks ? c->capacity : c->used;
	}
	return UINT64_MAX;
}

/* A thread that is spilling while the handler runs on another thread
 * finishes its spill first (its memory is then consistent again, and
 * recording is off, so it adds at most the call it is in): wait for it,
 * 500 ms at most. The thread the handler interrupted cannot finish. */
static void wait_spilled(const struct sp_rec_thread *t)
{
	if (t->native_id == (int64_t)syscall(SYS_gettid))
		return;
	struct timespec ms = { 0, 1000000 };
	for (int i = 0; i < 500 && atomic_load(&t->spilling); i++)
		nanosleep(&ms, NULL);
}

static void dump_thread(struct sp_rec_thread *t, int64_t now)
{
	put_thread(t);
	if (atomic_load(&t->spilling))
		wait_spilled(t);
	if (atomic_load(&t->spilling))
		return; /* interrupted mid-spill: its memory is half in the file */
	const struct sp_event *pos = t->pos;
	uint64_t seq = t->spilled;
	for (struct sp_chunk *c = sp_chunk_oldest_after(t->chunks, NULL); c;
	     c = sp_chunk_oldest_after(t->chunks, c)) {
		size_t n = sp_chunk_count(t, c, pos);
		if (n > c->capacity)
			break;
		put_events(t, seq, c->events, n);
		seq += n;
	}
	struct closes cl = { .t = t };
	harvest(t, &cl, now);
	uint32_t depth = t->depth < SP_STACK_MAX ? t->depth : SP_STACK_MAX;
	for (uint32_t i = 0; i < depth; i++) {
		const struct sp_event *ev = t->stack[i].ev;
		if (!ev || is_slot(t, ev) || ev->end != SP_OPEN)
			continue;
		uint64_t s = seq_in_memory(t, ev);
		if (s != UINT64_MAX)
			close_add(&cl, s, now, ev->region, NO_SLOT);
	}
	close_flush(&cl);
}

int sp_spill_dump(int signo)
{
	if (spill_fd < 0 || getpid() != owner)
		return -EBADF;
	if (atomic_exchange(&dumped, 1))
		return -EALREADY;
	atomic_store(&sp_recording, 0);
	int err = atomic_load(&stopped);
	if (err)
		return -err; /* the file holds what was written before it stopped */
	int64_t tick = sp_ticks(), ns = sp_monotonic_ns();
	sync_regions(false);
	for (struct sp_rec_thread *t = sp_thread_list_unlocked(); t; t = t->next)
		dump_thread(t, tick);
	struct sp_spill_drop d[64];
	uint32_t nd = 0, nreg = sp_region_count();
	for (uint32_t id = 0; id < nreg; id++) {
		const struct sp_region *r = sp_region_get(id);
		uint64_t v = r ? atomic_load(&r->dropped) : 0;
		if (v)
			d[nd++] = (struct sp_spill_drop){ id, 0, v };
		if (nd == 64 || (nd && id + 1 == nreg)) {
			put_rec(SP_SPILL_DROPS, 0, d, nd * sizeof *d, NULL, 0);
			nd = 0;
		}
	}
	struct sp_spill_trailer tr = { signo, 0, tick, ns, sp_thread_dropped_total() };
	put_rec(SP_SPILL_TRAILER, 0, &tr, sizeof tr, NULL, 0);
	err = atomic_load(&stopped);
	return -err;
}

/* Slots still in use hold ends the file may lack (their CLOSE record was
 * not written): apply them to the events read back, as the reader applies
 * CLOSE records. */
static void apply_slots(const struct sp_rec_thread *t, struct sp_spill_tdata *d)
{
	const struct sp_spill_slots *s = t->slots;
	for (uint32_t i = 0; s && i < SP_STACK_MAX; i++) {
		if (!s->used[i] || s->seq[i] >= d->n)
			continue;
		struct sp_spill_event *e = &d->ev[s->seq[i]];
		if (e->region == SP_SPILL_NO_REGION)
			continue;
		e->end = s->ev[i].end;
		e->region = s->ev[i].region;
	}
}

int sp_spill_load(void)
{
	if (spill_fd < 0 || getpid() != owner || !atomic_load(&events_total))
		return 0;
	/* Calls that were open when spilled have ended by now (finalize closed
	 * every open call): write their ends (so the file stays complete for
	 * `recover` if the write fails), then read everything back. After the
	 * spill stopped nothing is written: the ends come from the slots. */
	if (!atomic_load(&stopped)) {
		sync_regions(true);
		for (struct sp_rec_thread *t = sp_thread_first(); t; t = t->next) {
			struct closes cl = { .t = t };
			harvest(t, &cl, SP_OPEN);
			close_flush(&cl);
		}
	}
	int ret = sp_spill_read(path, &loaded);
	if (ret)
		return ret;
	have_loaded = true;
	for (struct sp_rec_thread *t = sp_thread_first(); t; t = t->next) {
		for (uint32_t i = 0; i < loaded.nthreads; i++) {
			struct sp_spill_tdata *d = &loaded.threads[i];
			if (d->index != t->index || !t->spilled)
				continue;
			if (d->n < t->spilled)
				return -EIO;
			apply_slots(t, d);
			t->prefix = (const struct sp_event *)d->ev;
			t->nprefix = t->spilled;
		}
	}
	return 0;
}

void sp_spill_unload(void)
{
	for (struct sp_rec_thread *t = sp_thread_first(); have_loaded && t; t = t->next) {
		t->prefix = NULL;
		t->nprefix = 0;
	}
	if (have_loaded)
		sp_spill_data_free(&loaded);
	have_loaded = false;
}

void sp_spill_close(void)
{
	if (spill_fd >= 0)
		close(spill_fd);
	spill_fd = -1;
}

void sp_spill_remove(void)
{
	if (spill_fd >= 0 && getpid() == owner && path[0])
		unlink(path);
	sp_spill_close();
	path[0] = '\0';
}
