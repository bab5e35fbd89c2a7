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

void ex_seconds(FILE *out, int64_t ns)
{
	ex_json_double(out, (double)ns / 1e9);
}

void ex_csv_string(FILE *out, const char *s)
{
	if (!s)
		s = "";
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

int ex_parse_duration(const char *s, int64_t *ret_ns)
{
	static const struct { const char *unit; double scale; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1e9 },
	};
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !isfinite(v) || v < 0)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(end, units[i].unit) == 0) {
			double ns = v * units[i].scale;

			if (ns > 9.2e18)
				return -EINVAL;
			*ret_ns = (int64_t)llround(ns);
			return 0;
		}
	return -EINVAL;
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
	o->f = fopen(o->tmp, "w");
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
	if (ok && rename(o->tmp, o->path) != 0) {
		cli_error(&x->c, "%s: cannot rename into place: %s", o->path,
			  strerror(errno));
		ok = false;
	}
	if (!ok) {
		unlink(o->tmp);
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

long ex_rank_events(const struct export_ctx *x, const struct export_file *f,
		    uint32_t rank, uint64_t **ret_idx)
{
	struct order_ctx o = {
		.s = sp_reader_column(f->r, SP_COL_START_TIMES),
		.e = sp_reader_column(f->r, SP_COL_END_TIMES),
		.lane = sp_reader_column(f->r, SP_COL_THREAD_IDS),
	};
	uint32_t *ids = NULL;
	uint64_t *pairs = NULL;
	size_t n = 0, cap = 0;
	int nr = sp_reader_regions(f->r, x->c.sel, &ids);

	if (nr < 0)
		return nr;
	for (int i = 0; i < nr; i++) {
		long row = sp_reader_row_find(f->r, ids[i], rank);

		if (row >= 0 && add_row(x, f, sp_reader_row(f->r, (size_t)row),
					&pairs, &n, &cap) < 0) {
			free(ids);
			free(pairs);
			return -ENOMEM;
		}
	}
	free(ids);
	if (n)
		qsort_r(pairs, n, 2 * sizeof(*pairs), cmp_event, &o);
	for (size_t i = 0; i < n; i++)
		pairs[i] = pairs[2 * i];
	*ret_idx = pairs;
	return (long)n;
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
