/* SPDX-License-Identifier: MIT */
/*
 * Automatic function regions (-finstrument-functions): the global function
 * table, the per-thread address cache and counters, the filter and
 * overhead-control settings, and finalize-time symbol resolution. The hooks
 * (preload/cyg-hooks.c) probe the cache declared here, open and close
 * events with the recorder's event primitive (recorder.h) and leave every
 * other case to the out-of-line functions below.
 */
#ifndef SP_FUNCTIONS_H
#define SP_FUNCTIONS_H

#include <stdatomic.h>
#include <stdint.h>

#include "recorder.h"

/* Per-thread direct-mapped cache: 4096 entries x 16 B = 64 KiB per thread. */
#define SP_FN_CACHE_BITS 12
#define SP_FN_CACHE_SIZE (1u << SP_FN_CACHE_BITS)

/* Frame flag: pushed by the hooks' filtered path (its region has counters). */
#define SP_FRAME_FUNCTION 0x100u

/* sp_fn_mode bits: what the filtered path must do. 0 = plain recording. */
enum {
	SP_FN_MIN_DURATION = 1u << 0,
	SP_FN_MAX_DEPTH = 1u << 1,
	SP_FN_THROTTLE = 1u << 2,
	SP_FN_SLOW_CLOCK = 1u << 3, /* no TSC: the fast path reads only rdtsc */
	SP_FN_ESTIMATE = 1u << 4,   /* THROTTLE_TIMING=estimate: throttled calls are counted only */
	SP_FN_SAMPLED = 1u << 5,    /* THROTTLE_TIMING=sampled: counted, 1 in K timed at random */
	SP_FN_COUNT_ONLY = SP_FN_ESTIMATE | SP_FN_SAMPLED,
};

/* Frame flag: a sampled call of a throttled function (timed, already
 * counted in its thr_calls). */
#define SP_FRAME_SAMPLED 0x200u
/* Frame flag: a timed call whose hook cost is probed (1 in SP_FN_PROBE_EVERY
 * filtered calls: the time from its timestamps to the end of each hook). */
#define SP_FRAME_PROBE 0x400u
#define SP_FN_PROBE_EVERY 128

/* sp_region.flags bit: the function is throttled for the whole process
 * (set once by the first thread that decides; every thread adopts it). */
#define SP_REGION_THROTTLED 1u
/* sp_region.flags bit: a hook call of the function was patched to a NOP
 * (SCOPE_PROFILER_PATCH): its count is a lower bound from then on. */
#define SP_REGION_PATCHED 2u

/* One cache slot. region == SP_NO_REGION: the function is filtered out
 * (excluded), its calls cost one probe and are never recorded. gate != 0:
 * the function is throttled in a count-only mode and no frame of it is
 * open on this thread (its stats' throttled value: 1, or 2 patched), so
 * the hooks count its call from the slot alone; kept in step with the
 * stats by sp_fn_gate() wherever throttled or open change. */
struct sp_fn_entry {
	uintptr_t addr;
	uint32_t region;
	uint32_t gate;
};

/*
 * Per-thread, per-region counters of calls that are not on the timeline
 * (throttled, shorter than MIN_DURATION, deeper than MAX_DEPTH), plus the
 * running count and time the throttle decision is made from. Owned by the
 * thread; read by the finalizer after recording stopped, so no atomics.
 */
struct sp_fn_stats {
	uint64_t calls;         /* calls in the current throttle window */
	int64_t ticks;          /* their own cost: duration less the profiler's
				 * timing of their timed descendants */
	int64_t incl;           /* their summed duration (estimate mode) */
	uint64_t hidden;        /* calls not on the timeline, timed exactly */
	int64_t hidden_ticks;   /* their summed duration */
	uint32_t throttled;     /* 1: later calls get no events (this thread
				 * adopted the process-wide decision); 2: also
				 * patched (exits are patched as they run) */
	uint32_t open;          /* function frames of this region on the stack */
	uint64_t smp_n;         /* sampled mode: counted calls that were timed */
	int64_t smp_ticks;      /* their summed duration */
	double smp_sq;          /* sum of their squared durations (ticks^2) */
	int64_t win_mean;       /* estimate mode: the mean of the deciding
				 * window (ticks), frozen when the throttle hit */
	struct sp_region *reg;  /* this region (filled on first use) */
};

/*
 * Hook state of one thread. Created on the thread's first hook call, put on
 * a global list and never freed while the process records, so a thread that
 * exits early keeps its counters until finalize. Only the owning thread
 * touches it while recording.
 */
struct sp_fn_thread {
	struct sp_rec_thread *t;
	/* Sampled timing: throttled count-only calls of any function left
	 * before the next one is timed. Gaps are geometric (each call is timed
	 * with probability 1/K, independently), so loops cannot alias with
	 * the sampling and count x sample mean is unbiased. */
	uint64_t countdown;
	/* The function whose counted-only entry (gate 1) returned last, with
	 * no sampled entry since: its exit has nothing to do, known without
	 * probing the cache (an accessor's exit follows its entry). 0: none.
	 * Cleared by a sampled entry and when its module is unloaded; never
	 * set with --patch (a patched entry's exits count down to patch_exit). */
	uintptr_t counted_last;
	uint64_t rng;               /* xorshift64* state */
	uint64_t timed;             /* timed calls so far (frames' timed0) */
	/* In-run cost of a timed call (overhead estimate): calls left before
	 * the next probe, and the probes' summed ticks and count. */
	uint32_t probe_left;
	uint64_t probe_n;
	int64_t probe_ticks;
	/* Exits of counted-only calls that were not counted_last's (a caller
	 * of counted functions, or any with --patch): they look their function
	 * up, the longer path (the overhead estimate counts them apart). */
	uint64_t long_exits;
	struct sp_fn_stats *stats;  /* indexed by region id, nstats long */
	uint64_t *counts;           /* count-only mode: throttled calls counted per
				     * region (the sampled ones included), nstats long */
	uint32_t nstats;            /* > every region in this thread's cache */
	uint32_t patch_seen;        /* patch mode: entries of sp_patch_log followed */
	struct sp_fn_entry cache[SP_FN_CACHE_SIZE];
	struct sp_fn_thread *next; /* after the cache: its slots' offset unchanged */
};

/* Filter settings, fixed by sp_fn_setup() before the first recorded call. */
SP_HIDDEN extern unsigned sp_fn_mode;
/* FUNCTIONS=0: threads get no state, the hooks return at once. */
SP_HIDDEN extern atomic_bool sp_fn_off;
SP_HIDDEN extern int64_t sp_fn_min_ticks;   /* MIN_DURATION in ticks */
SP_HIDDEN extern int64_t sp_fn_max_depth;   /* MAX_DEPTH, 0 = unlimited */
SP_HIDDEN extern uint64_t sp_fn_thr_calls;  /* THROTTLE_CALLS */
SP_HIDDEN extern int64_t sp_fn_thr_ticks;   /* THROTTLE_MEAN in ticks */
/* The early decision (sp_throttle_early_calls, config.h): calls, ticks. */
SP_HIDDEN extern uint64_t sp_fn_thr_early_calls;
SP_HIDDEN extern int64_t sp_fn_thr_early_ticks;
SP_HIDDEN extern int64_t sp_fn_timed_cost;  /* profiler cost of one timed call, ticks */

SP_HIDDEN extern __thread struct sp_fn_thread *sp_fn_tls
	__attribute__((tls_model("initial-exec")));

/* Cache slot of a function address. An instrumented function is longer
 * than 16 bytes, so addr >> 4 differs for neighbours; folding in the bits
 * above 64 KiB spreads distant modules. Two shifts and a xor: cheaper on
 * the hot path than a multiplicative hash. */
static inline uint32_t sp_fn_slot(uintptr_t addr)
{
	return (uint32_t)((addr >> 4) ^ (addr >> (4 + SP_FN_CACHE_BITS))) & (SP_FN_CACHE_SIZE - 1);
}

/* Attach the calling thread (first hook call). NULL if recording cannot
 * start on this thread. Saves errno. */
SP_HIDDEN struct sp_fn_thread *sp_fn_thread_attach(void);
/* Cache miss: look addr up in the global table (creating its entry, and
 * deciding its filter state, on the first call ever), fill the slot and
 * return it. NULL on allocation failure. Saves errno. */
SP_HIDDEN struct sp_fn_entry *sp_fn_cache_fill(struct sp_fn_thread *h, uintptr_t addr);
/*
 * The filtered paths (sp_fn_mode != 0) and the mismatched-exit path. at is
 * where the hook was called (recorder.h, struct sp_frame_at; SP_FRAME_NOWHERE:
 * unknown): an enter at or above open frames closes those it abandoned
 * (left by longjmp), an exit closes the frames below it before its own.
 */
SP_HIDDEN void sp_fn_enter_filtered(struct sp_fn_thread *h, uint32_t region, struct sp_frame_at at);
SP_HIDDEN void sp_fn_exit_filtered(struct sp_fn_thread *h, uint32_t region, uintptr_t sp);
SP_HIDDEN void sp_fn_exit_unwind(struct sp_fn_thread *h, uint32_t region, int64_t now, uintptr_t sp);
/* Plain recording (sp_fn_mode == 0), an enter the fast path does not take:
 * frames left open at or below `at`, or no room for the event. Saves errno. */
SP_HIDDEN void sp_fn_enter_rare(struct sp_fn_thread *h, uint32_t region, int64_t now,
				struct sp_frame_at at);
/* Sampled mode: the countdown of throttled calls reached 0; time this call
 * of `region` (throttled, no frame of it open) and draw the next gap. */
SP_HIDDEN void sp_fn_enter_sampled(struct sp_fn_thread *h, uint32_t region, struct sp_frame_at at);
/* The next countdown of throttled calls (sampled mode; UINT64_MAX else). */
SP_HIDDEN uint64_t sp_fn_next_gap(struct sp_fn_thread *h);
/* Patch mode: true when another thread patched the function already. */
SP_HIDDEN bool sp_fn_region_patched(struct sp_fn_stats *st, uint32_t region);
/* Patch mode: a hook call of the function became a NOP: this thread's state
 * 2, the region's flag and the time (the first wins). */
SP_HIDDEN void sp_fn_mark_patched(struct sp_fn_thread *h, struct sp_fn_stats *st, uint32_t region);
/* The function-wide part of it (patched_since, the flag), from the thread
 * that wrote an enter site of the function (preload/patch.c); each thread
 * follows with sp_fn_mark_patched on its next rare path. */
SP_HIDDEN void sp_fn_region_set_patched(uint32_t region);

/* dlclose unmapped [lo, hi): forget its functions' entries and every
 * thread's cache slots for them, so that a module loaded there later gets
 * its own regions and names (see functions.c). Takes fn_lock; saves errno. */
SP_HIDDEN void sp_fn_forget_range(uintptr_t lo, uintptr_t hi);
/* True once some function was looked up (the table exists). */
SP_HIDDEN bool sp_fn_table_used(void);

/* Read the configuration, compile the filters, set sp_fn_mode. Idempotent;
 * called on the first hook call. Returns 0 or -errno. */
SP_HIDDEN int sp_fn_setup(void);
/* At finalize, recording stopped: move every thread's counters into the
 * regions' throttled_calls/throttled_ns and resolve every function region's
 * name and source. */
SP_HIDDEN void sp_fn_finalize(void);

/*
 * Names resolved once per node (the MPI finalize): every rank lists the
 * functions it has not named yet by file and offset, one rank of the node
 * resolves them all with its own symbolizer and sends each rank its answers,
 * which carry the name, file and line sp_sym_resolve() gives (the same file
 * on the same node: the same answer). What is not answered is resolved by
 * the rank itself in sp_fn_names_finish().
 *
 * sp_fn_defer_names: the next sp_fn_finalize() publishes the counters but
 * names nothing; sp_fn_names_finish() then names what is left and ends it.
 * sp_fn_names_request: this process's list (a new buffer, caller frees;
 * NULL and length 0 when it has nothing to ask); remembered until
 * sp_fn_names_apply() or sp_fn_names_finish().
 * sp_fn_names_answer: the answers to one process's list (a new buffer);
 * never fails on a malformed list (NULL: nothing to answer, or no memory).
 * Answers are kept until sp_fn_names_finish() for the next list.
 * sp_fn_names_apply: this process's answers, in its list's order (a short
 * or malformed buffer: what it holds up to there).
 */
SP_HIDDEN void sp_fn_defer_names(void);
SP_HIDDEN int sp_fn_names_request(char **ret_buf, size_t *ret_len);
SP_HIDDEN char *sp_fn_names_answer(const char *req, size_t len, size_t *ret_len);
SP_HIDDEN void sp_fn_names_apply(const char *ans, size_t len);
SP_HIDDEN void sp_fn_names_finish(void);
/* A forked child that records on (FORK=child), alone: forget the calls the
 * parent counted, timed by sampling or dropped, in every thread's counters
 * and the regions' totals; the throttle decisions stay. */
SP_HIDDEN void sp_fn_forget_counts(void);

/* Profiler time spent inside the open frames (patching a call site: an
 * mprotect, a membarrier, 5-20 us): charged as that many timed calls, which
 * the enclosing frames' own cost takes out (throttle_account), so that a
 * caller is not kept off the early decision by its callees' patching. */
static inline void sp_fn_charge(struct sp_fn_thread *h, int64_t ticks)
{
	if (sp_fn_timed_cost > 0 && ticks > 0)
		h->timed += (uint64_t)((ticks + sp_fn_timed_cost - 1) / sp_fn_timed_cost);
}
/* After sp_fn_finalize: the cost of a timed function call (enter + exit)
 * measured during the run, and of a counted-only call over glibc's empty
 * hooks measured at setup, in ns; < 0 unknown. */
SP_HIDDEN double sp_fn_timed_call_ns(void);
SP_HIDDEN double sp_fn_count_call_ns(void);
/* A counted-only call's cost (leaf: its exit follows its entry) and what an
 * exit that looks its function up adds (long_exits), from the hooks'
 * start-up measurement; sp_fn_count_call_ns() is then their mean over the
 * counted calls of the run: leaf + long exits / counted calls x long. */
SP_HIDDEN void sp_fn_set_count_call_ns(double leaf_ns, double long_exit_ns);
/* Sampled timing: the duration (ticks) the sampled path measures for an
 * empty function, subtracted from each sampled call's in the estimate of a
 * throttled function's time (set by the hooks at the first attach); after
 * sp_fn_finalize, the same in ns (< 0 unknown). */
SP_HIDDEN void sp_fn_set_sample_bias_ticks(double ticks);
SP_HIDDEN double sp_fn_sample_bias_ns(void);

/* ---- filters (filter.c) ------------------------------------------------ */

/* Compile include/exclude (Python re.match semantics: anchored at the
 * start). NULL or "" = no filter. Returns 0 or -EINVAL (a message naming the
 * bad pattern goes to stderr once). */
SP_HIDDEN int sp_filter_set(const char *include, const char *exclude);
/* True when some filter is set. */
SP_HIDDEN bool sp_filter_active(void);
/* True when a function of this (demangled) name is recorded. */
SP_HIDDEN bool sp_filter_accepts(const char *name);
SP_HIDDEN void sp_filter_free(void);

/* ---- symbols (symbols.c) ----------------------------------------------- */

struct sp_symbol {
	char *name;          /* demangled; "module+0xoffset" if unresolved */
	char *file;          /* definition's source file, NULL if unknown */
	int64_t line;        /* definition's line, -1 if unknown */
};

/* Module of addr, captured while it is mapped: an index into the module
 * table (path and load bias kept for a later dlclose), or -errno. */
SP_HIDDEN int sp_sym_module_of(uintptr_t addr);
/* Resolve addr in module `module` (from sp_sym_module_of). Never fails for
 * the name: unresolvable addresses become "module+0xoffset". want_source
 * false skips the DWARF line lookup. Returns 0 or -ENOMEM; free with
 * sp_sym_free(). Not thread-safe: callers serialize. */
SP_HIDDEN int sp_sym_resolve(int module, uintptr_t addr, bool want_source,
			     struct sp_symbol *ret_sym);
/* Resolve a code address inside a function (a return address minus one):
 * name = the function holding pc (the innermost inlined one, if any), file
 * and line = the line-table entry of pc. Same rules as sp_sym_resolve. */
SP_HIDDEN int sp_sym_resolve_pc(int module, uintptr_t pc, struct sp_symbol *ret_sym);
SP_HIDDEN void sp_sym_free(struct sp_symbol *sym);
/* Test: every address where a symbol of the module starts, named by the
 * index sp_sym_resolve uses and by libdwfl's own lookup; prints the first
 * disagreements. Returns how many disagree (-ENOENT: no such module) and
 * the addresses the index answered for. */
SP_HIDDEN int sp_sym_check_index(int module, size_t *ret_checked);
/* Demangle (C++) and tidy a raw symbol name: compiler clone suffixes
 * (".constprop.0", ".isra.0", ".part.0", ".cold") are removed and a function
 * template's leading return type is dropped. Returns a malloc'd string. */
SP_HIDDEN char *sp_sym_demangle(const char *raw);
/* Close every module (drops libdw state). */
SP_HIDDEN void sp_sym_close_all(void);
/* Called (no arguments) whenever sp_sym_module_of meets a new module: the
 * spill file then describes it while it is mapped. NULL: nothing. */
SP_HIDDEN void sp_sym_set_module_hook(void (*fn)(void));
/* A module by file path and load bias, not necessarily mapped (`recover`
 * resolves offsets with bias 0). Returns its index or -ENOMEM. */
SP_HIDDEN int sp_sym_module_add(const char *path, uintptr_t bias);
/* The file path and load bias of a module (NULL: no such module). */
SP_HIDDEN const char *sp_sym_module_path(int module, uintptr_t *ret_bias);
/* The first module with this file path, whatever its bias, or -ENOENT. */
SP_HIDDEN int sp_sym_module_find(const char *path);
SP_HIDDEN int sp_sym_module_count(void);
/* Whether the module's file is the one that ran: readable, an ELF file
 * libdw opens, with this GNU build-id (n 0: not checked). Returns 0,
 * -errno of the file (-ENOENT missing), -ENOEXEC not readable as ELF, or
 * -ESTALE for another build; after -ESTALE the module resolves nothing
 * ("module+0xoffset"). */
SP_HIDDEN int sp_sym_module_check(int module, const void *build_id, size_t n);

#endif /* SP_FUNCTIONS_H */
