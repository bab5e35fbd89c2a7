/* SPDX-License-Identifier: MIT */
/*
 * Tick source selection and the tick -> CLOCK_MONOTONIC ns map. The TSC is
 * calibrated against CLOCK_MONOTONIC over the whole run (start to flush),
 * which is more precise than any fixed calibration window.
 */
#include "clock.h"

#include <stdio.h>
#include <string.h>

#include "log.h"

bool sp_clock_tsc;

/* Start reference: a (tick, ns) pair read back to back. */
static int64_t ref_tick, ref_ns;

/* Read ticks and monotonic ns as close together as possible: take the pair
 * with the shortest bracketing interval out of a few tries. */
static void read_pair(int64_t *ret_tick, int64_t *ret_ns)
{
	int64_t best_gap = INT64_MAX;
	for (int i = 0; i < 5; i++) {
		int64_t a = sp_monotonic_ns();
		int64_t tick = sp_ticks();
		int64_t b = sp_monotonic_ns();
		if (b - a < best_gap) {
			best_gap = b - a;
			*ret_tick = tick;
			*ret_ns = a + (b - a) / 2;
		}
	}
}

bool sp_clock_tsc_invariant(void)
{
#if SP_HAVE_TSC
	FILE *f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return false;
	char line[4096];
	bool constant = false, nonstop = false;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		constant = strstr(line, " constant_tsc") != NULL;
		nonstop = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	fclose(f);
	return constant && nonstop;
#else
	return false;
#endif
}

bool sp_clock_init(enum sp_clock_mode mode)
{
	switch (mode) {
	case SP_CLOCK_TSC:
		sp_clock_tsc = SP_HAVE_TSC;
		break;
	case SP_CLOCK_MONOTONIC:
		sp_clock_tsc = false;
		break;
	default:
		sp_clock_tsc = sp_clock_tsc_invariant();
		break;
	}
	read_pair(&ref_tick, &ref_ns);
	sp_log(SP_LOG_DEBUG, "clock", "hot-path ticks from %s",
	       sp_clock_tsc ? "the TSC" : "CLOCK_MONOTONIC");
	return sp_clock_tsc;
}

/* Below this span the fit is refined by waiting: clock_gettime's ~25 ns
 * jitter over 2 ms is a relative error of ~1e-5. */
#define MIN_FIT_NS 2000000

/* A rate for thresholds (the throttle's mean, MIN_DURATION): a fit over
 * 0.2 ms is good to ~5e-4, far below what they need, and a process that
 * reaches its first hook at once waits that long instead of 2 ms (CPU the
 * other ranks of an oversubscribed node would have had). */
#define ROUGH_FIT_NS 200000

static void map_after(struct sp_clock_map *map, int64_t span)
{
	if (!sp_clock_tsc) {
		map->tick0 = 0;
		map->ns0 = 0;
		map->ns_per_tick = 1.0;
		return;
	}
	while (sp_monotonic_ns() - ref_ns < span)
		;
	int64_t tick1, ns1;
	read_pair(&tick1, &ns1);
	map->tick0 = ref_tick;
	map->ns0 = ref_ns;
	map->ns_per_tick = tick1 > ref_tick ? (double)(ns1 - ref_ns) / (double)(tick1 - ref_tick) : 1.0;
}

void sp_clock_map_now(struct sp_clock_map *map)
{
	map_after(map, MIN_FIT_NS);
}

void sp_clock_map_rough(struct sp_clock_map *map)
{
	map_after(map, ROUGH_FIT_NS);
}
