/* SPDX-License-Identifier: MIT */
/*
 * The spill file of this process (format: sp-spill.h, docs/RESILIENCE.md).
 * Opened when recording starts, appended to when a thread reaches the memory
 * cap and by the signal handler, read back at finalize, removed after a
 * successful write. Internal to the recorder and the preload.
 */
#ifndef SP_SPILL_WRITE_H
#define SP_SPILL_WRITE_H

#include <stdbool.h>
#include <sys/types.h>

#include "recorder.h"

/* Create <output>.spill.pid<PID> and write its header, then the process
 * tree's id (tree: metadata process_tree; NULL or "" none). at_cap:
 * threads spill there when they reach the memory cap (else only the signal
 * handler and a failed finalize write to it). Returns 0 or -errno (then
 * calls past the cap are dropped and counted, and signals are not
 * captured). */
SP_HIDDEN int sp_spill_open(const char *output, bool at_cap, const char *tree);
/* True when threads spill at the cap (an open file, at_cap, not stopped). */
SP_HIDDEN bool sp_spill_active(void);
/* The spill file is open and belongs to this process: not a forked copy,
 * not a vfork child that shares our memory. */
SP_HIDDEN bool sp_spill_owned(void);
/* The process is MPI rank `rank` of `size`: rename the file to
 * <output>.spill.rank<NNNNN> and record the rank. */
SP_HIDDEN void sp_spill_set_rank(const char *output, int rank, int size);
/* Path of the spill file ("" if none). */
SP_HIDDEN const char *sp_spill_path(void);

/* Slow path of a thread at the cap: append its chunks (oldest first) and
 * move its open frames that point into them to per-thread slots. The caller
 * then reuses the chunks. Returns 0 or -errno (nothing changed then; the
 * first failed write stops the spill for good: one warning on stderr, no
 * write after it, sp_spill_active() false, so calls past the cap are
 * dropped and counted). */
SP_HIDDEN int sp_spill_thread(struct sp_rec_thread *t);

/*
 * Async-signal-safe: stop recording, append every thread's events still in
 * memory, the calls still open closed at this instant, the drop counts and
 * a trailer naming `signo`. Only atomics, clock_gettime, pwrite, and write
 * to stderr for the warning when a write fails. Returns 0 when everything
 * was written; -EBADF (no spill file), -EALREADY (it ran already), or the
 * negative errno that stopped the spill, now or earlier (then the file
 * holds only what was written before: sp_spill_events_total()).
 */
SP_HIDDEN int sp_spill_dump(int signo);

/* Finalize, recording stopped and open calls closed: if anything was
 * spilled, index the file (where each thread's events lie, not the events)
 * and give each thread its spilled events as t->prefix/nprefix, read back
 * a piece at a time by sp_thread_next_chunk before the chunks. Returns 0
 * or -errno (then only the events in memory are written). */
SP_HIDDEN int sp_spill_load(void);
/* After sp_spill_load: spilled events [first, ...) of t, at most a piece
 * (1 MiB), into one buffer valid until the next call. Returns how many,
 * 0 past the end, or -errno. */
SP_HIDDEN ssize_t sp_spill_prefix_piece(const struct sp_rec_thread *t, uint64_t first,
					const struct sp_event **ret);
/* Free what sp_spill_load() read. */
SP_HIDDEN void sp_spill_unload(void);
/* After a successful finalize: close and unlink the file. */
SP_HIDDEN void sp_spill_remove(void);
/* Close the file without removing it (a forked child sharing the
 * parent's file, or a failed finalize that leaves it for recovery). */
SP_HIDDEN void sp_spill_close(void);
/* Number of events written to the spill file so far (EVENTS records). */
SP_HIDDEN uint64_t sp_spill_events_total(void);
/* Where the spill file is now (its directory may have been moved: found
 * through our descriptor), written to buf (n bytes), and how many events
 * it holds: the events of its complete EVENTS records. Returns that count,
 * or -errno when no file of ours holds them (-ENOENT: removed, -ESTALE:
 * our descriptor was closed and the path names another file, -EBADF: no
 * spill file). */
SP_HIDDEN int64_t sp_spill_kept(char *buf, size_t n);

#endif /* SP_SPILL_WRITE_H */
