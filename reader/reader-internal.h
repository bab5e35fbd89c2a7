/* SPDX-License-Identifier: MIT */
/*
 * Internal state of a loaded profile, shared by the loaders (HDF5, JSON,
 * .spt), the statistics, the call stack and the summary rows. Not installed.
 */
#ifndef SP_READER_INTERNAL_H
#define SP_READER_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>

#include "scope-profiler-reader.h"

#define SP_NS_PER_S 1e9

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

	struct sp_row *rows;
	size_t n_rows, cap_rows;

	size_t n_events;
	int64_t *col[SP_COL_COUNT]; /* NULL when absent */

	struct sp_thread *threads;
	size_t n_threads;

	uint32_t *ranks;          /* distinct ranks, ascending */
	size_t n_ranks;
	long *row_lookup;         /* [n_regions * n_ranks] row index or -1 */

	/* Per-row basics (computed once after loading, see stats.c). */
	struct row_basic *basic;

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
	__attribute__((format(printf, 2, 3)));
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

/* loaders */
int sp_load_hdf5(struct sp_reader *r);
int sp_load_json(struct sp_reader *r, const char *text, size_t len);
int sp_load_spt(struct sp_reader *r, const unsigned char *data, size_t len);

/* stats.c */
int reader_compute_basics(struct sp_reader *r);
void percentiles3_ns(int64_t *v, size_t n, double ret[3]);

/* exclusive time per row (exclusive.c); fills r->row_exclusive */
int reader_compute_exclusive(struct sp_reader *r);

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
