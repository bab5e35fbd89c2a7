/* SPDX-License-Identifier: MIT */
/*
 * The on-disk HDF5 layout, declared once. The writer (recorder/) and the
 * reader (reader/) both include this header and nothing else of each other.
 * docs/FORMAT.md describes every name below; change the two together.
 * Layout: schema 2 columnar, as the Python scope-profiler defines it.
 */
#ifndef SP_FORMAT_H
#define SP_FORMAT_H

#include <stdint.h>

/* Schema versions. We write 2; we read 1, 2 and 3. */
#define SP_SCHEMA_WRITTEN 2
/* The largest MPI world a file may describe (ranks 0 to SP_MAX_RANKS - 1):
 * above any machine built (Fugaku: 7.6 M cores), so per-rank tables sized
 * by a file stay bounded. The reader refuses more; merge refuses more. */
#define SP_MAX_RANKS (1 << 24)
/* Region names longer than this are cut by the reader, with a marker. */
#define SP_NAME_MAX 16384
/* Other strings of a file (metadata, sources, tags) are cut past this. */
#define SP_STRING_MAX 65536
#define SP_SCHEMA_MAX_READ 3

/* Root attributes. */
#define SP_ATTR_SCHEMA "scope_profiler_schema"     /* int64 scalar */
#define SP_ATTR_STORAGE_LAYOUT "storage_layout"   /* vlen UTF-8 scalar */
#define SP_STORAGE_COLUMNAR "columnar"
#define SP_STORAGE_AGGREGATE "aggregate"

/* Groups. */
#define SP_GROUP_METADATA "metadata"
#define SP_GROUP_REGION_TABLE "region_table"
#define SP_GROUP_INDEX "rank_region_index"
#define SP_GROUP_EVENTS "events"
#define SP_GROUP_THREAD_TABLE "thread_table"
#define SP_GROUP_MPI_COMMS "mpi_communicators"   /* ours, below */

/* /region_table */
#define SP_DSET_REGION_NAMES "names"              /* [R] vlen UTF-8 */
#define SP_DSET_REGION_KINDS "kinds"              /* [R] uint8 SP_KIND_* (ours) */
#define SP_DSET_REGION_UNCALLED "uncalled_names"  /* vlen UTF-8: registered, never called (ours) */

/*
 * Region kinds, region_table/kinds: how the region was recorded, known when
 * it was created. An MPI region carries its operation class from
 * mpi/mpi-functions.def (class=); a code >= SP_KIND_MPI_OTHER is MPI.
 * The recorder, the spill records and the file use these values.
 */
#define SP_KIND_MANUAL 0           /* the begin/end API */
#define SP_KIND_FUNCTION 1         /* compiled function (-finstrument-functions) */
#define SP_KIND_MPI_OTHER 2        /* MPI, class=other */
#define SP_KIND_MPI_SEND 3         /* class=send */
#define SP_KIND_MPI_RECV 4         /* class=recv */
#define SP_KIND_MPI_SENDRECV 5     /* class=sendrecv */
#define SP_KIND_MPI_COLLECTIVE 6   /* class=collective */
#define SP_KIND_MPI_ONE_SIDED 7    /* class=one_sided */
#define SP_KIND_MPI_IO 8           /* class=io */
#define SP_KIND_MPI_REQUEST 9      /* class=request */
#define SP_KIND_COUNT 10

/* /rank_region_index: one row per (rank, region). Upstream columns. */
#define SP_IDX_REGION_IDS "region_ids"            /* uint32 */
#define SP_IDX_RANKS "ranks"                      /* uint32 */
#define SP_IDX_EVENT_OFFSETS "event_offsets"      /* uint64 */
#define SP_IDX_EVENT_COUNTS "event_counts"        /* uint64 */
#define SP_IDX_SOURCE_LINES "source_lines"        /* int64, -1 unknown */
#define SP_IDX_SOURCE_FILES "source_files"        /* vlen str, "" unknown */
#define SP_IDX_SOURCE_TEXTS "source_texts"        /* vlen str, "" */
#define SP_IDX_TAGS "tags"                        /* vlen str, JSON list */
#define SP_IDX_EXCLUSIVE_TOTALS "exclusive_totals" /* int64 ns, -1 = none */
#define SP_IDX_SUMMARY "summary_statistics"       /* compound, below */
/* Aggregate layout (storage_layout = "aggregate"), upstream. */
#define SP_IDX_AGG_COUNTS "aggregate_counts"       /* uint64 */
#define SP_IDX_AGG_TOTALS "aggregate_totals"       /* int64 ns */
#define SP_IDX_AGG_MINIMUMS "aggregate_minimums"   /* int64 ns */
#define SP_IDX_AGG_MAXIMUMS "aggregate_maximums"   /* int64 ns */
#define SP_IDX_AGG_EXCLUSIVES "aggregate_exclusives" /* int64 ns */
/* Index extension columns (ours; absent unless recorded). */
#define SP_IDX_DROPPED_COUNTS "dropped_counts"     /* uint64: events lost to the memory cap */
#define SP_IDX_THROTTLED_COUNTS "throttled_counts" /* uint64: calls not on the timeline */
#define SP_IDX_THROTTLED_TOTALS "throttled_totals" /* int64 ns: their summed duration */
/* With throttled_counts (ours): how throttled_totals was obtained. */
#define SP_IDX_THROTTLED_TIMED "throttled_timed_counts" /* uint64: calls timed (sampled) */
#define SP_IDX_THROTTLED_CI95 "throttled_ci95"   /* int64 ns: 95 % half-width, 0 exact, -1 unknown */
#define SP_IDX_THROTTLED_SINCE "throttled_since" /* int64 CLOCK_MONOTONIC ns, -1 never throttled */
#define SP_IDX_PATCHED_SINCE "patched_since"     /* int64 ns: hook calls patched out from then
						  * on (counts are lower bounds), -1 never */
/* int64 per row: the row's first value in the MPI event columns, -1 when
 * the row has none (only with /events mpi_layout = SP_MPI_LAYOUT_ROWS). */
#define SP_IDX_MPI_OFFSETS "mpi_offsets"

/* /events: [E] events of all rows back to back. Upstream columns. */
#define SP_EV_START_TIMES "start_times"           /* int64 ns (schema 2) */
#define SP_EV_END_TIMES "end_times"               /* int64 ns (schema 2) */
#define SP_EV_START_DELTAS "start_deltas"         /* int64 ns (schema 3) */
#define SP_EV_DURATIONS "durations"               /* int64 ns (schema 3) */
#define SP_EV_GPU_DURATIONS "gpu_durations"       /* int64 ns, -1 none */
#define SP_EV_CALL_IDS "call_ids"                 /* int64 */
#define SP_EV_PARENT_IDS "parent_ids"             /* int64, -1 root */
#define SP_EV_THREAD_IDS "thread_ids"             /* int64, -1 unknown */
#define SP_EV_TASK_IDS "task_ids"                 /* int64 */
#define SP_EV_AWAIT_NS "await_ns"                 /* int64 */
/* Event extension columns (ours; absent unless recorded). */
#define SP_EV_MPI_BYTES "mpi_bytes"               /* int64, -1 not applicable */
#define SP_EV_MPI_PEERS "mpi_peers"               /* int32 world rank, -1 none */
#define SP_EV_MPI_ROOTS "mpi_roots"               /* int32 world rank, -1 none */
#define SP_EV_MPI_TAGS "mpi_tags"                 /* int32, -1 none */
#define SP_EV_MPI_COMMS "mpi_comms"               /* int32 comm id, -1 none */
#define SP_EV_CALLSITE_IDS "callsite_ids"         /* int32, -1 none */
/*
 * How the MPI event columns (mpi_*, callsite_ids) are laid out: attribute
 * of /events (vlen UTF-8 scalar). SP_MPI_LAYOUT_ROWS: values only for the
 * events of the rows that carry MPI data, row after row, each row's slice
 * at rank_region_index/mpi_offsets (docs/FORMAT.md, "MPI additions").
 * Absent: one value per event (files written before it; read only).
 */
#define SP_EV_ATTR_MPI_LAYOUT "mpi_layout"
#define SP_MPI_LAYOUT_ROWS "rows"

/* /callsites (ours; only with SCOPE_PROFILER_CALLSITES > 0): the unified MPI
 * call sites, one row per site; events/callsite_ids index the rows. Frames
 * are innermost first (frame 0 is the site itself). docs/CALLSITES.md. */
#define SP_GROUP_CALLSITES "callsites"
#define SP_CS_ATTR_DEPTH "depth"                  /* int64: frames captured per site */
#define SP_CS_FUNCTIONS "functions"               /* [S] vlen str: function of frame 0 */
#define SP_CS_FILES "files"                       /* [S] vlen str, "" unknown */
#define SP_CS_LINES "lines"                       /* [S] int64, -1 unknown */
#define SP_CS_FRAME_OFFSETS "frame_offsets"       /* [S] uint64: first frame in frame_* */
#define SP_CS_FRAME_COUNTS "frame_counts"         /* [S] uint32 */
#define SP_CS_FRAME_FUNCTIONS "frame_functions"   /* [F] vlen str */
#define SP_CS_FRAME_FILES "frame_files"           /* [F] vlen str, "" unknown */
#define SP_CS_FRAME_LINES "frame_lines"           /* [F] int64, -1 unknown */

/* /mpi_communicators (ours; MPI runs): one row per communicator a rank saw,
 * ids as in events/mpi_comms of that rank. docs/FORMAT.md. */
#define SP_COMM_RANKS "ranks"                     /* [C] uint32: the rank */
#define SP_COMM_IDS "ids"                         /* [C] int32 */
#define SP_COMM_SIZES "sizes"                     /* [C] int32 */
#define SP_COMM_REMOTE_SIZES "remote_sizes"       /* [C] int32, -1 intra */
#define SP_COMM_LEADERS "leaders"                 /* [C] int32 world rank of its rank 0 */

/* /clock_sync (ours; the finalize merge of an MPI run): one row per rank,
 * its CLOCK_MONOTONIC against rank 0's, measured at MPI_Init and at
 * MPI_Finalize; times rank 0's clock, offsets the rank's minus rank 0's,
 * errors bounds on |measured - true| (-1 not measured). docs/FORMAT.md. */
#define SP_GROUP_CLOCK "clock_sync"
#define SP_CLK_ATTR_PINGPONGS "pingpongs"         /* int64: per rank and measurement */
#define SP_CLK_ATTR_TEST_SKEW "test_skew"         /* int64: 1 = TEST_CLOCK_SKEW was set */
#define SP_CLK_ATTR_SKEW_OFFSET "test_skew_offset_ns" /* int64, with test_skew */
#define SP_CLK_ATTR_SKEW_DRIFT "test_skew_drift_ppb"  /* int64, with test_skew */
#define SP_CLK_ATTR_SKEW_ORIGIN "test_skew_origin_ns" /* int64, with test_skew */
#define SP_CLK_RANKS "ranks"                      /* [N] uint32 */
#define SP_CLK_APPLIED "applied"                  /* [N] int32: 1 timestamps mapped */
#define SP_CLK_SAME_BOOT "same_boot"              /* [N] int32: 1 rank 0's boot */
#define SP_CLK_INIT_TIMES "init_times"            /* [N] int64 ns */
#define SP_CLK_INIT_OFFSETS "init_offsets"        /* [N] int64 ns */
#define SP_CLK_INIT_ERRORS "init_errors"          /* [N] int64 ns, -1 */
#define SP_CLK_FINAL_TIMES "final_times"          /* [N] int64 ns */
#define SP_CLK_FINAL_OFFSETS "final_offsets"      /* [N] int64 ns */
#define SP_CLK_FINAL_ERRORS "final_errors"        /* [N] int64 ns, -1 */
#define SP_CLK_DRIFTS "drifts_ppm"                /* [N] float64 */
#define SP_CLK_DRIFT_ERRORS "drift_errors_ppm"    /* [N] float64, -1 unknown */
#define SP_CLK_ERRORS "errors"                    /* [N] int64 ns, -1 */

/* /thread_table: one row per (rank, thread), upstream columns. */
#define SP_TT_RANKS "ranks"                       /* uint32 */
#define SP_TT_INDEX "index"                       /* int64 */
#define SP_TT_IDENT "ident"                       /* int64 */
#define SP_TT_NATIVE_ID "native_id"               /* int64 */
#define SP_TT_DAEMON "daemon"                     /* int8 */
#define SP_TT_START_NS "start_ns"                 /* int64 */
#define SP_TT_END_NS "end_ns"                     /* int64 */
#define SP_TT_CPU_NS "cpu_ns"                     /* int64 */
#define SP_TT_NAME "name"                         /* vlen str */

/*
 * summary_statistics compound, field order fixed by upstream.
 * All values ns except mean/m2 (float64 ns, ns^2).
 */
struct sp_summary_record {
	int64_t total;
	int64_t minimum;
	int64_t maximum;
	int64_t first;
	int64_t last;
	int64_t start_minimum;
	int64_t end_maximum;
	uint64_t gpu_count;
	int64_t gpu_total;
	double mean;
	double m2;
};

#define SP_SUMMARY_FIELDS(X) \
	X(total, int64) X(minimum, int64) X(maximum, int64) X(first, int64) \
	X(last, int64) X(start_minimum, int64) X(end_maximum, int64) \
	X(gpu_count, uint64) X(gpu_total, int64) X(mean, double) X(m2, double)

/* Metadata keys with a fixed meaning. */
#define SP_META_START_TIME_NS "start_time_ns"
#define SP_META_FINALIZE_TIME_NS "finalize_time_ns"
#define SP_META_MPI_SIZE "mpi_size"
#define SP_META_LABEL "label"
#define SP_META_DROPPED "dropped_events"          /* ours: int64 */
#define SP_META_MPI_RANK "mpi_rank"
#define SP_META_TOTAL_CORES "total_cores"
#define SP_META_SOURCE "source"
#define SP_META_SOURCE_LANGUAGE "source_language"
#define SP_META_PARTIAL "partial"                 /* ours: int64 1 = a run cut short */
#define SP_META_PARTIAL_SIGNAL "partial_signal"   /* ours: int64, the signal; 0 none */
#define SP_META_UNRESOLVED_MODULES "unresolved_modules" /* ours: strlist "path: reason" */
#define SP_META_MERGED_FROM "merged_from"
#define SP_META_MISSING_RANKS "missing_ranks"     /* ours: str, ranks without data: "1,5" */
#define SP_META_MPI_MERGE_NS "mpi_merge_ns"       /* ours: int64 ns the finalize merge took */
#define SP_META_MPI_FINALIZE_PATH "mpi_finalize_path" /* ours: str, "parallel" or "serial" */
#define SP_META_MPI_FINALIZE_RECV "mpi_finalize_rank0_recv_bytes" /* ours: int64 */
#define SP_META_MODULES "modules"                 /* strlist: loaded environment modules */
#define SP_META_HOSTNAME "hostname"
#define SP_META_USER "user"
#define SP_META_PLATFORM "platform"
#define SP_META_UNAME "uname"
#define SP_META_CHIP "chip_information"
#define SP_META_WORKING_DIRECTORY "working_directory"
#define SP_META_TIMESTAMP "timestamp"             /* UTC start, ISO 8601 */
#define SP_META_VERSION "scope_profiler_version"
#define SP_META_OMP_NUM_THREADS "omp_num_threads"
#define SP_META_EVENT_COST_NS "profiler_event_cost_ns"/* ours: float64 */
#define SP_META_CALL_COST_NS "profiler_call_cost_ns"/* ours: float64 */
#define SP_META_COUNT_COST_NS "profiler_count_cost_ns"/* ours: float64 */
#define SP_META_ALLOC_NS "profiler_alloc_ns"      /* ours: int64 */
#define SP_META_STARTUP_NS "profiler_startup_ns"  /* ours: int64 */
#define SP_META_CONCURRENCY "profiler_concurrency" /* ours: int64, MPI: ranks that ran at once */
#define SP_META_FINALIZE_NS "profiler_finalize_ns"/* ours: int64 */
#define SP_META_THROTTLE_TIMING "throttle_timing" /* ours: sampled | exact | estimate */
#define SP_META_THROTTLE_CALLS "throttle_calls"   /* ours: int64 */
#define SP_META_THROTTLE_MEAN_NS "throttle_mean_ns"/* ours: int64 */
#define SP_META_THROTTLE_EARLY_CALLS "throttle_early_calls" /* ours: int64 */
/* ours: int64, the early decision's bound on the mean (absent in files
 * before it was written: throttle_mean_ns/100 then) */
#define SP_META_THROTTLE_EARLY_MEAN_NS "throttle_early_mean_ns"
#define SP_META_THROTTLE_SAMPLE "throttle_sample" /* ours: int64 */
#define SP_META_THROTTLE_SAMPLE_BIAS_NS "throttle_sample_bias_ns" /* ours: float64 */

/* The process and its batch job (ours): the program's arguments at start
 * (strlist, argv[0] first), its process tree (str "<root pid>:<16 hex>":
 * the first profiled process and the programs it started share it), the
 * job id of Slurm, PBS, LSF or Flux, which of them, and the Slurm step. */
#define SP_META_COMMAND_LINE "command_line"
#define SP_META_PROCESS_TREE "process_tree"
#define SP_META_JOB_ID "job_id"
#define SP_META_JOB_SCHEDULER "job_scheduler"
#define SP_META_JOB_STEP "job_step"

/* Region name of the session root that "% session" refers to. */
#define SP_SESSION_REGION "scope_profiler.session"

#endif /* SP_FORMAT_H */
