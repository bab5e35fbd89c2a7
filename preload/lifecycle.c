/* SPDX-License-Identifier: MIT */
/*
 * Start and finish of a profiled process. The library constructor starts
 * recording (unless the process is an MPI launcher or the profiler is
 * disabled); the destructor writes the file of a serial program. An MPI
 * program's file is written by the MPI_Finalize wrapper instead.
 */
#define _GNU_SOURCE
#include "lifecycle.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "output.h"
#include "recorder.h"
#include "snapshot.h"
#include "spill.h"

bool sp_lifecycle_mpi_owned;
void (*sp_lifecycle_resolve_hook)(void);

static atomic_int state;
static pthread_mutex_t finalize_lock = PTHREAD_MUTEX_INITIALIZER;
static bool config_loaded;
static bool keep_spill; /* the file could not be written: the spill file stays */

enum sp_state sp_lifecycle_state(void)
{
	return (enum sp_state)atomic_load_explicit(&state, memory_order_relaxed);
}

/* Launchers and daemons are never profiled, even when LD_PRELOAD reaches
 * them (mpirun -x LD_PRELOAD, orted). */
static bool is_launcher(void)
{
	static const char *const names[] = {
		"mpirun", "mpiexec", "orterun", "orted", "prterun", "prted", "prte",
		"scope-profiler", "hydra_pmi_proxy", "srun",
	};
	const char *self = program_invocation_short_name;
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (strcmp(self, names[i]) == 0)
			return true;
	return false;
}

static void load_config(void)
{
	if (config_loaded)
		return;
	config_loaded = true;
	sp_config_load();
	if (sp_config.print_config && !is_launcher())
		sp_config_print(stderr);
}

/* The output is written beside its path and renamed over it, so an
 * existing output that is not a regular file (-o /dev/null, a FIFO) would
 * be replaced: nothing is recorded then, with one line saying so. */
static bool output_usable(void)
{
	struct stat st;
	if (!sp_config.output || stat(sp_config.output, &st) != 0 || S_ISREG(st.st_mode))
		return true;
	if (!sp_config.quiet)
		sp_log(SP_LOG_WARN, "lifecycle", "%s is not a regular file: nothing is recorded "
				"(name a file to write the profile)", sp_config.output);
	return false;
}

/* The spill file (docs/RESILIENCE.md): spilling at the memory cap and the
 * fatal-signal dump both need it. */
static void open_spill(void)
{
	if (!sp_config.spill && !sp_config.signals)
		return;
	if (sp_spill_open(sp_config.output, sp_config.spill) == 0 && sp_config.signals)
		sp_signals_install();
}

int sp_lifecycle_start(void)
{
	pthread_mutex_lock(&finalize_lock);
	int ret = 0;
	load_config();
	if (atomic_load(&state) == SP_STATE_FINALIZED)
		ret = -ESHUTDOWN;
	else if (!sp_config.enabled || is_launcher())
		ret = -ECANCELED;
	else if (atomic_load(&state) == SP_STATE_OFF && !output_usable())
		ret = -ECANCELED;
	else if (atomic_load(&state) == SP_STATE_OFF) {
		ret = sp_recorder_start();
		if (!ret)
			open_spill();
		if (!ret) {
			atomic_store(&state, SP_STATE_RECORDING);
			sp_log(SP_LOG_DEBUG, "lifecycle", "recording pid %d to %s (functions %d, mpi %d)",
			       (int)getpid(), sp_config.output, sp_config.functions, sp_config.mpi);
		}
	}
	pthread_mutex_unlock(&finalize_lock);
	return ret;
}

bool sp_lifecycle_begin_finalize(void)
{
	pthread_mutex_lock(&finalize_lock);
	if (atomic_load(&state) != SP_STATE_RECORDING) {
		pthread_mutex_unlock(&finalize_lock);
		return false;
	}
	sp_signals_defer(true);
	sp_recorder_stop();
	sp_recorder_mark_finalize();
	/* Calls still open (main, when MPI_Finalize or exit runs inside it)
	 * end now: they are on the timeline up to the finalize. */
	sp_thread_close_open(sp_ticks());
	if (sp_lifecycle_resolve_hook)
		sp_lifecycle_resolve_hook();
	if (sp_spill_load() < 0) {
		sp_log(SP_LOG_WARN, "lifecycle", "could not read back %s; its events are kept there "
			"(scope-profiler recover)", sp_spill_path());
		keep_spill = true;
	}
	return true; /* lock held until sp_lifecycle_end_finalize() */
}

void sp_lifecycle_end_finalize(void)
{
	atomic_store(&state, SP_STATE_FINALIZED);
	sp_spill_unload();
	if (keep_spill)
		sp_spill_close();
	else
		sp_spill_remove();
	sp_thread_reset_all();
	pthread_mutex_unlock(&finalize_lock);
	sp_signals_defer(false);
}

void sp_lifecycle_keep_spill(void)
{
	/* Keep the events: what is still in memory goes to the spill file
	 * (signal 0: "finalize failed"), which `recover` can convert. */
	if (!sp_spill_path()[0])
		return;
	keep_spill = true;
	int ret = sp_spill_dump(0);
	if (ret == 0 || ret == -EALREADY) /* -EALREADY: a signal dumped it meanwhile */
		sp_log(SP_LOG_WARN, "lifecycle", "events kept in %s (scope-profiler recover)",
		       sp_spill_path());
	else /* the spill stopped (its warning says why) */
		sp_log(SP_LOG_WARN, "lifecycle", "only the %llu events spilled before the spill "
		       "stopped are kept, in %s (scope-profiler recover)",
		       (unsigned long long)sp_spill_events_total(), sp_spill_path());
}

int sp_lifecycle_write_rank(const char *path, int rank, int size)
{
	struct sp_snapshot snap;
	int ret = sp_output_write_local(path, &snap, rank, size);
	if (!ret) /* an info line: SCOPE_PROFILER_QUIET=1 silences it */
		sp_log(SP_LOG_INFO, "lifecycle", "wrote %s (%u regions, %llu events)",
			path, snap.nrows, (unsigned long long)snap.nevents);
	if (snap.dropped) /* known once the snapshot is planned, written or not */
		sp_log(SP_LOG_WARN, "lifecycle", "%llu calls were dropped (memory cap "
			"SCOPE_PROFILER_MAX_MEMORY or nesting depth)%s",
			(unsigned long long)snap.dropped, ret ? "" : "; counts are in the file");
	sp_snapshot_free(&snap);
	if (ret) {
		sp_log(SP_LOG_WARN, "lifecycle", "could not write %s: %s", path,
			ret == -ENOLCK ? "HDF5 could not lock the file (on a file system without "
					 "locks, set HDF5_USE_FILE_LOCKING=FALSE)" : strerror(-ret));
		sp_lifecycle_keep_spill();
	}
	return ret;
}

int sp_lifecycle_write_local(void)
{
	return sp_lifecycle_write_rank(sp_config.output, 0, 1);
}

/*
 * fork without exec. SCOPE_PROFILER_FORK=none: the child stops recording
 * and writes nothing (it must not write a second copy of the parent's
 * data). =child: it forgets the parent's events and records into
 * <output>.pid<N>. Either way it lets go of the parent's spill file (the
 * descriptor is shared) without removing it. An exec'd program starts
 * afresh with its own constructor.
 */
static void forked_child(void)
{
	sp_spill_close();
	sp_thread_after_fork();
	pthread_mutex_init(&finalize_lock, NULL);
	if (atomic_load(&state) != SP_STATE_RECORDING || !sp_config.fork ||
	    strcmp(sp_config.fork, "child") != 0) {
		sp_recorder_stop();
		atomic_store(&state, SP_STATE_FINALIZED);
		return;
	}
	sp_recorder_stop();
	sp_thread_reset_all();
	char *out = NULL;
	if (asprintf(&out, "%s.pid%d", sp_config.output, (int)getpid()) < 0) {
		atomic_store(&state, SP_STATE_FINALIZED);
		return;
	}
	free(sp_config.output);
	sp_config.output = out;
	sp_lifecycle_mpi_owned = false;
	open_spill();
	atomic_store(&sp_recording, 1);
}

/* What starting cost the run: from the launcher's exec (`scope-profiler
 * run` passes the time in SCOPE_PROFILER_LAUNCH_NS, removed here so the
 * program's own children do not inherit it) to the end of the constructor;
 * without the launcher, the constructor alone. */
static void note_startup(int64_t entry_ns)
{
	const char *v = getenv("SCOPE_PROFILER_LAUNCH_NS");
	int64_t now = sp_monotonic_ns(), from = entry_ns;
	if (v) {
		char *end;
		long long launch = strtoll(v, &end, 10);
		if (*end == '\0' && launch > 0 && launch <= now && now - launch < 60000000000LL)
			from = launch;
		unsetenv("SCOPE_PROFILER_LAUNCH_NS");
	}
	sp_recorder_set_startup_ns(now - from);
}

__attribute__((constructor(101))) static void sp_constructor(void)
{
	int64_t entry = sp_monotonic_ns();
	pthread_atfork(NULL, NULL, forked_child);
	sp_lifecycle_start();
	note_startup(entry);
}

__attribute__((destructor(101))) static void sp_destructor(void)
{
	if (sp_lifecycle_mpi_owned)
		return; /* MPI_Finalize writes (or the MPI layer handles a missing one) */
	if (sp_lifecycle_begin_finalize()) {
		sp_lifecycle_write_local();
		sp_lifecycle_end_finalize();
	}
}
