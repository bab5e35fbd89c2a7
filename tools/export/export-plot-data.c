/* SPDX-License-Identifier: MIT */
/*
 * export plot-data: the numbers behind each chart (§4.7), one
 * <kind>_data.csv|json per kind in the output directory: gantt, durations,
 * imbalance here; flame_chart / flame_graph in export-plot-flame.c;
 * speedup / weak_scaling in export-plot-scaling.c. Times are seconds,
 * Gantt and flame times relative to each file's first region entry.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export-plot.h"
#include "export-region-stats.h"

int pd_speedup(struct export_ctx *x, const struct sp_color_map *colors);
int pd_weak_scaling(struct export_ctx *x, const struct sp_color_map *colors);

static const char *const metric_names[] = { "total", "avg", "min", "max" };
#define N_METRICS 4

static int metric_index(const char *name)
{
	for (int i = 0; i < N_METRICS; i++)
		if (strcmp(name, metric_names[i]) == 0)
			return i;
	return -1;
}

static double metric_value(const struct sp_stats *st, int metric)
{
	switch (metric) {
	case 0: return st->total;
	case 1: return st->average;
	case 2: return st->min;
	default: return st->max;
	}
}

/* Gantt: one interval per kept call, all selected ranks. */
static int pd_gantt(struct export_ctx *x, const struct sp_color_map *colors)
{
	static const char *const cols[] = { "file", "rank", "region",
					    "start_seconds", "end_seconds" };
	struct pd_doc d;
	int rc = pd_open(x, &d, "gantt", "intervals", cols, 5, colors), crc;

	if (rc)
		return rc;
	for (size_t i = 0; rc == 0 && i < x->n_files; i++) {
		struct export_file *f = &x->files[i];
		const int64_t *s = sp_reader_column(f->r, SP_COL_START_TIMES);
		const int64_t *e = sp_reader_column(f->r, SP_COL_END_TIMES);
		const uint32_t *ranks;
		size_t n_ranks = sp_reader_ranks(f->r, &ranks);
		uint32_t *ids = NULL;
		int n = sp_reader_regions(f->r, x->c.sel, &ids);

		if (n < 0)
			rc = ex_reader_error(x, f, n);
		for (int k = 0; k < n; k++)
			for (size_t q = 0; q < n_ranks; q++) {
				long row = sp_reader_row_find(f->r, ids[k], ranks[q]);
				const struct sp_row *rw;

				if (row < 0 || !sp_selection_match_rank(x->c.sel, ranks[q]))
					continue;
				rw = sp_reader_row(f->r, (size_t)row);
				for (uint64_t ev = rw->offset; ev < rw->offset + rw->count; ev++) {
					int64_t a = s[ev], b = e[ev];

					if (!ex_keep(x, f, a, b))
						continue;
					ex_clip(f, &a, &b);
					pd_row(&d);
					pd_str(&d, f->label);
					pd_int(&d, ranks[q]);
					pd_str(&d, sp_reader_region_name(f->r, ids[k]));
					pd_sec(&d, a - f->origin_ns);
					pd_sec(&d, b - f->origin_ns);
				}
			}
		free(ids);
	}
	crc = pd_close(&d, rc == 0);
	return rc ? rc : crc;
}

/* Parse --metrics into indexes. Returns the count, or -1 (reported). */
static int parse_metrics(struct export_ctx *x, const char *spec, int *ret)
{
	char *dup = strdup(spec ? spec : "total"), *save = NULL;
	int n = 0;

	for (char *tok = strtok_r(dup, ",", &save); tok && dup;
	     tok = strtok_r(NULL, ",", &save)) {
		int m = metric_index(tok);

		if (m < 0) {
			cli_usage_error(&x->c, "unknown metric '%s' (choose from total, avg, min, max)", tok);
			free(dup);
			return -1;
		}
		if (n < 8)
			ret[n++] = m;
	}
	free(dup);
	return n;
}

static int pd_durations(struct export_ctx *x, const struct sp_color_map *colors)
{
	static const char *const cols[] = { "file", "region", "metric", "value_seconds" };
	int metrics[8], n_metrics = parse_metrics(x, x->pd.metrics, metrics);
	struct pd_doc d;
	int rc, crc;

	if (n_metrics < 0)
		return EXIT_USAGE;
	if ((rc = pd_open(x, &d, "durations", "bars", cols, 4, colors)))
		return rc;
	for (size_t i = 0; rc == 0 && i < x->n_files; i++) {
		struct export_file *f = &x->files[i];
		uint32_t *ids = NULL;
		int n = sp_reader_regions(f->r, x->c.sel, &ids);

		for (int k = 0; rc == 0 && k < n; k++) {
			struct sp_stats st;

			if (sp_reader_region_stats(f->r, ids[k], x->c.sel, &st) < 0) {
				rc = ex_reader_error(x, f, -ENOMEM);
				break;
			}
			for (int m = 0; m < n_metrics; m++) {
				pd_row(&d);
				pd_str(&d, f->label);
				pd_str(&d, sp_reader_region_name(f->r, ids[k]));
				pd_str(&d, metric_names[metrics[m]]);
				pd_dbl(&d, metric_value(&st, metrics[m]));
			}
		}
		free(ids);
		if (n < 0)
			rc = ex_reader_error(x, f, n);
	}
	pd_extra_key(&d, "metrics");
	for (int m = 0; d.json && m < n_metrics; m++)
		fprintf(d.out, "%s\"%s\"", m ? ", " : "[", metric_names[metrics[m]]);
	if (d.json)
		fputs("],\n\"options\": {\"stack_children\": false}", d.out);
	crc = pd_close(&d, rc == 0);
	return rc ? rc : crc;
}

/* Per-rank values of one region and their mean over the ranks holding it. */
static int imbalance_region(struct export_ctx *x, struct export_file *f,
			    struct pd_doc *d, uint32_t id, int metric)
{
	const uint32_t *ranks;
	size_t n_ranks = sp_reader_ranks(f->r, &ranks), n = 0;
	double *v = calloc(n_ranks ? n_ranks : 1, sizeof(*v)), sum = 0;
	uint32_t *rk = calloc(n_ranks ? n_ranks : 1, sizeof(*rk));

	if (!v || !rk) {
		free(v);
		free(rk);
		return ex_reader_error(x, f, -ENOMEM);
	}
	for (size_t q = 0; q < n_ranks; q++) {
		long row = sp_reader_row_find(f->r, id, ranks[q]);
		struct sp_stats st;

		if (row < 0 || !sp_selection_match_rank(x->c.sel, ranks[q]) ||
		    sp_reader_row_stats(f->r, (size_t)row, &st) < 0)
			continue;
		v[n] = metric_value(&st, metric);
		rk[n++] = ranks[q];
		sum += v[n - 1];
	}
	for (size_t q = 0; q < n; q++) {
		pd_row(d);
		pd_str(d, f->label);
		pd_str(d, sp_reader_region_name(f->r, id));
		pd_int(d, rk[q]);
		pd_dbl(d, v[q]);
		pd_dbl(d, sum / (double)n);
	}
	free(v);
	free(rk);
	return 0;
}

static int pd_imbalance(struct export_ctx *x, const struct sp_color_map *colors)
{
	static const char *const cols[] = { "file", "region", "rank", "value_seconds",
					    "mean_over_ranks_seconds" };
	const char *mname = x->pd.imbalance_metric ? x->pd.imbalance_metric : "total";
	int metric = metric_index(mname), rc, crc;
	struct pd_doc d;

	if (metric < 0)
		return cli_usage_error(&x->c, "unknown --imbalance-metric '%s' (choose from total, avg, min, max)", mname);
	if ((rc = pd_open(x, &d, "imbalance", "points", cols, 5, colors)))
		return rc;
	for (size_t i = 0; rc == 0 && i < x->n_files; i++) {
		uint32_t *ids = NULL;
		int n = sp_reader_regions(x->files[i].r, x->c.sel, &ids);

		for (int k = 0; rc == 0 && k < n; k++)
			rc = imbalance_region(x, &x->files[i], &d, ids[k], metric);
		free(ids);
	}
	pd_extra_key(&d, "metric");
	if (d.json)
		ex_json_string(d.out, mname);
	crc = pd_close(&d, rc == 0);
	return rc ? rc : crc;
}

/*
 * region_statistics.json (§3.4), written by export region-statistics
 * (export-region-stats.c) with the same inputs and filters.
 */
static int pd_region_statistics(struct export_ctx *x,
				const struct sp_color_map *colors)
{
	size_t n = 0, cap = x->n_files + x->n_filter_args + 4;
	char **argv = calloc(cap, sizeof(*argv));
	int rc;

	if (!argv) {
		cli_error(&x->c, "out of memory");
		return EXIT_USAGE;
	}
	argv[n++] = (char *)"region-statistics";
	for (size_t i = 0; i < x->n_filter_args; i++)
		argv[n++] = x->filter_args[i];
	argv[n++] = (char *)"-o";
	argv[n++] = (char *)x->output;
	for (size_t i = 0; i < x->n_files; i++)
		argv[n++] = (char *)x->files[i].path;
	rc = export_region_stats_run((int)n, argv);
	free(argv);
	return rc;
}

static const struct {
	const char *name;
	int (*write)(struct export_ctx *x, const struct sp_color_map *colors);
	bool multi;  /* needs two files or more */
} kinds[] = {
	{ "gantt", pd_gantt, false },
	{ "durations", pd_durations, false },
	{ "imbalance", pd_imbalance, false },
	{ "flame_chart", pd_flame_chart, false },
	{ "flame_graph", pd_flame_graph, false },
	{ "speedup", pd_speedup, true },
	{ "weak_scaling", pd_weak_scaling, true },
	{ "region_statistics", pd_region_statistics, false },
};
#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

/* Mark the requested kinds. -1 on an unknown name (reported). */
static int select_kinds(struct export_ctx *x, bool *want)
{
	char *dup, *save = NULL;

	for (size_t k = 0; k < N_KINDS; k++)
		want[k] = !x->pd.plots;
	if (!x->pd.plots)
		return 0;
	dup = strdup(x->pd.plots);
	for (char *tok = strtok_r(dup, ",", &save); tok && dup;
	     tok = strtok_r(NULL, ",", &save)) {
		size_t k = 0;

		while (k < N_KINDS && strcmp(tok, kinds[k].name) != 0)
			k++;
		if (k == N_KINDS) {
			cli_usage_error(&x->c, "unknown plot kind '%s' (choose from gantt, durations, imbalance, flame_chart, flame_graph, speedup, weak_scaling, region_statistics)", tok);
			free(dup);
			return -1;
		}
		want[k] = true;
	}
	free(dup);
	return 0;
}

/* Names in dir (NULL-terminated, malloc'ed), NULL when it does not exist. */
static char **list_dir(const char *dir)
{
	DIR *d = opendir(dir);
	char **names = NULL;
	size_t n = 0;
	struct dirent *e;

	if (!d)
		return NULL;
	names = calloc(1, sizeof(*names));
	while (names && (e = readdir(d))) {
		char **p = realloc(names, (n + 2) * sizeof(*p));

		if (!p || !(p[n] = strdup(e->d_name))) {
			free(p ? p : names);
			names = NULL;
			break;
		}
		names = p;
		names[++n] = NULL;
	}
	closedir(d);
	return names;
}

static void free_list(char **names)
{
	for (size_t i = 0; names && names[i]; i++)
		free(names[i]);
	free(names);
}

/* After a failure: remove what this run added to dir (no partial output). */
static void undo_output(const char *dir, char **before, bool existed)
{
	char **now = list_dir(dir);

	for (size_t i = 0; now && now[i]; i++) {
		bool old = false;
		char *path;

		for (size_t k = 0; before && before[k] && !old; k++)
			old = strcmp(before[k], now[i]) == 0;
		if (old || !(path = malloc(strlen(dir) + strlen(now[i]) + 2)))
			continue;
		sprintf(path, "%s/%s", dir, now[i]);
		unlink(path);
		free(path);
	}
	free_list(now);
	if (!existed)
		rmdir(dir);
}

static int write_kinds(struct export_ctx *x, const struct sp_palette *palette,
		       const bool *want);

int export_plot_data_write(struct export_ctx *x)
{
	char **before;
	bool existed;
	const struct sp_palette *palette;
	bool want[N_KINDS];
	int rc;

	if (select_kinds(x, want) < 0)
		return EXIT_USAGE;
	if (sp_palette_find(x->pd.cmap, &palette) < 0)
		return cli_usage_error(&x->c, "unknown --cmap '%s' (choose from %s)",
				       x->pd.cmap, sp_palette_names());
	before = list_dir(x->output);
	existed = before != NULL;
	if ((rc = ex_make_dir(x, x->output))) {
		free_list(before);
		return rc;
	}
	rc = write_kinds(x, palette, want);
	if (rc != 0)
		undo_output(x->output, before, existed);
	free_list(before);
	return rc;
}

static int write_kinds(struct export_ctx *x, const struct sp_palette *palette,
		       const bool *want)
{
	struct sp_color_map *colors = NULL;
	int rc;

	if (sp_color_map_create(palette, &colors) < 0) {
		cli_error(&x->c, "out of memory");
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < x->n_files; i++)
		if ((rc = sp_color_map_add_reader(colors, x->files[i].r, x->c.sel)) < 0) {
			sp_color_map_destroy(colors);
			return ex_reader_error(x, &x->files[i], rc);
		}
	rc = 0;
	for (size_t k = 0; k < N_KINDS && rc == 0; k++) {
		if (!want[k])
			continue;
		if (kinds[k].multi && x->n_files < 2) {
			if (x->pd.plots)
				cli_error(&x->c, "%s needs two files or more; skipped",
					  kinds[k].name);
			continue;
		}
		rc = kinds[k].write(x, colors);
	}
	sp_color_map_destroy(colors);
	return rc;
}
