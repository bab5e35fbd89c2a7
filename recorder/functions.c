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
#include "log.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "sp-array.h"
#include "sp-map.h"
#include "sp-wire.h"

unsigned sp_fn_mode;
int64_t sp_fn_min_ticks;
int64_t sp_fn_max_depth;
uint64_t sp_fn_thr_calls;
int64_t sp_fn_thr_ticks;
uint64_t sp_fn_thr_early_calls;
int64_t sp_fn_thr_early_ticks;
int64_t sp_fn_timed_cost;
static double sample_p = 1.0 / 64; /* THROTTLE_SAMPLE: probability a throttled call is timed */
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
 *
 * dlclose (sp_fn_forget_range): the entries of an unloaded module's range
 * become stale and every thread's cache slots for it are cleared. The next
 * call at such an address asks which module is mapped there now: the same
 * file at the same bias keeps its entry (a plugin reloaded); another module
 * gets a new entry with a new region, and the old one moves to the retired
 * list, which finalize still resolves (from the old module's file).
 */
struct fn_info {
	uintptr_t addr;
	uint32_t region; /* SP_NO_REGION: excluded */
	int32_t module;  /* sp_sym_module_of() result, < 0 unknown */
	atomic_int stale;        /* its module was unloaded (under fn_lock) */
	bool named;              /* named by another rank (fn_lock): not resolved here */
	struct fn_info *retired; /* next on the retired list (fn_lock) */
};

struct fn_map {
	size_t mask, used;
	struct fn_map *older;
	struct fn_info *_Atomic slots[];
};

static struct fn_map *_Atomic fn_map;
static struct fn_info *retired_list; /* replaced entries, guarded by fn_lock */
/* The lowest and highest address in the table (fn_lock): an unloaded
 * range outside them (an MPI library's components at its finalize) has
 * nothing to forget. */
static uintptr_t fn_lo = UINTPTR_MAX, fn_hi;
static pthread_mutex_t fn_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sp_fn_thread *thread_list; /* guarded by fn_lock */
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
/* FUNCTIONS=0: no thread state is made (sp_fn_thread_attach), so the
 * hooks return at once (cyg-hooks.c). Set once by sp_fn_setup. */
atomic_bool sp_fn_off;

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

/* First call of addr in the process (or in a module loaded where another
 * was: `fresh`): decide its filter state. Caller holds fn_lock. */
static uint32_t decide_region(uintptr_t addr, int module, bool fresh)
{
	if (atomic_load_explicit(&sp_fn_off, memory_order_relaxed))
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
	return fresh ? sp_region_new_for_addr(addr) : sp_region_for_addr(addr);
}

/* The current map's slot holding addr's entry. Caller holds fn_lock. */
static struct fn_info *_Atomic *map_slot(struct fn_map *m, uintptr_t addr)
{
	for (size_t i = hash_addr(addr) & m->mask;; i = (i + 1) & m->mask) {
		struct fn_info *fi = atomic_load_explicit(&m->slots[i], memory_order_relaxed);
		if (!fi)
			return NULL;
		if (fi->addr == addr)
			return &m->slots[i];
	}
}

/* A stale entry's address is called again. Caller holds fn_lock. Returns
 * the entry to use. */
static struct fn_info *renew(struct fn_map *m, struct fn_info *fi)
{
	int module = sp_sym_module_of(fi->addr);
	if (module == fi->module) {
		atomic_store(&fi->stale, 0); /* the same file at the same place */
		return fi;
	}
	struct fn_info *_Atomic *slot = map_slot(m, fi->addr);
	struct fn_info *n = slot ? malloc(sizeof *n) : NULL;
	if (!n)
		return NULL;
	*n = (struct fn_info){ .addr = fi->addr, .module = module };
	n->region = decide_region(fi->addr, module, true);
	fi->retired = retired_list;
	retired_list = fi;
	atomic_store_explicit(slot, n, memory_order_release);
	return n;
}

static struct fn_info *fn_lookup_or_insert(uintptr_t addr)
{
	struct fn_info *fi = map_find(atomic_load_explicit(&fn_map, memory_order_acquire), addr);
	if (fi && !atomic_load_explicit(&fi->stale, memory_order_acquire))
		return fi;
	pthread_mutex_lock(&fn_lock);
	struct fn_map *m = atomic_load_explicit(&fn_map, memory_order_relaxed);
	fi = map_find(m, addr);
	if (fi && atomic_load_explicit(&fi->stale, memory_order_relaxed)) {
		fi = renew(m, fi);
	} else if (!fi && (m = map_reserve()) != NULL && (fi = calloc(1, sizeof *fi)) != NULL) {
		fi->addr = addr;
		fi->module = sp_sym_module_of(addr);
		fi->region = decide_region(addr, fi->module, false);
		map_put(m, fi);
		fn_lo = addr < fn_lo ? addr : fn_lo;
		fn_hi = addr > fn_hi ? addr : fn_hi;
	}
	pthread_mutex_unlock(&fn_lock);
	return fi;
}

bool sp_fn_table_used(void)
{
	return atomic_load_explicit(&fn_map, memory_order_relaxed) != NULL;
}

/*
 * [lo, hi) was unmapped (dlclose). Its entries turn stale and no cache
 * slot of any thread keeps one of its addresses. Writing another thread's
 * cache: only the slot's addr, with one relaxed store of 0, so its owner
 * sees the old slot or a miss (it cannot be running the unloaded code);
 * a miss refills under fn_lock, which this holds.
 */
void sp_fn_forget_range(uintptr_t lo, uintptr_t hi)
{
	int saved = errno;
	pthread_mutex_lock(&fn_lock);
	struct fn_map *m = atomic_load_explicit(&fn_map, memory_order_relaxed);
	if (hi <= fn_lo || lo > fn_hi)
		m = NULL; /* no entry, so no cache slot, lies in the range */
	for (size_t i = 0; m && i <= m->mask; i++) {
		struct fn_info *fi = atomic_load_explicit(&m->slots[i], memory_order_relaxed);
		if (fi && fi->addr >= lo && fi->addr < hi)
			atomic_store_explicit(&fi->stale, 1, memory_order_release);
	}
	for (struct sp_fn_thread *h = m ? thread_list : NULL; h; h = h->next) {
		uintptr_t c = __atomic_load_n(&h->counted_last, __ATOMIC_RELAXED);
		if (c >= lo && c < hi)
			__atomic_store_n(&h->counted_last, 0, __ATOMIC_RELAXED);
		for (uint32_t k = 0; k < SP_FN_CACHE_SIZE; k++) {
			uintptr_t a = __atomic_load_n(&h->cache[k].addr, __ATOMIC_RELAXED);
			if (a >= lo && a < hi)
				__atomic_store_n(&h->cache[k].addr, 0, __ATOMIC_RELAXED);
		}
	}
	pthread_mutex_unlock(&fn_lock);
	errno = saved;
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
	uint64_t *c = realloc(h->counts, n * sizeof *c);
	if (!c)
		return -ENOMEM; /* stats grew, nstats did not: retried next time */
	memset(c + h->nstats, 0, (n - h->nstats) * sizeof *c);
	h->counts = c;
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
		struct sp_fn_stats *st = fi->region != SP_NO_REGION && sp_fn_mode ? &h->stats[fi->region] : NULL;
		e->gate = st && (sp_fn_mode & SP_FN_COUNT_ONLY) && !st->open ? st->throttled : 0;
	}
	h->t->busy = busy;
	errno = saved;
	return e;
}

static void gate(struct sp_fn_thread *h, struct sp_fn_stats *st, uint32_t region);
static void close_abandoned(struct sp_fn_thread *h, struct sp_frame_at at, int64_t now);

/*
 * One part of a probe (a hook's work from its timestamp to its end). A
 * hook's own work is well under a microsecond; a part longer than 2^16
 * ticks (22 us of a 3 GHz TSC, 65 us of ns ticks) was preempted or
 * interrupted, and counts as that much: on an oversubscribed node one
 * descheduled probe would otherwise carry milliseconds into the mean and
 * the overhead estimate (seen: 15x the measured overhead on 8 ranks).
 */
#define PROBE_PART_MAX (1 << 16)
static inline int64_t probe_part(int64_t since)
{
	int64_t d = sp_ticks() - since;
	return d < PROBE_PART_MAX ? d : PROBE_PART_MAX;
}

/* ---- sampled timing ------------------------------------------------------ */

/* A per-thread seed: the clock, the thread and the process, mixed. */
static uint64_t seed_rng(const struct sp_fn_thread *h)
{
	uint64_t x = (uint64_t)sp_ticks() ^ ((uint64_t)(uintptr_t)h << 17) ^
		     ((uint64_t)getpid() << 40) ^ 0x9E3779B97F4A7C15ull;
	for (int i = 0; i < 4; i++) { /* splitmix64 rounds */
		x += 0x9E3779B97F4A7C15ull;
		x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
		x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
		x ^= x >> 31;
	}
	return x ? x : 1;
}

/*
 * Calls until the next timed one: geometric with mean 1/p, so that every
 * throttled call is timed with probability p independently of the others
 * (Bernoulli sampling: loops cannot alias with it). Drawn by inverse CDF
 * from a table of the distribution's 1024 quantile midpoints (the exact
 * quantiles of the geometric law, filled at setup), so a draw costs a
 * xorshift and a load instead of two logarithms. Estimate mode never
 * samples.
 */
#define GAP_BITS 10
static uint64_t gap_table[1u << GAP_BITS];

static void fill_gap_table(void)
{
	for (unsigned i = 0; i < (1u << GAP_BITS); i++) {
		double u = ((double)i + 0.5) / (double)(1u << GAP_BITS);
		double g = sample_p >= 1.0 ? 0 : floor(log1p(-u) / log1p(-sample_p));
		gap_table[i] = g >= 1e18 ? UINT64_MAX : (uint64_t)g + 1;
	}
}

uint64_t sp_fn_next_gap(struct sp_fn_thread *h)
{
	if (!(sp_fn_mode & SP_FN_SAMPLED))
		return UINT64_MAX;
	uint64_t x = h->rng; /* xorshift64* */
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	h->rng = x;
	return gap_table[(x * 0x2545F4914F6CDD1Dull) >> (64 - GAP_BITS)];
}

void sp_fn_enter_sampled(struct sp_fn_thread *h, uint32_t region, struct sp_frame_at at)
{
	int saved = errno;
	struct sp_rec_thread *t = h->t;
	h->counted_last = 0; /* exits probe again: this call's closes its frame */
	h->countdown = sp_fn_next_gap(h);
	if (SP_UNLIKELY(sp_frame_top_sp(t) <= at.sp))
		close_abandoned(h, at, sp_ticks());
	if (SP_LIKELY(t->depth < SP_STACK_MAX)) {
		h->stats[region].open++;
		gate(h, &h->stats[region], region);
		struct sp_frame *f = sp_frame_push(t, (struct sp_frame){
			.ev = NULL, .region = region,
			.flags = SP_FRAME_UNTIMED | SP_FRAME_FUNCTION | SP_FRAME_SAMPLED,
			.timed0 = h->timed,
		}, at);
		h->timed++;
		f->start = sp_ticks(); /* last: our own work stays out of the call's time */
	} else {
		h->counts[region]--; /* not counted here after all */
		sp_thread_enter_slow(t, region, sp_ticks(), at); /* counted as dropped */
	}
	errno = saved;
}

/* Overhead estimate: a counted-only call's cost (measured by the hooks at
 * the first attach) and a timed call's (probed during the run). */
static double count_call_ns = -1, timed_call_ns = -1;
/* What an exit that looks its counted function up adds (long_exits), and
 * the mean of the two over the run's counted calls (publish_count_cost). */
static double long_exit_cost_ns = -1, count_mean_ns = -1;
/* What a sampled call's duration holds of our own work (ticks): the
 * duration the sampled path gives an empty function, measured by the hooks
 * at the first attach; < 0 unknown. */
static double sample_bias_ticks = -1, sample_bias_ns = -1;

void sp_fn_set_sample_bias_ticks(double ticks)
{
	sample_bias_ticks = ticks;
}

double sp_fn_sample_bias_ns(void)
{
	return sample_bias_ns;
}

void sp_fn_set_count_call_ns(double leaf_ns, double long_exit_ns)
{
	count_call_ns = leaf_ns;
	long_exit_cost_ns = long_exit_ns;
}

double sp_fn_count_call_ns(void)
{
	return count_mean_ns >= 0 ? count_mean_ns : count_call_ns;
}

/* Under fn_lock, with the counters published: the mean cost of a counted
 * call over the run's so far (long exits from each thread's counter,
 * counted calls the threads' counts, the sampled ones included). */
static uint64_t all_counted, all_long;
static void publish_count_cost(uint64_t counted, uint64_t long_exits)
{
	all_counted += counted;
	all_long += long_exits;
	if (!(count_call_ns >= 0) || !(long_exit_cost_ns >= 0) || !all_counted)
		return;
	double share = (double)all_long / (double)all_counted;
	count_mean_ns = count_call_ns + (share < 1 ? share : 1) * long_exit_cost_ns;
	sp_log(SP_LOG_DEBUG, "functions", "counted call: %.6f ns + %llu long exits of %llu counted "
	       "calls x %.6f ns = %.6f ns", count_call_ns, (unsigned long long)all_long,
	       (unsigned long long)all_counted, long_exit_cost_ns, count_mean_ns);
}

double sp_fn_timed_call_ns(void)
{
	return timed_call_ns;
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
	struct sp_rec_thread *t = atomic_load_explicit(&sp_fn_off, memory_order_relaxed)
					  ? NULL : sp_thread_get();
	struct sp_fn_thread *h = t ? calloc(1, sizeof *h) : NULL;
	if (h) {
		h->t = t;
		h->rng = seed_rng(h);
		h->countdown = sp_fn_next_gap(h);
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

static struct sp_region *stats_region(struct sp_fn_stats *st, uint32_t region)
{
	if (SP_UNLIKELY(!st->reg))
		st->reg = sp_region_get(region);
	return st->reg;
}

/* Bring the function's cache slot (if it holds the function) in step with
 * its throttle state on this thread. */
static void gate(struct sp_fn_thread *h, struct sp_fn_stats *st, uint32_t region)
{
	if (!(sp_fn_mode & SP_FN_COUNT_ONLY))
		return;
	struct sp_region *r = stats_region(st, region);
	if (!r)
		return;
	struct sp_fn_entry *e = &h->cache[sp_fn_slot(r->addr)];
	if (e->addr == r->addr && e->region == region)
		e->gate = st->open ? 0 : st->throttled;
}

bool sp_fn_region_patched(struct sp_fn_stats *st, uint32_t region)
{
	struct sp_region *r = stats_region(st, region);
	return r && (atomic_load_explicit(&r->flags, memory_order_relaxed) & SP_REGION_PATCHED);
}

static void region_patched(struct sp_region *r)
{
	int64_t zero = 0;
	atomic_compare_exchange_strong(&r->patched_since, &zero, sp_ticks());
	atomic_fetch_or(&r->flags, SP_REGION_PATCHED);
}

void sp_fn_mark_patched(struct sp_fn_thread *h, struct sp_fn_stats *st, uint32_t region)
{
	struct sp_region *r = stats_region(st, region);
	st->throttled = 2;
	if (!r)
		return;
	if (h)
		gate(h, st, region);
	region_patched(r);
}

void sp_fn_region_set_patched(uint32_t region)
{
	struct sp_region *r = sp_region_get(region);
	if (r)
		region_patched(r);
}

/* Another thread throttled the function: this one follows. */
static bool adopt_throttle(struct sp_fn_stats *st, uint32_t region)
{
	struct sp_region *r = stats_region(st, region);
	if (!r || !(atomic_load_explicit(&r->flags, memory_order_relaxed) & SP_REGION_THROTTLED))
		return false;
	st->throttled = 1;
	st->win_mean = st->calls ? st->incl / (int64_t)st->calls : 0;
	return true;
}

/*
 * The throttle decision, once per function for the whole process: after a
 * window of THROTTLE_CALLS calls on one thread whose mean own cost is below
 * THROTTLE_MEAN, or already after the window's first THROTTLE_EARLY calls
 * when their mean is below a tenth of it (the early decision: an accessor
 * under 1 us after 50 calls is as far under 10 us after 1000, and each of
 * the 950 calls more costs two timestamps and an event). Own cost: the duration
 * less the profiler's timing of the timed calls nested in it
 * (sp_fn_timed_cost each), so that a small function whose callees are
 * still recorded is not kept forever. A window that does not qualify
 * starts the next one: the decision follows changes of behaviour. The
 * first thread to decide publishes it.
 */
static void throttle_account(struct sp_fn_thread *h, struct sp_fn_stats *st,
			     const struct sp_frame *f, int64_t d, int64_t now)
{
	int64_t own = d - (int64_t)(h->timed - f->timed0 - 1) * sp_fn_timed_cost;
	st->calls++;
	st->ticks += own > 0 ? own : 0;
	st->incl += d;
	bool early = st->calls == sp_fn_thr_early_calls &&
		     st->ticks < sp_fn_thr_early_ticks * (int64_t)st->calls;
	if (st->calls < sp_fn_thr_calls && !early)
		return;
	if (early || st->ticks < sp_fn_thr_ticks * (int64_t)st->calls) {
		st->throttled = 1;
		st->win_mean = st->incl / (int64_t)st->calls;
		struct sp_region *r = stats_region(st, f->region);
		if (r) {
			int64_t zero = 0;
			atomic_compare_exchange_strong(&r->throttled_since, &zero, now);
			atomic_fetch_or(&r->flags, SP_REGION_THROTTLED);
		}
		return;
	}
	st->calls = 0;
	st->ticks = 0;
	st->incl = 0;
}

/* errno: both filtered paths may reach the chunk allocator; the caller
 * (a hook) relies on them to keep errno. */
static void enter_filtered(struct sp_fn_thread *h, uint32_t region, struct sp_frame_at at)
{
	struct sp_rec_thread *t = h->t;
	int64_t now = sp_ticks();
	if (SP_UNLIKELY(sp_frame_top_sp(t) <= at.sp))
		close_abandoned(h, at, now);
	uint32_t d = t->depth;
	if (SP_UNLIKELY(d >= SP_STACK_MAX)) {
		sp_thread_enter_slow(t, region, now, at); /* counted as dropped */
		return;
	}
	struct sp_fn_stats *st = &h->stats[region];
	if ((sp_fn_mode & SP_FN_THROTTLE) && !st->throttled && adopt_throttle(st, region)) {
		gate(h, st, region);
		if ((sp_fn_mode & SP_FN_COUNT_ONLY) && !st->open) {
			/* The first call after another thread decided. */
			h->counts[region]++;
			return;
		}
	}
	st->open++; /* undone below if no frame is pushed */
	if (st->throttled)
		gate(h, st, region);
	uint64_t timed0 = h->timed++;
	uint32_t probe = 0;
	if (SP_UNLIKELY(!h->probe_left--)) {
		h->probe_left = SP_FN_PROBE_EVERY - 1;
		probe = SP_FRAME_PROBE;
	}
	if (st->throttled || (sp_fn_max_depth && d >= sp_fn_max_depth)) {
		sp_frame_push(t, (struct sp_frame){
			.ev = NULL, .start = now, .region = region,
			.flags = SP_FRAME_UNTIMED | SP_FRAME_FUNCTION | probe, .timed0 = timed0,
		}, at);
		if (probe)
			h->probe_ticks += probe_part(now);
		return;
	}
	if (SP_UNLIKELY(t->pos == t->end)) {
		sp_thread_enter_slow(t, region, now, at);
		if (t->depth > d) {
			t->stack[t->depth - 1].flags |= SP_FRAME_FUNCTION;
			t->stack[t->depth - 1].timed0 = timed0;
		} else {
			st->open--;
			if (st->throttled)
				gate(h, st, region);
		}
		return;
	}
	sp_event_open_at(t, region, now, at);
	t->stack[d].flags = SP_FRAME_FUNCTION | probe;
	t->stack[d].timed0 = timed0;
	if (probe)
		h->probe_ticks += probe_part(now);
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
	struct sp_rec_thread *t = h->t;
	if (!(f->flags & SP_FRAME_FUNCTION)) {
		if (f->ev)
			f->ev->end = now;
		return;
	}
	struct sp_fn_stats *st = &h->stats[f->region];
	int64_t d = now - f->start;
	st->open--;
	if (f->flags & SP_FRAME_SAMPLED) {
		st->smp_n++; /* counted in h->counts when it entered */
		st->smp_ticks += d;
		st->smp_sq += (double)d * (double)d;
		gate(h, st, f->region);
		return;
	}
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
	if ((sp_fn_mode & SP_FN_THROTTLE) && !st->throttled)
		throttle_account(h, st, f, d, now);
	if (st->throttled)
		gate(h, st, f->region);
}

void sp_fn_enter_filtered(struct sp_fn_thread *h, uint32_t region, struct sp_frame_at at)
{
	int saved = errno;
	enter_filtered(h, region, at);
	errno = saved;
}

void sp_fn_enter_rare(struct sp_fn_thread *h, uint32_t region, int64_t now, struct sp_frame_at at)
{
	int saved = errno;
	struct sp_rec_thread *t = h->t;
	if (sp_frame_top_sp(t) <= at.sp)
		close_abandoned(h, at, now);
	if (sp_event_full(t))
		sp_thread_enter_slow(t, region, now, at);
	else
		sp_event_open_at(t, region, now, at);
	errno = saved;
}

void sp_fn_exit_filtered(struct sp_fn_thread *h, uint32_t region, uintptr_t sp)
{
	struct sp_rec_thread *t = h->t;
	int64_t now = sp_ticks();
	if (SP_LIKELY(t->depth && !t->overflow && t->stack[t->depth - 1].region == region)) {
		struct sp_frame *f = &t->stack[--t->depth];
		close_frame(h, f, now);
		if (SP_UNLIKELY(f->flags & SP_FRAME_PROBE)) {
			h->probe_ticks += probe_part(now);
			h->probe_n++;
		}
		return;
	}
	sp_fn_exit_unwind(h, region, now, sp);
}

/* Pop the innermost frame, left without its exit, at `now`. A sampled
 * call whose exit was never seen (longjmp, or its exit hook call patched to
 * a NOP while it ran) was counted when it entered; its duration is unknown,
 * so it stays out of the sample. */
static void close_left(struct sp_fn_thread *h, int64_t now)
{
	struct sp_rec_thread *t = h->t;
	struct sp_frame *f = &t->stack[--t->depth];
	if (f->flags & SP_FRAME_SAMPLED) {
		struct sp_fn_stats *st = &h->stats[f->region];
		st->open--;
		gate(h, st, f->region);
		return;
	}
	close_frame(h, f, now);
}

/*
 * A handler's first call on the signal stack (sigaltstack) is above the
 * frames it interrupted when that stack lies higher: it nests, it does not
 * abandon them. One system call, on this rare path only.
 */
static bool enters_signal_stack(const struct sp_rec_thread *t, uintptr_t sp)
{
	stack_t ss;
	if (sigaltstack(NULL, &ss) != 0 || !(ss.ss_flags & SS_ONSTACK))
		return false;
	uintptr_t lo = (uintptr_t)ss.ss_sp, hi = lo + ss.ss_size, top = sp_frame_top_sp(t);
	return sp >= lo && sp < hi && !(top >= lo && top < hi);
}

/*
 * An enter at `at`, at or above the innermost open frame's sp. A live
 * caller's sp is always higher than a real call's, so every frame below
 * at.sp was left without its exit (longjmp out of it, an exception through
 * code whose exits are not instrumented), and so were the calls past
 * SP_STACK_MAX. A frame at the same sp is either an inlined call's host
 * (inlined copies share their host's frame) or a call left at the same
 * place: the same copy of code entered again there (same pc) means the
 * latter, for it and every frame above it. Otherwise the new call nests
 * (see docs/HOOKS.md for what this misses). Frames without a place (MPI,
 * manual regions) stop the walk. All close at the new call's time. Caller
 * saves errno.
 */
static void close_abandoned(struct sp_fn_thread *h, struct sp_frame_at at, int64_t now)
{
	struct sp_rec_thread *t = h->t;
	if (at.sp == SP_FRAME_NO_SP)
		return;
	/* keep: the frames that stay open, counted from the bottom */
	uint32_t keep = t->depth;
	while (keep && t->stack_at[keep].sp < at.sp)
		keep--;
	uint32_t d = keep;
	while (d && t->stack_at[d].sp == at.sp && t->stack_at[d].pc != at.pc)
		d--;
	if (d && t->stack_at[d].sp == at.sp)
		keep = d - 1;
	if (keep == t->depth || enters_signal_stack(t, at.sp))
		return; /* an inlined call in its host; a handler's on its own stack */
	t->overflow = 0;
	while (t->depth > keep)
		close_left(h, now);
}

/*
 * The innermost frame is not `region`'s (or not an event): frames were
 * skipped by longjmp (or by an exception through uninstrumented code).
 * Frames below the exit's stack address sp are the function's abandoned
 * callees: closed at `now`. Then, as without addresses: every frame above
 * the function's innermost frame, and the function's own. An exit with no
 * matching frame (recording started inside it) is ignored: the stack never
 * underflows.
 */
void sp_fn_exit_unwind(struct sp_fn_thread *h, uint32_t region, int64_t now, uintptr_t sp)
{
	struct sp_rec_thread *t = h->t;
	if (sp != SP_FRAME_NO_SP && t->depth && sp_frame_top_sp(t) < sp) {
		t->overflow = 0;
		while (t->depth && sp_frame_top_sp(t) < sp)
			close_left(h, now);
	}
	if (t->overflow) {
		t->overflow--;
		return;
	}
	uint32_t i = t->depth;
	while (i > 0 && t->stack[i - 1].region != region)
		i--;
	if (i == 0)
		return;
	while (t->depth > i)
		close_left(h, now);
	close_frame(h, &t->stack[--t->depth], now);
}

/* ---- setup and finalize -------------------------------------------------- */

int sp_fn_setup(void)
{
	atomic_store(&sp_fn_off, !sp_config.functions);
	int ret = sp_filter_set(sp_config.include, sp_config.exclude);
	double ticks_per_ns = 1.0;
	bool timed = sp_config.min_duration_ns > 0 || sp_config.throttle_calls > 0;
	if (timed && sp_clock_tsc) {
		/* Waits until 0.2 ms after the start of recording at most. */
		struct sp_clock_map cm;
		sp_clock_map_rough(&cm);
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
		sp_fn_thr_early_calls = sp_throttle_early_calls(sp_config.throttle_early,
								sp_config.throttle_calls);
		sp_fn_thr_early_ticks = sp_fn_thr_ticks / SP_THROTTLE_EARLY_MEAN_DIV;
		mode |= SP_FN_THROTTLE;
		const char *timing = sp_config.throttle_timing ? sp_config.throttle_timing : "sampled";
		if (strcmp(timing, "estimate") == 0)
			mode |= SP_FN_ESTIMATE;
		else if (strcmp(timing, "sampled") == 0)
			mode |= SP_FN_SAMPLED;
		sample_p = 1.0 / (double)(sp_config.throttle_sample > 0 ? sp_config.throttle_sample : 256);
		fill_gap_table();
		double cost = sp_recorder_event_cost_ns();
		sp_fn_timed_cost = cost > 0 ? (int64_t)llround(cost * ticks_per_ns) : 0;
	}
	if (!sp_clock_tsc)
		mode |= SP_FN_SLOW_CLOCK;
	sp_fn_mode = mode;
	return ret;
}

/* Per region, over the threads: what publish_counters() adds up. */
struct fn_total {
	uint64_t hidden, thr_calls, smp_n, win_n;
	int64_t hidden_ticks, smp_ticks, win_mean_sum;
	double smp_sq;
};

/*
 * The estimate of a throttled function's counted-only calls, in ticks, and
 * the half-width of its 95 % interval (-1 unknown). Sampled mode: the calls
 * timed are a Bernoulli sample of the N counted ones, so given m >= 1 they
 * are a simple random sample and N x their mean is unbiased; its standard
 * error is N s / sqrt(m) x sqrt(1 - m/N) (finite population). Estimate mode,
 * or no call sampled yet: N x the mean of the deciding window, no interval.
 */
static double estimate_ticks(const struct fn_total *a, double *ret_ci)
{
	double n = (double)a->thr_calls, m = (double)a->smp_n;
	*ret_ci = -1;
	if (!a->thr_calls)
		return 0;
	if (a->smp_n == 0) {
		double mean = a->win_n ? (double)a->win_mean_sum / (double)a->win_n : 0;
		return n * mean;
	}
	double mean = (double)a->smp_ticks / m;
	double var = a->smp_n > 1 ? (a->smp_sq - m * mean * mean) / (m - 1) : 0;
	if (var < 0)
		var = 0;
	*ret_ci = a->smp_n > 1 ? 1.96 * n * sqrt(var / m * (1 - m / n)) : -1;
	/* Each timed call also timed part of our hooks: a constant per call,
	 * which moves the mean, not the spread. Without it a function of a
	 * few ns would be estimated at the hooks' cost, many times its own. */
	if (sample_bias_ticks > 0)
		mean = mean > sample_bias_ticks ? mean - sample_bias_ticks : 0;
	return n * mean;
}

void sp_fn_forget_counts(void)
{
	/* no lock: the child has one thread, and fn_lock may have been held
	 * by a parent thread at fork() */
	all_counted = all_long = 0;
	count_mean_ns = -1;
	for (struct sp_fn_thread *h = thread_list; h; h = h->next) {
		h->long_exits = 0;
		for (uint32_t r = 0; r < h->nstats; r++) {
			struct sp_fn_stats *st = &h->stats[r];
			h->counts[r] = 0;
			st->hidden = st->smp_n = 0;
			st->hidden_ticks = st->smp_ticks = 0;
			st->smp_sq = 0;
		}
	}
	for (uint32_t r = 0, n = sp_region_count(); r < n; r++) {
		struct sp_region *reg = sp_region_get(r);
		if (!reg)
			continue;
		atomic_store(&reg->dropped, 0);
		atomic_store(&reg->throttled_calls, 0);
		atomic_store(&reg->throttled_ns, 0);
		atomic_store(&reg->throttle_timed, 0);
		atomic_store(&reg->throttled_ci_ns, 0);
	}
}

/* Move every thread's counters into the region atomics (ticks -> ns). */
static void publish_counters(const struct sp_clock_map *cm)
{
	if (sample_bias_ticks >= 0)
		sample_bias_ns = sample_bias_ticks * cm->ns_per_tick;
	uint32_t nregions = sp_region_count();
	struct fn_total *tot = calloc(nregions ? nregions : 1, sizeof *tot);
	if (!tot)
		return; /* the throttled counts stay unpublished: nothing is made up */
	uint64_t counted = 0, long_exits = 0;
	for (struct sp_fn_thread *h = thread_list; h; h = h->next) {
		long_exits += h->long_exits;
		h->long_exits = 0;
		for (uint32_t r = 0; r < h->nstats && r < nregions; r++) {
			struct sp_fn_stats *st = &h->stats[r];
			struct fn_total *a = &tot[r];
			counted += h->counts[r];
			a->hidden += st->hidden;
			a->hidden_ticks += st->hidden_ticks;
			a->thr_calls += h->counts[r];
			a->smp_n += st->smp_n;
			a->smp_ticks += st->smp_ticks;
			a->smp_sq += st->smp_sq;
			if (st->throttled && st->win_mean > 0) {
				a->win_n++;
				a->win_mean_sum += st->win_mean;
			}
			st->hidden = st->smp_n = 0;
			h->counts[r] = 0;
			st->hidden_ticks = st->smp_ticks = 0;
			st->smp_sq = 0;
		}
	}
	publish_count_cost(counted, long_exits);
	for (uint32_t r = 0; r < nregions; r++) {
		struct sp_region *reg = sp_region_get(r);
		const struct fn_total *a = &tot[r];
		if (!reg)
			continue;
		int64_t since = atomic_load(&reg->throttled_since);
		if (since)
			atomic_store(&reg->throttled_since, sp_clock_to_ns(cm, since));
		int64_t patched = atomic_load(&reg->patched_since);
		if (patched)
			atomic_store(&reg->patched_since, sp_clock_to_ns(cm, patched));
		if (!a->hidden && !a->thr_calls)
			continue;
		double ci;
		double ticks = (double)a->hidden_ticks + estimate_ticks(a, &ci);
		atomic_fetch_add(&reg->throttled_calls, a->hidden + a->thr_calls);
		atomic_fetch_add(&reg->throttled_ns, (int64_t)llround(ticks * cm->ns_per_tick));
		atomic_fetch_add(&reg->throttle_timed, a->smp_n);
		atomic_store(&reg->throttled_ci_ns, ci < 0 ? -1 : (int64_t)llround(ci * cm->ns_per_tick));
	}
	free(tot);
}

/* The in-run cost of a timed call: the probes' mean (from each hook's
 * timestamp to its end) plus the hooks' dispatch, taken as a counted-only
 * call's cost. Without probes (throttle off: the inline fast path), the
 * start-up measurement stands (metadata profiler_event_cost_ns). */
static void publish_probes(const struct sp_clock_map *cm)
{
	uint64_t n = 0;
	int64_t ticks = 0;
	for (struct sp_fn_thread *h = thread_list; h; h = h->next) {
		n += h->probe_n;
		ticks += h->probe_ticks;
	}
	if (n)
		timed_call_ns = (double)ticks * cm->ns_per_tick / (double)n +
				(count_call_ns > 0 ? count_call_ns : 0);
}

/* The region of a function still to be named here, or NULL. */
static struct sp_region *unnamed_region(const struct fn_info *fi)
{
	struct sp_region *r = fi && fi->region != SP_NO_REGION && !fi->named
				      ? sp_region_get(fi->region) : NULL;
	return r && !(r->name && r->source_line >= 0) ? r : NULL;
}

static size_t resolve_one(const struct fn_info *fi)
{
	struct sp_region *r = unnamed_region(fi);
	if (!r)
		return 0;
	struct sp_symbol sym;
	if (sp_sym_resolve(fi->module, fi->addr, true, &sym) < 0)
		return 0;
	if (!r->name)
		sp_region_set_name(r, sym.name);
	if (sym.file || sym.line >= 0)
		sp_region_set_source(r, sym.file, sym.line);
	sp_sym_free(&sym);
	return 1;
}

/* Every entry, the replaced ones too (each names its own module). Returns
 * how many were named here. */
static size_t resolve_all(void)
{
	size_t n = 0;
	struct fn_map *m = atomic_load_explicit(&fn_map, memory_order_acquire);
	for (size_t i = 0; m && i <= m->mask; i++)
		n += resolve_one(atomic_load_explicit(&m->slots[i], memory_order_relaxed));
	for (const struct fn_info *fi = retired_list; fi; fi = fi->retired)
		n += resolve_one(fi);
	return n;
}

/* ---- names resolved once per node ------------------------------------- */

static bool names_deferred;      /* fn_lock, as everything below */
static struct fn_info **asked;   /* this process's list, in its order */
static size_t nasked, capasked;
static struct sp_symbol *answers; /* the answering rank's, each resolved once */
static size_t nanswers, capanswers;
static struct sp_map answer_map; /* module << 40 | offset -> index in answers */
static size_t nanswered;         /* this process's functions named by another */

/* Name what is left here; the symbolizer's files are closed after. */
static void resolve_rest(void)
{
	int64_t t0 = sp_monotonic_ns();
	size_t here = resolve_all();
	sp_sym_close_all();
	sp_log(SP_LOG_DEBUG, "functions", "names and sources: %zu from the node, %zu resolved "
	       "here in %.3f ms", nanswered, here, (double)(sp_monotonic_ns() - t0) / 1e6);
}

void sp_fn_defer_names(void)
{
	pthread_mutex_lock(&fn_lock);
	names_deferred = true;
	pthread_mutex_unlock(&fn_lock);
}

struct ask {
	int nmod;
	int32_t *wire;   /* module -> its index in the list, -1 not yet, -2 not sent */
	uint32_t nwire;
	struct sp_wire_out mods, keys;
};

/* A function goes on the list when its module is a file every rank of the
 * node can open by its absolute path (identified by device and inode). */
static int ask_one(struct ask *a, struct fn_info *fi)
{
	if (!unnamed_region(fi) || fi->module < 0 || fi->module >= a->nmod)
		return 0;
	uintptr_t bias = 0;
	const char *path = sp_sym_module_path(fi->module, &bias);
	int32_t *w = &a->wire[fi->module];
	if (*w == -1) {
		struct stat sb;
		*w = -2;
		if (path && path[0] == '/' && stat(path, &sb) == 0) {
			*w = (int32_t)a->nwire++;
			sp_wire_u64(&a->mods, (uint64_t)sb.st_dev);
			sp_wire_u64(&a->mods, (uint64_t)sb.st_ino);
			sp_wire_str(&a->mods, path);
		}
	}
	if (*w < 0 || fi->addr < bias)
		return 0;
	if (SP_ARRAY_RESERVE(asked, capasked, nasked + 1, 256) < 0)
		return -ENOMEM;
	asked[nasked++] = fi;
	sp_wire_u32(&a->keys, (uint32_t)*w);
	sp_wire_u64(&a->keys, (uint64_t)(fi->addr - bias));
	return 0;
}

int sp_fn_names_request(char **ret_buf, size_t *ret_len)
{
	pthread_mutex_lock(&fn_lock);
	nasked = 0;
	struct ask a = { .nmod = sp_sym_module_count() };
	a.wire = malloc((size_t)(a.nmod > 0 ? a.nmod : 1) * sizeof *a.wire);
	int ret = a.wire ? 0 : -ENOMEM;
	for (int i = 0; i < a.nmod && a.wire; i++)
		a.wire[i] = -1;
	struct fn_map *m = atomic_load_explicit(&fn_map, memory_order_acquire);
	for (size_t i = 0; !ret && m && i <= m->mask; i++)
		ret = ask_one(&a, atomic_load_explicit(&m->slots[i], memory_order_relaxed));
	for (struct fn_info *fi = retired_list; !ret && fi; fi = fi->retired)
		ret = ask_one(&a, fi);
	struct sp_wire_out out = { 0 };
	sp_wire_u32(&out, a.nwire);
	sp_wire_put(&out, a.mods.p, a.mods.len);
	sp_wire_u32(&out, (uint32_t)nasked);
	sp_wire_put(&out, a.keys.p, a.keys.len);
	if (!ret && (a.mods.oom || a.keys.oom || out.oom || nasked > UINT32_MAX))
		ret = -ENOMEM;
	free(a.wire);
	free(a.mods.p);
	free(a.keys.p);
	if (ret < 0) {
		free(out.p);
		nasked = 0;
	} else if (nasked == 0) {
		free(out.p); /* nothing to ask (MPI calls only): no request */
		*ret_buf = NULL;
		*ret_len = 0;
	} else {
		*ret_buf = out.p;
		*ret_len = out.len;
	}
	pthread_mutex_unlock(&fn_lock);
	return ret;
}

/* The answer for an offset in a module of this process's symbolizer,
 * resolved on first demand (NULL: no memory). */
static const struct sp_symbol *answer_for(int module, uint64_t off)
{
	uintptr_t bias = 0;
	if (module >= (1 << 23) || off >= (1ull << 40) || !sp_sym_module_path(module, &bias))
		return NULL;
	uint64_t key = (uint64_t)module << 40 | off;
	const uint32_t *v = sp_map_find(&answer_map, key);
	if (v)
		return &answers[*v];
	if (SP_ARRAY_RESERVE(answers, capanswers, nanswers + 1, 256) < 0 ||
	    sp_sym_resolve(module, bias + (uintptr_t)off, true, &answers[nanswers]) < 0)
		return NULL;
	if (sp_map_put(&answer_map, key, (uint32_t)nanswers) < 0) {
		sp_sym_free(&answers[nanswers]);
		return NULL;
	}
	return &answers[nanswers++];
}

char *sp_fn_names_answer(const char *req, size_t len, size_t *ret_len)
{
	struct sp_wire_in r = { .p = req, .left = len };
	struct sp_wire_out out = { 0 };
	pthread_mutex_lock(&fn_lock);
	uint32_t nmods = sp_wire_get_u32(&r);
	/* each module takes 20 bytes or more: a count past that is not a list */
	int *local = nmods <= r.left / 20 ? malloc((nmods ? nmods : 1) * sizeof *local) : NULL;
	for (uint32_t k = 0; local && k < nmods; k++)
		local[k] = -1; /* no answers for a module not read in full */
	for (uint32_t k = 0; local && k < nmods; k++) {
		uint64_t dev = sp_wire_get_u64(&r), ino = sp_wire_get_u64(&r);
		char *path;
		if (!sp_wire_get_str(&r, &path))
			break;
		struct stat sb;
		/* the same file here, or no answers for it */
		if (path && path[0] == '/' && stat(path, &sb) == 0 && (uint64_t)sb.st_dev == dev &&
		    (uint64_t)sb.st_ino == ino) {
			local[k] = sp_sym_module_find(path);
			if (local[k] < 0)
				local[k] = sp_sym_module_add(path, 0);
		}
		free(path);
	}
	uint32_t nkeys = sp_wire_get_u32(&r);
	for (uint32_t i = 0; local && !r.bad && i < nkeys; i++) {
		uint32_t mod = sp_wire_get_u32(&r);
		uint64_t off = sp_wire_get_u64(&r);
		const struct sp_symbol *a = !r.bad && mod < nmods && local[mod] >= 0
						    ? answer_for(local[mod], off) : NULL;
		sp_wire_u32(&out, a != NULL);
		if (a) {
			sp_wire_str(&out, a->name);
			sp_wire_str(&out, a->file);
			sp_wire_u64(&out, (uint64_t)a->line);
		}
	}
	pthread_mutex_unlock(&fn_lock);
	free(local);
	if (out.oom || !out.len) {
		free(out.p);
		return NULL;
	}
	*ret_len = out.len;
	return out.p;
}

void sp_fn_names_apply(const char *ans, size_t len)
{
	struct sp_wire_in r = { .p = ans, .left = len };
	pthread_mutex_lock(&fn_lock);
	for (size_t i = 0; i < nasked && !r.bad; i++) {
		char *name = NULL, *file = NULL;
		if (!sp_wire_get_u32(&r) || !sp_wire_get_str(&r, &name) ||
		    !sp_wire_get_str(&r, &file)) {
			free(name);
			continue; /* not answered, or the end */
		}
		int64_t line = (int64_t)sp_wire_get_u64(&r);
		struct sp_region *reg = unnamed_region(asked[i]);
		if (!r.bad && name && reg) {
			if (!reg->name)
				sp_region_set_name(reg, name);
			if (file || line >= 0)
				sp_region_set_source(reg, file, line < 0 ? -1 : line);
			asked[i]->named = true;
			nanswered++;
		}
		free(name);
		free(file);
	}
	pthread_mutex_unlock(&fn_lock);
}

void sp_fn_names_finish(void)
{
	pthread_mutex_lock(&fn_lock);
	names_deferred = false;
	resolve_rest(); /* the symbolizer's files answered others: closed here too */
	free(asked);
	asked = NULL;
	nasked = capasked = 0;
	for (size_t i = 0; i < nanswers; i++)
		sp_sym_free(&answers[i]);
	free(answers);
	answers = NULL;
	nanswers = capanswers = 0;
	sp_map_free(&answer_map);
	pthread_mutex_unlock(&fn_lock);
}

void sp_fn_finalize(void)
{
	int saved = errno;
	pthread_mutex_lock(&fn_lock);
	struct sp_clock_map cm;
	sp_clock_map_now(&cm);
	publish_counters(&cm);
	publish_probes(&cm);
	if (!names_deferred)
		resolve_rest();
	pthread_mutex_unlock(&fn_lock);
	errno = saved;
}
