/* SPDX-License-Identifier: MIT */
/*
 * Configuration: every SCOPE_PROFILER_* environment variable, parsed in one
 * place (config.c) from one table. docs/CONFIG.md lists the same table.
 */
#ifndef SP_CONFIG_H
#define SP_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "compiler.h"

struct sp_config {
	char *output;            /* OUTPUT: file path */
	bool enabled;            /* ENABLE: master switch */
	bool print_config;       /* PRINT_CONFIG: dump the effective config to stderr */
	bool quiet;              /* QUIET: no "wrote FILE" line on stderr */
	int64_t compression;     /* COMPRESSION: gzip level 0-9 for event columns (0 = off) */
	char *clock;             /* CLOCK: auto | tsc | monotonic */
	uint64_t max_memory;     /* MAX_MEMORY: bytes of event storage */
	char *label;             /* LABEL: metadata label */
	char *include;           /* INCLUDE: regex on function names */
	char *exclude;           /* EXCLUDE: regex on function names */
	int64_t min_duration_ns; /* MIN_DURATION */
	int64_t max_depth;       /* MAX_DEPTH: 0 = unlimited */
	int64_t throttle_calls;  /* THROTTLE_CALLS: 0 = off */
	int64_t throttle_mean_ns;/* THROTTLE_MEAN */
	int64_t throttle_early;  /* THROTTLE_EARLY: calls of the early decision, 0 = off */
	char *finalize;          /* FINALIZE: auto | parallel | serial */
	char *throttle_timing;   /* THROTTLE_TIMING: sampled | exact | estimate */
	int64_t throttle_sample; /* THROTTLE_SAMPLE: 1 in K throttled calls timed */
	bool functions;          /* FUNCTIONS: record -finstrument-functions hooks */
	bool patch;              /* PATCH: patch throttled functions' hook call sites */
	bool mpi;                /* MPI: record MPI calls */
	int64_t callsites;       /* CALLSITES: depth 0-8 */
	bool spill;              /* SPILL: spill to <output>.spill.* at the cap */
	bool signals;            /* SIGNALS: dump to the spill file on fatal signals */
	char *fork;              /* FORK: none | child */
	char *exec;              /* EXEC: own | none (an exec'd child of a profiled process) */
	char *debug;             /* DEBUG: domains of debug lines ("1"/"all": every one) */
	char *test_clock_skew;   /* TEST_CLOCK_SKEW: OFFSET_NS,DRIFT_PPM (test only) */
};

/*
 * The auto-throttle's early decision (docs/HOOKS.md): a function whose
 * first THROTTLE_EARLY calls of a window have a mean own cost below
 * THROTTLE_MEAN / SP_THROTTLE_EARLY_MEAN_DIV is throttled then. Returns the
 * calls, 0 when there is none (off, or not shorter than the window).
 * A tenth, not less: a timed call of a 2 ns accessor measures 60-100 ns
 * on a VM with a slow rdtsc (our own timing), so a hundredth (100 ns) left
 * 27 of the proxy's accessors to the full window by a few ns.
 */
enum { SP_THROTTLE_EARLY_MEAN_DIV = 10 };
static inline uint64_t sp_throttle_early_calls(int64_t early, int64_t throttle_calls)
{
	return early > 0 && early < throttle_calls ? (uint64_t)early : 0;
}

/* The process-wide configuration, valid after sp_config_load(). */
SP_HIDDEN extern struct sp_config sp_config;

/* Parse the environment. Bad values keep the default and produce one
 * warning each on stderr. Returns the number of bad values. */
SP_HIDDEN int sp_config_load(void);
SP_HIDDEN void sp_config_print(FILE *out);

/* Durations: sp_duration_parse (common/sp-duration.h), bare number = s. */
/* "64K", "256M", "1G", plain number = bytes (binary units). */
SP_HIDDEN int sp_parse_size(const char *s, uint64_t *ret_bytes);

#endif /* SP_CONFIG_H */
