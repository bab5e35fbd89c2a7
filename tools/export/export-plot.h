/* SPDX-License-Identifier: MIT */
/*
 * Internal to export plot-data: a streaming table that is either a CSV
 * file (header + rows) or a JSON document with the plot-data envelope
 * {"format": "scope-profiler-plot-data", "format_version": 1, "plot": KIND,
 *  "<rows key>": [{...}, ...], "colors": {region: "#rrggbb"}, ...}.
 */
#ifndef SP_EXPORT_PLOT_H
#define SP_EXPORT_PLOT_H

#include "colors.h"
#include "export.h"

struct pd_doc {
	struct export_ctx *x;
	struct ex_output o;
	FILE *out;
	bool json;
	const char *const *cols;
	size_t n_cols, col, n_rows;
	bool rows_closed;
	const struct sp_color_map *colors;
};

/* Open <dir>/<kind>_data.<csv|json> and write the header. 0 or EXIT_USAGE. */
int pd_open(struct export_ctx *x, struct pd_doc *d, const char *kind,
	    const char *rows_key, const char *const *cols, size_t n_cols,
	    const struct sp_color_map *colors);
void pd_row(struct pd_doc *d);
void pd_str(struct pd_doc *d, const char *s);
void pd_int(struct pd_doc *d, long long v);
void pd_dbl(struct pd_doc *d, double v);   /* NaN -> null / empty */
void pd_sec(struct pd_doc *d, int64_t ns);
void pd_null(struct pd_doc *d);
/* JSON only: the key of an extra top-level member (value written by caller). */
void pd_extra_key(struct pd_doc *d, const char *key);
/* Finish (colors map, closing brace) and publish. 0 or EXIT_USAGE. */
int pd_close(struct pd_doc *d, bool ok);

/* flame_chart / flame_graph (export-plot-flame.c). 0 or EXIT_USAGE. */
int pd_flame_chart(struct export_ctx *x, const struct sp_color_map *colors);
int pd_flame_graph(struct export_ctx *x, const struct sp_color_map *colors);
/* Ranks of a flame plot: --ranks, else the lowest rank (rank 0). */
bool pd_flame_rank(const struct export_ctx *x, const struct export_file *f,
		   uint32_t rank);

#endif /* SP_EXPORT_PLOT_H */
