/* SPDX-License-Identifier: MIT */
/*
 * Bar charts: durations (one horizontal bar per region and file for the
 * total / avg / min / max of per-call durations pooled over the selected
 * ranks) and per-rank imbalance (one small row per region, one bar per rank
 * with its total, the mean over ranks dashed, ranks >= 15 % above the mean
 * outlined).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "charts.h"
#include "sp-array.h"
#include "svg.h"

static const char *const metric_names[] = { "total", "avg", "min", "max" };

const char *dur_metric_name(enum dur_metric m)
{
	return metric_names[m];
}

int dur_metric_parse(const char *name, enum dur_metric *ret)
{
	for (size_t i = 0; i < 4; i++)
		if (strcmp(name, metric_names[i]) == 0) {
			*ret = (enum dur_metric)i;
			return 0;
		}
	return -EINVAL;
}

static double metric_value(const struct sp_stats *st, enum dur_metric m)
{
	switch (m) {
	case DUR_AVG: return st->average;
	case DUR_MIN: return st->min;
	case DUR_MAX: return st->max;
	default: return st->total;
	}
}

struct keyed {
	struct dur_bar bar;
	double gmax;
	size_t gfirst;
};

static int cmp_keyed(const void *pa, const void *pb)
{
	const struct keyed *a = pa, *b = pb;

	if (a->gmax != b->gmax)
		return a->gmax > b->gmax ? -1 : 1;
	if (a->gfirst != b->gfirst)
		return a->gfirst < b->gfirst ? -1 : 1;
	return a->bar.file < b->bar.file ? -1 : a->bar.file > b->bar.file;
}

struct by_name {
	const char *name;
	size_t i;
};

static int cmp_by_name(const void *pa, const void *pb)
{
	const struct by_name *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);

	return c ? c : a->i < b->i ? -1 : a->i > b->i;
}

/* Each bar's group (the bars of one region name, over the files): the
 * group's largest value and the position of its first bar. Sorted by
 * name, so O(n log n) in the bars. */
static int group_keys(const struct dur_bar *bars, size_t nb, struct keyed *keyed)
{
	struct by_name *v = malloc((nb + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < nb; i++)
		v[i] = (struct by_name){ bars[i].region, i };
	qsort(v, nb, sizeof(*v), cmp_by_name);
	for (size_t s = 0, e; s < nb; s = e) {
		double gmax = bars[v[s].i].value;

		for (e = s + 1; e < nb && strcmp(v[e].name, v[s].name) == 0; e++)
			if (bars[v[e].i].value > gmax)
				gmax = bars[v[e].i].value;
		for (size_t k = s; k < e; k++)
			keyed[v[k].i] = (struct keyed){ bars[v[k].i], gmax, v[s].i };
	}
	free(v);
	return 0;
}

static int collect(const struct chart_file *files, size_t n, enum dur_metric m,
		   const struct chart_opts *o, struct dur_bar **bars, size_t *nb)
{
	size_t cap = 0;

	for (size_t i = 0; i < n; i++) {
		uint32_t *ids = NULL;
		int nr = sp_reader_regions(files[i].r, o->sel, &ids);

		for (int k = 0; k < nr; k++) {
			struct sp_stats st;

			if (sp_reader_region_stats_flags(files[i].r, ids[k], o->sel, SP_STATS_NO_SPREAD, &st) < 0) {
				nr = -ENOMEM;
				break;
			}
			if (st.num_calls == 0)
				continue;
			if (*nb == cap) {
				struct dur_bar *nbars;

				cap = cap ? 2 * cap : 64;
				nbars = realloc(*bars, cap * sizeof(*nbars));
				if (!nbars) {
					nr = -ENOMEM;
					break;
				}
				*bars = nbars;
			}
			(*bars)[(*nb)++] = (struct dur_bar){
				i, sp_reader_region_name(files[i].r, ids[k]), metric_value(&st, m) };
		}
		free(ids);
		if (nr < 0)
			return nr;
	}
	return 0;
}

long durations_build(const struct chart_file *files, size_t n,
		     enum dur_metric m, const struct chart_opts *o,
		     struct dur_bar **ret)
{
	struct dur_bar *bars = NULL;
	struct keyed *keyed;
	size_t nb = 0;
	int rc = collect(files, n, m, o, &bars, &nb);

	if (rc == 0 && !(keyed = malloc((nb + 1) * sizeof(*keyed))))
		rc = -ENOMEM;
	if (rc < 0) {
		free(bars);
		return rc;
	}
	if (group_keys(bars, nb, keyed) < 0) {
		free(keyed);
		free(bars);
		return -ENOMEM;
	}
	qsort(keyed, nb, sizeof(*keyed), cmp_keyed);
	for (size_t i = 0; i < nb; i++)
		bars[i] = keyed[i].bar;
	free(keyed);
	*ret = bars;
	return (long)nb;
}

static double label_width(const struct chart_file *files, size_t n,
			  const struct dur_bar *bars, size_t nb)
{
	double w = 80;

	for (size_t i = 0; i < nb; i++) {
		double lw = 6.4 * (double)(strlen(bars[i].region) +
					   (n > 1 ? strlen(files[bars[i].file].label) + 3 : 0));

		if (lw > w)
			w = lw;
	}
	return w > 320 ? 320 : w;
}

void durations_render(FILE *f, const struct chart_file *files, size_t n,
		      enum dur_metric m, const struct dur_bar *bars, size_t nb,
		      const struct chart_opts *o)
{
	double left = label_width(files, n, bars, nb) + 16, vmax = 0, y = 30, h;
	char title[64];

	for (size_t i = 0; i < nb; i++)
		vmax = bars[i].value > vmax ? bars[i].value : vmax;
	vmax = vmax > 0 ? vmax * 1.12 : 1;
	h = 30 + (double)nb * 18 + 36;
	for (size_t i = 1; i < nb; i++)
		h += strcmp(bars[i].region, bars[i - 1].region) ? 4 : 0;
	snprintf(title, sizeof(title), "Durations: %s per region", dur_metric_name(m));
	svg_open(f, left + o->width + 24, h, "durations", o->standalone, title);
	svg_text(f, 10, 18, "start", "title", title);
	svg_axis_x(f, left, left + o->width, h - 36, 0, vmax, h - 36 - 30, true);
	for (size_t i = 0; i < nb; i++) {
		const struct dur_bar *b = &bars[i];
		double w = b->value / vmax * o->width;
		char label[512], shown[512], val[32], tip[640], attrs[64];

		if (i > 0 && strcmp(b->region, bars[i - 1].region))
			y += 4;
		if (n > 1)
			snprintf(label, sizeof(label), "%s [%s]", b->region, files[b->file].label);
		else
			snprintf(label, sizeof(label), "%s", b->region);
		chart_shorten(shown, sizeof(shown), label, left - 16);
		fmt_seconds(val, sizeof(val), b->value);
		snprintf(tip, sizeof(tip), "%s: %s %s", label, dur_metric_name(m), val);
		snprintf(attrs, sizeof(attrs), " data-file=\"%zu\" data-value=\"%.9g\"",
			 b->file, b->value);
		fprintf(f, "<g class=\"row\" data-region=\"");
		svg_escape(f, b->region);
		fputs("\">\n", f);
		svg_text(f, left - 6, y + 12, "end", "label", shown);
		chart_bar(f, o, left, y + 2, w < 0.5 ? 0.5 : w, 14,
			  files[b->file].colors[sp_reader_region_find(files[b->file].r, b->region)],
			  "bar", b->region, tip, attrs);
		svg_text(f, left + w + 4, y + 13, "start", "small", val);
		fputs("</g>\n", f);
		y += 18;
	}
	svg_close(f);
}

/* ---- imbalance ---------------------------------------------------------- */

struct reg_total {
	uint32_t id;
	double total;
};

static int cmp_total(const void *pa, const void *pb)
{
	const struct reg_total *a = pa, *b = pb;

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int push_point(struct imbalance *im, size_t *cap, struct imb_point p)
{
	if (SP_ARRAY_RESERVE(im->points, *cap, im->n_points + 1, 256) < 0)
		return -ENOMEM;
	im->points[im->n_points++] = p;
	return 0;
}

/* The points of one region of one file (ranks with a positive total). */
static int region_points(struct imbalance *im, size_t *cap, const struct chart_file *cf,
			 size_t file, uint32_t id, const struct chart_opts *o)
{
	const uint32_t *ranks;
	size_t nr = sp_reader_ranks(cf->r, &ranks), first = im->n_points, used = 0;
	double sum = 0;

	for (size_t k = 0; k < nr; k++) {
		long row = sp_reader_row_find(cf->r, id, ranks[k]);
		struct sp_stats st;
		int rc;

		if (row < 0 || !sp_selection_match_rank(o->sel, ranks[k]))
			continue;
		if (sp_reader_row_stats_flags(cf->r, (size_t)row, SP_STATS_NO_SPREAD, &st) < 0)
			return -ENOMEM;
		if (!(st.total > 0))
			continue;
		rc = push_point(im, cap, (struct imb_point){
			file, sp_reader_region_name(cf->r, id), ranks[k], st.total, 0 });
		if (rc < 0)
			return rc;
		sum += st.total;
		used++;
	}
	for (size_t k = first; k < im->n_points; k++)
		im->points[k].mean = sum / (double)used;
	return 0;
}

int imbalance_build(const struct chart_file *files, size_t n,
		    const struct chart_opts *o, struct imbalance *ret)
{
	struct imbalance im = { 0 };
	size_t cap = 0;
	int rc = 0;

	for (size_t i = 0; i < n && rc == 0; i++) {
		uint32_t *ids = NULL;
		int nr = sp_reader_regions(files[i].r, o->sel, &ids);
		struct reg_total *t = nr >= 0 ? malloc(((size_t)nr + 1) * sizeof(*t)) : NULL;
		size_t keep = 0;

		rc = nr < 0 ? nr : t ? 0 : -ENOMEM;
		for (int k = 0; rc == 0 && k < nr; k++) {
			struct sp_stats st;

			rc = sp_reader_region_stats_flags(files[i].r, ids[k], o->sel, SP_STATS_NO_SPREAD, &st);
			if (rc == 0 && st.num_calls > 0)
				t[keep++] = (struct reg_total){ ids[k], st.total };
		}
		if (rc == 0)
			qsort(t, keep, sizeof(*t), cmp_total);
		im.regions_total += keep;
		if (o->max_regions && keep > o->max_regions)
			keep = o->max_regions;
		im.regions_drawn += keep;
		for (size_t k = 0; rc == 0 && k < keep; k++)
			rc = region_points(&im, &cap, &files[i], i, t[k].id, o);
		free(t);
		free(ids);
	}
	if (rc < 0) {
		imbalance_free(&im);
		return rc;
	}
	*ret = im;
	return 0;
}

void imbalance_free(struct imbalance *im)
{
	free(im->points);
	memset(im, 0, sizeof(*im));
}

#define IMB_ROW 46.0
#define IMB_LEFT 190.0

/* One region row: points[a, b) share file and region. */
static void imbalance_row(FILE *f, const struct chart_file *cf, const struct imb_point *p,
			  size_t cnt, double y, const struct chart_opts *o)
{
	double vmax = 0, slot = fmin(o->width / (double)cnt, 48), mean = p[0].mean;
	double bh = IMB_ROW - 14, pct_max;
	const char *color = cf->colors[sp_reader_region_find(cf->r, p[0].region)];
	char label[256], pct[64];

	for (size_t k = 0; k < cnt; k++)
		vmax = p[k].value > vmax ? p[k].value : vmax;
	fputs("<g class=\"row\" data-region=\"", f);
	svg_escape(f, p[0].region);
	fputs("\">\n", f);
	chart_shorten(label, sizeof(label), p[0].region, IMB_LEFT - 16);
	svg_text(f, IMB_LEFT - 8, y + 14, "end", "label", label);
	pct_max = mean > 0 ? (vmax / mean - 1) * 100 : 0;
	snprintf(pct, sizeof(pct), "max %+.1f%% vs mean, %zu rank%s",
		 fabs(pct_max) < 0.05 ? 0.0 : pct_max, cnt, cnt == 1 ? "" : "s");
	svg_text(f, IMB_LEFT - 8, y + 28, "end", "small", pct);
	for (size_t k = 0; k < cnt; k++) {
		double h = vmax > 0 ? p[k].value / vmax * bh : 0;
		bool hot = cnt > 1 && p[k].value >= 1.15 * mean;
		char tip[512], v[32], m[32], attrs[128];

		fmt_seconds(v, sizeof(v), p[k].value);
		fmt_seconds(m, sizeof(m), mean);
		snprintf(tip, sizeof(tip), "%s, rank %" PRIu32 ": total %s (mean %s, %+.1f%%)",
			 p[k].region, p[k].rank, v, m, mean > 0 ? (p[k].value / mean - 1) * 100 : 0);
		snprintf(attrs, sizeof(attrs), " data-rank=\"%" PRIu32 "\" data-value=\"%.9g\"",
			 p[k].rank, p[k].value);
		chart_bar(f, o, IMB_LEFT + k * slot + slot * 0.1, y + 4 + bh - h,
			  slot * 0.8 < 0.5 ? 0.5 : slot * 0.8, h, color, hot ? "bar hot" : "bar",
			  p[k].region, tip, attrs);
		if (slot >= 18 || k == 0 || k + 1 == cnt) {
			char r[16];

			snprintf(r, sizeof(r), "%" PRIu32, p[k].rank);
			svg_text(f, IMB_LEFT + (k + 0.5) * slot, y + IMB_ROW - 1, "middle", "small", r);
		}
	}
	if (vmax > 0)
		svg_line(f, IMB_LEFT, y + 4 + bh - mean / vmax * bh, IMB_LEFT + o->width,
			 y + 4 + bh - mean / vmax * bh, "mean");
	fputs("</g>\n", f);
}

void imbalance_render(FILE *f, const struct chart_file *files, size_t n,
		      const struct imbalance *im, const struct chart_opts *o)
{
	double h = 44, y = 44;
	size_t rows = 0;
	char note[160];

	for (size_t k = 0; k < im->n_points; k++)
		rows += k == 0 || im->points[k].file != im->points[k - 1].file ||
			strcmp(im->points[k].region, im->points[k - 1].region);
	h += rows * (IMB_ROW + 6) + (n > 1 ? 18.0 * n : 0) + 10;
	svg_open(f, IMB_LEFT + o->width + 24, h, "imbalance", o->standalone,
		 "Per-rank imbalance");
	svg_text(f, 10, 18, "start", "title", "Per-rank imbalance (total time per rank)");
	snprintf(note, sizeof(note), "dashed: mean over ranks; red outline: >= 15%% above the mean%s",
		 im->regions_drawn < im->regions_total ? "; only the regions with the largest totals" : "");
	svg_text(f, 10, 33, "start", "small", note);
	for (size_t k = 0; k < im->n_points;) {
		size_t e = k;

		while (e < im->n_points && im->points[e].file == im->points[k].file &&
		       strcmp(im->points[e].region, im->points[k].region) == 0)
			e++;
		if (n > 1 && (k == 0 || im->points[k].file != im->points[k - 1].file)) {
			svg_text(f, 10, y + 13, "start", "label", files[im->points[k].file].label);
			y += 18;
		}
		imbalance_row(f, &files[im->points[k].file], im->points + k, e - k, y, o);
		y += IMB_ROW + 6;
		k = e;
	}
	svg_close(f);
}
