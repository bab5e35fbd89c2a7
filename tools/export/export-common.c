/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the export formats: JSON/CSV string output, durations,
 * atomic output files (temp + rename), the --min-duration / time-window
 * filter, thread names, and the per-rank event order used by the traces.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export.h"
#include "sp-duration.h"
#include "sp-array.h"

void ex_json_string(FILE *out, const char *str)
{
	cli_json_escape(out, str);
}

void ex_json_double(FILE *out, double v)
{
	char buf[64];

	cli_format_double(buf, sizeof(buf), v);
	fputs(buf, out);
}

void ex_csv_string(FILE *out, const char *s)
{
	cli_csv_text(out, s);
}

int ex_parse_duration(const char *s, int64_t *ret_ns)
{
	return sp_duration_parse(s, ret_ns); /* the one rule, bare = seconds */
}

int ex_open_output(struct export_ctx *x, const char *path, struct ex_output *o)
{
	memset(o, 0, sizeof(*o));
	if (strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	o->path = strdup(path);
	if (!o->path || asprintf(&o->tmp, "%s.tmp%ld", path, (long)getpid()) < 0) {
		free(o->path);
		cli_error(&x->c, "out of memory");
		return EXIT_USAGE;
	}
	o->f = cli_output_fopen(path, &o->tmp);
	if (!o->f) {
		cli_error(&x->c, "%s: cannot write: %s", path, strerror(errno));
		free(o->path);
		free(o->tmp);
		return EXIT_USAGE;
	}
	return 0;
}

int ex_close_output(struct export_ctx *x, struct ex_output *o, bool ok)
{
	int rc = 0;

	if (o->f == stdout) {
		if (fflush(stdout) != 0) {
			cli_error(&x->c, "<stdout>: write error: %s", strerror(errno));
			rc = EXIT_USAGE;
		}
		return ok ? rc : EXIT_USAGE;
	}
	if (ferror(o->f) || fclose(o->f) != 0) {
		if (ok)
			cli_error(&x->c, "%s: write error: %s", o->path,
				  strerror(errno));
		ok = false;
	}
	if (ok && cli_output_rename(o->tmp, o->path) != 0) {
		cli_error(&x->c, "%s: cannot rename into place: %s", o->path,
			  strerror(errno));
		ok = false;
	}
	if (!ok) {
		cli_output_discard(o->tmp);
		rc = EXIT_USAGE;
	}
	free(o->path);
	free(o->tmp);
	return rc;
}

int ex_make_dir(struct export_ctx *x, const char *dir)
{
	char *p = strdup(dir);
	struct stat st;

	if (!p) {
		cli_error(&x->c, "out of memory");
		return EXIT_USAGE;
	}
	for (char *q = p + 1; ; q++) {
		bool last = *q == '\0';

		if (*q != '/' && !last)
			continue;
		*q = '\0';
		if (mkdir(p, 0777) != 0 && errno != EEXIST) {
			cli_error(&x->c, "%s: cannot create directory: %s", p,
				  strerror(errno));
			free(p);
			return EXIT_USAGE;
		}
		if (last)
			break;
		*q = '/';
	}
	free(p);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		cli_error(&x->c, "%s: not a directory", dir);
		return EXIT_USAGE;
	}
	return 0;
}

bool ex_keep(const struct export_ctx *x, const struct export_file *f,
	     int64_t s, int64_t e)
{
	if (e - s < x->min_duration_ns)
		return false;
	/* Inside or overlapping [lo, hi]; a zero-length call at a bound counts. */
	return e >= f->lo_ns && s <= f->hi_ns &&
	       (e > f->lo_ns || s == e) && (s < f->hi_ns || s == e);
}

void ex_clip(const struct export_file *f, int64_t *s, int64_t *e)
{
	if (*s < f->lo_ns)
		*s = f->lo_ns;
	if (*e > f->hi_ns)
		*e = f->hi_ns;
	if (*e < *s)
		*e = *s;
}

bool ex_has_lanes(const struct export_file *f)
{
	return sp_reader_column(f->r, SP_COL_THREAD_IDS) != NULL;
}

const char *ex_thread_name(const struct export_file *f, uint32_t rank,
			   int64_t lane)
{
	size_t n = sp_reader_num_threads(f->r);

	for (size_t i = 0; i < n; i++) {
		const struct sp_thread *t = sp_reader_thread(f->r, i);

		if (t->rank == rank && t->index == lane && t->name && t->name[0])
			return t->name;
	}
	return NULL;
}

struct order_ctx {
	const int64_t *s, *e, *lane;
	const uint64_t *seq; /* region-order position of each index slot */
};

static int cmp_event(const void *pa, const void *pb, void *arg)
{
	const struct order_ctx *o = arg;
	const uint64_t *a = pa, *b = pb;
	uint64_t ea = a[0], eb = b[0];

	if (o->lane && o->lane[ea] != o->lane[eb])
		return o->lane[ea] < o->lane[eb] ? -1 : 1;
	if (o->s[ea] != o->s[eb])
		return o->s[ea] < o->s[eb] ? -1 : 1;
	if (o->e[ea] != o->e[eb])
		return o->e[ea] > o->e[eb] ? -1 : 1;
	return a[1] < b[1] ? -1 : a[1] > b[1];
}

/* Append the kept events of one row as (event, sequence) pairs. */
static int add_row(const struct export_ctx *x, const struct export_file *f,
		   const struct sp_row *row, uint64_t **pairs, size_t *n,
		   size_t *cap)
{
	const int64_t *s = sp_reader_column(f->r, SP_COL_START_TIMES);
	const int64_t *e = sp_reader_column(f->r, SP_COL_END_TIMES);

	for (uint64_t k = row->offset; k < row->offset + row->count; k++) {
		if (!ex_keep(x, f, s[k], e[k]))
			continue;
		if (*n == *cap) {
			size_t nc = *cap ? 2 * *cap : 1024;
			uint64_t *p = realloc(*pairs, nc * 2 * sizeof(*p));

			if (!p)
				return -ENOMEM;
			*pairs = p;
			*cap = nc;
		}
		(*pairs)[2 * *n] = k;
		(*pairs)[2 * *n + 1] = *n;
		(*n)++;
	}
	return 0;
}

/* The qsort of every kept event: only for rows out of order (hostile
 * files) or with too many lanes. */
static long rank_events_sorted(const struct export_ctx *x,
			       const struct export_file *f, const uint32_t *ids,
			       int nr, uint32_t rank, uint64_t **ret_idx)
{
	struct order_ctx o = {
		.s = sp_reader_column(f->r, SP_COL_START_TIMES),
		.e = sp_reader_column(f->r, SP_COL_END_TIMES),
		.lane = sp_reader_column(f->r, SP_COL_THREAD_IDS),
	};
	uint64_t *pairs = NULL;
	size_t n = 0, cap = 0;

	for (int i = 0; i < nr; i++) {
		long row = sp_reader_row_find(f->r, ids[i], rank);

		if (row >= 0 && add_row(x, f, sp_reader_row(f->r, (size_t)row),
					&pairs, &n, &cap) < 0) {
			free(pairs);
			return -ENOMEM;
		}
	}
	if (n)
		qsort_r(pairs, n, 2 * sizeof(*pairs), cmp_event, &o);
	for (size_t i = 0; i < n; i++)
		pairs[i] = pairs[2 * i];
	*ret_idx = pairs;
	return (long)n;
}

/* A run of the merge: kept events of one row (one lane of it), in row
 * order: idx[0..n), or lo..lo+n when idx is NULL (the whole row kept). */
struct ev_run {
	const uint64_t *idx;
	uint64_t lo, n, pos;
};

struct ev_head {
	int64_t lane, s, e;
	size_t run;
};

#define MAX_ROW_LANES 64

static inline uint64_t run_ev(const struct ev_run *u, uint64_t j)
{
	return u->idx ? u->idx[j] : u->lo + j;
}

/* cmp_event's order: lane, start asc, end desc, then region order (the
 * run index; within a run, row order). */
static inline bool head_before(const struct ev_head *a, const struct ev_head *b)
{
	if (a->lane != b->lane)
		return a->lane < b->lane;
	if (a->s != b->s)
		return a->s < b->s;
	if (a->e != b->e)
		return a->e > b->e;
	return a->run < b->run;
}

static void ev_sift(struct ev_head *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < n && head_before(&h[l], &h[m]))
			m = l;
		if (l + 1 < n && head_before(&h[l + 1], &h[m]))
			m = l + 1;
		if (m == i)
			return;
		struct ev_head t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

struct ev_merge {
	const int64_t *s, *e, *lane;
	struct ev_run *runs;
	size_t n_runs, cap_runs;
	uint64_t *keep;           /* kept events of the filtered rows */
	size_t n_keep;
	size_t total;
};

static int add_run(struct ev_merge *m, const uint64_t *idx, uint64_t lo,
		   uint64_t n)
{
	if (n == 0)
		return 0;
	if (SP_ARRAY_RESERVE(m->runs, m->cap_runs, m->n_runs + 1, 64) < 0)
		return -ENOMEM;
	m->runs[m->n_runs++] = (struct ev_run){ idx, lo, n, 0 };
	m->total += n;
	return 0;
}

/* Is run u in (start asc, end desc) order? (Lanes are split already.) */
static bool run_sorted(const struct ev_merge *m, const struct ev_run *u)
{
	for (uint64_t j = 1; j < u->n; j++) {
		uint64_t a = run_ev(u, j - 1), b = run_ev(u, j);

		if (m->s[b] < m->s[a] || (m->s[b] == m->s[a] && m->e[b] > m->e[a]))
			return false;
	}
	return true;
}

/*
 * The runs of one row: its kept events, split by lane (stable). keep has
 * room for the row's events at m->n_keep. 1 = the row needs the sort
 * (more than MAX_ROW_LANES lanes), 0 or -ENOMEM.
 */
static int row_runs(const struct export_ctx *x, const struct export_file *f,
		    struct ev_merge *m, const struct sp_row *row)
{
	int64_t lanes[MAX_ROW_LANES];
	size_t n_lanes = 0, kept = 0, first = m->n_keep;
	uint64_t hi = row->offset + row->count;

	for (uint64_t k = row->offset; k < hi; k++) {
		if (!ex_keep(x, f, m->s[k], m->e[k]))
			continue;
		m->keep[m->n_keep + kept++] = k;
		if (!m->lane)
			continue;
		size_t l = 0;

		while (l < n_lanes && lanes[l] != m->lane[k])
			l++;
		if (l == n_lanes) {
			if (n_lanes == MAX_ROW_LANES)
				return 1;
			lanes[n_lanes++] = m->lane[k];
		}
	}
	if (n_lanes <= 1) {
		if (kept == row->count)
			return add_run(m, NULL, row->offset, kept);
		m->n_keep += kept;
		return add_run(m, m->keep + first, 0, kept);
	}
	/* Several lanes: one run per lane (stable), staged after the kept
	 * events (keep has room for twice the rank's events). */
	{
		uint64_t *src = m->keep + first, *dst = src + kept;
		size_t at = 0;
		int rc = 0;

		for (size_t l = 0; l < n_lanes; l++)
			for (size_t j = 0; j < kept; j++)
				if (m->lane[src[j]] == lanes[l])
					dst[at++] = src[j];
		memcpy(src, dst, kept * sizeof(*src));
		at = 0;
		for (size_t l = 0; l < n_lanes && rc == 0; l++) {
			size_t from = at;

			while (at < kept && m->lane[src[at]] == lanes[l])
				at++;
			rc = add_run(m, src + from, 0, at - from);
		}
		m->n_keep += kept;
		return rc;
	}
}

/*
 * Events of one rank in export order without sorting them: each row's
 * events are in entry order already (start asc; end desc among equal
 * starts), so a k-way merge of the rows (split by lane) gives cmp_event's
 * order. Falls back to the sort for rows that are not in that order.
 */
long ex_rank_events(const struct export_ctx *x, const struct export_file *f,
		    uint32_t rank, uint64_t **ret_idx)
{
	struct ev_merge m = {
		.s = sp_reader_column(f->r, SP_COL_START_TIMES),
		.e = sp_reader_column(f->r, SP_COL_END_TIMES),
		.lane = sp_reader_column(f->r, SP_COL_THREAD_IDS),
	};
	uint32_t *ids = NULL;
	uint64_t *out = NULL, events = 0;
	struct ev_head *heap = NULL;
	size_t nh = 0, at = 0;
	int nr = sp_reader_regions(f->r, x->c.sel, &ids), rc = 0;
	long ret;

	if (nr < 0)
		return nr;
	for (int i = 0; i < nr; i++) {
		long row = sp_reader_row_find(f->r, ids[i], rank);

		if (row >= 0)
			events += sp_reader_row(f->r, (size_t)row)->count;
	}
	m.keep = malloc((2 * events + 1) * sizeof(*m.keep));
	rc = m.keep ? 0 : -ENOMEM;
	for (int i = 0; i < nr && rc == 0; i++) {
		long row = sp_reader_row_find(f->r, ids[i], rank);

		if (row >= 0)
			rc = row_runs(x, f, &m, sp_reader_row(f->r, (size_t)row));
	}
	for (size_t r = 0; r < m.n_runs && rc == 0; r++)
		if (!run_sorted(&m, &m.runs[r]))
			rc = 1;
	if (rc == 0 && !(out = malloc((m.total + 1) * sizeof(*out))))
		rc = -ENOMEM;
	if (rc == 0 && !(heap = malloc((m.n_runs + 1) * sizeof(*heap))))
		rc = -ENOMEM;
	for (size_t r = 0; r < m.n_runs && rc == 0; r++) {
		uint64_t k = run_ev(&m.runs[r], 0);

		heap[nh++] = (struct ev_head){ m.lane ? m.lane[k] : 0, m.s[k], m.e[k], r };
	}
	for (size_t i = nh; i-- > 0;)
		ev_sift(heap, nh, i);
	while (rc == 0 && nh > 0) {
		struct ev_run *u = &m.runs[heap[0].run];

		out[at++] = run_ev(u, u->pos);
		if (++u->pos == u->n) {
			heap[0] = heap[--nh];
		} else {
			uint64_t k = run_ev(u, u->pos);

			heap[0].s = m.s[k];
			heap[0].e = m.e[k];
		}
		ev_sift(heap, nh, 0);
	}
	free(heap);
	free(m.runs);
	free(m.keep);
	if (rc == 1) {
		free(out);
		ret = rank_events_sorted(x, f, ids, nr, rank, ret_idx);
	} else if (rc < 0) {
		free(out);
		ret = rc;
	} else {
		*ret_idx = out;
		ret = (long)at;
	}
	free(ids);
	return ret;
}

uint64_t ex_estimate_bytes(const struct export_ctx *x, const struct export_file *f)
{
	const int64_t *s = sp_reader_column(f->r, SP_COL_START_TIMES);
	const int64_t *e = sp_reader_column(f->r, SP_COL_END_TIMES);
	bool filtered = x->min_duration_ns > 0 || x->has_start || x->has_end;
	size_t n = sp_reader_num_rows(f->r);
	uint64_t bytes = 0;

	if (!x->format->call_bytes)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const struct sp_row *row = sp_reader_row(f->r, i);
		const char *name = sp_reader_region_name(f->r, row->region);
		uint64_t kept = 0;

		if (!row->count || !sp_selection_match_rank(x->c.sel, row->rank) ||
		    !sp_selection_match_name(x->c.sel, name))
			continue;
		if (!filtered)
			kept = row->count;
		for (uint64_t k = row->offset; filtered && k < row->offset + row->count; k++)
			kept += ex_keep(x, f, s[k], e[k]);
		bytes += kept * (x->format->call_bytes +
				 (x->format->call_names ? strlen(name) : 0));
	}
	return bytes;
}

int ex_reader_error(struct export_ctx *x, const struct export_file *f, int rc)
{
	const char *msg = sp_reader_last_error();

	if (rc == -ENOMEM)
		cli_error(&x->c, "%s: out of memory", f->path);
	else if (msg[0])
		cli_error(&x->c, "%s", msg);
	else
		cli_error(&x->c, "%s: %s", f->path, strerror(-rc));
	return EXIT_USAGE;
}
