/* SPDX-License-Identifier: MIT */
/*
 * The manual region API (scope_profiler.h): upstream's context API over the
 * recorder, and our own process-wide calls. A context keeps upstream's
 * bookkeeping (registry, entry counts, statistics, open stacks, status,
 * timestamps for the .spt writer); every call it records also goes to the
 * process's one timeline (sp_rec_enter_at/exit_at), so the HDF5 file, MPI
 * merge and CLI see it. A call reads the clock once at each end, for both.
 * One file because preload/meson.build lists it alone; each part is short
 * and separated by a banner.
 */
#define _GNU_SOURCE /* asprintf */
#include "scope_profiler.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "compiler.h"
#include "config.h"
#include "lifecycle.h"
#include "spill.h"
#include "recorder.h"
#include "sp-config.h"

#define DEPTH_MAX 64        /* open calls of one region (upstream's SP_MAX_DEPTH) */
#define OPEN_MAX 1024       /* context-wide open stack (SP_MAX_OPEN) */
#define INITIAL_SLOTS 1024  /* timestamp slots per region at registration */
/* Slots this large and up are mapped with transparent huge pages: one page
 * fault per 128 Ki calls instead of one per 256 (THP is "madvise" on
 * Debian), as the timeline's chunks do. */
#define MAPPED_SLOTS_BYTES ((size_t)2 << 20)

struct slot {
	int64_t start, end;     /* end -1 while open */
};

struct region {
	char *name;
	char *file;             /* NULL: no source location */
	int line;
	uint32_t rec;           /* the recorder's region id, SP_NO_REGION if none */
	/* Times are the timeline's ticks (sp_ticks()), the very values of its
	 * events; ns only when written or asked for (tick_map()). */
	struct slot *slot;      /* one per call for the .spt, freed at finalize */
	int64_t cap, slots;     /* capacity and slots used */
	int64_t entries, done, total, min, max;
	int64_t open[DEPTH_MAX]; /* open slots, innermost last */
	int64_t open_start[DEPTH_MAX]; /* their start times */
	int depth;
};

/*
 * A context. The fields below `lock` are touched only inside
 * ctx_enter()/ctx_leave(): by the context's one thread without a lock
 * while no other thread has used it, under `lock` by everyone from then
 * on (upstream is not thread-safe; we are, see docs/API.md). Neither is
 * held across a recorder call or the write of an HDF5 file.
 */
struct sp_profiler {
	_Atomic uintptr_t owner; /* thread_token() of its first user, 0 none yet */
	atomic_bool shared;     /* a second thread came: the lock for all, for good */
	atomic_int busy;        /* the owner is inside, unlocked (until shared) */
	pthread_mutex_t lock;
	int active, rank;
	char *prefix;           /* NULL when creation failed (no clock/memory) */
	char *path;             /* cached output path */
	sp_output_format format;
	sp_status last_error;
	struct region *regions;
	int nregions, capregions;
	int open_stack[OPEN_MAX]; /* region of each open call, newest last */
	uint64_t kept_bytes;    /* timestamp slots grown so far */
	bool kept_full;         /* MAX_MEMORY reached: no slot grows any more */
	int open_depth;         /* may exceed OPEN_MAX; only OPEN_MAX recorded */
};

static sp_profiler *default_ctx;

/* The MPI layer's world rank and size (mpi-record.h, which needs mpi.h). */
SP_HIDDEN extern int sp_mpi_world_rank, sp_mpi_world_size;
SP_HIDDEN extern bool sp_mpi_on;

/* Upstream's diagnostics, printed unconditionally as upstream does. */
__attribute__((format(printf, 1, 2))) static void warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("scope_profiler: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* ---- contexts: who may touch them ------------------------------------ */

/*
 * A context used by one thread (the common case) costs no lock: its first
 * user becomes its owner and enters with two plain stores and a load
 * (busy = 1, shared?, ..., busy = 0). The first call from any other thread
 * takes the lock and makes the context shared for good: it sets `shared`,
 * then issues a process-wide memory barrier (membarrier(2)) and waits until
 * the owner is out. That barrier is what makes the owner's side free (the
 * asymmetric Dekker of liburcu and folly): after it, either the owner's
 * busy = 1 is visible here, or the owner's next load of `shared` sees 1 and
 * it takes the lock. Without a usable membarrier, contexts are shared from
 * creation (always locked, as before).
 */
enum barrier { BARRIER_UNKNOWN, BARRIER_NONE, BARRIER_PRIVATE, BARRIER_GLOBAL };
static atomic_int barrier_kind;     /* what membarrier offers, queried once */
static pid_t barrier_registered;    /* PRIVATE_EXPEDITED registration is per process */
static pthread_mutex_t barrier_lock = PTHREAD_MUTEX_INITIALIZER;

static long membarrier(int cmd)
{
	return syscall(SYS_membarrier, cmd, 0, 0);
}

static enum barrier barrier_query(void)
{
	int k = atomic_load(&barrier_kind);
	if (k != BARRIER_UNKNOWN)
		return (enum barrier)k;
	long q = membarrier(MEMBARRIER_CMD_QUERY);
	k = BARRIER_NONE;
	if (q > 0 && (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
	    (q & MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED))
		k = BARRIER_PRIVATE;
	else if (q > 0 && (q & MEMBARRIER_CMD_GLOBAL))
		k = BARRIER_GLOBAL;
	atomic_store(&barrier_kind, k);
	return (enum barrier)k;
}

/* A full memory barrier on every running thread of the process; false if
 * the kernel refused every way (a seccomp filter installed after the
 * query). */
static bool barrier_all(void)
{
	pthread_mutex_lock(&barrier_lock);
	bool ok = false;
	if (barrier_query() == BARRIER_PRIVATE) {
		pid_t pid = getpid();
		if (barrier_registered != pid &&
		    membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0)
			barrier_registered = pid; /* first time, or first in a forked child */
		ok = barrier_registered == pid && membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0;
	}
	if (!ok)
		ok = membarrier(MEMBARRIER_CMD_GLOBAL) == 0;
	pthread_mutex_unlock(&barrier_lock);
	return ok;
}

/* This thread's token: the address of a thread-local. A token reused by a
 * later thread belongs to one that has exited, so it never runs alongside. */
static __thread char token_place SP_TLS_INITIAL_EXEC;

static inline uintptr_t thread_token(void)
{
	return (uintptr_t)&token_place;
}

/* Make @p shared; its lock held. Waits for the owner's call in flight. */
static SP_NOINLINE void make_shared(sp_profiler *p)
{
	atomic_store_explicit(&p->shared, true, memory_order_relaxed);
	if (!barrier_all()) {
		/* No barrier left: the owner's store buffer drains within
		 * microseconds; wait far longer than that before reading. */
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	while (atomic_load_explicit(&p->busy, memory_order_acquire))
		sched_yield();
}

static SP_NOINLINE bool ctx_lock(sp_profiler *p)
{
	pthread_mutex_lock(&p->lock);
	if (!atomic_load_explicit(&p->shared, memory_order_relaxed))
		make_shared(p);
	return true;
}

/*
 * Enter @p to read or change its fields; returns whether the lock was
 * taken, for ctx_leave(). Never nested: a function that enters calls no
 * other that does.
 */
static SP_ALWAYS_INLINE bool ctx_enter(sp_profiler *p)
{
	uintptr_t me = thread_token(), o = atomic_load_explicit(&p->owner, memory_order_relaxed);
	if (SP_LIKELY(o == me) ||
	    (o == 0 && atomic_compare_exchange_strong(&p->owner, &o, me))) {
		if (SP_LIKELY(!atomic_load_explicit(&p->shared, memory_order_relaxed))) {
			atomic_store_explicit(&p->busy, 1, memory_order_relaxed);
			/* The compiler keeps the store before the load; the CPU
			 * may not, which make_shared()'s barrier covers. */
			atomic_signal_fence(memory_order_seq_cst);
			if (SP_LIKELY(!atomic_load_explicit(&p->shared, memory_order_relaxed)))
				return false;
			atomic_store_explicit(&p->busy, 0, memory_order_release);
		}
	}
	return ctx_lock(p);
}

static SP_ALWAYS_INLINE void ctx_leave(sp_profiler *p, bool locked)
{
	if (locked)
		pthread_mutex_unlock(&p->lock);
	else
		atomic_store_explicit(&p->busy, 0, memory_order_release);
}

/* The map from the ticks a context keeps to CLOCK_MONOTONIC ns: the one
 * the process file's flush uses, so both files agree. */
static struct sp_clock_map tick_map(void)
{
	struct sp_clock_map m;
	sp_clock_map_now(&m);
	return m;
}

static int64_t ticks_to_ns(const struct sp_clock_map *m, int64_t d)
{
	return (int64_t)((double)d * m->ns_per_tick + 0.5);
}

/* The timeline's side of a call, at the context's own time stamp. */
static inline void timeline_enter(uint32_t rec, int64_t now)
{
	if (rec == SP_NO_REGION || SP_UNLIKELY(!atomic_load_explicit(&sp_recording, memory_order_relaxed)))
		return;
	struct sp_rec_thread *t = sp_thread_get();
	if (SP_LIKELY(t != NULL))
		sp_rec_enter_at(t, rec, now);
}

static inline void timeline_exit(uint32_t rec, int64_t now)
{
	if (rec == SP_NO_REGION || SP_UNLIKELY(!atomic_load_explicit(&sp_recording, memory_order_relaxed)))
		return;
	struct sp_rec_thread *t = sp_tls;
	if (SP_LIKELY(t != NULL))
		sp_rec_exit_at(t, rec, now);
}

SP_EXPORT int64_t sp_now_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

SP_EXPORT const char *sp_error_string(sp_status status)
{
	switch (status) {
	case SP_OK: return "ok";
	case SP_ERR_INACTIVE: return "profiler is not active";
	case SP_ERR_NO_CLOCK: return "no monotonic clock available";
	case SP_ERR_NO_MEMORY: return "out of memory";
	case SP_ERR_IO: return "output file could not be written";
	case SP_ERR_UNMATCHED_END: return "no open call to end";
	case SP_ERR_OPEN_SCOPES: return "a region is still open";
	case SP_ERR_UNSUPPORTED: return "output format not available in this build";
	}
	return "unknown status";
}

SP_EXPORT int sp_hdf5_available(void)
{
	return 1;
}

SP_EXPORT sp_output_format sp_default_output_format(void)
{
	return SP_OUTPUT_HDF5;
}

/* ---- contexts: creation, registry ------------------------------------ */

SP_EXPORT sp_profiler *sp_create(const char *prefix, int rank)
{
	sp_profiler *p = calloc(1, sizeof *p);
	if (!p) {
		fputs("scope_profiler: out of memory in sp_create\n", stderr);
		return NULL;
	}
	pthread_mutex_init(&p->lock, NULL);
	/* calloc: no owner yet, not busy. */
	atomic_store(&p->shared, barrier_query() == BARRIER_NONE);
	p->format = sp_default_output_format();
	if (sp_now_ns() < 0) {
		fputs("scope_profiler: no monotonic clock available (clock_gettime rejected every "
		      "candidate); profiling is disabled\n", stderr);
		p->last_error = SP_ERR_NO_CLOCK;
		return p;
	}
	p->prefix = strdup(prefix ? prefix : "scope_profile");
	if (!p->prefix) {
		fputs("scope_profiler: out of memory in sp_create\n", stderr);
		p->last_error = SP_ERR_NO_MEMORY;
		return p;
	}
	p->rank = rank;
	p->active = 1;
	sp_lifecycle_start(); /* the timeline records from load; harmless */
	return p;
}

/* Slots from @old_n to @new_n (0: free them); NULL when out of memory,
 * the old ones kept then. Small ones are malloc'ed, large ones mapped. */
static struct slot *resize_slots(struct slot *s, int64_t old_n, int64_t new_n)
{
	size_t ob = (size_t)old_n * sizeof *s, nb = (size_t)new_n * sizeof *s;
	if (ob >= MAPPED_SLOTS_BYTES && nb == 0) {
		munmap(s, ob);
		return NULL;
	}
	if (nb < MAPPED_SLOTS_BYTES)
		return nb ? realloc(s, nb) : (free(s), NULL);
	void *m;
	if (ob >= MAPPED_SLOTS_BYTES) {
		m = mremap(s, ob, nb, MREMAP_MAYMOVE);
	} else {
		m = mmap(NULL, nb, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m != MAP_FAILED) {
			memcpy(m, s, ob);
			free(s);
		}
	}
	if (m == MAP_FAILED)
		return NULL;
	madvise(m, nb, MADV_HUGEPAGE); /* a hint: refused, pages are 4 KiB */
	return m;
}

static void free_slots(sp_profiler *p)
{
	for (int i = 0; i < p->nregions; i++) {
		struct region *r = &p->regions[i];
		r->slot = resize_slots(r->slot, r->cap, 0);
		r->cap = 0;
	}
}

SP_EXPORT void sp_destroy(sp_profiler *p)
{
	if (!p)
		return;
	if (p == default_ctx) /* upstream leaves it dangling; we forget it */
		default_ctx = NULL;
	free_slots(p);
	for (int i = 0; i < p->nregions; i++) {
		free(p->regions[i].name);
		free(p->regions[i].file);
	}
	free(p->regions);
	free(p->prefix);
	free(p->path);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

static int find(const sp_profiler *p, const char *name)
{
	for (int i = 0; i < p->nregions; i++)
		if (strcmp(p->regions[i].name, name) == 0)
			return i;
	return -1;
}

/* A new region: its name, its slots and its recorder id. Context entered. */
static int add_region(sp_profiler *p, const char *name)
{
	if (p->nregions == p->capregions) {
		int cap = p->capregions ? 2 * p->capregions : 16;
		struct region *r = realloc(p->regions, (size_t)cap * sizeof *r);
		if (!r)
			return -1;
		p->regions = r;
		p->capregions = cap;
	}
	struct region *r = &p->regions[p->nregions];
	memset(r, 0, sizeof *r);
	r->name = strdup(name);
	r->slot = malloc(INITIAL_SLOTS * sizeof *r->slot);
	if (!r->name || !r->slot) {
		free(r->name);
		free(r->slot);
		return -1;
	}
	r->cap = INITIAL_SLOTS;
	r->line = -1;
	/* The same name in several contexts is one region of the timeline. */
	r->rec = sp_region_intern(name, SP_KIND_MANUAL);
	return p->nregions++;
}

SP_EXPORT int sp_profiler_region_at(sp_profiler *p, const char *name, const char *file, int line)
{
	if (!p)
		return -1;
	bool locked = ctx_enter(p);
	int h = -1;
	if (!p->active || !name) {
		p->last_error = SP_ERR_INACTIVE;
	} else if ((h = find(p, name)) < 0 && (h = add_region(p, name)) < 0) {
		warn("out of memory registering '%s'", name);
		p->last_error = SP_ERR_NO_MEMORY;
	} else {
		struct region *r = &p->regions[h];
		if (file && !r->file && (r->file = strdup(file)) != NULL) {
			r->line = line; /* first writer wins, backfill allowed */
			struct sp_region *rr = sp_region_get(r->rec);
			if (rr)
				sp_region_set_source(rr, file, line);
		}
		p->last_error = SP_OK;
	}
	ctx_leave(p, locked);
	return h;
}

SP_EXPORT int sp_profiler_region(sp_profiler *p, const char *name)
{
	return sp_profiler_region_at(p, name, NULL, 0);
}

SP_EXPORT int sp_profiler_num_regions(const sp_profiler *p)
{
	return p ? p->nregions : 0;
}

SP_EXPORT const char *sp_profiler_region_name(const sp_profiler *p, int region)
{
	if (!p || region < 0 || region >= p->nregions)
		return NULL;
	return p->regions[region].name;
}

/* ---- contexts: begin and end ----------------------------------------- */

static bool valid(const sp_profiler *p, int region)
{
	return p && p->active && region >= 0 && region < p->nregions;
}

/*
 * Grow a region's timestamp slots (the .spt file keeps every call). The
 * context's slots stay within SCOPE_PROFILER_MAX_MEMORY: past it, calls are
 * still timed, counted and on the process timeline (which has its own cap
 * and spill), only not kept for the .spt file; one line says so. Returns
 * -1 when out of memory (the call is then not timed, as upstream).
 */
static SP_NOINLINE int grow_slots(sp_profiler *p, struct region *r)
{
	int64_t cap = 2 * r->cap;
	uint64_t more = (uint64_t)(cap - r->cap) * sizeof(struct slot);
	if (p->kept_full || (sp_config.max_memory && p->kept_bytes + more > sp_config.max_memory)) {
		if (!p->kept_full)
			warn("the calls of this context fill SCOPE_PROFILER_MAX_MEMORY; later calls are "
			     "timed and counted, but not kept for the .spt file");
		p->kept_full = true;
		return 0;
	}
	struct slot *s = resize_slots(r->slot, r->cap, cap);
	if (!s) {
		warn("out of memory recording '%s'; this call is not timed", r->name);
		p->last_error = SP_ERR_NO_MEMORY;
		return -1;
	}
	r->slot = s;
	r->cap = cap;
	p->kept_bytes += more;
	return 0;
}

/* The begin bookkeeping; context entered. Returns the call's slot (its
 * token: slots past the kept ones are numbered on), -1 if the call is not
 * recorded; its start in *ret_start, read last. */
static SP_ALWAYS_INLINE int64_t begin_call(sp_profiler *p, int region, int64_t *ret_start)
{
	struct region *r = &p->regions[region];
	if (SP_UNLIKELY(r->slots == r->cap) && grow_slots(p, r) < 0)
		return -1;
	r->entries++;
	if (SP_UNLIKELY(r->depth >= DEPTH_MAX)) {
		warn("region '%s' nested deeper than %d; this call is not timed", r->name, DEPTH_MAX);
		return -1;
	}
	int64_t slot = r->slots++;
	int d = r->depth++;
	r->open[d] = slot;
	if (p->open_depth < OPEN_MAX)
		p->open_stack[p->open_depth] = region;
	p->open_depth++;
	if (slot < r->cap)
		r->slot[slot].end = -1;
	p->last_error = SP_OK;
	int64_t start = sp_ticks();
	r->open_start[d] = start;
	if (slot < r->cap)
		r->slot[slot].start = start;
	*ret_start = start;
	return slot;
}

/* Close the innermost open call of @region at @now; context entered. */
static SP_ALWAYS_INLINE void close_call(sp_profiler *p, int region, int64_t now)
{
	struct region *r = &p->regions[region];
	int64_t slot = r->open[--r->depth];
	if (p->open_depth > 0)
		p->open_depth--; /* positional, as upstream (docs/API.md) */
	if (slot < r->cap)
		r->slot[slot].end = now;
	int64_t d = now - r->open_start[r->depth];
	r->total += d;
	if (r->done == 0 || d < r->min)
		r->min = d;
	if (r->done == 0 || d > r->max)
		r->max = d;
	r->done++;
	p->last_error = SP_OK;
}

/* sp_begin() and sp_profiler_begin(), inlined in both. */
static SP_ALWAYS_INLINE void ctx_begin(sp_profiler *p, int region)
{
	if (SP_UNLIKELY(!p))
		return;
	bool locked = ctx_enter(p);
	uint32_t rec = SP_NO_REGION;
	int64_t start = 0;
	if (SP_LIKELY(valid(p, region)) && begin_call(p, region, &start) >= 0)
		rec = p->regions[region].rec;
	ctx_leave(p, locked);
	timeline_enter(rec, start);
}

/* sp_end() and sp_profiler_end(): the end is read first. */
static SP_ALWAYS_INLINE void ctx_end(sp_profiler *p, int region)
{
	if (SP_UNLIKELY(!p))
		return;
	int64_t now = sp_ticks();
	bool locked = ctx_enter(p);
	uint32_t rec = SP_NO_REGION;
	if (SP_LIKELY(valid(p, region))) {
		struct region *r = &p->regions[region];
		if (SP_UNLIKELY(r->depth == 0)) {
			warn("sp_end('%s') without a matching sp_begin", r->name);
			p->last_error = SP_ERR_UNMATCHED_END;
		} else {
			close_call(p, region, now);
			rec = r->rec;
		}
	}
	ctx_leave(p, locked);
	timeline_exit(rec, now);
}

SP_EXPORT void sp_profiler_begin(sp_profiler *p, int region)
{
	ctx_begin(p, region);
}

SP_EXPORT void sp_profiler_end(sp_profiler *p, int region)
{
	ctx_end(p, region);
}

SP_EXPORT int sp_profiler_end_last(sp_profiler *p)
{
	if (!p)
		return SP_ERR_UNMATCHED_END;
	int64_t now = sp_ticks();
	bool locked = ctx_enter(p);
	int ret = SP_ERR_UNMATCHED_END;
	uint32_t rec = SP_NO_REGION;
	if (p->active && p->open_depth > 0) {
		int top = --p->open_depth;
		int region = top < OPEN_MAX ? p->open_stack[top] : -1;
		if (region >= 0 && p->regions[region].depth > 0) {
			p->open_depth++; /* close_call() pops it */
			close_call(p, region, now);
			rec = p->regions[region].rec;
			ret = SP_OK;
		}
	}
	p->last_error = (sp_status)ret;
	ctx_leave(p, locked);
	timeline_exit(rec, now);
	return ret;
}

SP_EXPORT sp_scope sp_profiler_scope_begin(sp_profiler *p, int region)
{
	sp_scope s = { p, region, -1 };
	if (!p)
		return s;
	bool locked = ctx_enter(p);
	uint32_t rec = SP_NO_REGION;
	int64_t start = 0;
	if (valid(p, region)) {
		struct region *r = &p->regions[region];
		if (begin_call(p, region, &start) >= 0)
			rec = r->rec;
		/* Upstream's quirk: a refused begin names the innermost open call. */
		s.slot = r->depth ? r->open[r->depth - 1] : -1;
	}
	ctx_leave(p, locked);
	timeline_enter(rec, start);
	return s;
}

SP_EXPORT int sp_scope_end(sp_scope *s)
{
	if (!s || s->slot < 0)
		return SP_ERR_UNMATCHED_END;
	sp_profiler *p = s->profiler;
	if (!p) {
		s->slot = -1;
		return SP_ERR_UNMATCHED_END;
	}
	int64_t now = sp_ticks();
	bool locked = ctx_enter(p);
	int ret = SP_ERR_UNMATCHED_END;
	uint32_t rec = SP_NO_REGION;
	if (!valid(p, s->region)) {
		s->slot = -1;
	} else {
		struct region *r = &p->regions[s->region];
		if (r->depth == 0 || r->open[r->depth - 1] != s->slot) {
			p->last_error = SP_ERR_UNMATCHED_END; /* the token stays valid */
		} else {
			close_call(p, s->region, now);
			rec = r->rec;
			s->slot = -1;
			ret = SP_OK;
		}
	}
	ctx_leave(p, locked);
	timeline_exit(rec, now);
	return ret;
}

/* ---- contexts: counters and state ------------------------------------ */

SP_EXPORT int sp_profiler_reset(sp_profiler *p)
{
	if (!p)
		return SP_ERR_INACTIVE;
	bool locked = ctx_enter(p);
	int ret = SP_OK;
	for (int i = 0; i < p->nregions; i++)
		if (p->regions[i].depth)
			ret = SP_ERR_OPEN_SCOPES;
	for (int i = 0; ret == SP_OK && i < p->nregions; i++) {
		struct region *r = &p->regions[i];
		r->slots = r->entries = r->done = r->total = r->min = r->max = 0;
	}
	if (ret == SP_OK)
		p->open_depth = 0;
	p->last_error = (sp_status)ret;
	ctx_leave(p, locked);
	return ret;
}

SP_EXPORT int sp_profiler_get_region_stats(const sp_profiler *p, int region, sp_region_stats *stats)
{
	if (!p || !stats || region < 0 || region >= p->nregions)
		return SP_ERR_INACTIVE;
	struct sp_clock_map map = tick_map();
	sp_profiler *m = (sp_profiler *)p; /* entered only */
	bool locked = ctx_enter(m);
	const struct region *r = &p->regions[region];
	stats->calls = r->entries;
	stats->total_ns = ticks_to_ns(&map, r->total);
	stats->min_ns = ticks_to_ns(&map, r->min);
	stats->max_ns = ticks_to_ns(&map, r->max);
	ctx_leave(m, locked);
	return SP_OK;
}

SP_EXPORT int64_t sp_profiler_completed_calls(const sp_profiler *p, int region)
{
	if (!p || region < 0 || region >= p->nregions)
		return 0;
	return p->regions[region].done;
}

SP_EXPORT int sp_profiler_is_active(const sp_profiler *p)
{
	return p && p->active;
}

SP_EXPORT sp_status sp_profiler_last_error(const sp_profiler *p)
{
	return p ? p->last_error : SP_OK;
}

SP_EXPORT sp_output_format sp_profiler_output_format(const sp_profiler *p)
{
	return p ? p->format : sp_default_output_format();
}

SP_EXPORT int sp_profiler_set_output_format(sp_profiler *p, sp_output_format format)
{
	if (!p || !p->active)
		return SP_ERR_INACTIVE;
	bool locked = ctx_enter(p);
	int ret = SP_OK;
	if (format != SP_OUTPUT_HDF5 && format != SP_OUTPUT_TRACE) {
		ret = SP_ERR_UNSUPPORTED;
	} else if (format != p->format) {
		p->format = format;
		free(p->path);
		p->path = NULL;
	}
	p->last_error = (sp_status)ret;
	ctx_leave(p, locked);
	return ret;
}

SP_EXPORT const char *sp_profiler_output_path(const sp_profiler *p)
{
	if (!p)
		return NULL;
	sp_profiler *m = (sp_profiler *)p; /* the cache only */
	bool locked = ctx_enter(m);
	if (!m->path && asprintf(&m->path, "%s_rank%05d.%s", p->prefix ? p->prefix : "scope_profile",
				 p->prefix ? p->rank : 0, p->format == SP_OUTPUT_HDF5 ? "h5" : "spt") < 0)
		m->path = NULL;
	const char *path = m->path;
	ctx_leave(m, locked);
	return path;
}

/* ---- contexts: writing ----------------------------------------------- */

/* Upstream's written count: every slot, or those before the outermost
 * still-open call. */
static int64_t written(const struct region *r)
{
	int64_t n = r->depth ? r->open[0] : r->slots;
	return n < r->cap ? n : r->cap; /* the kept ones (grow_slots) */
}

static bool put(FILE *f, const void *v, size_t n)
{
	return n == 0 || fwrite(v, n, 1, f) == 1;
}

/* The starts (@end false) or ends of @n slots, ticks as CLOCK_MONOTONIC
 * ns (an open call's -1 stays). */
static bool put_times(FILE *f, const struct sp_clock_map *m, const struct slot *s, int64_t n,
		      bool end)
{
	int64_t buf[512];
	for (int64_t i = 0; i < n;) {
		size_t k = 0;
		for (; k < sizeof buf / sizeof buf[0] && i < n; k++, i++) {
			int64_t t = end ? s[i].end : s[i].start;
			buf[k] = t == -1 ? -1 : sp_clock_to_ns(m, t);
		}
		if (!put(f, buf, k * sizeof buf[0]))
			return false;
	}
	return true;
}

/* The context's own calls as an upstream .spt v2 file (docs/API.md).
 * Context entered: the buffers cannot move meanwhile. */
static int write_spt(sp_profiler *p, const char *path, const struct sp_clock_map *m)
{
	FILE *f = fopen(path, "wb");
	if (!f) {
		warn("cannot write %s", path);
		return SP_ERR_IO;
	}
	int32_t version = SP_FORMAT_VERSION, rank = p->rank;
	int64_t nreg = 0;
	for (int i = 0; i < p->nregions; i++)
		nreg += written(&p->regions[i]) > 0;
	bool ok = put(f, "SCOPEPRF", 8) && put(f, &version, 4) && put(f, &rank, 4) && put(f, &nreg, 8);
	for (int i = 0; ok && i < p->nregions; i++) {
		const struct region *r = &p->regions[i];
		int64_t n = written(r);
		if (n == 0)
			continue;
		int32_t len = (int32_t)strlen(r->name), slen = r->file ? (int32_t)strlen(r->file) : 0;
		int32_t line = r->file ? r->line : -1;
		ok = put(f, &len, 4) && put(f, r->name, (size_t)len) && put(f, &slen, 4) &&
		     put(f, r->file, (size_t)slen) && put(f, &line, 4) && put(f, &n, 8) &&
		     put_times(f, m, r->slot, n, false) && put_times(f, m, r->slot, n, true);
	}
	if (fclose(f) != 0 || !ok) {
		warn("failed to write %s", path);
		return SP_ERR_IO;
	}
	return SP_OK;
}

/* The process timeline, as sp_flush() snapshots it, to @path as @rank. */
static int write_hdf5(const char *path, int rank)
{
	if (sp_lifecycle_state() != SP_STATE_RECORDING) {
		warn("cannot write %s (the process file was already written)", path);
		return SP_ERR_IO;
	}
	int size = 1;
	if (sp_lifecycle_mpi_owned) {
		rank = sp_mpi_world_rank; /* contents: the MPI rank (docs/API.md) */
		size = sp_mpi_world_size;
	} else if (rank < 0) {
		rank = 0;
	}
	if (rank >= size)
		size = rank + 1;
	sp_recorder_stop();
	if (sp_lifecycle_resolve_hook)
		sp_lifecycle_resolve_hook();
	sp_spill_load();
	int ret = sp_lifecycle_write_rank(path, rank, size);
	sp_spill_unload();
	atomic_store(&sp_recording, 1);
	if (ret)
		warn("failed to write %s", path);
	return ret ? SP_ERR_IO : SP_OK;
}

/* Write the current format; 0 or 1 (upstream's flush result). */
static int write_output(sp_profiler *p)
{
	const char *path = sp_profiler_output_path(p);
	if (!path) {
		p->last_error = SP_ERR_NO_MEMORY;
		return 1;
	}
	int st;
	if (p->format == SP_OUTPUT_TRACE) {
		struct sp_clock_map map = tick_map();
		bool locked = ctx_enter(p);
		st = write_spt(p, path, &map);
		ctx_leave(p, locked);
	} else {
		st = write_hdf5(path, p->rank);
	}
	if (st != SP_OK)
		p->last_error = (sp_status)st;
	return st != SP_OK;
}

SP_EXPORT int sp_profiler_flush(sp_profiler *p)
{
	if (!p || !p->active)
		return 0;
	return write_output(p);
}

SP_EXPORT int sp_profiler_finalize(sp_profiler *p)
{
	if (!p || !p->active)
		return 0;
	bool locked = ctx_enter(p);
	for (int i = 0; i < p->nregions; i++) {
		if (p->regions[i].depth) {
			warn("region '%s' still open at sp_finalize (depth %d); its last call(s) are dropped",
			     p->regions[i].name, p->regions[i].depth);
			p->last_error = SP_ERR_OPEN_SCOPES;
		}
	}
	ctx_leave(p, locked);
	int ret = write_output(p);
	locked = ctx_enter(p);
	p->active = 0;
	free_slots(p);
	for (int i = 0; i < p->nregions; i++)
		p->regions[i].depth = 0;
	p->open_depth = 0;
	ctx_leave(p, locked);
	return ret;
}

/* ---- the default context --------------------------------------------- */

SP_EXPORT int sp_init(const char *prefix, int rank)
{
	sp_destroy(default_ctx);
	default_ctx = sp_create(prefix, rank);
	if (!default_ctx) {
		fputs("scope_profiler: out of memory in sp_init\n", stderr);
		return 1;
	}
	return default_ctx->active ? 0 : 1;
}

SP_EXPORT sp_profiler *sp_default_profiler(void)
{
	return default_ctx;
}

SP_EXPORT int sp_region(const char *name)
{
	return sp_profiler_region(default_ctx, name);
}

SP_EXPORT int sp_region_at(const char *name, const char *source_file, int source_line)
{
	return sp_profiler_region_at(default_ctx, name, source_file, source_line);
}

SP_EXPORT void sp_begin(int region)
{
	ctx_begin(default_ctx, region);
}

SP_EXPORT void sp_end(int region)
{
	ctx_end(default_ctx, region);
}

SP_EXPORT int64_t sp_num_calls(int region)
{
	sp_profiler *p = default_ctx;
	if (!p || region < 0 || region >= p->nregions)
		return 0;
	return p->regions[region].entries;
}

SP_EXPORT int sp_is_active(void)
{
	return sp_profiler_is_active(default_ctx);
}

SP_EXPORT int sp_set_output_format(sp_output_format format)
{
	return sp_profiler_set_output_format(default_ctx, format);
}

SP_EXPORT sp_output_format sp_current_output_format(void)
{
	return sp_profiler_output_format(default_ctx);
}

SP_EXPORT const char *sp_output_path(void)
{
	return sp_profiler_output_path(default_ctx);
}

SP_EXPORT int sp_finalize(void)
{
	return sp_profiler_finalize(default_ctx);
}

/* ---- our process-wide additions -------------------------------------- */

SP_EXPORT void sp_begin_name(const char *name)
{
	if (name && atomic_load_explicit(&sp_recording, memory_order_relaxed))
		sp_rec_enter(sp_region_intern(name, SP_KIND_MANUAL));
}

SP_EXPORT void sp_end_name(const char *name)
{
	if (name && atomic_load_explicit(&sp_recording, memory_order_relaxed))
		sp_rec_exit(sp_region_intern(name, SP_KIND_MANUAL));
}

SP_EXPORT int sp_set_output(const char *output)
{
	if (!output || !*output)
		return -EINVAL;
	int ret = sp_lifecycle_start();
	if (ret == -ESHUTDOWN)
		return ret;
	char *copy = strdup(output);
	if (!copy)
		return -ENOMEM;
	free(sp_config.output);
	sp_config.output = copy;
	return 0;
}

SP_EXPORT int sp_flush(void)
{
	if (sp_lifecycle_state() != SP_STATE_RECORDING)
		return -ESHUTDOWN;
	/* Pause so the snapshot sees settled buffers, resolve names and move
	 * counters as finalize does (both are repeatable), write, resume. */
	sp_recorder_stop();
	if (sp_lifecycle_resolve_hook)
		sp_lifecycle_resolve_hook();
	sp_spill_load(); /* events already spilled are part of the checkpoint */
	/* Under MPI every rank checkpoints to its own file, never to the
	 * shared output (which MPI_Finalize's merge writes). */
	int ret = sp_lifecycle_mpi_owned ? sp_mpi_flush_rank() : sp_lifecycle_write_local();
	sp_spill_unload();
	atomic_store(&sp_recording, 1);
	return ret;
}

SP_EXPORT int sp_stop(void)
{
	if (sp_lifecycle_mpi_owned) {
		/* The MPI_Finalize wrapper writes the merged file. */
		return sp_lifecycle_state() == SP_STATE_RECORDING ? 0 : -EALREADY;
	}
	if (!sp_lifecycle_begin_finalize())
		return -EALREADY;
	int ret = sp_lifecycle_write_local();
	sp_lifecycle_end_finalize();
	return ret;
}

SP_EXPORT int sp_mpi_intercepted(void)
{
	return sp_lifecycle_mpi_owned && sp_mpi_on;
}

SP_EXPORT const char *sp_version(void)
{
	return SP_VERSION;
}
