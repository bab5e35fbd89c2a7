/* SPDX-License-Identifier: MIT */
/*
 * The -finstrument-functions hooks, exported from libscope-profiler.so
 * (anonymous version node, so they win over glibc's empty ones). Steady
 * state per call: one relaxed flag load, one TLS load, one cache probe, one
 * timestamp, one event store. Names are resolved at finalize (see
 * recorder/functions.c for the one exception, filters).
 */
#include <errno.h>

#include "functions.h"
#include "lifecycle.h"

#define SP_EXPORT __attribute__((visibility("default")))

SP_EXPORT void __cyg_profile_func_enter(void *fn, void *site);
SP_EXPORT void __cyg_profile_func_exit(void *fn, void *site);

/*
 * errno: the fast paths below call nothing that can set it (rdtsc or the
 * vDSO clock, loads and stores); every slow path they branch to
 * (sp_fn_thread_attach, sp_fn_cache_fill, sp_thread_enter_slow via the
 * chunk allocator) saves and restores it itself.
 */
static inline struct sp_fn_entry *probe(struct sp_fn_thread *h, uintptr_t addr)
{
	struct sp_fn_entry *e = &h->cache[sp_fn_slot(addr)];
	if (SP_LIKELY(e->addr == addr))
		return e;
	return sp_fn_cache_fill(h, addr);
}

SP_EXPORT void __cyg_profile_func_enter(void *fn, void *site)
{
	(void)site;
	if (SP_UNLIKELY(!atomic_load_explicit(&sp_recording, memory_order_relaxed)))
		return;
	struct sp_fn_thread *h = sp_fn_tls;
	if (SP_UNLIKELY(!h) && !(h = sp_fn_thread_attach()))
		return;
	struct sp_thread *t = h->t;
	if (SP_UNLIKELY(t->busy))
		return;
	struct sp_fn_entry *e = probe(h, (uintptr_t)fn);
	if (SP_UNLIKELY(!e || e->region == SP_NO_REGION))
		return; /* filtered out */
	if (SP_LIKELY(!sp_fn_mode)) {
		sp_rec_enter_thread(t, e->region);
		return;
	}
	int saved = errno; /* the filtered path may grow a chunk */
	sp_fn_enter_filtered(h, e->region);
	errno = saved;
}

SP_EXPORT void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)site;
	if (SP_UNLIKELY(!atomic_load_explicit(&sp_recording, memory_order_relaxed)))
		return;
	struct sp_fn_thread *h = sp_fn_tls;
	if (SP_UNLIKELY(!h))
		return;
	struct sp_thread *t = h->t;
	if (SP_UNLIKELY(t->busy))
		return;
	struct sp_fn_entry *e = probe(h, (uintptr_t)fn);
	if (SP_UNLIKELY(!e || e->region == SP_NO_REGION))
		return;
	uint32_t region = e->region;
	if (SP_UNLIKELY(sp_fn_mode)) {
		sp_fn_exit_filtered(h, region);
		return;
	}
	int64_t now = sp_ticks();
	if (SP_LIKELY(t->depth && !t->overflow)) {
		struct sp_frame *f = &t->stack[t->depth - 1];
		if (SP_LIKELY(f->region == region && f->ev)) {
			f->ev->end = now;
			t->depth--;
			return;
		}
	}
	sp_fn_exit_unwind(h, region, now); /* longjmp'ed frames, stray exit */
}

/* Names, sources and hidden-call counters are settled at finalize, after
 * recording stopped and before the snapshot. */
__attribute__((constructor(102))) static void hooks_register(void)
{
	sp_lifecycle_resolve_hook = sp_fn_finalize;
}
