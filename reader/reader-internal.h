/* SPDX-License-Identifier: MIT */
/*
 * Internal state of a loaded profile, shared by the loaders (HDF5, JSON,
 * .spt), the statistics, the call stack and the summary rows. Not installed.
 */
#ifndef SP_READER_INTERNAL_H
#define SP_READER_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>

#include "sp-map.h"
#include "compiler.h"
#include "scope-profiler-reader.h"

#define SP_NS_PER_S 1e9

/*
 * Timestamps must lie strictly inside (-SP_TIME_LIMIT, SP_TIME_LIMIT)
 * (±146 years of ns; files outside are rejected as corrupt), so a
 * difference of two timestamps and 2 * t + 1 (the nesting rule) never
 * overflow int64. Sums of many durations can
 * still exceed int64: they wrap like numpy's int64 sums (sp_add_wrap),
 * never undefined behaviour.
 */
#define SP_TIME_LIMIT ((int64_t)1 << 62)

static inline int64_t sp_add_wrap(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

static inline int64_t sp_sub_wrap(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}

/* Growable array of owned strings (freed with the reader). */
struct str_pool {
	char **items;
	size_t n, cap;
};

struct sp_reader {
	char *path;
	uint64_t file_size;
	enum sp_input_format input_format;
	int schema;
	enum sp_layout layout;
	unsigned num_ranks;
	bool num_ranks_known;    /* else max(mpi_size, max rank + 1) */

	struct sp_meta *meta;
	size_t n_meta, cap_meta;

	char **names;             /* region names, id order */
	size_t n_regions, cap_regions;
	uint8_t *kinds;           /* enum sp_region_kind per region: from the file
				   * or derived (region-kinds.c), NULL until then */

	struct sp_row *rows;
	size_t n_rows, cap_rows;

	size_t n_events;
	int64_t *col[SP_COL_COUNT]; /* NULL when absent */
	/* Columns mapped from the file (SP_OPEN_MAP_COLUMNS): munmap'ed, not
	 * freed; base NULL when the column was read into memory. */
	struct { void *base; size_t len; } map[SP_COL_COUNT];
	unsigned open_flags;
	int h5_fd;                /* sec2 descriptor while loading HDF5 ... */
	bool h5_fd_ok;            /* ... valid only when this is set */

	/* MPI event columns stored in the row layout (mpi-layout.c), NULL for
	 * files with full-length ones; col[] of those is built on first use. */
	struct mpi_rows *mpi_rows;

	struct sp_thread *threads;
	size_t n_threads;

	uint32_t *ranks;          /* distinct ranks, ascending */
	size_t n_ranks;
	/* Row lookups, O(rows) memory (a dense region x rank table is not:
	 * a hostile file can name as many ranks as regions). */
	size_t *region_off;       /* [n_regions + 1] into region_rows */
	size_t *region_rows;      /* rows of each region, ascending rank */
	size_t *rank_off;         /* [n_ranks + 1] into rank_rows */
	size_t *rank_rows;        /* rows of each rank slot, ascending region */
	uint32_t *name_order;     /* region ids by name, then id (region_find) */
	struct sp_map name_ids;   /* name hash (+ probe) -> id, while loading */

	/* Per-row basics (computed once after loading, see stats.c). */
	struct row_basic *basic;

	/* sp_reader_region_stats over all of a region's rows, per region id
	 * (NULL until first asked, stats.c): a report asks several times. */
	struct sp_stats *region_stats;
	bool *region_stats_done;

	/* Lazily computed exclusive ns per row (-1 until known, -2 failed). */
	int64_t *row_exclusive;
	bool exclusive_done;
	char *nesting_problem;    /* first nesting error message, or NULL */

	struct str_pool pool;     /* strings and string arrays owned */
};

/* Per-row values every statistic needs; count 0 => zeros. */
struct row_basic {
	uint64_t calls;          /* events, or aggregate count */
	int64_t total, min, max; /* ns */
	int64_t first, last;     /* first / last duration (ns) */
	int64_t first_start, last_end; /* ns; 0 when no calls */
	bool has_timing;
	bool sorted;             /* events by start asc, end desc already */
};

/* A reconstructed call stack: parallel arrays in call-id order. */
struct sp_call_stack {
	const struct sp_reader *r;
	size_t n;
	uint32_t rank;
	uint64_t *ev;     /* global event index */
	uint32_t *row;    /* row index */
	int32_t *depth;
	int64_t *parent;  /* call id, -1 root */
	int64_t *excl;    /* exclusive ns */
	int64_t *lane;    /* NULL without a thread_ids column */
};

/* errors (reader.c) */
int sp_error(int code, const char *fmt, ...)
	SP_PRINTF(2, 3);
void sp_error_clear(void);

/* helpers for loaders (reader.c) */
char *pool_strdup(struct sp_reader *r, const char *s);
void *pool_add(struct sp_reader *r, void *p); /* takes ownership of p */
int reader_add_region(struct sp_reader *r, const char *name, uint32_t *ret_id);
int reader_find_or_add_region(struct sp_reader *r, const char *name,
			      uint32_t *ret_id);
struct sp_row *reader_add_row(struct sp_reader *r);
struct sp_meta *reader_add_meta(struct sp_reader *r, const char *key);
/* Parse a JSON list of strings into row->tags (tolerant). */
int row_set_tags_json(struct sp_reader *r, struct sp_row *row,
		      const char *json);
/* Validate rows against the event columns and build lookups. */
int reader_finish(struct sp_reader *r);
/* Give every region a kind: the file's, else derived from the exact name
 * (region-kinds.c). Returns 0 or -ENOMEM. */
int reader_finish_kinds(struct sp_reader *r);
/* Largest rank a file may name (MPI ranks are C ints). */
#define SP_RANK_MAX 0x7fffffffu
/*
 * Rows of rank slot k whose region has pos[region] != UINT32_MAX, ordered
 * by pos (e.g. the position in sp_reader_regions() order). rows must have
 * room for the rank's row count. Returns the number of rows.
 */
size_t reader_rank_rows(const struct sp_reader *r, size_t k,
			const uint32_t *pos, size_t *rows);
/* Slot of rank in r->ranks, or -1. */
long reader_rank_slot(const struct sp_reader *r, uint32_t rank);

/* Event column c whole when the file stores the MPI columns in the row
 * layout: the full-length array is built on first use (mpi-layout.c). */
const int64_t *mpi_rows_column(const struct sp_reader *r, enum sp_column c);

/* loaders */
int sp_load_hdf5(struct sp_reader *r);
int sp_load_json(struct sp_reader *r, const char *text, size_t len);
int sp_load_spt(struct sp_reader *r, const unsigned char *data, size_t len);

/* stats.c */
int reader_compute_basics(struct sp_reader *r);
/*
 * Values read in place: the slices [lo, hi) of e (s NULL), or of the
 * durations e - s (a region's events in the columns). No copies.
 */
struct dur_slice {
	const int64_t *s, *e;
	uint64_t lo, hi;
};
struct dur_set {
	const struct dur_slice *slice;
	size_t n_slices;
};
/* p50/p95/p99 (numpy linear, seconds) of the n values of ds, min mn and
 * max mx. 0 or -ENOMEM. (percentiles.c, as the three below) */
int percentiles3_set(const struct dur_set *ds, size_t n, int64_t mn,
		     int64_t mx, double ret[3]);
/* The same from counting passes over ds in place (n >= 256); with m2 set,
 * also the squared deviations from mean. false without memory. */
bool percentiles3_hist(const struct dur_set *ds, size_t n, int64_t mn,
		       int64_t mx, double mean, double *m2, double ret[3]);
/* percentiles3_set with the squared deviations from mean (summed in the
 * values' order) into *ret_m2, from the same counting pass when there is
 * one. 0 or -ENOMEM. */
int percentiles3_m2(const struct dur_set *ds, size_t n, int64_t mn,
		    int64_t mx, double mean, double *ret_m2, double ret[3]);
/* The same by selection in v (reordered). */
void percentiles3_select(int64_t *v, size_t n, double ret[3]);
/* The n values of ds in a new array, or NULL. */
int64_t *dur_pool(const struct dur_set *ds, size_t n);

/*
 * Threads for work over `items` independent parts (ranks): 1 for files
 * under 1 M events, else the CPUs this process may use, at most items and
 * READER_MAX_THREADS.
 */
enum { READER_MAX_THREADS = 64 };
size_t reader_threads(const struct sp_reader *r, size_t items);
/* Run fn(arg) on reader_threads(r, items) threads, this one included, and
 * wait for all: fn takes its parts from a shared atomic counter. */
void reader_parallel(const struct sp_reader *r, size_t items,
		     void *(*fn)(void *), void *arg);

/* exclusive time per row (exclusive.c); fills r->row_exclusive */
int reader_compute_exclusive(struct sp_reader *r);
/* pos[region] = index in sp_reader_regions(sel) order, else UINT32_MAX.
 * *ret malloc'ed. Returns the number of selected regions. */
int reader_region_positions(const struct sp_reader *r,
			    const struct sp_selection *sel, uint32_t **ret);

/*
 * Streaming call-stack walk (callstack.c): calls are nested as in
 * sp_call_stack_build but not stored; open() sees each call when it starts
 * (depth = number of open ancestors), close() when it ends, innermost
 * first, with its exclusive ns. -SP_E_NESTING on improper nesting.
 */
/* open NULL: close is not called either; data is an int64_t[] of per-row
 * exclusive ns sums that the walk adds to (exclusive_from_rows). */
struct walk;
struct call_visitor {
	void *data;
	/* parent_tag: the innermost open call's tag (0 at depth 0); *ret_tag
	 * the new call's, handed back to close (the summary's tree node). */
	int (*open)(void *data, uint64_t ev, uint32_t row, size_t depth,
		    uint32_t parent_tag, uint32_t *ret_tag);
	void (*close)(void *data, uint64_t ev, uint32_t row, int64_t excl,
		      uint32_t tag);
	/* NULL, or the merge of one lane with open and close inlined
	 * (walk_merge of callstack-walk.h over walk_step with them). */
	int (*merge)(struct walk *c);
};
int visit_rows(const struct sp_reader *r, uint32_t rank, const size_t *rows,
	       size_t n_rows, const struct call_visitor *visit);
/* visit_rows of one thread lane only (INT64_MIN: all lanes). */
int visit_rows_lane(const struct sp_reader *r, uint32_t rank, int64_t only,
		    const size_t *rows, size_t n_rows,
		    const struct call_visitor *visit);

/* Add each call's exclusive ns to row_excl[row] without materialising the
 * stack (callstack.c). -SP_E_NESTING on improper nesting. */
int exclusive_from_rows(const struct sp_reader *r, uint32_t rank,
			const size_t *rows, size_t n_rows, int64_t *row_excl);

/* call stack over a set of rows of one rank (callstack.c) */
struct sp_call_stack *call_stack_from_rows(const struct sp_reader *r,
					   uint32_t rank, int64_t lane,
					   const size_t *rows, size_t n_rows,
					   int *ret_err);

#endif /* SP_READER_INTERNAL_H */
