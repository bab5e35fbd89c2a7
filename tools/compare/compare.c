/* SPDX-License-Identifier: MIT */
/*
 * Shared comparison logic of diff and check: the metric of a region (over
 * the selected ranks), the rows of §4.4 with their sort and threshold rules,
 * run titles, and the framed table the three comparison commands print.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli-common.h"
#include "compare.h"
#include "table.h"

static const char *const metric_names[] = {
	"total", "avg", "min", "max", "p50", "p95", "p99", "imbalance", "calls",
};
static const char *const metric_labels[] = {
	"total [s]", "avg [s]", "min [s]", "max [s]", "p50 [s]", "p95 [s]",
	"p99 [s]", "imbalance [%]", "calls",
};

int cmp_metric_parse(const char *name, enum cmp_metric *ret)
{
	for (size_t i = 0; i < sizeof(metric_names) / sizeof(*metric_names); i++)
		if (strcmp(name, metric_names[i]) == 0) {
			*ret = (enum cmp_metric)i;
			return 0;
		}
	return -EINVAL;
}

const char *cmp_metric_name(enum cmp_metric m) { return metric_names[m]; }
const char *cmp_metric_label(enum cmp_metric m) { return metric_labels[m]; }

bool cmp_metric_value(const struct sp_stats *st, enum cmp_metric m,
		      double *ret)
{
	bool pct = m == CMP_P50 || m == CMP_P95 || m == CMP_P99;

	if (st->num_calls == 0 || (pct && !st->has_percentiles))
		return false;
	switch (m) {
	case CMP_TOTAL: *ret = st->total; break;
	case CMP_AVG: *ret = st->average; break;
	case CMP_MIN: *ret = st->min; break;
	case CMP_MAX: *ret = st->max; break;
	case CMP_P50: *ret = st->p50; break;
	case CMP_P95: *ret = st->p95; break;
	case CMP_P99: *ret = st->p99; break;
	case CMP_IMBALANCE: *ret = st->rank_imbalance_pct; break;
	case CMP_CALLS: *ret = (double)st->num_calls; break;
	}
	return true;
}

int cmp_side_collect(struct sp_reader *r, const struct sp_selection *sel,
		     enum cmp_metric m, struct cmp_side *ret)
{
	struct cmp_side s = { 0 };
	uint32_t *ids = NULL;
	int n = sp_reader_regions(r, sel, &ids), rc = 0;

	if (n < 0)
		return n;
	s.names = calloc((size_t)n + 1, sizeof(*s.names));
	s.values = calloc((size_t)n + 1, sizeof(*s.values));
	if (!s.names || !s.values)
		rc = -ENOMEM;
	for (int i = 0; i < n && rc == 0; i++) {
		struct sp_stats st;
		double v;

		rc = sp_reader_region_stats(r, ids[i], sel, &st);
		if (rc < 0)
			break;
		s.names[i] = strdup(sp_reader_region_name(r, ids[i]));
		if (!s.names[i]) {
			rc = -ENOMEM;
			break;
		}
		s.values[i] = cmp_metric_value(&st, m, &v) ? v : NAN;
		s.n++;
	}
	free(ids);
	if (rc < 0) {
		cmp_side_free(&s);
		return rc;
	}
	*ret = s;
	return 0;
}

void cmp_side_free(struct cmp_side *side)
{
	for (size_t i = 0; i < side->n; i++)
		free(side->names[i]);
	free(side->names);
	free(side->values);
	memset(side, 0, sizeof(*side));
}

bool cmp_side_get(const struct cmp_side *side, const char *name, double *ret)
{
	for (size_t i = 0; i < side->n; i++)
		if (strcmp(side->names[i], name) == 0) {
			if (isnan(side->values[i]))
				return false;
			*ret = side->values[i];
			return true;
		}
	return false;
}

/* ---- diff rows ------------------------------------------------------------ */

int cmp_sort_parse(const char *name, enum cmp_sort *ret)
{
	static const char *const names[] = { "delta", "pct", "name" };

	for (int i = 0; i < 3; i++)
		if (strcmp(name, names[i]) == 0) {
			*ret = (enum cmp_sort)i;
			return 0;
		}
	return -EINVAL;
}

static enum cmp_sort sort_key; /* qsort has no context argument */

static int by_name(const void *x, const void *y)
{
	return strcmp(((const struct cmp_row *)x)->name,
		      ((const struct cmp_row *)y)->name);
}

static double magnitude(const struct cmp_row *r)
{
	if (sort_key == CMP_SORT_PCT)
		return r->has_pct ? fabs(r->pct) : -1;
	return fabs(r->delta);
}

/* Descending magnitude; ties by name, which is the stable sort's result. */
static int by_magnitude(const void *x, const void *y)
{
	double a = magnitude(x), b = magnitude(y);

	if (a != b)
		return a > b ? -1 : 1;
	return by_name(x, y);
}

static bool seen(const struct cmp_row *rows, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(rows[i].name, name) == 0)
			return true;
	return false;
}

static void fill_row(struct cmp_row *r, const char *name,
		     const struct cmp_side *a, const struct cmp_side *b)
{
	memset(r, 0, sizeof(*r));
	r->name = name;
	r->has_a = cmp_side_get(a, name, &r->a);
	r->has_b = cmp_side_get(b, name, &r->b);
	r->delta = (r->has_b ? r->b : 0) - (r->has_a ? r->a : 0);
	r->has_pct = r->has_a && r->a != 0;
	r->pct = r->has_pct ? r->delta / r->a * 100 : NAN;
}

int cmp_diff_build(const struct cmp_side *a, const struct cmp_side *b,
		   double threshold, enum cmp_sort sort, struct cmp_diff *ret)
{
	struct cmp_row *rows = calloc(a->n + b->n + 1, sizeof(*rows));
	size_t n = 0;

	if (!rows)
		return -ENOMEM;
	for (int side = 0; side < 2; side++) {
		const struct cmp_side *s = side ? b : a;

		for (size_t i = 0; i < s->n; i++) {
			struct cmp_row r;

			if (seen(rows, n, s->names[i]))
				continue;
			fill_row(&r, s->names[i], a, b);
			if (!r.has_a && !r.has_b)
				continue;
			if (!isnan(threshold) && r.has_pct &&
			    fabs(r.pct) < threshold)
				continue;
			rows[n++] = r;
		}
	}
	sort_key = sort;
	qsort(rows, n, sizeof(*rows), sort == CMP_SORT_NAME ? by_name : by_magnitude);
	ret->n = n;
	ret->rows = rows;
	return 0;
}

void cmp_diff_free(struct cmp_diff *diff)
{
	free(diff->rows);
	diff->rows = NULL;
	diff->n = 0;
}

/* ---- formatting ------------------------------------------------------------ */

void cmp_format_value(char *buf, size_t size, bool has, double v,
		      enum cmp_metric m)
{
	if (!has)
		snprintf(buf, size, "-");
	else if (m == CMP_CALLS)
		snprintf(buf, size, "%lld", (long long)v);
	else
		snprintf(buf, size, "%.6g", v);
}

void cmp_format_delta(char *buf, size_t size, double v, enum cmp_metric m)
{
	const char *sign = v >= 0 ? "+" : "";

	if (m == CMP_CALLS)
		snprintf(buf, size, "%s%lld", sign, (long long)v);
	else
		snprintf(buf, size, "%s%.6g", sign, v);
}

void cmp_format_pct(char *buf, size_t size, bool has, double v)
{
	if (!has)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%s%.4g%%", v >= 0 ? "+" : "", v);
}

static void print_only_in(FILE *f, const struct cmp_diff *d, bool in_a)
{
	bool any = false;

	for (size_t i = 0; i < d->n; i++) {
		const struct cmp_row *r = &d->rows[i];

		if (in_a ? r->has_b : r->has_a)
			continue;
		char name[512];

		tbl_escape(name, sizeof name, r->name);
		fprintf(f, "%s%s", any ? ", " : (in_a ? "Only in a: " : "Only in b: "), name);
		any = true;
	}
	if (any)
		fputc('\n', f);
}

void cmp_print_diff(FILE *f, const struct cmp_diff *d, enum cmp_metric m,
		    const char *title)
{
	char ha[64], hb[64], cells[4][64];
	const char *headers[5] = { "region", ha, hb, "delta", "delta [%]" };
	struct cmp_table t;

	fprintf(f, "%s\n", title);
	if (d->n == 0) {
		fprintf(f, "  (no regions to compare)\n");
		return;
	}
	snprintf(ha, sizeof(ha), "%s (a)", cmp_metric_label(m));
	snprintf(hb, sizeof(hb), "%s (b)", cmp_metric_label(m));
	if (cmp_table_init(&t, 5, headers) < 0)
		return;
	for (size_t i = 0; i < d->n; i++) {
		const struct cmp_row *r = &d->rows[i];
		const char *row[5] = { r->name, cells[0], cells[1], cells[2], cells[3] };

		cmp_format_value(cells[0], 64, r->has_a, r->a, m);
		cmp_format_value(cells[1], 64, r->has_b, r->b, m);
		cmp_format_delta(cells[2], 64, r->delta, m);
		cmp_format_pct(cells[3], 64, r->has_pct, r->pct);
		cmp_table_add(&t, row);
	}
	cmp_table_print(&t, f);
	cmp_table_free(&t);
	print_only_in(f, d, true);
	print_only_in(f, d, false);
}

/* ---- run titles --------------------------------------------------------------- */

const char *cmp_run_label(const struct sp_reader *r)
{
	const struct sp_meta *m = sp_reader_metadata_find(r, "label");

	return m && m->type == SP_META_STRING && m->s && m->s[0] ? m->s : NULL;
}

void cmp_run_title(const struct sp_reader *r, char *buf, size_t size)
{
	const char *path = sp_reader_path(r), *label = cmp_run_label(r);
	unsigned n = sp_reader_num_ranks(r);
	char cwd[4096];
	size_t len;

	/* Like os.path.relpath for files below the working directory. */
	if (path[0] == '/' && getcwd(cwd, sizeof(cwd))) {
		len = strlen(cwd);
		if (strncmp(path, cwd, len) == 0 && path[len] == '/')
			path += len + 1;
	}
	snprintf(buf, size, "%s%s%s (%u %s)", label ? label : "",
		 label ? " - " : "", path, n, n == 1 ? "rank" : "ranks");
}

void cmp_json_value(struct json_writer *w, bool has, double v,
		    enum cmp_metric m)
{
	if (!has)
		jw_null(w);
	else if (m == CMP_CALLS)
		jw_int(w, (long long)v);
	else
		jw_double(w, v);
}

void cmp_json_run(struct json_writer *w, const char *key,
		  const struct sp_reader *r)
{
	char title[4200];
	const char *label = cmp_run_label(r);

	cmp_run_title(r, title, sizeof(title));
	jw_key(w, key);
	jw_begin_object(w);
	jw_key(w, "file"); jw_string(w, sp_reader_path(r));
	jw_key(w, "label");
	if (label)
		jw_string(w, label);
	else
		jw_null(w);
	jw_key(w, "num_ranks"); jw_int(w, sp_reader_num_ranks(r));
	jw_key(w, "title"); jw_string(w, title);
	jw_end_object(w);
}

/* ---- comparable runs ---------------------------------------------------------- */

/* The stored command line as one string, arguments joined by spaces
 * (NULL when the file has none). */
static char *command_line(const struct sp_reader *r)
{
	const struct sp_meta *m = sp_reader_metadata_find(r, "command_line");
	if (!m || (m->type != SP_META_STRINGS && m->type != SP_META_STRING))
		return NULL;
	if (m->type == SP_META_STRING)
		return strdup(m->s ? m->s : "");
	size_t len = 1;
	for (size_t i = 0; i < m->n; i++)
		len += strlen(m->strv[i]) + 1;
	char *s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (size_t i = 0; i < m->n; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, m->strv[i]);
	}
	return s;
}

static int64_t rank_count(const struct sp_reader *r)
{
	const struct sp_meta *m = sp_reader_metadata_find(r, "mpi_size");
	if (m && m->type == SP_META_INT && m->i > 0)
		return m->i;
	return (int64_t)sp_reader_num_ranks(r);
}

int cmp_warn_mismatch(const struct cli_common *c, const char *file_a,
		      const struct sp_reader *a, const char *file_b,
		      const struct sp_reader *b, bool ranks)
{
	int n = 0;
	char *ca = command_line(a), *cb = command_line(b);
	if (ca && cb && strcmp(ca, cb) != 0) {
		fprintf(stderr, "scope-profiler %s: warning: the runs have different command "
			"lines:\n  %s: %s\n  %s: %s\n", c->command, file_a, ca, file_b, cb);
		n++;
	}
	free(ca);
	free(cb);
	int64_t ra = rank_count(a), rb = rank_count(b);
	if (ranks && ra > 0 && rb > 0 && ra != rb) {
		fprintf(stderr, "scope-profiler %s: warning: the runs have different rank counts: "
			"%s: %" PRId64 ", %s: %" PRId64 "\n", c->command, file_a, ra, file_b, rb);
		n++;
	}
	return n;
}

/* ---- framed table -------------------------------------------------------------- */

int cmp_table_init(struct cmp_table *t, size_t ncols,
		   const char *const *headers)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	t->left = 1;
	return cmp_table_add(t, headers);
}

int cmp_table_add(struct cmp_table *t, const char *const *cells)
{
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		char **c = realloc(t->cells, cap * t->ncols * sizeof(*c));

		if (!c)
			return -ENOMEM;
		t->cells = c;
		t->cap = cap;
	}
	for (size_t i = 0; i < t->ncols; i++) {
		char *s = strdup(cells[i] ? cells[i] : "");

		if (!s) {
			while (i-- > 0)
				free(t->cells[t->nrows * t->ncols + i]);
			return -ENOMEM;
		}
		t->cells[t->nrows * t->ncols + i] = s;
	}
	t->nrows++;
	return 0;
}

/* Drawn by the CLI's table module (tools/cli/table.c): aligned, escaped,
 * the first column (names) elided to the terminal width. Row 0 is the
 * header. */
void cmp_table_print(const struct cmp_table *t, FILE *f)
{
	struct tbl_style st;
	struct tbl *tb;

	if (t->nrows == 0)
		return;
	tbl_style_init(&st, false, false);
	tb = tbl_create(&st);
	if (!tb)
		return;
	for (size_t c = 0; c < t->ncols; c++)
		tbl_column(tb, t->cells[c], (t->left >> c & 1) ? TBL_LEFT : TBL_RIGHT, c == 0);
	for (size_t r = 1; r < t->nrows; r++) {
		if (tbl_row(tb, 0, ' ') < 0)
			break;
		for (size_t c = 0; c < t->ncols; c++)
			tbl_cell(tb, (int)c, t->cells[r * t->ncols + c]);
	}
	tbl_print(tb, f);
	tbl_destroy(tb);
}

void cmp_table_free(struct cmp_table *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}
