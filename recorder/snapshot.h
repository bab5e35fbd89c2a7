/* SPDX-License-Identifier: MIT */
/*
 * A snapshot: one process's completed calls arranged as the file wants them
 * (rows per region, events back to back in entry order, CLOCK_MONOTONIC
 * ns). Taken after recording stopped; written through assemble.h.
 */
#ifndef SP_SNAPSHOT_H
#define SP_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"
#include "sp-format.h"

struct sp_snap_row {
	uint32_t region;          /* index into sp_snapshot.names */
	uint64_t offset, count;   /* slice of the event arrays */
	struct sp_summary_record summary;
	uint64_t dropped;         /* calls lost to the cap or depth */
	uint64_t throttled_calls; /* calls counted but not on the timeline */
	int64_t throttled_ns;
	uint64_t throttle_timed;  /* of those, calls timed by sampling */
	int64_t throttled_ci_ns;  /* 95 % half-width of throttled_ns, 0 exact, -1 unknown */
	int64_t throttled_since_ns; /* when the function was throttled, -1 never */
	int64_t patched_since_ns; /* when a hook call of it was patched out, -1 never */
	int64_t source_line;      /* -1 unknown */
	const char *source_file;  /* NULL unknown; owned by the region table */
	int64_t exclusive_ns;     /* with exclusive_known: -1 when calls do not nest */
};

struct sp_snap_thread {
	int64_t index, ident, native_id, start_ns, end_ns;
};

struct sp_snapshot {
	uint32_t nnames;
	char **names;             /* unique region names, first-seen order */
	uint8_t *kinds;           /* SP_KIND_* per name: its first region's */
	uint32_t nrows;
	struct sp_snap_row *rows; /* one per name with data, in name order */
	uint64_t nevents;
	uint64_t nmem;            /* events [0, nmem) are in start/end/thread/aux:
				   * all of them, or (sp_snapshot_fill_aux) those
				   * of the rows with extension records, first */
	int64_t *start, *end;     /* ns */
	uint32_t *thread;         /* thread index per event; NULL when the
				   * times went to a file and one thread recorded */
	uint32_t *aux;            /* event aux (extension record), NULL if none */
	uint32_t nthreads;        /* threads in the table (all that attached) */
	uint32_t threads_with_events;
	struct sp_snap_thread *threads;
	uint64_t dropped;         /* all calls lost */
	int64_t first_start_ns;   /* earliest start, INT64_MAX if no events */
	bool times_in_file;       /* start/end NULL: streamed to the file (and the
				   * thread column, thread NULL) */
	bool exclusive_known;     /* rows' exclusive_ns nested as the commit would */
};

/* Build the snapshot of everything recorded so far (complete calls only).
 * Recording should be stopped. Returns 0 or -ENOMEM. */
SP_HIDDEN int sp_snapshot_take(struct sp_snapshot *s);

/*
 * sp_snapshot_take in two halves, so that the events can go straight into
 * the output file: plan fills everything but the events (names, rows with
 * counts and offsets, nevents, the thread table and counts, dropped); then
 * either fill completes it in memory, or stream writes the start/end times
 * (and the thread column) where t says (uncompressed little-endian int64
 * columns, see sp_writer_times_raw) through small per-row buffers, nests
 * the calls for each row's exclusive_ns, and completes the rest, leaving
 * start = end = thread = NULL and times_in_file set. Memory is then
 * bounded by the rows, not the events: spilled events are read a piece
 * at a time. stream returns -ENOTSUP, leaving the plan to fill, when some
 * row holds events of several threads (they must be sorted). Otherwise
 * both consume the plan; on an error s is freed. Returns 0, -ENOMEM or
 * -errno (reading spilled events back, writing the file).
 */
struct sp_snapshot_plan;
struct sp_writer_times;
SP_HIDDEN int sp_snapshot_plan(struct sp_snapshot *s,
			       struct sp_snapshot_plan **ret_plan);
SP_HIDDEN int sp_snapshot_fill(struct sp_snapshot *s,
			       struct sp_snapshot_plan *plan);
SP_HIDDEN int sp_snapshot_stream(struct sp_snapshot *s,
				 struct sp_snapshot_plan *plan,
				 const struct sp_writer_times *t);
/*
 * Fill in memory only the rows whose calls carry extension records (MPI
 * values index them), after moving those rows (and their events) to the
 * front: events [0, nmem) are theirs, complete (sorted and summarised as
 * the fill would); the other rows follow, their times left for
 * sp_snapshot_stream_part. The plan is kept. Returns 0, -ENOMEM or -errno
 * (reading spilled events); on an error s keeps no event arrays.
 */
SP_HIDDEN int sp_snapshot_fill_aux(struct sp_snapshot *s, struct sp_snapshot_plan *plan);

/*
 * The stream of the rows not in memory ([0, s->nmem) are, see
 * sp_snapshot_fill_aux) into a part of a file that others write too: t
 * gives this part's column slices (thread: SP_RAW_ABSENT, or a column to
 * write even for one thread), every time goes through map (NULL: as
 * recorded) after the tick conversion, pos[row] is the position the calls
 * nest by (the file's order, over all parts), and every call, in memory or
 * not, is nested for the rows' exclusive_ns. The plan is consumed; s is
 * never freed (on an error its rows' summaries are incomplete). Returns 0,
 * -ENOMEM or -errno.
 */
struct sp_stream_part {
	const uint32_t *pos;
	int64_t (*map)(const void *ctx, int64_t ns);
	const void *map_ctx;
};
SP_HIDDEN int sp_snapshot_stream_part(struct sp_snapshot *s, struct sp_snapshot_plan *plan,
				      const struct sp_writer_times *t,
				      const struct sp_stream_part *o);
/* Whether the stream needs a temporary (rows that several threads recorded
 * and sp_snapshot_fill_aux leaves to it), and the temporary: O_TMPFILE in
 * dirfd, else in $TMPDIR or /tmp (a file descriptor, or -1). */
SP_HIDDEN bool sp_snapshot_plan_shares_rows(const struct sp_snapshot *s,
					    const struct sp_snapshot_plan *plan);
SP_HIDDEN int sp_stream_tmpfile(int dirfd);
/* A row's earliest call start (ns, through o's map as above) from the
 * plan alone; 0 for a row without calls. */
SP_HIDDEN int64_t sp_snapshot_plan_first_ns(const struct sp_snapshot_plan *plan,
					    const struct sp_snap_row *row,
					    const struct sp_stream_part *o);
/* Drop a plan without filling (error paths). Accepts NULL. */
SP_HIDDEN void sp_snapshot_plan_free(struct sp_snapshot_plan *plan);
SP_HIDDEN void sp_snapshot_free(struct sp_snapshot *s);
/* Fill a row's summary_statistics from its events (two-pass mean/m2). */
SP_HIDDEN void sp_summary_compute(struct sp_summary_record *out,
				  const int64_t *start,
				  const int64_t *end, uint64_t n);

#endif /* SP_SNAPSHOT_H */
