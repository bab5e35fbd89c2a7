/* SPDX-License-Identifier: MIT */
/*
 * libscope-profiler-reader: load scope-profiler profiles (HDF5 schemas 1-3,
 * JSON profile v1, native .spt v1/v2) and compute the statistics, call stacks
 * and summary rows of the Python scope-profiler's analysis API.
 *
 * Conventions: fallible functions return 0 (or a count) on success and a
 * negative errno on failure; results go through ret_* out-parameters that are
 * written only on success. The library never prints: after a failure,
 * sp_reader_last_error() returns a one-line message (per thread) that names
 * the file and the problem. Durations in structs are seconds (double) unless
 * the field name ends in _ns (int64 nanoseconds).
 */
#ifndef SCOPE_PROFILER_READER_H
#define SCOPE_PROFILER_READER_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what is declared here is its
 * whole exported API (libscope-profiler-reader.map lists the same names). */
#if defined(__GNUC__) && __GNUC__ >= 4
#pragma GCC visibility push(default)
#endif

/*
 * Error codes (returned negated, e.g. -SP_E_NOT_PROFILE).
 *   SP_E_NOT_PROFILE  the file is not a scope-profiler file (not HDF5/JSON/.spt,
 *                     or lacks the expected groups/datasets/magic).
 *   SP_E_SCHEMA       unsupported schema version (absent is 1; non-integer,
 *                     < 1, or newer than this reader).
 *   SP_E_CORRUPT      a scope-profiler file whose content is inconsistent
 *                     (index rows past the end, overlapping, duplicated).
 *   SP_E_NESTING      recorded calls are not properly nested (call stack).
 * Other codes: -ENOENT (missing file / unknown name), -ENOMEM, -EINVAL (bad
 * argument, bad regex, bad rank list), -EIO (read error).
 */
#define SP_E_NOT_PROFILE EBADMSG
#define SP_E_SCHEMA EPROTONOSUPPORT
#define SP_E_CORRUPT EILSEQ
#define SP_E_NESTING EDOM

struct sp_reader;      /* one loaded profile */
struct sp_selection;   /* include/exclude regexes + rank set */
struct sp_call_stack;  /* reconstructed calls of one rank */
struct sp_summary;     /* call-tree summary rows (the summary table) */

enum sp_input_format {
	SP_INPUT_HDF5 = 0,
	SP_INPUT_JSON = 1,
	SP_INPUT_SPT = 2,
};

enum sp_layout {
	SP_LAYOUT_PER_RANK = 0,  /* schema 1: /rank<N>/regions/<name> */
	SP_LAYOUT_COLUMNAR = 1,  /* schema 2/3, JSON, .spt */
	SP_LAYOUT_AGGREGATE = 2, /* storage_layout = "aggregate": no events */
};

/* Per-event columns, each of length sp_reader_num_events(). */
enum sp_column {
	SP_COL_START_TIMES = 0, /* always present (decoded for schema 3) */
	SP_COL_END_TIMES,       /* always present */
	SP_COL_GPU_DURATIONS,
	SP_COL_CALL_IDS,
	SP_COL_PARENT_IDS,
	SP_COL_THREAD_IDS,
	SP_COL_TASK_IDS,
	SP_COL_AWAIT_NS,
	SP_COL_MPI_BYTES,
	SP_COL_MPI_PEERS,
	SP_COL_MPI_ROOTS,
	SP_COL_MPI_TAGS,
	SP_COL_MPI_COMMS,
	SP_COL_CALLSITE_IDS,
	SP_COL_COUNT
};

enum sp_meta_type {
	SP_META_INT = 0,     /* value.i */
	SP_META_FLOAT = 1,   /* value.f */
	SP_META_STRING = 2,  /* value.s */
	SP_META_STRINGS = 3, /* strv[0..n) */
};

/** One metadata attribute. Strings are owned by the reader. */
struct sp_meta {
	const char *key;
	enum sp_meta_type type;
	int64_t i;
	double f;
	const char *s;
	const char *const *strv;
	size_t n;
};

/** Stored per-row summary_statistics compound (all ns except mean/m2). */
struct sp_row_summary {
	int64_t total, minimum, maximum, first, last;
	int64_t start_minimum, end_maximum;
	uint64_t gpu_count;
	int64_t gpu_total;
	double mean, m2;
};

/** One (region, rank) row of the index. Pointers are owned by the reader. */
struct sp_row {
	uint32_t region;
	uint32_t rank;
	uint64_t offset;          /* first event in the event columns */
	uint64_t count;           /* number of events (timeline) */
	int64_t source_lineno;    /* -1 unknown */
	const char *source_file;  /* "" unknown */
	const char *source_text;  /* "" unknown */
	const char *const *tags;  /* decoded tag list */
	size_t num_tags;
	int64_t exclusive_total_ns; /* stored value, -1 = not stored */
	bool has_summary;
	struct sp_row_summary summary;
	bool has_aggregate;       /* aggregate layout: values below */
	uint64_t agg_count;
	int64_t agg_total_ns, agg_min_ns, agg_max_ns, agg_exclusive_ns;
	/* Our extension columns; -1 when absent. */
	int64_t dropped_count, throttled_count, throttled_total_ns;
	/* With throttled_count: calls timed by sampling, the 95 % half-width
	 * of throttled_total_ns (0 exact), CLOCK_MONOTONIC ns of the throttle
	 * decision; -1 absent or unknown. */
	int64_t throttle_timed, throttled_ci_ns, throttled_since_ns;
	/* CLOCK_MONOTONIC ns from which hook calls of the function were
	 * patched out (its counts are lower bounds), -1 never or absent. */
	int64_t patched_since_ns;
};

/** One row of /thread_table. */
struct sp_thread {
	uint32_t rank;
	int64_t index, ident, native_id;
	int8_t daemon;
	int64_t start_ns, end_ns, cpu_ns;
	const char *name;
};

/** Time origins of a profile (seconds, §3.3 of the Python docs). */
struct sp_times {
	double minimum_start_time; /* 0.0 if no calls */
	double maximum_end_time;   /* 0.0 if no calls */
	double time_span;          /* max - min, 0.0 if no calls */
	bool has_run_start;
	double run_start_time;     /* metadata start_time_ns / 1e9 */
	double time_origin;        /* run start, else minimum start */
	double startup_time;       /* minimum start - origin (0 without run start) */
	bool has_finalize;
	double finalize_time;
	bool has_total_time;
	double total_time;         /* finalize - run start */
};

/** Pooled statistics of one region over the selected ranks (seconds). */
struct sp_stats {
	unsigned num_ranks;        /* ranks holding a row for the region */
	uint64_t num_calls;
	int64_t total_ns;          /* = inclusive */
	int64_t exclusive_ns;
	bool has_exclusive;        /* false: not reconstructible (nesting) */
	double total, exclusive, average, min, max, first, last, std;
	bool has_percentiles;      /* false for aggregate-only data */
	double p50, p95, p99;
	double first_start, last_end;
	double rank_imbalance, rank_imbalance_pct;
};

/** One reconstructed call (see sp_call_stack_build). */
struct sp_call {
	uint32_t region;
	uint32_t rank;
	int64_t lane;        /* thread id of the lane, -1 without lanes */
	uint64_t call_index; /* index within its (region, rank) row */
	uint64_t event;      /* global index in the event columns */
	int64_t start_ns, end_ns, exclusive_ns;
	int32_t depth;       /* 0 = top */
	int64_t parent;      /* call id (index in the stack) or -1 */
};

enum sp_sort_key {
	SP_SORT_START = 0, SP_SORT_TOTAL, SP_SORT_CALLS, SP_SORT_AVG,
	SP_SORT_MIN, SP_SORT_MAX, SP_SORT_FIRST, SP_SORT_LAST, SP_SORT_STD,
	SP_SORT_P50, SP_SORT_P95, SP_SORT_P99, SP_SORT_IMBALANCE, SP_SORT_NAME,
};

/** One row of the summary table (§3.8). Undefined values are NAN. */
struct sp_summary_row {
	const char *name;   /* region name (owned by the reader) */
	uint32_t region;
	int depth;          /* tree depth (0 = top) */
	bool own;           /* the "(own)" exclusive-time row of its parent */
	bool recursive;     /* collapsed recursion */
	unsigned num_ranks;
	uint64_t calls;
	int64_t total_ns;    /* inclusive (own rows: exclusive) */
	int64_t coverage_ns; /* wall-clock union, summed over ranks */
	double total, avg, min, max, std, p50, p95, p99, first, last;
	double imbalance;    /* rank imbalance percent */
	double percent;      /* % session; NAN without a session row */
	double first_start;
};

/* ---- errors ---------------------------------------------------------- */

/** Message of the last failure in this thread ("" if none). Never NULL. */
const char *sp_reader_last_error(void);

/* ---- loading ----------------------------------------------------------- */

/**
 * Load a profile: HDF5 (schema 1, 2, 3), JSON profile (.json) or native
 * trace (.spt), chosen by content. The whole event data is read.
 * @param path  file name
 * @param ret_reader  new reader on success (free with sp_reader_destroy)
 * @return 0, -ENOENT, -SP_E_NOT_PROFILE, -SP_E_SCHEMA, -SP_E_CORRUPT,
 *         -ENOMEM or -EIO.
 */
int sp_reader_open(const char *path, struct sp_reader **ret_reader);

/** Flags of sp_reader_open_flags(). */
enum sp_open_flags {
	/**
	 * Map the event columns an HDF5 file stores contiguous, unfiltered
	 * and as native int64 (what the recorder writes) straight from the
	 * file instead of reading them: no copy and no fresh memory to fault
	 * in, which is most of the cost of loading 10 M events. The mapping
	 * is read-only and private. If another process truncates the file
	 * while the reader is alive, touching a lost page raises SIGBUS: set
	 * this flag only if the program handles that (the CLI reports it and
	 * exits). Other columns and formats are read as without the flag.
	 */
	SP_OPEN_MAP_COLUMNS = 1u << 0,
};

/** sp_reader_open() with flags (enum sp_open_flags); 0 is the same call. */
int sp_reader_open_flags(const char *path, unsigned flags,
			 struct sp_reader **ret_reader);

/** Free a reader and everything it handed out. Accepts NULL. */
void sp_reader_destroy(struct sp_reader *reader);

const char *sp_reader_path(const struct sp_reader *reader);
enum sp_input_format sp_reader_input_format(const struct sp_reader *reader);
/** Schema (HDF5: 1-3), format_version (JSON) or trace version (.spt). */
int sp_reader_schema(const struct sp_reader *reader);
enum sp_layout sp_reader_layout(const struct sp_reader *reader);
/** num_ranks as the Python reader computes it (0 without rows). */
unsigned sp_reader_num_ranks(const struct sp_reader *reader);
/** Size of the file in bytes. */
uint64_t sp_reader_file_size(const struct sp_reader *reader);

/* ---- regions, rows, events ------------------------------------------- */

size_t sp_reader_num_regions(const struct sp_reader *reader);
/** Region name by id (file order), NULL if out of range. */
const char *sp_reader_region_name(const struct sp_reader *reader, uint32_t id);
/** @return region id, or -ENOENT. */
int sp_reader_region_find(const struct sp_reader *reader, const char *name);

/**
 * How a region was recorded: a compiled function, the begin/end API, or an
 * MPI call with its operation class (class= in the project's
 * mpi-functions.def). The values are those of region_table/kinds
 * (docs/FORMAT.md). A file without that dataset (the Python project's,
 * older ones) gives the MPI kind of a region whose name is exactly a
 * wrapped MPI function, and SP_REGION_FUNCTION to every other.
 */
enum sp_region_kind {
	SP_REGION_MANUAL = 0,
	SP_REGION_FUNCTION = 1,
	SP_REGION_MPI_OTHER = 2,      /* set-up, communicators, types, ... */
	SP_REGION_MPI_SEND = 3,       /* point-to-point send */
	SP_REGION_MPI_RECV = 4,       /* point-to-point receive, probe */
	SP_REGION_MPI_SENDRECV = 5,   /* both; bytes and peer are the send half */
	SP_REGION_MPI_COLLECTIVE = 6,
	SP_REGION_MPI_ONE_SIDED = 7,  /* RMA and MPI_Win_* */
	SP_REGION_MPI_IO = 8,         /* MPI_File_* */
	SP_REGION_MPI_REQUEST = 9,    /* wait, test, start, cancel, free requests */
};
/** Kind of region id; SP_REGION_FUNCTION if out of range. */
enum sp_region_kind sp_reader_region_kind(const struct sp_reader *reader, uint32_t id);
/** Whether the kind is an MPI call (any class). */
bool sp_region_kind_is_mpi(enum sp_region_kind kind);
/** "manual", "function" or "mpi" (static string). */
const char *sp_region_kind_name(enum sp_region_kind kind);
/** The MPI class, "send", "recv", "sendrecv", "collective", "one_sided",
 * "io", "request" or "other", or NULL when the kind is not MPI. */
const char *sp_region_kind_mpi_class(enum sp_region_kind kind);

size_t sp_reader_num_rows(const struct sp_reader *reader);
/** Row by index (rank order, then region order), NULL if out of range. */
const struct sp_row *sp_reader_row(const struct sp_reader *reader, size_t i);
/** @return row index of (region, rank), or -ENOENT. */
long sp_reader_row_find(const struct sp_reader *reader, uint32_t region,
			uint32_t rank);

size_t sp_reader_num_events(const struct sp_reader *reader);
/**
 * A whole event column (int64, length sp_reader_num_events()), NULL if the
 * file does not have it. Narrower on-disk types are widened to int64.
 */
const int64_t *sp_reader_column(const struct sp_reader *reader,
				enum sp_column column);
/**
 * Whether the file has event column `column`, without building it
 * (sp_reader_column builds the MPI columns of the row layout, see
 * docs/FORMAT.md, on first use: 8 bytes per event each).
 */
bool sp_reader_has_column(const struct sp_reader *reader, enum sp_column column);
/**
 * Event column `column` for the events of row `row` only
 * (sp_reader_row(row)->count values, in event order), without building
 * the whole column. NULL when the file lacks the column, `row` is out of
 * range, or the row has no values in it (the MPI columns of a row that is
 * not an MPI call: sp_reader_column() holds -1 there). Owned by the reader.
 */
const int64_t *sp_reader_row_column(const struct sp_reader *reader, size_t row,
				    enum sp_column column);

/**
 * Distinct ranks that have rows, ascending.
 * @return number of ranks; *ret_ranks points into the reader.
 */
size_t sp_reader_ranks(const struct sp_reader *reader,
		       const uint32_t **ret_ranks);

/* ---- metadata and thread table ----------------------------------------- */

size_t sp_reader_num_metadata(const struct sp_reader *reader);
/** Metadata entry in file (attribute) order, NULL if out of range. */
const struct sp_meta *sp_reader_metadata(const struct sp_reader *reader,
					 size_t i);
/** Metadata entry by key, NULL if absent. */
const struct sp_meta *sp_reader_metadata_find(const struct sp_reader *reader,
					      const char *key);
size_t sp_reader_num_threads(const struct sp_reader *reader);
const struct sp_thread *sp_reader_thread(const struct sp_reader *reader,
					 size_t i);

/** Time origins (minimum start, run start, total time...). */
void sp_reader_times(const struct sp_reader *reader, struct sp_times *ret);

/* ---- selection ------------------------------------------------------- */

/** @return 0 or -ENOMEM. An empty selection keeps everything. */
int sp_selection_create(struct sp_selection **ret_selection);
void sp_selection_destroy(struct sp_selection *selection);
/**
 * Add an include / exclude regex (PCRE2, matched like Python re.match:
 * anchored at the start of the name, not a full match).
 * @return 0, -EINVAL (bad pattern; see sp_reader_last_error) or -ENOMEM.
 */
int sp_selection_add_include(struct sp_selection *selection,
			     const char *pattern);
int sp_selection_add_exclude(struct sp_selection *selection,
			     const char *pattern);
/**
 * Restrict to ranks given as "0,2,4-7" (comma lists and inclusive ranges,
 * several calls form a union). @return 0, -EINVAL or -ENOMEM.
 */
int sp_selection_add_ranks(struct sp_selection *selection, const char *spec);
/** NULL selection matches everything. */
bool sp_selection_match_name(const struct sp_selection *selection,
			     const char *name);
bool sp_selection_match_rank(const struct sp_selection *selection,
			     uint32_t rank);
bool sp_selection_has_ranks(const struct sp_selection *selection);

/* ---- statistics -------------------------------------------------------- */

/**
 * Region ids matching the selection's names, in the Python get_regions()
 * order: stable sort by the minimum over ranks of each rank's first start.
 * @param ret_ids  malloc'ed array (caller frees with free()), may be NULL
 *                 when the count is 0
 * @return number of regions or a negative errno.
 */
int sp_reader_regions(const struct sp_reader *reader,
		      const struct sp_selection *selection, uint32_t **ret_ids);

/**
 * Pooled statistics of a region over the selection's ranks (all ranks if
 * selection is NULL or has no rank list). Exclusive time is computed against
 * all regions (stored exclusive_totals when present, else the call stack).
 * @return 0, -ENOENT (bad id) or -ENOMEM.
 */
int sp_reader_region_stats(struct sp_reader *reader, uint32_t region,
			   const struct sp_selection *selection,
			   struct sp_stats *ret);

/** Flags of sp_reader_region_stats_flags() and sp_reader_row_stats_flags(). */
enum sp_stats_flags {
	/**
	 * Leave out std and the percentiles (NAN, has_percentiles false):
	 * the rest comes from per-row sums, without a pass over the events.
	 */
	SP_STATS_NO_SPREAD = 1u << 0,
};

/** sp_reader_region_stats() with flags (enum sp_stats_flags); 0 is the same call. */
int sp_reader_region_stats_flags(struct sp_reader *reader, uint32_t region,
				 const struct sp_selection *selection,
				 unsigned flags, struct sp_stats *ret);

/**
 * As sp_reader_region_stats(), with total, exclusive, average, std and the
 * rank imbalance in the Python reader's floating-point arithmetic, bit for
 * bit (seconds per rank first, summed in rank order; numpy's pairwise
 * mean and std over the pooled seconds). The _ns fields are the same.
 * @return 0, -ENOENT (bad id) or -ENOMEM.
 */
int sp_reader_region_stats_numpy(struct sp_reader *reader, uint32_t region,
				 const struct sp_selection *selection,
				 struct sp_stats *ret);

/**
 * Message describing why exclusive time could not be reconstructed on some
 * rank (calls not properly nested), or NULL when all is well.
 */
const char *sp_reader_nesting_problem(struct sp_reader *reader);

/** Statistics of one (region, rank) row. @return 0, -ENOENT or -ENOMEM. */
int sp_reader_row_stats(struct sp_reader *reader, size_t row,
			struct sp_stats *ret);
/** sp_reader_row_stats() with flags (enum sp_stats_flags). */
int sp_reader_row_stats_flags(struct sp_reader *reader, size_t row,
			      unsigned flags, struct sp_stats *ret);

/**
 * Linear-interpolation percentile (numpy default) of the seconds values
 * ns[i] / 1e9. Reorders ns. @return the value, 0.0 when n is 0.
 */
double sp_percentile_ns(int64_t *ns, size_t n, double percent);

/* ---- call stack ---------------------------------------------------------- */

/**
 * Reconstruct the call stack of one rank from timestamp containment (per
 * thread lane when a thread_ids column exists), using the regions that match
 * the selection's names (rank list ignored). Calls are ordered parents before
 * children; lanes follow each other in ascending thread id.
 * @param lane  only this lane (thread id), or INT64_MIN for all lanes
 * @return 0, -SP_E_NESTING (message names both calls), -ENOENT (no such
 *         rank) or -ENOMEM.
 */
int sp_call_stack_build(const struct sp_reader *reader, uint32_t rank,
			int64_t lane, const struct sp_selection *selection,
			struct sp_call_stack **ret_stack);
/**
 * The calls sp_call_stack_build() would give, in its order (lanes in
 * ascending thread id, each lane in start order), handed to fn one by one
 * as they start, without storing them: memory is the open calls only.
 * In each call, exclusive_ns is 0 and parent -1 (not known yet when the
 * call starts). fn returns 0 to go on, or a negative errno to stop. Calls
 * before a nesting error are handed over before the error is returned.
 * @return 0, -SP_E_NESTING, -ENOENT (no such rank), -ENOMEM or fn's code.
 */
int sp_call_stack_walk(const struct sp_reader *reader, uint32_t rank,
		       int64_t lane, const struct sp_selection *selection,
		       int (*fn)(void *data, const struct sp_call *call),
		       void *data);
void sp_call_stack_destroy(struct sp_call_stack *stack);
size_t sp_call_stack_count(const struct sp_call_stack *stack);
/** Copy call i into *ret. @return 0 or -ENOENT (out of range). */
int sp_call_stack_get(const struct sp_call_stack *stack, size_t i,
		      struct sp_call *ret);
/**
 * Names from the root to call i joined by " > ", snprintf-style.
 * @return length of the full path (may exceed size - 1), or -EINVAL.
 */
int sp_call_stack_path(const struct sp_call_stack *stack,
		       const struct sp_reader *reader, size_t i, char *buf,
		       size_t size);

/* ---- summary table rows ------------------------------------------------ */

/**
 * Build the rows of the summary table (§3.8): one row per distinct call
 * path (recursion collapsed), an "(own)" row first among each node's
 * children, siblings ordered by sort; regions without a reconstructible tree
 * are appended at depth 0.
 * @return 0 or a negative errno.
 */
int sp_summary_build(struct sp_reader *reader,
		     const struct sp_selection *selection, enum sp_sort_key sort,
		     struct sp_summary **ret_summary);
/** Flags of sp_summary_build_flags(). */
enum sp_summary_flags {
	/**
	 * Rows without std, p50, p95 and p99 (NAN): the durations of the
	 * calls are then not kept, so memory is O(call paths) instead of 8
	 * bytes per call, and the build takes about half the time. Ignored
	 * when sorting by one of those keys.
	 */
	SP_SUMMARY_NO_SPREAD = 1u << 0,
};

/** sp_summary_build() with flags (enum sp_summary_flags); 0 is the same call. */
int sp_summary_build_flags(struct sp_reader *reader,
			   const struct sp_selection *selection,
			   enum sp_sort_key sort, unsigned flags,
			   struct sp_summary **ret_summary);
void sp_summary_destroy(struct sp_summary *summary);
size_t sp_summary_count(const struct sp_summary *summary);
const struct sp_summary_row *sp_summary_get(const struct sp_summary *summary,
					    size_t i);
/** True when a scope_profiler.session row exists ("% session" column). */
bool sp_summary_has_session(const struct sp_summary *summary);
/** True when some rank's calls could not be nested (flat rows). */
bool sp_summary_is_flat(const struct sp_summary *summary);

/** Parse a sort key name ("start", "total", ...). @return 0 or -EINVAL. */
int sp_sort_key_parse(const char *name, enum sp_sort_key *ret_key);

/* ---- MPI call sites (/callsites, docs/CALLSITES.md) -------------------- */

struct sp_callsites;   /* the call-site table of one profile */

/** One stack frame of a call site. Strings are owned by the table. */
struct sp_callsite_frame {
	const char *function;   /* "module+0xoffset" when unresolved */
	const char *file;       /* "" unknown */
	int64_t line;           /* -1 unknown */
};

/** One call site: the row events/callsite_ids refer to. */
struct sp_callsite {
	const char *function;   /* = frames[0] */
	const char *file;
	int64_t line;
	size_t num_frames;      /* >= 1 */
	const struct sp_callsite_frame *frames; /* innermost (the MPI call) first */
};

/**
 * Read the /callsites table of an HDF5 profile (the events' call-site ids
 * are the column SP_COL_CALLSITE_IDS).
 * @param ret_table  new table on success (free with sp_callsites_destroy)
 * @return 0, -ENOENT (no table: call sites were not recorded, or not an
 *         HDF5 profile), -SP_E_CORRUPT, -ENOMEM or -EIO.
 */
int sp_callsites_load(const struct sp_reader *reader,
		      struct sp_callsites **ret_table);
/** Free a table. Accepts NULL. */
void sp_callsites_destroy(struct sp_callsites *table);
size_t sp_callsites_count(const struct sp_callsites *table);
/** Frames captured per call site (SCOPE_PROFILER_CALLSITES), 0 unknown. */
int sp_callsites_depth(const struct sp_callsites *table);
/** Call site by id, NULL if out of range. */
const struct sp_callsite *sp_callsites_get(const struct sp_callsites *table,
					   int64_t id);

#if defined(__GNUC__) && __GNUC__ >= 4
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* SCOPE_PROFILER_READER_H */
