/* SPDX-License-Identifier: MIT */
/*
 * The charts of `plot` and `report`: each chart is computed as a small model
 * (lanes and bars, bar lists, points) and then rendered as SVG, so the same
 * drawing appears in the .svg files and inline in the HTML report. Every
 * drawn element of a chart carries class="bar" (or "point") and
 * data-region, which the report's search box and the tests use.
 */
#ifndef SP_CHARTS_H
#define SP_CHARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "colors.h"
#include "scope-profiler-reader.h"

/** One input profile of a chart. */
struct chart_file {
	struct sp_reader *r;
	char *label;          /* display label: metadata label or file stem, de-duplicated */
	const char **colors;  /* per region id; NULL for regions not drawn */
};

/** Options shared by the charts. */
struct chart_opts {
	const struct sp_selection *sel;
	double width;         /* plot area width in pixels */
	size_t max_bars;      /* timeline: more calls than this => per-pixel aggregation */
	size_t max_lanes;     /* Gantt: at most this many ranks drawn */
	size_t max_regions;   /* imbalance: at most this many regions (largest total) */
	bool standalone;      /* complete .svg document (namespace, style, <title>s) */
};

/** Defaults of chart_opts (sel NULL). */
void chart_opts_default(struct chart_opts *o);

/**
 * Load labels and colours of files[0..n) (r already set): one colour map
 * over all files in first-seen region order (colors.h).
 * @param palette  NULL for the default (tab20)
 * @return 0 or -ENOMEM. Free with chart_files_fini.
 */
int chart_files_init(struct chart_file *files, size_t n,
		     const struct sp_selection *sel,
		     const struct sp_palette *palette, struct sp_color_map **ret_map);
void chart_files_fini(struct chart_file *files, size_t n, struct sp_color_map *map);

/* ---- drawing helpers shared by the charts (chart-common.c) ---------------- */

/**
 * One drawn element: <rect class=cls data-region data-tip [attrs]> with a
 * <title> tooltip when standalone. attrs: extra attributes (" data-x=..."), may be NULL.
 */
void chart_bar(FILE *f, const struct chart_opts *o, double x, double y, double w,
	       double h, const char *fill, const char *cls, const char *region,
	       const char *tip, const char *attrs);
/** Height of the legend of names[0..n) wrapped at width. */
double chart_legend_height(const char *const *names, size_t n, double width);
/** Colour swatches and names, wrapped at width, starting at (x0, y0). */
void chart_legend(FILE *f, double x0, double y0, double width,
		  const char *const *names, const char *const *colors, size_t n);
/** s cut to about px pixels of text, with "..." when cut ("" if too narrow). */
void chart_shorten(char *buf, size_t size, const char *s, double px);

/* ---- timeline: Gantt (all ranks) and flame chart (one rank) ---------------- */

struct tl_lane {
	uint32_t rank;
	int64_t thread;       /* thread id, -1 without thread lanes */
	int32_t rows;         /* call depth rows (1 + max depth) */
	uint64_t calls;       /* calls in this lane */
	size_t first_bar, n_bars;
};

struct tl_bar {
	uint32_t region;
	int32_t depth;
	int64_t start_ns, end_ns; /* absolute */
	uint64_t calls;       /* 1, or the calls merged into a pixel run */
};

struct timeline {
	int64_t t0_ns, t1_ns; /* x range: first region entry .. last exit */
	struct tl_lane *lanes;
	size_t n_lanes;
	struct tl_bar *bars;
	size_t n_bars;
	uint64_t n_calls;     /* calls in the drawn lanes */
	bool aggregated;      /* bars are per-pixel runs, not calls */
	double bin_seconds;   /* width of a pixel when aggregated */
	size_t ranks_total;   /* selected ranks with data */
	size_t ranks_drawn;
	char *problem;        /* nesting problem (rows then follow regions) */
};

/**
 * Build the timeline of the given ranks of cf (NULL/0: every selected rank,
 * capped at o->max_lanes ranks).
 * @return 0 or a negative errno (-ENOMEM, -EIO...).
 */
int timeline_build(const struct chart_file *cf, const uint32_t *ranks,
		   size_t n_ranks, const struct chart_opts *o, struct timeline *ret);
void timeline_free(struct timeline *t);

/** Render a Gantt chart: one panel per file, one lane per rank/thread. */
void gantt_render(FILE *f, const struct chart_file *files,
		  const struct timeline *tls, size_t n, const struct chart_opts *o);
/** Render a flame chart (icicle, depth 0 on top) of one timeline. */
void flame_render(FILE *f, const struct chart_file *cf, const struct timeline *t,
		  const struct chart_opts *o);

/**
 * Sentences on the aggregation, the rank cap and (problem) the nesting
 * problem, or "" (into buf).
 */
void timeline_note(const struct timeline *t, bool problem, char *buf, size_t size);

/* ---- durations and imbalance bars ----------------------------------------- */

enum dur_metric { DUR_TOTAL = 0, DUR_AVG, DUR_MIN, DUR_MAX };
/** "total", "avg", "min", "max"; parse: 0 or -EINVAL. */
const char *dur_metric_name(enum dur_metric m);
int dur_metric_parse(const char *name, enum dur_metric *ret);

struct dur_bar {
	size_t file;
	const char *region;   /* owned by the file's reader */
	double value;         /* seconds */
};

/**
 * One bar per (region, file) with calls on the selected ranks, grouped by
 * region, regions sorted by their largest value (descending).
 * @return number of bars (*ret malloc'ed) or -ENOMEM.
 */
long durations_build(const struct chart_file *files, size_t n,
		     enum dur_metric m, const struct chart_opts *o,
		     struct dur_bar **ret);
void durations_render(FILE *f, const struct chart_file *files, size_t n,
		      enum dur_metric m, const struct dur_bar *bars, size_t nb,
		      const struct chart_opts *o);

struct imb_point {
	size_t file;
	const char *region;
	uint32_t rank;
	double value;         /* the rank's total (s) */
	double mean;          /* mean of the region's per-rank totals */
};

struct imbalance {
	struct imb_point *points;
	size_t n_points;
	size_t regions_total, regions_drawn; /* per file, summed */
};

/**
 * Per-rank totals of each region (ranks with calls), regions ordered by
 * total, at most o->max_regions per file. @return 0 or -ENOMEM.
 */
int imbalance_build(const struct chart_file *files, size_t n,
		    const struct chart_opts *o, struct imbalance *ret);
void imbalance_free(struct imbalance *im);
void imbalance_render(FILE *f, const struct chart_file *files, size_t n,
		      const struct imbalance *im, const struct chart_opts *o);

/* ---- speedup and weak scaling (several files) --------------------------- */

struct scale_chart {
	bool weak;            /* normalized runtime instead of speedup */
	bool numeric;         /* x values are numbers (sorted, duplicates averaged) */
	bool ideal;           /* draw the ideal line (the three scaling fields) */
	char x_field[64];
	size_t n_runs;        /* input files (allocation size of x, x_labels) */
	size_t n_x;
	double *x;            /* numeric x values (input positions when !numeric) */
	char **x_labels;      /* printable x values */
	size_t n_regions;
	const char **regions; /* common regions, first file's order */
	double *value;        /* [region * n_x + k]: speedup or normalized runtime */
	double *mean;         /* [region * n_x + k]: mean per-call duration (s) */
};

/**
 * Speedup (baseline mean / mean) or weak-scaling normalized runtime (mean /
 * baseline mean) of the regions common to all files, per x value.
 * x_field: num_ranks, omp_num_threads, total_cores or any metadata key.
 * @return 0, -EINVAL (message in errbuf: fewer than 2 files, missing x
 *         value, no common region) or -ENOMEM.
 */
int scaling_build(const struct chart_file *files, size_t n, const char *x_field,
		  bool weak, const struct chart_opts *o, struct scale_chart *ret,
		  char *errbuf, size_t errsize);
void scaling_free(struct scale_chart *s);
void scaling_render(FILE *f, const struct scale_chart *s,
		    const struct sp_color_map *colors, const struct chart_opts *o);

#endif /* SP_CHARTS_H */
