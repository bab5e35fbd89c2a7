/* SPDX-License-Identifier: MIT */
/*
 * Speedup and weak-scaling charts over several runs (§5 plot_speedup /
 * plot_weak_scaling): regions common to all runs, each run's mean per-call
 * duration pooled over the selected ranks, x from num_ranks,
 * omp_num_threads, total_cores (numeric, sorted, duplicates averaged, ideal
 * line) or any metadata key (input order). One line per region.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "charts.h"
#include "svg.h"

static bool scaling_field(const char *f)
{
	return strcmp(f, "num_ranks") == 0 || strcmp(f, "omp_num_threads") == 0 ||
	       strcmp(f, "total_cores") == 0;
}

static bool meta_number(const struct sp_reader *r, const char *key, double *ret)
{
	const struct sp_meta *m = sp_reader_metadata_find(r, key);

	if (!m)
		return false;
	if (m->type == SP_META_INT)
		*ret = (double)m->i;
	else if (m->type == SP_META_FLOAT)
		*ret = m->f;
	else if (m->type == SP_META_STRING && m->s && *m->s)
		*ret = strtod(m->s, NULL);
	else
		return false;
	return true;
}

/* x of one run; label for the axis. false when the value is missing. */
static bool run_x(const struct sp_reader *r, const char *field, double *x,
		  char *label, size_t size)
{
	const struct sp_meta *m;
	double threads;

	if (strcmp(field, "num_ranks") == 0) {
		*x = sp_reader_num_ranks(r);
	} else if (strcmp(field, "total_cores") == 0) {
		if (!meta_number(r, "total_cores", x)) {
			if (!meta_number(r, "omp_num_threads", &threads))
				return false;
			*x = sp_reader_num_ranks(r) * threads;
		}
	} else if (scaling_field(field)) {
		if (!meta_number(r, field, x))
			return false;
	} else {
		m = sp_reader_metadata_find(r, field);
		if (!m)
			return false;
		if (m->type == SP_META_STRING)
			snprintf(label, size, "%s", m->s ? m->s : "");
		else if (m->type == SP_META_INT)
			snprintf(label, size, "%lld", (long long)m->i);
		else if (m->type == SP_META_FLOAT)
			snprintf(label, size, "%g", m->f);
		else
			snprintf(label, size, "%zu values", m->n);
		return true;
	}
	snprintf(label, size, "%g", *x);
	return true;
}

/* Mean per-call duration of name in r over the selected ranks; NAN if none. */
static double region_mean(struct sp_reader *r, const char *name,
			  const struct sp_selection *sel)
{
	int id = sp_reader_region_find(r, name);
	struct sp_stats st;

	if (id < 0 || sp_reader_region_stats_flags(r, (uint32_t)id, sel, SP_STATS_NO_SPREAD, &st) < 0 ||
	    st.num_calls == 0)
		return NAN;
	return st.average;
}

/* Regions of the first file with calls in every file. */
static int common_regions(const struct chart_file *files, size_t n,
			  const struct sp_selection *sel, struct scale_chart *s)
{
	uint32_t *ids = NULL;
	int nr = sp_reader_regions(files[0].r, sel, &ids);

	if (nr < 0)
		return nr;
	s->regions = calloc((size_t)nr + 1, sizeof(*s->regions));
	if (!s->regions) {
		free(ids);
		return -ENOMEM;
	}
	for (int k = 0; k < nr; k++) {
		const char *name = sp_reader_region_name(files[0].r, ids[k]);
		bool all = true;

		for (size_t i = 0; i < n && all; i++)
			all = !isnan(region_mean(files[i].r, name, sel));
		if (all)
			s->regions[s->n_regions++] = name;
	}
	free(ids);
	return 0;
}

static int alloc_grid(struct scale_chart *s, size_t n)
{
	s->x = calloc(n, sizeof(*s->x));
	s->x_labels = calloc(n, sizeof(*s->x_labels));
	s->value = calloc(s->n_regions * n + 1, sizeof(*s->value));
	s->mean = calloc(s->n_regions * n + 1, sizeof(*s->mean));
	for (size_t i = 0; s->x_labels && i < n; i++)
		if (!(s->x_labels[i] = calloc(1, 64)))
			return -ENOMEM;
	return s->x && s->x_labels && s->value && s->mean ? 0 : -ENOMEM;
}

/* Group runs by x (numeric: sorted unique values, means averaged). */
static void fill_grid(const struct chart_file *files, size_t n, const double *xs,
		      char (*labels)[64], const struct chart_opts *o, struct scale_chart *s)
{
	for (size_t i = 0; i < n; i++) {
		size_t k = s->n_x;

		if (s->numeric) {
			for (k = 0; k < s->n_x && s->x[k] != xs[i]; k++)
				;
		}
		if (k == s->n_x) {
			s->x[k] = s->numeric ? xs[i] : (double)k;
			snprintf(s->x_labels[k], 64, "%s", labels[i]);
			s->n_x++;
		}
		for (size_t g = 0; g < s->n_regions; g++) {
			size_t c = 0;

			for (size_t j = 0; j < i; j++)
				c += s->numeric && xs[j] == xs[i];
			/* running average over runs with the same x */
			s->mean[g * n + k] = (s->mean[g * n + k] * c +
					      region_mean(files[i].r, s->regions[g], o->sel)) /
					     (double)(c + 1);
		}
	}
}

/* Sort numeric columns by x (insertion sort: few runs). */
static void sort_grid(struct scale_chart *s, size_t stride)
{
	for (size_t a = 1; a < s->n_x; a++)
		for (size_t b = a; b > 0 && s->x[b - 1] > s->x[b]; b--) {
			double t = s->x[b];
			char *l = s->x_labels[b];

			s->x[b] = s->x[b - 1];
			s->x[b - 1] = t;
			s->x_labels[b] = s->x_labels[b - 1];
			s->x_labels[b - 1] = l;
			for (size_t g = 0; g < s->n_regions; g++) {
				t = s->mean[g * stride + b];
				s->mean[g * stride + b] = s->mean[g * stride + b - 1];
				s->mean[g * stride + b - 1] = t;
			}
		}
}

int scaling_build(const struct chart_file *files, size_t n, const char *x_field,
		  bool weak, const struct chart_opts *o, struct scale_chart *ret,
		  char *errbuf, size_t errsize)
{
	struct scale_chart s = { .weak = weak, .n_runs = n };
	char (*labels)[64] = calloc(n + 1, sizeof(*labels));
	double *xs = calloc(n + 1, sizeof(*xs));
	int rc = labels && xs ? 0 : -ENOMEM;

	snprintf(s.x_field, sizeof(s.x_field), "%s", x_field);
	s.numeric = s.ideal = scaling_field(x_field);
	if (rc == 0 && n < 2) {
		snprintf(errbuf, errsize, "%s needs at least two files",
			 weak ? "weak_scaling" : "speedup");
		rc = -EINVAL;
	}
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (!run_x(files[i].r, x_field, &xs[i], labels[i], sizeof(labels[i]))) {
			snprintf(errbuf, errsize, "%s: no metadata '%s' for the x axis",
				 sp_reader_path(files[i].r), x_field);
			rc = -EINVAL;
		}
	if (rc == 0)
		rc = common_regions(files, n, o->sel, &s);
	if (rc == 0 && s.n_regions == 0) {
		snprintf(errbuf, errsize, "no region with calls common to all files");
		rc = -EINVAL;
	}
	if (rc == 0)
		rc = alloc_grid(&s, n);
	if (rc == 0) {
		fill_grid(files, n, xs, labels, o, &s);
		if (s.numeric)
			sort_grid(&s, n);
		/* compact to stride n_x (in place: destinations never pass sources) */
		for (size_t g = 0; g < s.n_regions; g++) {
			double base = s.mean[g * n];

			for (size_t k = 0; k < s.n_x; k++) {
				double m = s.mean[g * n + k];

				s.mean[g * s.n_x + k] = m;
				s.value[g * s.n_x + k] = weak ? m / base : base / m;
			}
		}
	}
	free(labels);
	free(xs);
	if (rc < 0) {
		scaling_free(&s);
		return rc;
	}
	*ret = s;
	return 0;
}

void scaling_free(struct scale_chart *s)
{
	for (size_t i = 0; s->x_labels && i < s->n_runs; i++)
		free(s->x_labels[i]);
	free(s->x_labels);
	free(s->x);
	free((void *)s->regions);
	free(s->value);
	free(s->mean);
	memset(s, 0, sizeof(*s));
}

/* Pixel position of x value k: log2 scale for wide numeric ranges. */
static double x_pos(const struct scale_chart *s, size_t k, double left, double width)
{
	double lo = s->x[0], hi = s->x[s->n_x - 1], v = s->x[k];

	if (s->n_x < 2 || hi == lo)
		return left + width / 2;
	if (!s->numeric)
		return left + (double)k / (double)(s->n_x - 1) * width;
	if (lo > 0 && hi / lo >= 8)
		return left + (log2(v) - log2(lo)) / (log2(hi) - log2(lo)) * width;
	return left + (v - lo) / (hi - lo) * width;
}

static void y_axis(FILE *f, double left, double width, double top, double h, double ymax)
{
	double ticks[16];
	int n = svg_ticks(0, ymax, 6, ticks, 16);

	for (int i = 0; i < n; i++) {
		double y = top + h - ticks[i] / ymax * h;
		char buf[32];

		svg_line(f, left, y, left + width, y, "grid");
		snprintf(buf, sizeof(buf), "%g", ticks[i]);
		svg_text(f, left - 6, y + 4, "end", "small", buf);
	}
	svg_line(f, left, top + h, left + width, top + h, "axis");
	svg_line(f, left, top, left, top + h, "axis");
}

static void draw_point(FILE *f, const struct scale_chart *s, size_t g, size_t k,
		       double x, double y, const char *color, const struct chart_opts *o)
{
	char tip[512], m[32];
	double v = s->value[g * s->n_x + k];

	fmt_seconds(m, sizeof(m), s->mean[g * s->n_x + k]);
	snprintf(tip, sizeof(tip), "%s, %s=%s: %s %.3g (mean %s per call)", s->regions[g],
		 s->x_field, s->x_labels[k], s->weak ? "normalized runtime" : "speedup", v, m);
	fprintf(f, "<circle class=\"point\" cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\" fill=\"%s\" "
		   "data-x=\"", x, y, color);
	svg_escape(f, s->x_labels[k]);
	fprintf(f, "\" data-value=\"%.9g\" data-region=\"", v);
	svg_escape(f, s->regions[g]);
	fputs("\" data-tip=\"", f);
	svg_escape(f, tip);
	if (o->standalone) {
		fputs("\"><title>", f);
		svg_escape(f, tip);
		fputs("</title></circle>\n", f);
	} else {
		fputs("\"/>\n", f);
	}
}

static void ideal_line(FILE *f, const struct scale_chart *s, double left, double width,
		       double top, double h, double ymax)
{
	fputs("<polyline class=\"ideal\" points=\"", f);
	for (size_t k = 0; k < s->n_x; k++) {
		double v = s->weak ? 1.0 : s->x[k] / s->x[0];

		fprintf(f, "%.2f,%.2f ", x_pos(s, k, left, width), top + h - v / ymax * h);
	}
	fputs("\"/>\n", f);
}

void scaling_render(FILE *f, const struct scale_chart *s,
		    const struct sp_color_map *colors, const struct chart_opts *o)
{
	double left = 60, top = 44, h = 280, ymax = s->weak ? 1.0 : 1.0, lh;
	const char *title = s->weak ? "Weak scaling: normalized runtime" : "Speedup";
	const char **cols = calloc(s->n_regions + 1, sizeof(*cols));
	char sub[160];

	for (size_t i = 0; i < s->n_regions * s->n_x; i++)
		ymax = isfinite(s->value[i]) && s->value[i] > ymax ? s->value[i] : ymax;
	if (s->ideal && !s->weak && s->x[0] > 0)
		ymax = fmax(ymax, s->x[s->n_x - 1] / s->x[0]);
	ymax *= 1.1;
	for (size_t g = 0; cols && g < s->n_regions; g++)
		cols[g] = sp_color_map_get(colors, s->regions[g]);
	lh = cols ? chart_legend_height(s->regions, s->n_regions, o->width + left) : 0;
	svg_open(f, left + o->width + 30, top + h + 40 + lh, s->weak ? "weak_scaling" : "speedup",
		 o->standalone, title);
	svg_text(f, 10, 18, "start", "title", title);
	snprintf(sub, sizeof(sub), "%s; baseline %s = %s%s", s->weak ?
		 "mean per-call duration / baseline" : "baseline mean per-call duration / mean",
		 s->x_field, s->x_labels[0], s->ideal ? "; dashed: ideal" : "");
	svg_text(f, 10, 33, "start", "small", sub);
	y_axis(f, left, o->width, top, h, ymax);
	for (size_t k = 0; k < s->n_x; k++)
		svg_text(f, x_pos(s, k, left, o->width), top + h + 14, "middle", "small",
			 s->x_labels[k]);
	svg_text(f, left + o->width / 2, top + h + 30, "middle", "label", s->x_field);
	if (s->ideal)
		ideal_line(f, s, left, o->width, top, h, ymax);
	for (size_t g = 0; g < s->n_regions; g++) {
		const char *c = cols && cols[g] ? cols[g] : "#777";

		fputs("<g class=\"line\" data-region=\"", f);
		svg_escape(f, s->regions[g]);
		fprintf(f, "\"><polyline class=\"series\" stroke=\"%s\" points=\"", c);
		for (size_t k = 0; k < s->n_x; k++)
			fprintf(f, "%.2f,%.2f ", x_pos(s, k, left, o->width),
				top + h - s->value[g * s->n_x + k] / ymax * h);
		fputs("\"/>\n", f);
		for (size_t k = 0; k < s->n_x; k++)
			draw_point(f, s, g, k, x_pos(s, k, left, o->width),
				   top + h - s->value[g * s->n_x + k] / ymax * h, c, o);
		fputs("</g>\n", f);
	}
	if (cols)
		chart_legend(f, 10, top + h + 40, o->width + left, s->regions, cols, s->n_regions);
	free((void *)cols);
	svg_close(f);
}
