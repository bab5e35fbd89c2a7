/* SPDX-License-Identifier: MIT */
/*
 * The writer's per-row tables: rank_region_index (one row per (rank,
 * region)) and thread_table, each column described once and used both to
 * create the dataset and to fill it from the writer's row records.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer-internal.h"

/* File types by name, for the column tables below. */
static hid_t ft_u32(const struct sp_writer *w) { return H5T_STD_U32LE; }
static hid_t ft_u64(const struct sp_writer *w) { return H5T_STD_U64LE; }
static hid_t ft_i64(const struct sp_writer *w) { return H5T_STD_I64LE; }
static hid_t ft_str(const struct sp_writer *w) { return w->str_type; }
static hid_t ft_summary(const struct sp_writer *w) { return w->summary_type; }

/*
 * The rank_region_index columns, one table for creating and filling them:
 * most are a member of struct sp_writer_row (`off`, same type in memory),
 * the others a constant or a member with "<= 0 means none".
 */
enum row_src {
	ROW_MEMBER,   /* copied as is */
	ROW_FILE,     /* a string member, NULL written as "" */
	ROW_TEXT,     /* the constant string `text` */
	ROW_NONE,     /* int64 -1 */
	ROW_SINCE,    /* an int64 member, <= 0 written as -1 */
};

static const struct row_column {
	const char *name;
	hid_t (*ftype)(const struct sp_writer *w);
	unsigned need;     /* SP_WCOL_* bit, 0 always */
	enum row_src src;
	size_t off, size;  /* the member (ROW_MEMBER, ROW_FILE, ROW_SINCE) */
	const char *text;
} row_columns[] = {
#define M(m) offsetof(struct sp_writer_row, m), sizeof(((struct sp_writer_row *)0)->m)
	{ SP_IDX_REGION_IDS, ft_u32, 0, ROW_MEMBER, M(region) },
	{ SP_IDX_RANKS, ft_u32, 0, ROW_MEMBER, M(rank) },
	{ SP_IDX_EVENT_OFFSETS, ft_u64, 0, ROW_MEMBER, M(offset) },
	{ SP_IDX_EVENT_COUNTS, ft_u64, 0, ROW_MEMBER, M(count) },
	{ SP_IDX_SOURCE_LINES, ft_i64, 0, ROW_MEMBER, M(source_line) },
	{ SP_IDX_SOURCE_FILES, ft_str, 0, ROW_FILE, M(source_file) },
	{ SP_IDX_SOURCE_TEXTS, ft_str, 0, ROW_TEXT, 0, sizeof(const char *), "" },
	{ SP_IDX_TAGS, ft_str, 0, ROW_TEXT, 0, sizeof(const char *), "[]" },
	{ SP_IDX_EXCLUSIVE_TOTALS, ft_i64, 0, ROW_MEMBER, M(exclusive_ns) },
	{ SP_IDX_SUMMARY, ft_summary, 0, ROW_MEMBER, M(summary) },
	{ SP_IDX_DROPPED_COUNTS, ft_u64, SP_WCOL_DROPPED, ROW_MEMBER, M(dropped) },
	{ SP_IDX_THROTTLED_COUNTS, ft_u64, SP_WCOL_THROTTLED, ROW_MEMBER, M(throttled_calls) },
	{ SP_IDX_THROTTLED_TOTALS, ft_i64, SP_WCOL_THROTTLED, ROW_MEMBER, M(throttled_ns) },
	{ SP_IDX_THROTTLED_TIMED, ft_u64, SP_WCOL_THROTTLED, ROW_MEMBER, M(throttle_timed) },
	{ SP_IDX_THROTTLED_CI95, ft_i64, SP_WCOL_THROTTLED, ROW_MEMBER, M(throttled_ci_ns) },
	{ SP_IDX_THROTTLED_SINCE, ft_i64, SP_WCOL_THROTTLED, ROW_SINCE, M(throttled_since_ns) },
	{ SP_IDX_PATCHED_SINCE, ft_i64, SP_WCOL_THROTTLED, ROW_SINCE, M(patched_since_ns) },
	{ SP_IDX_MPI_OFFSETS, ft_i64, SP_WCOL_MPI, ROW_MEMBER, M(mpi_offset) },
#undef M
};

#define NROW_COLUMNS (sizeof row_columns / sizeof *row_columns)
_Static_assert(NROW_COLUMNS == SP_RAW_NCOLS - SP_RAW_ROW0, "SP_RAW_NCOLS counts the row table");

/* Whether row column c is in a file of these columns, and not a string. */
static bool row_raw(const struct row_column *rc, unsigned columns)
{
	return (!rc->need || (columns & rc->need)) && rc->src != ROW_FILE && rc->src != ROW_TEXT;
}

int sp_writer_create_index(struct sp_writer *w)
{
	int ret = 0;
	for (size_t c = 0; !ret && c < NROW_COLUMNS; c++) {
		const struct row_column *rc = &row_columns[c];
		if (!rc->need || (w->layout.columns & rc->need))
			ret = sp_writer_make_col(w, w->g_index, rc->name, rc->ftype(w),
						 w->layout.nrows);
	}
	return ret ? -EIO : 0;
}


int sp_writer_create_threads(struct sp_writer *w)
{
	hid_t g = w->g_threads;
	uint64_t n = w->layout.nthreads;
	int ret = 0;
	ret |= sp_writer_make_col(w, g, SP_TT_RANKS, H5T_STD_U32LE, n);
	ret |= sp_writer_make_col(w, g, SP_TT_INDEX, H5T_STD_I64LE, n);
	ret |= sp_writer_make_col(w, g, SP_TT_IDENT, H5T_STD_I64LE, n);
	ret |= sp_writer_make_col(w, g, SP_TT_NATIVE_ID, H5T_STD_I64LE, n);
	ret |= sp_writer_make_col(w, g, SP_TT_DAEMON, H5T_STD_I8LE, n);
	ret |= sp_writer_make_col(w, g, SP_TT_START_NS, H5T_STD_I64LE, n);
	ret |= sp_writer_make_col(w, g, SP_TT_END_NS, H5T_STD_I64LE, n);
	ret |= sp_writer_make_col(w, g, SP_TT_CPU_NS, H5T_STD_I64LE, n);
	ret |= sp_writer_make_col(w, g, SP_TT_NAME, w->str_type, n);
	return ret ? -EIO : 0;
}


/* Column c of rows [0, n) into col (n values of the column's size). */
static void gather_row_column(const struct row_column *rc, const struct sp_writer_row *rows,
			      uint64_t n, char *col)
{
	for (uint64_t i = 0; i < n; i++) {
		const char *member = (const char *)&rows[i] + rc->off;
		char *out = col + i * rc->size;
		const char *s;
		int64_t v;
		switch (rc->src) {
		case ROW_MEMBER:
			memcpy(out, member, rc->size);
			break;
		case ROW_FILE:
			memcpy(&s, member, sizeof s);
			s = s ? s : "";
			memcpy(out, &s, sizeof s);
			break;
		case ROW_TEXT:
			memcpy(out, &rc->text, sizeof rc->text);
			break;
		case ROW_NONE:
			v = -1;
			memcpy(out, &v, sizeof v);
			break;
		case ROW_SINCE:
			memcpy(&v, member, sizeof v);
			v = v > 0 ? v : -1;
			memcpy(out, &v, sizeof v);
			break;
		}
	}
}

int sp_writer_put_rows(struct sp_writer *w, uint64_t first, uint64_t n,
		       const struct sp_writer_row *rows)
{
	if (first > w->layout.nrows || n > w->layout.nrows - first)
		return -EINVAL;
	for (uint64_t i = 0; i < n; i++)
		if (rows[i].region >= w->layout.nnames)
			return -EINVAL;
	if (n == 0)
		return 0;
	char *col = malloc(n * sizeof(struct sp_summary_record)); /* the widest column */
	int ret = col ? 0 : -ENOMEM;
	for (size_t c = 0; !ret && c < NROW_COLUMNS; c++) {
		const struct row_column *rc = &row_columns[c];
		if (rc->need && !(w->layout.columns & rc->need))
			continue;
		gather_row_column(rc, rows, n, col);
		ret = sp_writer_put_range(w->g_index, rc->name, first, n, col);
	}
	free(col);
	return ret;
}


/* The thread_table columns: int64 members of struct sp_writer_thread, and
 * rank, daemon (0) and name (made from the index) filled apart. */
static const struct thread_column {
	const char *name;
	size_t off;
} thread_columns[] = {
	{ SP_TT_INDEX, offsetof(struct sp_writer_thread, index) },
	{ SP_TT_IDENT, offsetof(struct sp_writer_thread, ident) },
	{ SP_TT_NATIVE_ID, offsetof(struct sp_writer_thread, native_id) },
	{ SP_TT_START_NS, offsetof(struct sp_writer_thread, start_ns) },
	{ SP_TT_END_NS, offsetof(struct sp_writer_thread, end_ns) },
	{ SP_TT_CPU_NS, offsetof(struct sp_writer_thread, cpu_ns) },
};

/* Thread names as upstream writes them: main-0, thread-N. */
static int put_thread_names(struct sp_writer *w, uint64_t first, uint64_t n,
			    const struct sp_writer_thread *t)
{
	enum { NAME_MAX_LEN = 32 };
	const char **names = malloc(n * sizeof *names);
	char *store = malloc(n * NAME_MAX_LEN);
	int ret = names && store ? 0 : -ENOMEM;
	for (uint64_t i = 0; !ret && i < n; i++) {
		snprintf(store + i * NAME_MAX_LEN, NAME_MAX_LEN, "%s-%" PRId64,
			 t[i].index == 0 ? "main" : "thread", t[i].index);
		names[i] = store + i * NAME_MAX_LEN;
	}
	if (!ret)
		ret = sp_writer_put_range(w->g_threads, SP_TT_NAME, first, n, names);
	free(names);
	free(store);
	return ret;
}

int sp_writer_put_threads(struct sp_writer *w, uint64_t first, uint64_t n,
			  const struct sp_writer_thread *t)
{
	if (!(w->layout.columns & SP_WCOL_THREAD_IDS) || first > w->layout.nthreads ||
	    n > w->layout.nthreads - first)
		return -EINVAL;
	if (n == 0)
		return 0;
	int64_t *col = malloc(n * sizeof *col);
	uint32_t *ranks = malloc(n * sizeof *ranks);
	int8_t *daemon = calloc(n, sizeof *daemon);
	int ret = col && ranks && daemon ? 0 : -ENOMEM;
	for (uint64_t i = 0; !ret && i < n; i++)
		ranks[i] = t[i].rank;
	if (!ret)
		ret = sp_writer_put_range(w->g_threads, SP_TT_RANKS, first, n, ranks);
	for (size_t c = 0; !ret && c < sizeof thread_columns / sizeof *thread_columns; c++) {
		for (uint64_t i = 0; i < n; i++)
			memcpy(&col[i], (const char *)&t[i] + thread_columns[c].off, sizeof *col);
		ret = sp_writer_put_range(w->g_threads, thread_columns[c].name, first, n, col);
	}
	if (!ret)
		ret = sp_writer_put_range(w->g_threads, SP_TT_DAEMON, first, n, daemon);
	if (!ret)
		ret = put_thread_names(w, first, n, t);
	free(col);
	free(ranks);
	free(daemon);
	return ret;
}


/* ---- the raw layout: the same columns as bytes, for writers in place ---- */

static const struct thread_raw {
	enum sp_raw_col col;
	const char *name;
	size_t off, size; /* member of struct sp_writer_thread; size 0: a constant 0 */
} thread_raw[] = {
	{ SP_RAW_TT_RANKS, SP_TT_RANKS, offsetof(struct sp_writer_thread, rank), 4 },
	{ SP_RAW_TT_INDEX, SP_TT_INDEX, offsetof(struct sp_writer_thread, index), 8 },
	{ SP_RAW_TT_IDENT, SP_TT_IDENT, offsetof(struct sp_writer_thread, ident), 8 },
	{ SP_RAW_TT_NATIVE_ID, SP_TT_NATIVE_ID, offsetof(struct sp_writer_thread, native_id), 8 },
	{ SP_RAW_TT_START, SP_TT_START_NS, offsetof(struct sp_writer_thread, start_ns), 8 },
	{ SP_RAW_TT_END, SP_TT_END_NS, offsetof(struct sp_writer_thread, end_ns), 8 },
	{ SP_RAW_TT_CPU, SP_TT_CPU_NS, offsetof(struct sp_writer_thread, cpu_ns), 8 },
	{ SP_RAW_TT_DAEMON, SP_TT_DAEMON, 0, 0 },
};

static const struct thread_raw *find_thread_raw(enum sp_raw_col c)
{
	for (size_t i = 0; i < sizeof thread_raw / sizeof *thread_raw; i++)
		if (thread_raw[i].col == c)
			return &thread_raw[i];
	return NULL;
}

size_t sp_raw_col_size(enum sp_raw_col c)
{
	if (c >= SP_RAW_ROW0 && c < SP_RAW_NCOLS) {
		const struct row_column *rc = &row_columns[c - SP_RAW_ROW0];
		return rc->src == ROW_FILE || rc->src == ROW_TEXT ? 0 : rc->size;
	}
	const struct thread_raw *t = find_thread_raw(c);
	if (t)
		return t->size ? t->size : 1;
	return c == SP_RAW_EV_START || c == SP_RAW_EV_END || c == SP_RAW_EV_THREAD ||
	       c == SP_RAW_MPI_BYTES ? 8 : 4;
}

void sp_writer_pack_rows(enum sp_raw_col c, const struct sp_writer_row *rows, uint64_t n,
			 void *out)
{
	gather_row_column(&row_columns[c - SP_RAW_ROW0], rows, n, out);
}

void sp_writer_pack_threads(enum sp_raw_col c, const struct sp_writer_thread *t, uint64_t n,
			    void *out)
{
	const struct thread_raw *tr = find_thread_raw(c);
	for (uint64_t i = 0; i < n; i++) {
		char *o = (char *)out + i * (tr->size ? tr->size : 1);
		if (tr->size)
			memcpy(o, (const char *)&t[i] + tr->off, tr->size);
		else
			*o = 0;
	}
}

const char *sp_writer_raw_name(const struct sp_writer *w, enum sp_raw_col c, hid_t *ret_group)
{
	if (c >= SP_RAW_ROW0 && c < SP_RAW_NCOLS) {
		const struct row_column *rc = &row_columns[c - SP_RAW_ROW0];
		*ret_group = w->g_index;
		return row_raw(rc, w->layout.columns) ? rc->name : NULL;
	}
	const struct thread_raw *t = find_thread_raw(c);
	if (!t)
		return NULL;
	*ret_group = w->g_threads;
	return (w->layout.columns & SP_WCOL_THREAD_IDS) ? t->name : NULL;
}

int sp_writer_put_row_strings(struct sp_writer *w, uint64_t first, uint64_t n,
			      const struct sp_writer_row *rows)
{
	if (first > w->layout.nrows || n > w->layout.nrows - first)
		return -EINVAL;
	const char **col = malloc((n + 1) * sizeof *col);
	int ret = col ? 0 : -ENOMEM;
	for (size_t c = 0; !ret && n && c < NROW_COLUMNS; c++) {
		const struct row_column *rc = &row_columns[c];
		if (rc->src != ROW_FILE && rc->src != ROW_TEXT)
			continue;
		gather_row_column(rc, rows, n, (char *)col);
		ret = sp_writer_put_range(w->g_index, rc->name, first, n, col);
	}
	free(col);
	return ret;
}

int sp_writer_put_thread_names(struct sp_writer *w, uint64_t first, uint64_t n,
			       const struct sp_writer_thread *threads)
{
	if (!(w->layout.columns & SP_WCOL_THREAD_IDS) || first > w->layout.nthreads ||
	    n > w->layout.nthreads - first)
		return -EINVAL;
	return n ? put_thread_names(w, first, n, threads) : 0;
}
