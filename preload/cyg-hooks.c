/* SPDX-License-Identifier: MIT */
/*
 * The -finstrument-functions hooks, exported from libscope-profiler.so
 * (anonymous version node, so they win over glibc's empty ones). Steady
 * state per call: one TLS load, one cache probe, then for a throttled
 * function an increment and a countdown, for a recorded one the recording
 * flag, one timestamp and one event store. Names are resolved at finalize
 * (see recorder/functions.c for the one exception, filters).
 */
#include "calib-probe.h"
#include "functions.h"
#include "lifecycle.h"
#include "patch.h"

#include <errno.h>
#include <stdlib.h>

#include "compiler.h"

SP_EXPORT void __cyg_profile_func_enter(void *fn, void *site);
SP_EXPORT void __cyg_profile_func_exit(void *fn, void *site);

/*
 * The fast paths are leaf code: every other case leaves through a tail
 * call, so no register is saved and no stack frame is built on the common
 * path (the timestamp costs more than all the rest together).
 *
 * errno: the fast paths call nothing that can set it (rdtsc or the vDSO
 * clock, loads and stores); every slow path saves and restores it itself.
 */
/*
 * Where a hook was called (recorder.h, struct sp_frame_at): the hook's CFA,
 * i.e. the instrumented function's stack pointer at its call of the hook,
 * and the hook's return address. GCC computes the CFA from %rsp without
 * building a frame; clang's builtin would build one, so x86-64 reads %rsp
 * at the top of the hook (a leaf: no push before it). Enter and exit hooks
 * of one function see the same CFA, or a lower one at the exit after alloca.
 */
#if defined(__GNUC__) && !defined(__clang__)
#define HOOK_SP() ((uintptr_t)__builtin_dwarf_cfa())
#elif defined(__x86_64__)
static inline __attribute__((always_inline)) uintptr_t hook_sp(void)
{
	uintptr_t sp;
	__asm__("mov %%rsp, %0" : "=r"(sp));
	return sp;
}
#define HOOK_SP() hook_sp()
#else
#define HOOK_SP() ((uintptr_t)__builtin_frame_address(0))
#endif
/* The place of the call, built only where it is used (the fast path has
 * no frame: the return address is one load from the stack top). */
#define HOOK_AT(sp) ((struct sp_frame_at){ .sp = (sp), .pc = (uintptr_t)__builtin_return_address(0) })

/* Only reached with a TSC: without one, sp_fn_mode has SP_FN_SLOW_CLOCK
 * and every call takes the filtered path, which reads sp_ticks(). */
static inline int64_t tsc_ticks(void)
{
#if SP_HAVE_TSC
	return (int64_t)__rdtsc();
#else
	return 0;
#endif
}

/*
 * A throttled function, count-only modes (THROTTLE_TIMING=sampled, the
 * default, or estimate): its call is counted (h->counts) and, in
 * sampled mode, one in THROTTLE_SAMPLE of the thread's counted calls (at
 * random: a geometric countdown, h->countdown) is timed through
 * sp_fn_enter_sampled(); the path costs a cache probe, an increment and a
 * decrement, no timestamp. In estimate mode the countdown starts at
 * UINT64_MAX and never reaches 0. Counting-only applies once no frame of
 * the function is open (st->open, kept by the filtered paths): a recursive
 * function throttled deep inside itself keeps timed frames until its
 * outermost call returns, so every exit finds its own kind of entry.
 *
 * THROTTLE_TIMING=exact (auto-throttle only, TSC clock): the call gets no
 * event, but its count and total time stay exact, so both timestamps are
 * still read; what is saved over sp_fn_*_filtered() is the out-of-line
 * call, the errno save and the clock-mode test. Same frame and counters as
 * enter_filtered()/close_frame() in recorder/functions.c for a throttled
 * region (whose throttle counters no longer move). The cache fill sized
 * h->stats for every cached region because sp_fn_mode != 0.
 */
static inline void push_throttled(struct sp_fn_thread *h, struct sp_rec_thread *t, uint32_t region,
				  struct sp_frame_at at)
{
	uint32_t d = t->depth;
	t->stack_at[d + 1] = at; /* first: fewer values live at once */
	int64_t now = tsc_ticks();
	t->stack[d] = (struct sp_frame){
		.ev = NULL, .start = now, .region = region,
		.flags = SP_FRAME_UNTIMED | SP_FRAME_FUNCTION, .timed0 = h->timed++,
	};
	t->depth = d + 1;
}

static inline bool pop_throttled(struct sp_fn_thread *h, struct sp_rec_thread *t, uint32_t region)
{
	uint32_t d = t->depth;
	if (SP_UNLIKELY(!d || t->overflow))
		return false;
	struct sp_frame *f = &t->stack[d - 1];
	if (f->region != region || f->flags != (SP_FRAME_UNTIMED | SP_FRAME_FUNCTION))
		return false;
	int64_t now = tsc_ticks();
	struct sp_fn_stats *st = &h->stats[region];
	st->hidden++;
	st->hidden_ticks += now - f->start;
	t->depth = d - 1;
	return true;
}

/*
 * Patch mode (preload/patch.c): the countdown of a throttled function's
 * call reached 0. Instead of timing this call, have the hook call that
 * brought us here rewritten: queued the first time, written with its batch
 * when a queued site is met again. Once an enter site of the function is
 * written, its state becomes 2 (enter patched, exits patched as they run,
 * on the same countdown) on every thread that follows the patch log, on
 * its next countdown. A site that cannot be patched keeps the function
 * sampled.
 */
/* The functions other threads' batches patched since this thread last
 * looked: their exits are patched as they run here too (gate 2). */
static void follow_patched(struct sp_fn_thread *h)
{
	uint32_t n;
	const uint32_t *log = sp_patch_log(&n);
	for (; h->patch_seen < n; h->patch_seen++) {
		uint32_t r = log[h->patch_seen];
		if (r < h->nstats && h->stats[r].throttled == 1)
			sp_fn_mark_patched(h, &h->stats[r], r);
	}
}

static __attribute__((noinline)) void patch_enter(struct sp_fn_thread *h, uint32_t region,
						   struct sp_frame_at at)
{
	void *ret = (void *)at.pc;
	struct sp_fn_stats *st = &h->stats[region];
	int saved = errno;
	h->t->busy = 1;
	h->countdown = sp_fn_next_gap(h);
	/* Every enter site that still calls the hook is patched, also when the
	 * function is patched already: its other sites (inlined copies, a
	 * plugin reloaded at the same address) reach this too. */
	int64_t t0 = sp_ticks();
	bool site_patched = sp_patch_site(ret, region, NULL) == 0;
	sp_fn_charge(h, sp_ticks() - t0);
	follow_patched(h);
	if (st->throttled == 1 && (site_patched || sp_fn_region_patched(st, region)))
		sp_fn_mark_patched(h, st, region);
	h->t->busy = 0;
	errno = saved;
	if (st->throttled == 1)
		sp_fn_enter_sampled(h, region, at);
}

static __attribute__((noinline)) void patch_exit(struct sp_fn_thread *h, void *fn, void *ret)
{
	int saved = errno;
	h->t->busy = 1;
	h->countdown = sp_fn_next_gap(h);
	int64_t t0 = sp_ticks();
	(void)sp_patch_site(ret, SP_NO_REGION, fn); /* a site that cannot be patched stays a cheap exit */
	sp_fn_charge(h, sp_ticks() - t0);
	follow_patched(h);
	h->t->busy = 0;
	errno = saved;
}

static void calibrate_count_cost(void);

static inline bool recording(void)
{
	return atomic_load_explicit(&sp_recording, memory_order_relaxed);
}

static __attribute__((noinline)) void enter_slow(void *fn, struct sp_frame_at at)
{
	if (!recording())
		return;
	struct sp_fn_thread *h = sp_fn_tls;
	if (!h) {
		static atomic_int calibrated;
		if (!(h = sp_fn_thread_attach()))
			return;
		if (!atomic_exchange(&calibrated, 1)) {
			int saved = errno;
			h->t->busy = 1;
			calibrate_count_cost();
			h->t->busy = 0;
			errno = saved;
		}
	}
	if (h->t->busy)
		return;
	struct sp_fn_entry *e = sp_fn_cache_fill(h, (uintptr_t)fn);
	if (!e || e->region == SP_NO_REGION)
		return;
	if (sp_fn_mode)
		sp_fn_enter_filtered(h, e->region, at);
	else
		sp_fn_enter_rare(h, e->region, sp_ticks(), at);
}

static __attribute__((noinline)) void exit_slow(void *fn, uintptr_t sp)
{
	struct sp_fn_thread *h = sp_fn_tls;
	if (!recording() || h->t->busy)
		return;
	struct sp_fn_entry *e = sp_fn_cache_fill(h, (uintptr_t)fn);
	if (!e || e->region == SP_NO_REGION)
		return;
	if (sp_fn_mode)
		sp_fn_exit_filtered(h, e->region, sp);
	else
		sp_fn_exit_unwind(h, e->region, sp_ticks(), sp);
}

/* The hooks' bodies once the thread's state is known: the exported hooks
 * and the start-up measurement of a counted-only call run this same code. */
static inline __attribute__((always_inline)) void enter_hook(struct sp_fn_thread *h,
								struct sp_rec_thread *t, void *fn,
								uintptr_t sp)
{
	const struct sp_fn_entry *e = &h->cache[sp_fn_slot((uintptr_t)fn)];
	if (SP_UNLIKELY(e->addr != (uintptr_t)fn))
		return enter_slow(fn, HOOK_AT(sp)); /* tests busy itself */
	uint32_t region = e->region;
	if (SP_LIKELY(e->gate)) {
		/* Throttled, counted only: no timestamp, no frame. Counted also
		 * while the thread is inside the profiler (busy) and once
		 * recording stopped (the counters are published at finalize; a
		 * thread's state is never freed): it is a real call, and the
		 * count is all this path touches. Anything more checks both. */
		h->counts[region]++;
		if (SP_LIKELY(--h->countdown)) {
			/* not with --patch: its exits count down to their own patch */
			if (SP_LIKELY(!sp_patch_enabled))
				h->counted_last = (uintptr_t)fn;
			return;
		}
		if (SP_UNLIKELY(t->busy || !recording())) {
			h->countdown = 1; /* the next call is timed instead */
			return;
		}
		if (sp_patch_enabled)
			return patch_enter(h, region, HOOK_AT(sp));
		return sp_fn_enter_sampled(h, region, HOOK_AT(sp));
	}
	if (SP_UNLIKELY(region == SP_NO_REGION))
		return; /* filtered out: nothing to touch either */
	if (SP_UNLIKELY(t->busy || !recording()))
		return;
	if (SP_UNLIKELY(sp_fn_mode)) {
		struct sp_fn_stats *st = &h->stats[region];
		if (sp_fn_mode == SP_FN_THROTTLE && st->throttled && t->depth < SP_STACK_MAX &&
		    sp_frame_top_sp(t) > sp)
			return push_throttled(h, t, region, HOOK_AT(sp));
		return sp_fn_enter_filtered(h, region, HOOK_AT(sp));
	}
	/* The recorder's open with the TSC read inline. One compare finds the
	 * frames a longjmp may have left open (the innermost frame at or below
	 * this call's stack address, or an inlined call in its host); that case
	 * and a full buffer are a tail call. The place is stored before the
	 * clock is read: fewer values live at once, no register saved. */
	struct sp_frame_at *top = &t->stack_at[t->depth];
	if (SP_UNLIKELY(sp_event_full(t)) || SP_UNLIKELY(top->sp <= sp))
		return sp_fn_enter_rare(h, region, tsc_ticks(), HOOK_AT(sp));
	top[1] = HOOK_AT(sp);
	struct sp_frame *f = sp_event_push_frame(t, region);
	sp_event_start(f, tsc_ticks());
}

static inline __attribute__((always_inline)) void exit_hook(struct sp_fn_thread *h,
							       struct sp_rec_thread *t, void *fn,
							       uintptr_t sp)
{
	if (SP_LIKELY(h->counted_last == (uintptr_t)fn))
		return; /* a counted-only call's exit (gate 1): nothing to do */
	const struct sp_fn_entry *e = &h->cache[sp_fn_slot((uintptr_t)fn)];
	if (SP_UNLIKELY(e->addr != (uintptr_t)fn))
		return exit_slow(fn, sp); /* tests busy itself */
	if (SP_LIKELY(e->gate)) {
		/* A counted-only call: no frame of this function is open. */
		h->long_exits++;
		if (SP_UNLIKELY(e->gate > 1) && !--h->countdown) {
			if (SP_UNLIKELY(t->busy || !recording())) {
				h->countdown = 1;
				return;
			}
			return patch_exit(h, fn, __builtin_return_address(0));
		}
		return;
	}
	uint32_t region = e->region;
	if (SP_UNLIKELY(region == SP_NO_REGION))
		return;
	if (SP_UNLIKELY(t->busy || !recording()))
		return;
	if (SP_UNLIKELY(sp_fn_mode)) {
		if (sp_fn_mode == SP_FN_THROTTLE && pop_throttled(h, t, region))
			return;
		return sp_fn_exit_filtered(h, region, sp);
	}
	int64_t now = tsc_ticks();
	if (SP_LIKELY(sp_event_close(t, region, now)))
		return;
	sp_fn_exit_unwind(h, region, now, sp); /* longjmp'ed frames, stray exit */
}

SP_EXPORT void __cyg_profile_func_enter(void *fn, void *site)
{
	(void)site;
	uintptr_t sp = HOOK_SP();
	__asm__("" : "+r"(sp)); /* one register for it, not recomputed (which costs a saved one) */
	struct sp_fn_thread *h = sp_fn_tls; /* recording or not: see enter_hook */
	if (SP_UNLIKELY(!h)) {
		/* No thread state: not recording (ENABLE=0, before the start,
		 * after the end) returns here rather than in a call, which cost
		 * a disabled profiler ~1 ns a call over glibc's empty hooks; so
		 * does FUNCTIONS=0 (no thread gets a state), where the lookup
		 * that found each function excluded cost as much as counting it. */
		if (!recording() || atomic_load_explicit(&sp_fn_off, memory_order_relaxed))
			return;
		return enter_slow(fn, HOOK_AT(sp));
	}
	enter_hook(h, h->t, fn, sp); /* h->t: one load, where the TLS would take two */
}

SP_EXPORT void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)site;
	uintptr_t sp = HOOK_SP();
	struct sp_fn_thread *h = sp_fn_tls;
	if (SP_UNLIKELY(!h))
		return;
	exit_hook(h, h->t, fn, sp);
}

/*
 * The cost of a counted-only call over glibc's empty hooks, for the
 * overhead estimate: the hooks' own bodies on a private thread state whose
 * cached functions are throttled (and never due for a sample), against
 * the same calls to empty functions (calib_count_ns: 10 x 2 x 4096 leaf
 * pairs and as many nested iterations of two pairs, once per process,
 * ~0.5 ms, after the first thread attached).
 */
static __attribute__((noinline)) void calib_enter(struct sp_fn_thread *h, void *fn)
{
	enter_hook(h, h->t, fn, SP_FRAME_NO_SP);
}

static __attribute__((noinline)) void calib_exit(struct sp_fn_thread *h, void *fn)
{
	exit_hook(h, h->t, fn, SP_FRAME_NO_SP);
}

static __attribute__((noinline)) void calib_empty(struct sp_fn_thread *h, void *fn)
{
	__asm__ volatile("" : : "r"(h), "r"(fn) : "memory");
}

/* ns per iteration, over CALLS iterations, for the NFN functions of fns
 * in turn: the hooks' pair (leaf: the exit follows its entry) or two empty
 * calls; nested: two pairs, each function with the next one inside (the
 * outer exit is a long one), or four empty calls. */
enum { CALIB_NFN = 16, CALIB_CALLS = 4096 };
static double calib_round(struct sp_fn_thread *h, void *const *fns, bool hooks)
{
	int64_t t0 = sp_monotonic_ns();
	for (int i = 0; i < CALIB_CALLS; i++) {
		void *fn = fns[i & (CALIB_NFN - 1)];
		if (hooks) {
			calib_enter(h, fn);
			calib_exit(h, fn);
		} else {
			calib_empty(h, fn);
			calib_empty(h, fn);
		}
	}
	return (double)(sp_monotonic_ns() - t0) / CALIB_CALLS;
}

static double calib_nested_round(struct sp_fn_thread *h, void *const *fns, bool hooks)
{
	int64_t t0 = sp_monotonic_ns();
	for (int i = 0; i < CALIB_CALLS; i++) {
		void *fn = fns[i & (CALIB_NFN - 1)], *in = fns[(i + 1) & (CALIB_NFN - 1)];
		if (hooks) {
			calib_enter(h, fn);
			calib_enter(h, in);
			calib_exit(h, in);
			calib_exit(h, fn);
		} else {
			calib_empty(h, fn);
			calib_empty(h, in);
			calib_empty(h, in);
			calib_empty(h, fn);
		}
	}
	return (double)(sp_monotonic_ns() - t0) / CALIB_CALLS;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The hooks' pair over an empty pair: the median of paired rounds (the
 * hooks, then the empty calls, back to back), so that a round an interrupt
 * or another process lengthened counts once, on one side only; 16
 * functions in turn (their slots and counters on lines of their own, as
 * in a program), not one, whose layout would decide the result alone.
 * (The best of 8 rounds of each with one function, one side after the
 * other, gave 0.0 to 3.4 ns from run to run on the same machine.)
 * The same for two nested pairs, less two leaf pairs: what a long exit
 * adds (*long_ns, >= 0). In a program ~40 % of a C++ proxy's counted exits
 * are long ones (tests/bench/proxy), which the leaf pair alone missed. */
static double calib_count_ns(struct sp_fn_thread *h, void *const *fns, double *long_ns)
{
	enum { ROUNDS = 9 };
	double d[ROUNDS], n[ROUNDS];
	(void)calib_round(h, fns, true); /* warm: the slots, the code */
	(void)calib_nested_round(h, fns, true);
	for (int r = 0; r < ROUNDS; r++) {
		double with = calib_round(h, fns, true);
		d[r] = with - calib_round(h, fns, false);
		with = calib_nested_round(h, fns, true);
		n[r] = with - calib_nested_round(h, fns, false);
	}
	qsort(d, ROUNDS, sizeof *d, cmp_double);
	qsort(n, ROUNDS, sizeof *n, cmp_double);
	double leaf = d[ROUNDS / 2] > 0 ? d[ROUNDS / 2] : 0;
	*long_ns = n[ROUNDS / 2] - 2 * leaf > 0 ? n[ROUNDS / 2] - 2 * leaf : 0;
	return leaf;
}

/*
 * What a sampled call's duration holds of our own work: the hooks' real
 * sampled path (this file's hooks, sp_fn_enter_sampled, the exit through
 * sp_fn_exit_filtered) around an empty instrumented function of ours
 * (calib-probe.c), 63 counted calls then a sampled one as in a run (the
 * sampled branch mispredicted), on the private thread state swapped in for
 * the calling thread's; the mean of 128 sampled calls, best of 4 rounds
 * (32 Ki calls, about 1 ms once per process).
 * Left unset (no correction) when the probe's hook calls do not reach our
 * hooks or the patch mode would rewrite its call sites.
 */
static void calibrate_sample_bias(struct sp_fn_thread *h, struct sp_fn_stats *st)
{
	enum { CALLS = 128, ROUNDS = 4, GAP = 64 };
	if (!(sp_fn_mode & SP_FN_SAMPLED) || sp_patch_enabled)
		return;
	uintptr_t fn = (uintptr_t)sp_calib_probe;
	struct sp_region *reg = calloc(1, sizeof *reg);
	if (!reg)
		return;
	reg->addr = fn;
	st->reg = reg; /* gate() finds the probe's cache slot through it */
	st->throttled = 1;
	h->cache[sp_fn_slot(fn)] = (struct sp_fn_entry){ .addr = fn, .region = 0, .gate = 1 };
	h->t->stack_at[0].sp = SP_FRAME_NO_SP; /* as at attach: no frame open */
	struct sp_fn_thread *own_h = sp_fn_tls;
	struct sp_rec_thread *own_t = sp_tls;
	sp_fn_tls = h;
	sp_tls = h->t;
	double best = -1;
	for (int r = 0; r < ROUNDS; r++) {
		st->smp_n = 0;
		st->smp_ticks = 0;
		for (int i = 0; i < CALLS; i++) {
			/* As in a run: counted calls, then the sampled one. */
			h->countdown = GAP;
			for (int k = 0; k < GAP; k++)
				sp_calib_probe();
		}
		double mean = (double)st->smp_ticks / CALLS;
		if (st->smp_n == CALLS && !h->t->depth && (best < 0 || mean < best))
			best = mean;
	}
	sp_fn_tls = own_h;
	sp_tls = own_t;
	st->reg = NULL;
	free(reg);
	if (best >= 0)
		sp_fn_set_sample_bias_ticks(best);
}

static void calibrate_count_cost(void)
{
	if (!(sp_fn_mode & SP_FN_COUNT_ONLY))
		return;
	struct sp_rec_thread *t = calloc(1, sizeof *t);
	struct sp_fn_thread *h = calloc(1, sizeof *h);
	struct sp_fn_stats *st = calloc(CALIB_NFN, sizeof *st);
	uint64_t *counts = calloc(CALIB_NFN, sizeof *counts);
	if (t && h && st && counts) {
		/* keys only, never called: 64 bytes apart, distinct slots */
		void *fns[CALIB_NFN];
		h->t = t;
		h->stats = st;
		h->counts = counts;
		h->nstats = CALIB_NFN;
		h->countdown = UINT64_MAX;
		for (uint32_t k = 0; k < CALIB_NFN; k++) {
			uintptr_t a = (uintptr_t)calibrate_count_cost + 64 * k;
			fns[k] = (void *)a;
			h->cache[sp_fn_slot(a)] = (struct sp_fn_entry){ .addr = a, .region = k, .gate = 1 };
			st[k].throttled = 1;
		}
		double long_ns, leaf = calib_count_ns(h, fns, &long_ns);
		sp_fn_set_count_call_ns(leaf, long_ns);
		calibrate_sample_bias(h, st);
	}
	free(t);
	free(h);
	free(st);
	free(counts);
}

/* Names, sources and hidden-call counters are settled at finalize, after
 * recording stopped and before the snapshot. */
__attribute__((constructor(102))) static void hooks_register(void)
{
	sp_lifecycle_resolve_hook = sp_fn_finalize;
	sp_patch_setup(); /* the configuration is loaded by the constructor at 101 */
}
