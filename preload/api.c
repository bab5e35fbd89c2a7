/* SPDX-License-Identifier: MIT */
/*
 * The manual region API (scope_profiler.h): thin exported shims over the
 * recorder. Handles are region ids; every entry point checks the handle
 * and the recording flag, so misuse is a no-op, never a crash.
 */
#include "scope_profiler.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "config.h"
#include "lifecycle.h"
#include "spill.h"
#include "recorder.h"
#include "sp-config.h"

SP_EXPORT int sp_init(const char *output)
{
	int ret = sp_lifecycle_start();
	if (ret == 0 && output && *output) {
		char *copy = strdup(output);
		if (!copy)
			return -ENOMEM;
		free(sp_config.output);
		sp_config.output = copy;
	}
	return ret;
}

SP_EXPORT int sp_region(const char *name)
{
	if (!name)
		return -EINVAL;
	uint32_t id = sp_region_intern(name, SP_KIND_MANUAL);
	return id == SP_NO_REGION ? -ENOMEM : (int)id;
}

static inline bool valid(int handle)
{
	return handle >= 0 && (uint32_t)handle < sp_region_count();
}

SP_EXPORT void sp_begin(int handle)
{
	if (SP_LIKELY(valid(handle)))
		sp_rec_enter((uint32_t)handle);
}

SP_EXPORT void sp_end(int handle)
{
	if (SP_LIKELY(valid(handle)))
		sp_rec_exit((uint32_t)handle);
}

SP_EXPORT void sp_begin_name(const char *name)
{
	if (name && atomic_load_explicit(&sp_recording, memory_order_relaxed))
		sp_rec_enter(sp_region_intern(name, SP_KIND_MANUAL));
}

SP_EXPORT void sp_end_name(const char *name)
{
	if (name && atomic_load_explicit(&sp_recording, memory_order_relaxed))
		sp_rec_exit(sp_region_intern(name, SP_KIND_MANUAL));
}

SP_EXPORT int sp_flush(void)
{
	if (sp_lifecycle_state() != SP_STATE_RECORDING)
		return -ESHUTDOWN;
	/* Pause so the snapshot sees settled buffers, resolve names and move
	 * counters as finalize does (both are repeatable), write, resume. */
	sp_recorder_stop();
	if (sp_lifecycle_resolve_hook)
		sp_lifecycle_resolve_hook();
	sp_spill_load(); /* events already spilled are part of the checkpoint */
	/* Under MPI every rank checkpoints to its own file, never to the
	 * shared output (which MPI_Finalize's merge writes). */
	int ret = sp_lifecycle_mpi_owned ? sp_mpi_flush_rank() : sp_lifecycle_write_local();
	sp_spill_unload();
	atomic_store(&sp_recording, 1);
	return ret;
}

SP_EXPORT int sp_finalize(void)
{
	if (sp_lifecycle_mpi_owned) {
		/* The MPI_Finalize wrapper writes the merged file. */
		return sp_lifecycle_state() == SP_STATE_RECORDING ? 0 : -EALREADY;
	}
	if (!sp_lifecycle_begin_finalize())
		return -EALREADY;
	int ret = sp_lifecycle_write_local();
	sp_lifecycle_end_finalize();
	return ret;
}

SP_EXPORT const char *sp_version(void)
{
	return SP_VERSION;
}
