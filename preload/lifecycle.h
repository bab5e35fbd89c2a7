/* SPDX-License-Identifier: MIT */
/*
 * Process lifecycle glue: start at load, finalize once (at MPI_Finalize, at
 * sp_finalize() or at exit), and the hooks that other parts of the preload
 * (function hooks, MPI) plug into it.
 */
#ifndef SP_LIFECYCLE_H
#define SP_LIFECYCLE_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"

enum sp_state { SP_STATE_OFF = 0, SP_STATE_RECORDING, SP_STATE_FINALIZED };

/* Current state (relaxed read). */
SP_HIDDEN enum sp_state sp_lifecycle_state(void);
/* Start recording if configuration allows. Safe to call many times. */
SP_HIDDEN int sp_lifecycle_start(void);
/* Stop recording and resolve names: everything a writer needs before a
 * snapshot. Returns false if already finalized (then do nothing). */
SP_HIDDEN bool sp_lifecycle_begin_finalize(void);
/* Write this process alone to the configured output (serial run). */
SP_HIDDEN int sp_lifecycle_write_local(void);
/* The process's last file, `path`, has `rows` region rows: none under
 * `scope-profiler run` means nothing was instrumented, which one info line
 * says with the fix (QUIET silences it). */
SP_HIDDEN void sp_lifecycle_warn_empty(const char *path, uint64_t rows);
/* Write this process alone to `path` as rank `rank` of `size` (a rank that
 * never reached MPI_Finalize, MPI_Abort). */
SP_HIDDEN int sp_lifecycle_write_rank(const char *path, int rank, int size);
/* sp_flush() in an MPI rank: this rank's checkpoint to <output>.rank<NNNNN>
 * (no collective call; `scope-profiler merge` combines them). */
SP_HIDDEN int sp_mpi_flush_rank(void);
/* The file could not be written (here or, for an MPI rank, by the root):
 * dump what is in memory to the spill file and keep it for `recover`, and
 * say truly what is kept of `total` events (0: not known) meant for `path`. */
SP_HIDDEN void sp_lifecycle_keep_spill(const char *path, uint64_t total);
/* Install the fatal-signal handlers (signals.c). */
SP_HIDDEN void sp_signals_install(void);
/* on: termination signals wait (finalize is writing); off: a signal that
 * arrived meanwhile is raised again now. */
SP_HIDDEN void sp_signals_defer(bool on);
/* Mark finalization done and release the buffers. */
SP_HIDDEN void sp_lifecycle_end_finalize(void);
/* True when this process is an MPI rank whose file is written at
 * MPI_Finalize (set by the MPI wrappers at MPI_Init). */
SP_HIDDEN extern bool sp_lifecycle_mpi_owned;
/* Whether this library has the MPI wrappers (false: libscope-profiler-
 * serial.so, mpi-none.c). */
SP_HIDDEN extern const bool sp_lifecycle_has_mpi;
/* Optional step run at finalize before the snapshot (symbol resolution). */
SP_HIDDEN extern void (*sp_lifecycle_resolve_hook)(void);

#endif /* SP_LIFECYCLE_H */
