/* SPDX-License-Identifier: MIT */
/*
 * Timestamps. The hot path reads raw ticks: the invariant TSC where the CPU
 * has one (constant_tsc + nonstop_tsc), CLOCK_MONOTONIC nanoseconds
 * otherwise. Ticks become CLOCK_MONOTONIC ns at flush time, through a linear
 * map fitted to monotonic readings taken at start and at flush.
 */
#ifndef SP_CLOCK_H
#define SP_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "compiler.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define SP_HAVE_TSC 1
#else
#define SP_HAVE_TSC 0
#endif

/* True when ticks are TSC cycles. Written once by sp_clock_init(). */
SP_HIDDEN extern bool sp_clock_tsc;

static inline int64_t sp_monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int64_t sp_ticks(void)
{
#if SP_HAVE_TSC
	if (__builtin_expect(sp_clock_tsc, 1))
		return (int64_t)__rdtsc();
#endif
	return sp_monotonic_ns();
}

enum sp_clock_mode { SP_CLOCK_AUTO, SP_CLOCK_TSC, SP_CLOCK_MONOTONIC };

/* Pick the tick source and take the start reference. Call once, before
 * anything records. Returns true if the TSC is used. */
SP_HIDDEN bool sp_clock_init(enum sp_clock_mode mode);
/* True if /proc/cpuinfo reports an invariant TSC. */
SP_HIDDEN bool sp_clock_tsc_invariant(void);

/* Tick to CLOCK_MONOTONIC ns conversion, fixed at flush. */
struct sp_clock_map {
	int64_t tick0, ns0;    /* reference point */
	double ns_per_tick;    /* 1.0 and tick0 == ns0 for monotonic ticks */
};

/* Take the end reference and build the map for everything recorded so far.
 * Waits (at most a few ms) if the run was too short for a precise fit. */
SP_HIDDEN void sp_clock_map_now(struct sp_clock_map *map);
/* The same from a fit of at least 0.2 ms (waits at most that): a rate good
 * to ~5e-4, for thresholds, not for timestamps. */
SP_HIDDEN void sp_clock_map_rough(struct sp_clock_map *map);

static inline int64_t sp_clock_to_ns(const struct sp_clock_map *m, int64_t tick)
{
	/* floor() without the libm call (x86-64's baseline has no roundsd;
	 * this runs twice per event at finalize): truncate, then step down
	 * for a negative non-integer. Exact for every |x| < 2^63. */
	double x = (double)(tick - m->tick0) * m->ns_per_tick;
	int64_t t = (int64_t)x;
	if ((double)t > x)
		t--;
	return m->ns0 + t;
}

#endif /* SP_CLOCK_H */
