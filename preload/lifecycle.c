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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "output.h"
#include "recorder.h"
#include "snapshot.h"

bool sp_lifecycle_mpi_owned;
void (*sp_lifecycle_resolve_hook)(void);

static atomic_int state;
static pthread_mutex_t finalize_lock = PTHREAD_MUTEX_INITIALIZER;
static bool config_loaded;

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

int sp_lifecycle_start(void)
{
	pthread_mutex_lock(&finalize_lock);
	int ret = 0;
	load_config();
	if (atomic_load(&state) == SP_STATE_FINALIZED)
		ret = -ESHUTDOWN;
	else if (!sp_config.enabled || is_launcher())
		ret = -ECANCELED;
	else if (atomic_load(&state) == SP_STATE_OFF) {
		ret = sp_recorder_start();
		if (!ret)
			atomic_store(&state, SP_STATE_RECORDING);
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
	sp_recorder_stop();
	/* Calls still open (main, when MPI_Finalize or exit runs inside it)
	 * end now: they are on the timeline up to the finalize. */
	sp_thread_close_open(sp_ticks());
	if (sp_lifecycle_resolve_hook)
		sp_lifecycle_resolve_hook();
	return true; /* lock held until sp_lifecycle_end_finalize() */
}

void sp_lifecycle_end_finalize(void)
{
	atomic_store(&state, SP_STATE_FINALIZED);
	sp_thread_reset_all();
	pthread_mutex_unlock(&finalize_lock);
}

int sp_lifecycle_write_local(void)
{
	struct sp_snapshot snap;
	int ret = sp_snapshot_take(&snap);
	if (!ret) {
		ret = sp_output_write_single(sp_config.output, &snap, 0, 1);
		if (!ret && !sp_config.quiet)
			fprintf(stderr, "scope-profiler: wrote %s (%u regions, %llu events)\n",
				sp_config.output, snap.nrows, (unsigned long long)snap.nevents);
		if (snap.dropped)
			fprintf(stderr, "scope-profiler: %llu calls were dropped (memory cap "
				"SCOPE_PROFILER_MAX_MEMORY or nesting depth); counts are in the file\n",
				(unsigned long long)snap.dropped);
		sp_snapshot_free(&snap);
	}
	if (ret)
		fprintf(stderr, "scope-profiler: could not write %s: %s\n", sp_config.output,
			strerror(-ret));
	return ret;
}

/* A forked child (without exec) must not write a second copy of the
 * parent's data over the parent's file: it stops recording and writes
 * nothing. An exec'd program starts afresh with its own constructor. */
static void forked_child(void)
{
	sp_recorder_stop();
	atomic_store(&state, SP_STATE_FINALIZED);
}

__attribute__((constructor(101))) static void sp_constructor(void)
{
	pthread_atfork(NULL, NULL, forked_child);
	sp_lifecycle_start();
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
