/* SPDX-License-Identifier: MIT */
/*
 * Process lifecycle of the recorder: start (clock, cap, reference times),
 * stop, and the single-process write of a snapshot to one HDF5 file.
 */
#define _GNU_SOURCE
#include "recorder.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "functions.h"
#include "output.h"
#include "snapshot.h"
#include "assemble.h"

static bool started;
static int64_t start_ns, start_realtime_s, finalize_mark_ns;
static double event_cost_ns = -1;

/*
 * Self-measurement: the cost of one recorded call (enter + exit through the
 * real hot path) on this machine, on a private thread struct and buffer so
 * nothing lands in the profile. ~50 us at start; stored in the metadata.
 */
static void measure_event_cost(void)
{
	enum { EVENTS = 1024, ROUNDS = 8 };
	struct sp_rec_thread *t = calloc(1, sizeof *t);
	struct sp_event *buf = malloc(EVENTS * sizeof *buf);
	if (!t || !buf)
		goto out;
	double best = -1;
	for (int r = 0; r < ROUNDS; r++) {
		t->pos = buf;
		t->end = buf + EVENTS;
		t->depth = 0;
		int64_t t0 = sp_monotonic_ns();
		for (int i = 0; i < EVENTS; i++) {
			sp_rec_enter_thread(t, 0);
			sp_rec_exit_thread(t, 0);
		}
		double per = (double)(sp_monotonic_ns() - t0) / EVENTS;
		if (best < 0 || per < best)
			best = per;
	}
	event_cost_ns = best;
out:
	free(t);
	free(buf);
}

int sp_recorder_start(void)
{
	if (started)
		return 0;
	enum sp_clock_mode mode = SP_CLOCK_AUTO;
	if (sp_config.clock && strcmp(sp_config.clock, "tsc") == 0)
		mode = SP_CLOCK_TSC;
	else if (sp_config.clock && strcmp(sp_config.clock, "monotonic") == 0)
		mode = SP_CLOCK_MONOTONIC;
	sp_clock_init(mode);
	measure_event_cost();
	sp_thread_set_cap(sp_config.max_memory);
	start_ns = sp_monotonic_ns();
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	start_realtime_s = rt.tv_sec;
	started = true;
	atomic_store(&sp_recording, 1);
	return 0;
}

void sp_recorder_stop(void)
{
	atomic_store(&sp_recording, 0);
}

static int64_t startup_ns = -1, startup_cpu_ns = -1;

void sp_recorder_set_startup_ns(int64_t wall_ns, int64_t cpu_ns)
{
	startup_ns = wall_ns;
	startup_cpu_ns = cpu_ns;
}

double sp_recorder_event_cost_ns(void)
{
	return event_cost_ns;
}

int64_t sp_recorder_start_ns(void)
{
	return start_ns;
}

void sp_recorder_mark_finalize(void)
{
	if (!finalize_mark_ns)
		finalize_mark_ns = sp_monotonic_ns();
}

int64_t sp_recorder_finalize_spent_ns(void)
{
	return finalize_mark_ns ? sp_monotonic_ns() - finalize_mark_ns : 0;
}

void sp_run_info_init(struct sp_run_info *run, int rank, int size)
{
	memset(run, 0, sizeof *run);
	int64_t now = sp_monotonic_ns();
	run->start_time_ns = start_ns;
	run->finalize_time_ns = finalize_mark_ns ? finalize_mark_ns : now;
	run->finalize_spent_ns = now - run->finalize_time_ns;
	run->event_cost_ns = event_cost_ns;
	run->call_cost_ns = sp_fn_timed_call_ns();
	run->count_cost_ns = sp_fn_count_call_ns();
	run->sample_bias_ns = sp_fn_sample_bias_ns();
	run->alloc_ns = sp_thread_alloc_ns();
	run->startup_ns = startup_ns;
	run->startup_cpu_ns = startup_cpu_ns;
	run->start_realtime_s = start_realtime_s;
	run->mpi_rank = rank;
	run->mpi_size = size;
	run->label = sp_config.label && *sp_config.label ? sp_config.label : NULL;
	run->throttle_calls = sp_config.functions ? sp_config.throttle_calls : 0;
	run->throttle_mean_ns = sp_config.throttle_mean_ns;
	run->throttle_early_calls =
		(int64_t)sp_throttle_early_calls(sp_config.throttle_early, run->throttle_calls);
	run->throttle_early_mean_ns = sp_config.throttle_mean_ns / SP_THROTTLE_EARLY_MEAN_DIV;
	run->throttle_sample = sp_config.throttle_sample;
	run->throttle_timing = sp_config.throttle_timing ? sp_config.throttle_timing : "sampled";
}

int (*sp_output_local_hook)(const char *path, struct sp_snapshot *s, int rank, int size);

/* The metadata of this run, then the commit. The assembly is freed. */
static int commit_file(struct sp_assembly *a, const struct sp_groups *groups, int rank, int size)
{
	/* After the data: finalize_spent_ns counts writing it. */
	struct sp_run_info run;
	sp_run_info_init(&run, rank, size);
	struct sp_run_meta meta = { 0 };
	int ret = sp_meta_collect(&meta, &run);
	if (!ret)
		ret = sp_assembly_commit(a, &meta, groups);
	else
		sp_assembly_destroy(a);
	sp_meta_free(&meta);
	return ret;
}

/* The file of one snapshot: its names, one part. */
static int create_one(const char *path, const struct sp_snapshot *s, uint64_t nmpi,
		      unsigned mpi_columns, int rank, struct sp_assembly **ret_a)
{
	struct sp_part_size part = sp_part_size_of(s, (uint32_t)rank);
	part.nmpi = nmpi;
	part.columns |= mpi_columns;
	return sp_assembly_create(path, (const char *const *)s->names, s->kinds, s->nnames, &part, 1,
				  (int)sp_config.compression, ret_a);
}

int sp_output_write_part(const char *path, const struct sp_snapshot *s, uint64_t nmpi,
			 unsigned mpi_columns, const int64_t *mpi_offsets,
			 const struct sp_part_mpi *mpi, const struct sp_groups *groups, int rank,
			 int size)
{
	struct sp_assembly *a = NULL;
	int ret = create_one(path, s, nmpi, mpi_columns, rank, &a);
	if (!ret)
		ret = sp_assembly_put_snapshot(a, 0, s, NULL, mpi_offsets, mpi);
	if (ret) {
		sp_assembly_destroy(a);
		return ret;
	}
	return commit_file(a, groups, rank, size);
}

/*
 * One process's file, no MPI data, the snapshot completed once the file
 * exists: into an uncompressed file the start/end times are streamed
 * straight to their columns through small per-row buffers (no 16 B/event
 * arrays in memory, no copy of them through HDF5), else they are built in
 * memory.
 */
static int write_planned(const char *path, struct sp_snapshot *s, struct sp_snapshot_plan *plan,
			 int rank, int size)
{
	struct sp_assembly *a = NULL;
	int ret = create_one(path, s, 0, 0, rank, &a);
	if (ret) {
		sp_snapshot_plan_free(plan);
		return ret;
	}
	struct sp_writer_times t;
	/* A failed stream or fill frees the snapshot; the caller still says
	 * how many events were lost and dropped. */
	uint64_t nevents = s->nevents, dropped = s->dropped;
	ret = sp_assembly_times_raw(a, &t);
	if (!ret)
		ret = sp_snapshot_stream(s, plan, &t);
	if (ret == -ENOTSUP) /* compressed, or rows to sort */
		ret = sp_snapshot_fill(s, plan);
	if (!ret)
		ret = sp_assembly_put_snapshot(a, 0, s, NULL, NULL, NULL);
	if (ret) {
		sp_assembly_destroy(a);
		s->nevents = nevents;
		s->dropped = dropped;
		return ret;
	}
	return commit_file(a, NULL, rank, size);
}

int sp_output_write_single(const char *path, struct sp_snapshot *s, int rank, int size)
{
	return sp_output_write_part(path, s, 0, 0, NULL, NULL, NULL, rank, size);
}

int sp_output_write_local(const char *path, struct sp_snapshot *s, int rank, int size)
{
	if (sp_output_local_hook) {
		int ret = sp_output_local_hook(path, s, rank, size);
		if (ret != -ENOTSUP)
			return ret;
	}
	struct sp_snapshot_plan *plan;
	int ret = sp_snapshot_plan(s, &plan);
	return ret ? ret : write_planned(path, s, plan, rank, size);
}
