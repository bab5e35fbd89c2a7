/* SPDX-License-Identifier: MIT */
/*
 * Function regions behind the -finstrument-functions hooks: the global
 * address table (filter decision and module, made once per function), the
 * per-thread cache fill, the filtered enter/exit paths (MIN_DURATION,
 * MAX_DEPTH, auto-throttle) and the finalize step that publishes counters
 * and resolves names.
 */
#define _GNU_SOURCE
#include "functions.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

unsigned sp_fn_mode;
int64_t sp_fn_min_ticks;
int64_t sp_fn_max_depth;
uint64_t sp_fn_thr_calls;
int64_t sp_fn_thr_ticks;
__thread struct sp_fn_thread *sp_fn_tls __attribute__((tls_model("initial-exec")));

/*
 * Global function table: address -> {region, module}. Insert-only open
 * addressing like the region table: readers probe without a lock, inserts
 * take fn_lock, a full map is replaced by a bigger copy published with a
 * release store and the old one is kept (a reader may still probe it).
 * fn_lock also serializes the symbolizer (libdw is not thread-safe).
 *
 * Filter decision (why here): include/exclude act on the demangled name,
 * which only the symbolizer knows. When a filter is set, the name of a
 * function is resolved here, once per function for the whole process, on
 * its first call ever; every later call is one cache probe. An excluded
 * function gets no region at all, so it costs a probe per call and is never
 * in the file. Without filters nothing is resolved before finalize.
 */
struct fn_info {
	uintptr_t addr;
	uint32_t region; /* SP_NO_REGION: excluded */
	int32_t module;  /* sp_sym_module_of() result, < 0 unknown */
};

struct fn_map {
	size_t mask, used;
	struct fn_map *older;
	struct fn_info *_Atomic slots[];
};

static struct fn_map *_Atomic fn_map;
static pthread_mutex_t fn_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sp_fn_thread *thread_list; /* guarded by fn_lock */
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static bool functions_off;

static uint64_t hash_addr(uintptr_t a)
{
	uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15ull;
	return h ^ (h >> 31);
}

static struct fn_info *map_find(struct fn_map *m, uintptr_t addr)
{
	if (!m)
		return NULL;
	for (size_t i = hash_addr(addr) & m->mask;; i = (i + 1) & m->mask) {
		struct fn_info *fi = atomic_load_explicit(&m->slots[i], memory_order_acquire);
		if (!fi || fi->addr == addr)
			return fi;
	}
}

static void map_put(struct fn_map *m, struct fn_info *fi)
{
	size_t i = hash_addr(fi->addr) & m->mask;
	while (atomic_load_explicit(&m->slots[i], memory_order_relaxed))
		i = (i + 1) & m->mask;
	atomic_store_explicit(&m->slots[i], fi, memory_order_release);
	m->used++;
}

/* Caller holds fn_lock. Keeps the load under 1/2. */
static struct fn_map *map_reserve(void)
{
	struct fn_map *m = atomic_load_explicit(&fn_map, memory_order_relaxed);
	if (m && (m->used + 1) * 2 <= m->mask + 1)
		return m;
	size_t size = m ? (m->mask + 1) * 2 : 1024;
	struct fn_map *n = calloc(1, sizeof *n + size * sizeof(n->slots[0]));
	if (!n)
		return NULL;
	n->mask = size - 1;
	n->older = m;
	for (size_t i = 0; m && i <= m->mask; i++) {
		struct fn_info *fi = atomic_load_explicit(&m->slots[i], memory_order_relaxed);
		if (fi)
			map_put(n, fi);
	}
	atomic_store_explicit(&fn_map, n, memory_order_release);
	return n;
}

/* First call of addr in the process: decide its filter state. Caller
 * holds fn_lock. */
static uint32_t decide_region(uintptr_t addr, int module)
{
	if (functions_off)
		return SP_NO_REGION;
	if (sp_filter_active()) {
		struct sp_symbol sym;
		if (sp_sym_resolve(module, addr, false, &sym) < 0)
			return SP_NO_REGION;
		bool keep = sp_filter_accepts(sym.name);
		sp_sym_free(&sym);
		if (!keep)
			return SP_NO_REGION;
	}
	return sp_region_for_addr(addr);
}

static struct fn_info *fn_lookup_or_insert(uintptr_t addr)
{
	struct fn_info *fi = map_find(atomic_load_explicit(&fn_map, memory_order_acquire), addr);
	if (fi)
		return fi;
	pthread_mutex_lock(&fn_lock);
	fi = map_find(atomic_load_explicit(&fn_map, memory_order_relaxed), addr);
	struct fn_map *m;
	if (!fi && (m = map_reserve()) != NULL && (fi = malloc(sizeof *fi)) != NULL) {
		fi->addr = addr;
		fi->module = sp_sym_module_of(addr);
		fi->region = decide_region(addr, fi->module);
		map_put(m, fi);
	}
	pthread_mutex_unlock(&fn_lock);
	return fi;
}

/* Grow the thread's counters so that `region` has a slot. */
static int ensure_stats(struct sp_fn_thread *h, uint32_t region)
{
	if (region < h->nstats)
		return 0;
	uint32_t n = h->nstats ? h->nstats : 256;
	while (n <= region)
		n *= 2;
	struct sp_fn_stats *s = realloc(h->stats, n * sizeof *s);
	if (!s)
		return -ENOMEM;
	memset(s + h->nstats, 0, (n - h->nstats) * sizeof *s);
	h->stats = s;
	h->nstats = n;
	return 0;
}

struct sp_fn_entry *sp_fn_cache_fill(struct sp_fn_thread *h, uintptr_t addr)
{
	int saved = errno;
	int busy = h->t->busy;
	h->t->busy = 1; /* the symbolizer and malloc may run instrumented code */
	struct sp_fn_entry *e = NULL;
	struct fn_info *fi = fn_lookup_or_insert(addr);
	if (fi && (fi->region == SP_NO_REGION || !sp_fn_mode || ensure_stats(h, fi->region) == 0)) {
		e = &h->cache[sp_fn_slot(addr)];
		e->addr = addr;
		e->region = fi->region;
	}
	h->t->busy = busy;
	errno = saved;
	return e;
}

static void setup_once_fn(void)
{
	sp_fn_setup();
}

struct sp_fn_thread *sp_fn_thread_attach(void)
{
	static __thread int attaching __attribute__((tls_model("initial-exec")));
	if (attaching)
		return NULL;
	attaching = 1;
	int saved = errno;
	pthread_once(&setup_once, setup_once_fn);
	struct sp_thread *t = sp_thread_get();
	struct sp_fn_thread *h = t ? calloc(1, sizeof *h) : NULL;
	if (h) {
		h->t = t;
		pthread_mutex_lock(&fn_lock);
		h->next = thread_list;
		thread_list = h;
		pthread_mutex_unlock(&fn_lock);
		sp_fn_tls = h;
	}
	errno = saved;
	attaching = 0;
	return h;
}

/* ---- filtered paths ------------------------------------------------------ */

/* errno: both filtered paths may reach the chunk allocator; the caller
 * (a hook) relies on them to keep errno. */
static void enter_filtered(struct sp_fn_thread *h, uint32_t region)
{
	struct sp_thread *t = h->t;
	int64_t now = sp_ticks();
	uint32_t d = t->depth;
	if (SP_UNLIKELY(d >= SP_STACK_MAX)) {
		sp_thread_enter_slow(t, region, now); /* counted as dropped */
		return;
	}
	h->stats[region].open++; /* undone below if no frame is pushed */
	if (h->stats[region].throttled || (sp_fn_max_depth && d >= sp_fn_max_depth)) {
		t->stack[t->depth++] = (struct sp_frame){
			.ev = NULL, .start = now, .region = region,
			.flags = SP_FRAME_UNTIMED | SP_FRAME_FUNCTION,
		};
		return;
	}
	if (SP_UNLIKELY(t->pos == t->end)) {
		sp_thread_enter_slow(t, region, now);
		if (t->depth > d)
			t->stack[t->depth - 1].flags |= SP_FRAME_FUNCTION;
		else
			h->stats[region].open--;
		return;
	}
	struct sp_event *e = t->pos++;
	*e = (struct sp_event){ .start = now, .end = SP_OPEN, .region = region, .aux = 0 };
	t->stack[t->depth++] = (struct sp_frame){
		.ev = e, .start = now, .region = region, .flags = SP_FRAME_FUNCTION,
	};
}

/*
 * Close one frame at `now`. A function frame's call either stays on the
 * timeline or is counted in the thread's hidden counters, so that
 * events + hidden == calls for every function. A deleted event is the last
 * one of the chunk when its callees were deleted too (they are shorter), so
 * it is usually rewound; otherwise it is marked SP_NO_REGION and the
 * snapshot skips it.
 */
static void close_frame(struct sp_fn_thread *h, struct sp_frame *f, int64_t now)
{
	struct sp_thread *t = h->t;
	if (!(f->flags & SP_FRAME_FUNCTION)) {
		if (f->ev)
			f->ev->end = now;
		return;
	}
	struct sp_fn_stats *st = &h->stats[f->region];
	int64_t d = now - f->start;
	st->open--;
	if (f->flags & SP_FRAME_DROPPED) {
		/* already counted as dropped when it entered */
	} else if (!f->ev || d < sp_fn_min_ticks) {
		if (f->ev) {
			if (f->ev + 1 == t->pos)
				t->pos--;
			else
				f->ev->region = SP_NO_REGION;
		}
		st->hidden++;
		st->hidden_ticks += d;
	} else {
		f->ev->end = now;
	}
	if ((sp_fn_mode & SP_FN_THROTTLE) && !st->throttled) {
		st->calls++;
		st->ticks += d;
		if (st->calls >= sp_fn_thr_calls && st->ticks < sp_fn_thr_ticks * (int64_t)st->calls)
			st->throttled = 1;
	}
}

void sp_fn_enter_filtered(struct sp_fn_thread *h, uint32_t region)
{
	int saved = errno;
	enter_filtered(h, region);
	errno = saved;
}

void sp_fn_exit_filtered(struct sp_fn_thread *h, uint32_t region)
{
	struct sp_thread *t = h->t;
	int64_t now = sp_ticks();
	if (SP_LIKELY(t->depth && !t->overflow && t->stack[t->depth - 1].region == region)) {
		t->depth--;
		close_frame(h, &t->stack[t->depth], now);
		return;
	}
	sp_fn_exit_unwind(h, region, now);
}

/*
 * The innermost frame is not `region`'s: frames were skipped by longjmp (or
 * by an exception through uninstrumented code). Close every frame above the
 * function's innermost frame at `now`, then the function's own. An exit
 * with no matching frame (recording started inside it) is ignored: the
 * stack never underflows.
 */
void sp_fn_exit_unwind(struct sp_fn_thread *h, uint32_t region, int64_t now)
{
	struct sp_thread *t = h->t;
	if (t->overflow) {
		t->overflow--;
		return;
	}
	uint32_t i = t->depth;
	while (i > 0 && t->stack[i - 1].region != region)
		i--;
	if (i == 0)
		return;
	while (t->depth >= i) {
		t->depth--;
		close_frame(h, &t->stack[t->depth], now);
	}
}

/* ---- setup and finalize -------------------------------------------------- */

int sp_fn_setup(void)
{
	functions_off = !sp_config.functions;
	int ret = sp_filter_set(sp_config.include, sp_config.exclude);
	double ticks_per_ns = 1.0;
	bool timed = sp_config.min_duration_ns > 0 || sp_config.throttle_calls > 0;
	if (timed && sp_clock_tsc) {
		/* Waits until 2 ms after the start of recording at most. */
		struct sp_clock_map cm;
		sp_clock_map_now(&cm);
		ticks_per_ns = 1.0 / cm.ns_per_tick;
	}
	unsigned mode = 0;
	if (sp_config.min_duration_ns > 0) {
		sp_fn_min_ticks = (int64_t)llround((double)sp_config.min_duration_ns * ticks_per_ns);
		mode |= SP_FN_MIN_DURATION;
	}
	if (sp_config.max_depth > 0) {
		sp_fn_max_depth = sp_config.max_depth;
		mode |= SP_FN_MAX_DEPTH;
	}
	if (sp_config.throttle_calls > 0) {
		sp_fn_thr_calls = (uint64_t)sp_config.throttle_calls;
		sp_fn_thr_ticks = (int64_t)llround((double)sp_config.throttle_mean_ns * ticks_per_ns);
		mode |= SP_FN_THROTTLE;
		if (sp_config.throttle_timing && strcmp(sp_config.throttle_timing, "estimate") == 0)
			mode |= SP_FN_ESTIMATE;
	}
	if (!sp_clock_tsc)
		mode |= SP_FN_SLOW_CLOCK;
	sp_fn_mode = mode;
	return ret;
}

/* Move hidden-call counters into the region atomics (ticks -> ns). */
static void publish_counters(const struct sp_clock_map *cm)
{
	for (struct sp_fn_thread *h = thread_list; h; h = h->next) {
		for (uint32_t r = 0; r < h->nstats; r++) {
			struct sp_fn_stats *st = &h->stats[r];
			struct sp_region *reg = st->hidden || st->estimated ? sp_region_get(r) : NULL;
			if (!reg)
				continue;
			/* Counted-only calls (THROTTLE_TIMING=estimate) take the
			 * mean of the calls the throttle decision was made on. */
			double ticks = (double)st->hidden_ticks;
			if (st->estimated && st->calls)
				ticks += (double)st->estimated * ((double)st->ticks / (double)st->calls);
			atomic_fetch_add(&reg->throttled_calls, st->hidden + st->estimated);
			atomic_fetch_add(&reg->throttled_ns, (int64_t)llround(ticks * cm->ns_per_tick));
			st->hidden = 0;
			st->hidden_ticks = 0;
			st->estimated = 0;
		}
	}
}

static void resolve_all(void)
{
	struct fn_map *m = atomic_load_explicit(&fn_map, memory_order_acquire);
	for (size_t i = 0; m && i <= m->mask; i++) {
		struct fn_info *fi = atomic_load_explicit(&m->slots[i], memory_order_relaxed);
		struct sp_region *r = fi && fi->region != SP_NO_REGION ? sp_region_get(fi->region) : NULL;
		if (!r || (r->name && r->source_line >= 0))
			continue;
		struct sp_symbol sym;
		if (sp_sym_resolve(fi->module, fi->addr, true, &sym) < 0)
			continue;
		if (!r->name)
			sp_region_set_name(r, sym.name);
		if (sym.file || sym.line >= 0)
			sp_region_set_source(r, sym.file, sym.line);
		sp_sym_free(&sym);
	}
}

void sp_fn_finalize(void)
{
	int saved = errno;
	pthread_mutex_lock(&fn_lock);
	struct sp_clock_map cm;
	sp_clock_map_now(&cm);
	publish_counters(&cm);
	resolve_all();
	sp_sym_close_all();
	pthread_mutex_unlock(&fn_lock);
	errno = saved;
}
