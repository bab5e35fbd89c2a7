/* SPDX-License-Identifier: MIT */
/*
 * The recorder's internal API: per-thread event buffers and nesting stacks,
 * the event primitive (open and close, always inlined), the region table and the flush entry
 * points. Everything here is hidden (-fvisibility=hidden); preload/ exports
 * the thin public shims.
 */
#ifndef SP_RECORDER_H
#define SP_RECORDER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "compiler.h"
#include "sp-format.h"

/* Nesting depth a thread can record; deeper calls are counted as dropped. */
#define SP_STACK_MAX 512
/* An event whose end is this value never closed (still open at flush). */
#define SP_OPEN INT64_MIN
/* Region id meaning "no region / deleted event". */
#define SP_NO_REGION UINT32_MAX

/*
 * One recorded call. Reserved at entry (so a region's calls stay in entry
 * order), closed at exit. Times are raw ticks until the snapshot converts
 * them. aux is 0 or 1 + an index into the thread's extension records.
 */
struct sp_event {
	int64_t start;
	int64_t end;
	uint32_t region;
	uint32_t aux;
};

/* One open call on a thread's nesting stack. ev is NULL when the call is
 * not on the timeline (dropped or throttled); start is kept for those. */
struct sp_frame {
	struct sp_event *ev;
	int64_t start;
	uint32_t region;
	uint32_t flags;
	uint64_t timed0;               /* hooks: the thread's timed calls at entry */
};

/*
 * Where a hook frame's call was made: sp, the hook's CFA (the instrumented
 * function's stack pointer when it called its enter hook), and pc, the
 * hook's return address (which copy of the function's code entered: an
 * inlined copy has its own). A real callee's sp is always lower than every
 * live caller's on the same stack; an inlined one shares its host's. Frames
 * of the MPI wrappers and the manual API have SP_FRAME_NO_SP: never taken
 * for abandoned; an enter without one abandons nothing.
 */
struct sp_frame_at {
	uintptr_t sp;
	uintptr_t pc;
};
#define SP_FRAME_NO_SP UINTPTR_MAX
#define SP_FRAME_NOWHERE ((struct sp_frame_at){ .sp = SP_FRAME_NO_SP, .pc = 0 })

#define SP_FRAME_DROPPED 1u   /* no event: buffer or memory cap exhausted */
#define SP_FRAME_UNTIMED 2u   /* no event: filtered/throttled, accounted elsewhere */

struct sp_chunk;
struct sp_spill_slots;

/*
 * Per-thread state. Owned by its thread while recording: nothing here is
 * touched by any other thread until recording has stopped, so no field needs
 * a lock. The struct is never freed before the process flushes, so a thread
 * that exits early keeps its events (the global list owns it).
 */
struct sp_rec_thread {
	struct sp_event *pos;          /* next free slot in the current chunk */
	struct sp_event *end;          /* one past the current chunk */
	uint32_t depth;                /* frames in use on stack[] */
	uint32_t overflow;             /* calls deeper than SP_STACK_MAX */
	int busy;                      /* re-entrancy guard for hooks */
	uint32_t index;                /* thread index in this process (0 = first) */
	struct sp_chunk *chunks;       /* newest first */
	struct sp_rec_thread *next;        /* global list, guarded by its mutex */
	int64_t native_id;             /* gettid() */
	int64_t ident;                 /* pthread_self() */
	int64_t start_ns, end_ns;      /* CLOCK_MONOTONIC; end 0 while alive */
	void *ext;                     /* per-thread extension state (hooks, MPI) */
	/* Spilling (spill.c): events of this thread already in the spill file
	 * (the sequence number of the first event in memory); the slots that
	 * open frames point to once their event was spilled; at finalize, the
	 * spilled events read back (iterated before the chunks). */
	uint64_t spilled;
	struct sp_spill_slots *slots;
	uint64_t nprefix;              /* spilled events readable (sp_spill_prefix_piece) */
	const void *prefix;            /* spill.c's index of them, NULL: none */
	atomic_int spilling;           /* 1 while the thread writes its chunks out */
	struct sp_frame stack[SP_STACK_MAX];
	/*
	 * Where the open frames were entered, one above their index:
	 * stack_at[d + 1] is frame d's, and stack_at[0].sp is SP_FRAME_NO_SP
	 * (set at attach), so stack_at[depth].sp is the innermost frame's with
	 * no test for an empty stack. Only the hooks write pc. An enter at or
	 * above the innermost frame's sp may mean that frame was left without
	 * its exit (longjmp, an exception through code whose exits are not
	 * instrumented): the hooks' slow path decides (functions.c).
	 */
	struct sp_frame_at stack_at[SP_STACK_MAX + 1];
};

/* 1 while events are recorded. Read with a relaxed load on the hot path. */
SP_HIDDEN extern atomic_int sp_recording;
SP_HIDDEN extern __thread struct sp_rec_thread *sp_tls
	__attribute__((tls_model("initial-exec")));

/* Slow paths, out of line. */
SP_HIDDEN struct sp_rec_thread *sp_thread_attach(void);
/* Open a call without room for its event: a new chunk, else a frame without
 * event (dropped). Returns the event, NULL if none. */
SP_HIDDEN struct sp_event *sp_thread_enter_slow(struct sp_rec_thread *t, uint32_t region,
						int64_t now, struct sp_frame_at at);
SP_HIDDEN void sp_thread_exit_slow(struct sp_rec_thread *t, uint32_t region, int64_t now);

static inline struct sp_rec_thread *sp_thread_get(void)
{
	struct sp_rec_thread *t = sp_tls;
	if (SP_UNLIKELY(!t))
		t = sp_thread_attach();
	return t;
}

/*
 * The event primitive: every recorded call is opened and closed by these
 * (the hooks, the MPI wrappers' fast and general paths, the manual API and
 * the filtered function paths). Open: the next slot of the thread's chunk
 * and a frame pointing to it on the nesting stack, with no check: the
 * caller tested sp_event_full() and sends that case to its slow path.
 * Close: the innermost frame, when it is an event of the region.
 */
static SP_ALWAYS_INLINE bool sp_event_full(const struct sp_rec_thread *t)
{
	return SP_UNLIKELY(t->pos == t->end) || SP_UNLIKELY(t->depth >= SP_STACK_MAX);
}

/* The event and frame of sp_event_push(), the frame's place left to the
 * caller. */
static SP_ALWAYS_INLINE struct sp_frame *sp_event_push_frame(struct sp_rec_thread *t,
							     uint32_t region)
{
	struct sp_event *ev = t->pos;
	uint32_t d = t->depth;
	t->pos = ev + 1;
	ev->end = SP_OPEN;
	ev->region = region;
	ev->aux = 0;
	t->depth = d + 1;
	struct sp_frame *f = &t->stack[d];
	f->ev = ev;
	f->region = region;
	f->flags = 0;
	return f;
}

/* Open without a start time (sp_event_start() sets it): for a caller that
 * reads the clock as the last thing before the call it times. The frame has
 * no place (SP_FRAME_NO_SP). Returns the frame. */
static SP_ALWAYS_INLINE struct sp_frame *sp_event_push(struct sp_rec_thread *t, uint32_t region)
{
	t->stack_at[t->depth + 1].sp = SP_FRAME_NO_SP;
	return sp_event_push_frame(t, region);
}

/* The start time of the event sp_event_push() opened with frame f. */
static SP_ALWAYS_INLINE void sp_event_start(struct sp_frame *f, int64_t now)
{
	f->ev->start = now;
	f->start = now;
}

/* Open an event of `region` started at `now`; returns it. The frame's
 * flags are 0 and its timed0 is left to the caller. */
static SP_ALWAYS_INLINE struct sp_event *sp_event_open(struct sp_rec_thread *t, uint32_t region,
						       int64_t now)
{
	struct sp_frame *f = sp_event_push(t, region);
	sp_event_start(f, now);
	return f->ev;
}

/* The same for a frame entered at `at` (the hooks). */
static SP_ALWAYS_INLINE struct sp_event *sp_event_open_at(struct sp_rec_thread *t, uint32_t region,
							  int64_t now, struct sp_frame_at at)
{
	t->stack_at[t->depth + 1] = at;
	struct sp_frame *f = sp_event_push_frame(t, region);
	sp_event_start(f, now);
	return f->ev;
}

/* Push a frame without event (filtered, throttled, dropped) entered at
 * `at`. Room was checked by the caller (depth < SP_STACK_MAX). */
static SP_ALWAYS_INLINE struct sp_frame *sp_frame_push(struct sp_rec_thread *t, struct sp_frame fr,
						       struct sp_frame_at at)
{
	uint32_t d = t->depth;
	t->stack[d] = fr;
	t->stack_at[d + 1] = at;
	t->depth = d + 1;
	return &t->stack[d];
}

/* Stack address of the innermost open frame, SP_FRAME_NO_SP if none. */
static SP_ALWAYS_INLINE uintptr_t sp_frame_top_sp(const struct sp_rec_thread *t)
{
	return t->stack_at[t->depth].sp;
}

/* Close the innermost call at `now` if it is an event of `region`: returns
 * the event. NULL changes nothing (a mismatched or stray exit, a frame
 * without event, a stack that overflowed): the caller's slow path decides. */
static SP_ALWAYS_INLINE struct sp_event *sp_event_close(struct sp_rec_thread *t, uint32_t region,
							int64_t now)
{
	uint32_t d = t->depth;
	if (SP_LIKELY(d && !t->overflow)) {
		struct sp_frame *f = &t->stack[d - 1];
		if (SP_LIKELY(f->region == region && f->ev)) {
			struct sp_event *ev = f->ev;
			ev->end = now;
			t->depth = d - 1;
			return ev;
		}
	}
	return NULL;
}

/* Open a call of `region` at `now`: an event, or the slow path. Returns the
 * event, NULL if the call has none. */
static SP_ALWAYS_INLINE struct sp_event *sp_rec_enter_at(struct sp_rec_thread *t, uint32_t region,
							 int64_t now)
{
	if (SP_UNLIKELY(sp_event_full(t)))
		return sp_thread_enter_slow(t, region, now, SP_FRAME_NOWHERE);
	return sp_event_open(t, region, now);
}

/* Close a call of `region` at `now` (the slow path handles a mismatch). */
static SP_ALWAYS_INLINE void sp_rec_exit_at(struct sp_rec_thread *t, uint32_t region, int64_t now)
{
	if (SP_LIKELY(sp_event_close(t, region, now)))
		return;
	sp_thread_exit_slow(t, region, now);
}

/* The same, reading the clock. */
static inline void sp_rec_enter_thread(struct sp_rec_thread *t, uint32_t region)
{
	sp_rec_enter_at(t, region, sp_ticks());
}

static inline void sp_rec_exit_thread(struct sp_rec_thread *t, uint32_t region)
{
	sp_rec_exit_at(t, region, sp_ticks());
}

static inline void sp_rec_enter(uint32_t region)
{
	if (SP_UNLIKELY(!atomic_load_explicit(&sp_recording, memory_order_relaxed)))
		return;
	struct sp_rec_thread *t = sp_thread_get();
	if (SP_LIKELY(t != NULL))
		sp_rec_enter_thread(t, region);
}

static inline void sp_rec_exit(uint32_t region)
{
	if (SP_UNLIKELY(!atomic_load_explicit(&sp_recording, memory_order_relaxed)))
		return;
	struct sp_rec_thread *t = sp_tls;
	if (SP_LIKELY(t != NULL))
		sp_rec_exit_thread(t, region);
}

/* ---- threads (thread.c) ------------------------------------------------ */

/* Configure the memory cap (bytes of event storage for the whole process). */
SP_HIDDEN void sp_thread_set_cap(uint64_t bytes);
/* Walk every thread that ever recorded, in index order. Recording must be
 * stopped (or the caller must accept a racy view of live threads). */
SP_HIDDEN struct sp_rec_thread *sp_thread_first(void);
SP_HIDDEN uint32_t sp_thread_count(void);
/* Where an iteration over a thread's events is: zero it to start. */
struct sp_event_iter {
	const struct sp_chunk *chunk; /* the chunk returned last, NULL: none yet */
	uint64_t prefix_at;           /* spilled events returned so far */
	int err;                      /* -errno: reading spilled events failed */
};
/* Iterate a thread's events oldest first, in pieces: the events spilled and
 * indexed at finalize (sp_spill_load, read back a bounded piece at a time,
 * valid until the next call), then its chunks in memory. Returns the
 * number of events at *ret_events and advances, 0 at the end or on an
 * error (it->err set). One iteration over spilled events at a time. */
SP_HIDDEN size_t sp_thread_next_chunk(const struct sp_rec_thread *t, struct sp_event_iter *it,
				       const struct sp_event **ret_events);
/* Close every call still open on any thread at tick `now` (final flush:
 * `main` and its callers are open while MPI_Finalize or exit runs).
 * Recording must be stopped. */
SP_HIDDEN void sp_thread_close_open(int64_t now);
/* ns spent so far allocating (and faulting in) event chunks. */
SP_HIDDEN int64_t sp_thread_alloc_ns(void);
/* Total events dropped so far (memory cap, stack depth). */
SP_HIDDEN uint64_t sp_thread_dropped_total(void);
/* Count n recorded events of `region` as dropped after all (they were
 * spilled to a file that went out of reach). */
SP_HIDDEN void sp_thread_count_dropped(uint32_t region, uint64_t n);
/* Forget every recorded event (and the dropped count) and free the
 * buffers (after finalize, after fork in a child that must not duplicate
 * the parent's data). */
SP_HIDDEN void sp_thread_reset_all(void);
/* In a forked child, before anything else: make the thread list usable. */
SP_HIDDEN void sp_thread_after_fork(void);

/* ---- region table (regions.c) ------------------------------------------ */

/*
 * A region. Created once, never moved or freed while the process records,
 * so a pointer or id obtained once stays valid. name is NULL for a function
 * region until the symbolizer resolves it at flush.
 */
struct sp_region {
	const char *name;
	uintptr_t addr;                /* function address (hooks), else 0 */
	const char *source_file;       /* NULL if unknown */
	int64_t source_line;           /* -1 if unknown */
	uint32_t id;
	uint32_t kind;                 /* SP_KIND_* (sp-format.h), fixed at creation */
	atomic_uint_least64_t dropped; /* calls lost (cap, depth) */
	atomic_uint_least64_t throttled_calls;
	atomic_int_least64_t throttled_ns;
	/* Hooks, sampled throttle timing (filled at finalize): throttled calls
	 * that were timed, the 95 % interval half-width of throttled_ns (-1
	 * unknown: no sample), and the tick at which the function was
	 * throttled (0 never; ns after finalize converts it). */
	atomic_uint_least64_t throttle_timed;
	atomic_int_least64_t throttled_ci_ns;
	atomic_int_least64_t throttled_since;
	atomic_int_least64_t patched_since; /* tick of the first patched hook call, 0 never */
	atomic_uint flags;             /* feature-specific (hooks: SP_REGION_THROTTLED) */
};

/* Id for `name`, creating the region of kind `kind` (SP_KIND_MANUAL or an
 * MPI kind) if needed: a name keeps the kind it was created with. Thread-safe;
 * the lookup of an existing name takes no lock. Returns SP_NO_REGION on
 * allocation failure. */
SP_HIDDEN uint32_t sp_region_intern(const char *name, unsigned kind);
/* Id for a function address, creating an unnamed region if needed. */
SP_HIDDEN uint32_t sp_region_for_addr(uintptr_t addr);
/* A new unnamed region for a function address, also when the address has
 * one (a module loaded where an unloaded one was). Not found by
 * sp_region_for_addr(), which keeps the first. */
SP_HIDDEN uint32_t sp_region_new_for_addr(uintptr_t addr);
/* The region with this id, or NULL if the id is out of range. Lock-free. */
SP_HIDDEN struct sp_region *sp_region_get(uint32_t id);
/* Number of regions created so far. */
SP_HIDDEN uint32_t sp_region_count(void);
/* Set name/source of a region (symbolizer, first manual registration). The
 * strings are copied. */
SP_HIDDEN void sp_region_set_name(struct sp_region *r, const char *name);
SP_HIDDEN void sp_region_set_source(struct sp_region *r, const char *file, int64_t line);

/* ---- process lifecycle (recorder.c) ------------------------------------ */

struct sp_config;

/* Start recording in this process (idempotent). Returns 0 or -errno. */
SP_HIDDEN int sp_recorder_start(void);
/* Stop recording; later enter/exit calls are no-ops. */
SP_HIDDEN void sp_recorder_stop(void);
/* Start-up cost (ns): from the launcher's exec to the end of the library's
 * constructor, as wall time and as CPU time (the launcher's and the
 * constructor's; preload/lifecycle.c measures both). */
SP_HIDDEN void sp_recorder_set_startup_ns(int64_t wall_ns, int64_t cpu_ns);
/* The measured cost of one recorded call (ns), < 0 unknown. */
SP_HIDDEN double sp_recorder_event_cost_ns(void);
/* CLOCK_MONOTONIC ns when recording started. */
SP_HIDDEN int64_t sp_recorder_start_ns(void);
/* Note that finalization starts now (the first call wins): metadata
 * finalize_time_ns, and the time spent finalizing. */
SP_HIDDEN void sp_recorder_mark_finalize(void);
/* ns since that mark (0 before it). */
SP_HIDDEN int64_t sp_recorder_finalize_spent_ns(void);

#endif /* SP_RECORDER_H */
