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
#include "writer.h"

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
	struct sp_thread *t = calloc(1, sizeof *t);
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

static int64_t startup_ns = -1;

void sp_recorder_set_startup_ns(int64_t ns)
{
	startup_ns = ns;
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
	run->alloc_ns = sp_thread_alloc_ns();
	run->startup_ns = startup_ns;
	run->start_realtime_s = start_realtime_s;
	run->mpi_rank = rank;
	run->mpi_size = size;
	run->label = sp_config.label && *sp_config.label ? sp_config.label : NULL;
	run->throttle_calls = sp_config.functions ? sp_config.throttle_calls : 0;
	run->throttle_mean_ns = sp_config.throttle_mean_ns;
	run->throttle_sample = sp_config.throttle_sample;
	run->throttle_timing = sp_config.throttle_timing ? sp_config.throttle_timing : "sampled";
}

unsigned sp_output_columns(const struct sp_snapshot *s)
{
	unsigned cols = 0;
	if (s->threads_with_events > 1)
		cols |= SP_COL_THREAD_IDS;
	for (uint32_t i = 0; i < s->nrows; i++) {
		if (s->rows[i].dropped)
			cols |= SP_COL_DROPPED;
		if (s->rows[i].throttled_calls)
			cols |= SP_COL_THROTTLED;
	}
	return cols;
}

void sp_output_row(struct sp_writer_row *out, const struct sp_snap_row *row, uint32_t region,
		   uint32_t rank, uint64_t offset)
{
	*out = (struct sp_writer_row){
		.region = region, .rank = rank, .offset = offset, .count = row->count,
		.source_line = row->source_line, .source_file = row->source_file,
		.summary = row->summary, .dropped = row->dropped,
		.throttled_calls = row->throttled_calls, .throttled_ns = row->throttled_ns,
		.throttle_timed = row->throttle_timed, .throttled_ci_ns = row->throttled_ci_ns,
		.throttled_since_ns = row->throttled_since_ns, .patched_since_ns = row->patched_since_ns,
	};
}

/* Write events [first, first+n) of a snapshot; thread ids widened on the
 * way. Extension columns come from the aux hook when one is registered. */
int sp_output_events(struct sp_writer *w, unsigned cols, const struct sp_snapshot *s,
		     uint64_t src, uint64_t dst, uint64_t n)
{
	/* Times streamed to the file (sp_snapshot_stream) are there already. */
	struct sp_writer_events ev = { .start = s->times_in_file ? NULL : s->start + src,
				       .end = s->times_in_file ? NULL : s->end + src };
	int64_t *tids = NULL;
	if (cols & SP_COL_THREAD_IDS) {
		tids = malloc((n ? n : 1) * sizeof *tids);
		if (!tids)
			return -ENOMEM;
		for (uint64_t i = 0; i < n; i++)
			tids[i] = s->thread[src + i];
		ev.thread_ids = tids;
	}
	int ret = sp_writer_put_events(w, dst, n, &ev);
	free(tids);
	return ret;
}

int sp_output_threads(struct sp_writer *w, const struct sp_snapshot *s, uint32_t rank,
		      uint64_t first)
{
	struct sp_writer_thread *t = calloc(s->nthreads + 1, sizeof *t);
	if (!t)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->nthreads; i++) {
		const struct sp_snap_thread *st = &s->threads[i];
		t[i] = (struct sp_writer_thread){
			.rank = rank, .index = st->index, .ident = st->ident,
			.native_id = st->native_id, .start_ns = st->start_ns,
			.end_ns = st->end_ns ? st->end_ns : sp_monotonic_ns(), .cpu_ns = -1,
		};
	}
	int ret = sp_writer_put_threads(w, first, s->nthreads, t);
	free(t);
	return ret;
}

/*
 * One process's file. With a plan, the snapshot is completed here, once
 * the file exists: into an uncompressed file the start/end times are
 * streamed straight to their columns through small per-row buffers (no
 * 16 B/event arrays in memory, no copy of them through HDF5), else they
 * are built in memory as before.
 */
static int write_file(const char *path, struct sp_snapshot *s, struct sp_snapshot_plan *plan,
		      int rank, int size)
{
	struct sp_writer_layout layout = {
		.nnames = s->nnames, .names = (const char *const *)s->names,
		.nrows = s->nrows, .nevents = s->nevents, .nthreads = s->nthreads,
		.columns = sp_output_columns(s), .compression = (int)sp_config.compression,
	};
	struct sp_writer *w = NULL;
	int ret = sp_writer_create(path, &layout, &w);
	if (plan && ret) {
		sp_snapshot_plan_free(plan);
	} else if (plan) {
		int fd;
		uint64_t off_start, off_end;
		ret = sp_writer_times_raw(w, &fd, &off_start, &off_end);
		if (!ret)
			ret = sp_snapshot_stream(s, plan, fd, off_start, off_end);
		if (ret == -ENOTSUP) /* compressed, or rows to sort */
			ret = sp_snapshot_fill(s, plan);
	}
	/* After the snapshot: finalize_spent_ns counts it. */
	struct sp_run_info run;
	sp_run_info_init(&run, rank, size);
	struct sp_meta meta = { 0 };
	if (!ret)
		ret = sp_meta_collect(&meta, &run);
	if (!ret)
		ret = sp_meta_set_int(&meta, SP_META_DROPPED, (int64_t)s->dropped);
	struct sp_writer_row *rows = calloc(s->nrows + 1, sizeof *rows);
	if (!ret && !rows)
		ret = -ENOMEM;
	for (uint32_t i = 0; !ret && i < s->nrows; i++)
		sp_output_row(&rows[i], &s->rows[i], s->rows[i].region, (uint32_t)rank,
			      s->rows[i].offset);
	if (!ret)
		ret = sp_writer_put_rows(w, 0, s->nrows, rows);
	if (!ret)
		ret = sp_output_events(w, layout.columns, s, 0, 0, s->nevents);
	if (!ret && (layout.columns & SP_COL_THREAD_IDS))
		ret = sp_output_threads(w, s, (uint32_t)rank, 0);
	if (!ret)
		ret = sp_writer_put_metadata(w, &meta);
	if (!ret) {
		ret = sp_writer_commit(w);
		w = NULL;
	}
	sp_writer_destroy(w);
	free(rows);
	sp_meta_free(&meta);
	return ret;
}

int sp_output_write_single(const char *path, struct sp_snapshot *s, int rank, int size)
{
	return write_file(path, s, NULL, rank, size);
}

int sp_output_write_local(const char *path, struct sp_snapshot *s, int rank, int size)
{
	struct sp_snapshot_plan *plan;
	int ret = sp_snapshot_plan(s, &plan);
	return ret ? ret : write_file(path, s, plan, rank, size);
}
