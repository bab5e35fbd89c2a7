/* SPDX-License-Identifier: MIT */
/*
 * plot-data speedup and weak_scaling (two files or more): per region
 * common to every file, the mean per-call duration pooled over the selected
 * ranks, against an x value per file (--x: num_ranks (default),
 * omp_num_threads, total_cores, or any metadata key). For the three scaling
 * fields the x values are sorted numerically, equal x values averaged and
 * the smallest is the baseline; other keys keep input order and the first
 * file is the baseline. speedup = baseline mean / mean; normalized_runtime
 * = mean / baseline mean.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "export-plot.h"

int pd_speedup(struct export_ctx *x, const struct sp_color_map *colors);
int pd_weak_scaling(struct export_ctx *x, const struct sp_color_map *colors);

struct point {
	double x;          /* numeric x (scaling fields) */
	const char *xs;    /* x as text for other metadata keys */
	double mean;       /* NAN when the region has no calls */
};

static bool scaling_field(const char *field)
{
	return !strcmp(field, "num_ranks") || !strcmp(field, "omp_num_threads") ||
	       !strcmp(field, "total_cores");
}

static const char *x_label(const char *field)
{
	if (!strcmp(field, "num_ranks"))
		return "Number of MPI ranks";
	if (!strcmp(field, "omp_num_threads"))
		return "OpenMP threads";
	if (!strcmp(field, "total_cores"))
		return "Total cores";
	return field;
}

static double meta_number(const struct sp_reader *r, const char *key, double dflt)
{
	const struct sp_meta *m = sp_reader_metadata_find(r, key);

	if (!m)
		return dflt;
	if (m->type == SP_META_INT)
		return (double)m->i;
	if (m->type == SP_META_FLOAT)
		return m->f;
	return m->type == SP_META_STRING ? strtod(m->s, NULL) : dflt;
}

/* x of one file. 0, or EXIT_USAGE when the metadata key is missing. */
static int file_x(struct export_ctx *x, struct export_file *f,
		  const char *field, struct point *p)
{
	const struct sp_meta *m;
	double ranks = sp_reader_num_ranks(f->r);

	p->xs = NULL;
	if (!strcmp(field, "num_ranks")) {
		p->x = ranks;
		return 0;
	}
	if (!strcmp(field, "omp_num_threads") || !strcmp(field, "total_cores")) {
		p->x = meta_number(f->r, "omp_num_threads", 1.0);
		if (!strcmp(field, "total_cores"))
			p->x = meta_number(f->r, "total_cores", ranks * p->x);
		return 0;
	}
	m = sp_reader_metadata_find(f->r, field);
	if (!m || m->type == SP_META_STRINGS) {
		cli_error(&x->c, "%s: no metadata key '%s' usable as --x", f->path, field);
		return EXIT_USAGE;
	}
	p->x = m->type == SP_META_INT ? (double)m->i : m->f;
	p->xs = m->type == SP_META_STRING ? m->s : NULL;
	return 0;
}

static int cmp_x(const void *a, const void *b)
{
	double u = *(const double *)a, v = *(const double *)b;

	return u < v ? -1 : u > v;
}

/* Points of one region: (x, mean) per file, or per distinct sorted x. */
static size_t region_points(struct export_ctx *x, const char *name,
			    const char *field, struct point *pts)
{
	size_t n = 0;

	for (size_t i = 0; i < x->n_files; i++) {
		struct export_file *f = &x->files[i];
		int id = sp_reader_region_find(f->r, name);
		struct sp_stats st;

		file_x(x, f, field, &pts[i]);
		pts[i].mean = id >= 0 && sp_reader_region_stats(f->r, (uint32_t)id,
				x->c.sel, &st) == 0 && st.num_calls ? st.average : NAN;
	}
	if (!scaling_field(field))
		return x->n_files;
	/* Average the means of equal x values, sorted by x. */
	double *xs = malloc(x->n_files * sizeof(*xs));
	struct point *out = malloc(x->n_files * sizeof(*out));

	for (size_t i = 0; xs && i < x->n_files; i++)
		xs[i] = pts[i].x;
	if (!xs || !out) {
		free(xs);
		free(out);
		return 0;
	}
	qsort(xs, x->n_files, sizeof(*xs), cmp_x);
	for (size_t i = 0; i < x->n_files; i++) {
		double sum = 0;
		size_t cnt = 0;

		if (i && xs[i] == xs[i - 1])
			continue;
		for (size_t k = 0; k < x->n_files; k++)
			if (pts[k].x == xs[i]) {
				sum += pts[k].mean;
				cnt++;
			}
		out[n].x = xs[i];
		out[n].xs = NULL;
		out[n++].mean = sum / (double)cnt;
	}
	memcpy(pts, out, n * sizeof(*out));
	free(xs);
	free(out);
	return n;
}

/* Names present in every file, in the first file's region order. */
static bool common_region(struct export_ctx *x, const char *name)
{
	for (size_t i = 1; i < x->n_files; i++)
		if (sp_reader_region_find(x->files[i].r, name) < 0)
			return false;
	return true;
}

static int scaling(struct export_ctx *x, const struct sp_color_map *colors,
		   const char *kind, const char *value_key, bool speedup)
{
	const char *field = x->pd.x_field ? x->pd.x_field : "num_ranks";
	const char *cols[] = { "region", field, value_key };
	struct point *pts = calloc(x->n_files, sizeof(*pts)), base = { 0 };
	uint32_t *ids = NULL;
	int n = sp_reader_regions(x->files[0].r, x->c.sel, &ids), rc = 0, crc;
	struct pd_doc d;

	for (size_t i = 0; rc == 0 && i < x->n_files; i++)
		rc = file_x(x, &x->files[i], field, &base);
	if (rc || !pts || n < 0 || (rc = pd_open(x, &d, kind, "points", cols, 3, colors))) {
		free(pts);
		free(ids);
		return rc ? rc : ex_reader_error(x, &x->files[0], -ENOMEM);
	}
	for (int k = 0; k < n; k++) {
		const char *name = sp_reader_region_name(x->files[0].r, ids[k]);
		size_t np;

		if (!common_region(x, name))
			continue;
		np = region_points(x, name, field, pts);
		base = pts[0];
		for (size_t i = 0; i < np; i++) {
			pd_row(&d);
			pd_str(&d, name);
			if (pts[i].xs)
				pd_str(&d, pts[i].xs);
			else if (pts[i].x == floor(pts[i].x) && fabs(pts[i].x) < 1e15)
				pd_int(&d, (long long)pts[i].x);
			else
				pd_dbl(&d, pts[i].x);
			pd_dbl(&d, speedup ? base.mean / pts[i].mean : pts[i].mean / base.mean);
		}
	}
	pd_extra_key(&d, "options");
	if (d.json) {
		fputs("{\"x_field\": ", d.out);
		ex_json_string(d.out, field);
		fputs(", \"x_label\": ", d.out);
		ex_json_string(d.out, x_label(field));
		fputs(", \"baseline\": ", d.out);
		/* The baseline: the first point once sorted (or the first file). */
		region_points(x, "", field, pts);
		if (pts[0].xs)
			ex_json_string(d.out, pts[0].xs);
		else if (pts[0].x == floor(pts[0].x) && fabs(pts[0].x) < 1e15)
			fprintf(d.out, "%lld", (long long)pts[0].x);
		else
			ex_json_double(d.out, pts[0].x);
		fputc('}', d.out);
	}
	crc = pd_close(&d, true);
	free(pts);
	free(ids);
	return crc;
}

int pd_speedup(struct export_ctx *x, const struct sp_color_map *colors)
{
	return scaling(x, colors, "speedup", "speedup", true);
}

int pd_weak_scaling(struct export_ctx *x, const struct sp_color_map *colors)
{
	return scaling(x, colors, "weak_scaling", "normalized_runtime", false);
}
