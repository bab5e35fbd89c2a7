/* SPDX-License-Identifier: MIT */
/*
 * `plot` after option parsing: open the profiles, build each requested
 * chart and write it as DIR/<kind>_plot.svg (temp file + rename), then hand
 * --data to `export plot-data` so the numbers come from the one plot-data
 * writer; prints what was written (or --json).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "export.h"
#include "plot.h"

struct state {
	struct plot_run *p;
	struct chart_file *files;
	size_t n;
	struct sp_color_map *map;
	char **written;
	size_t n_written;
	char *notes[16];
	size_t n_notes;
};

static void note(struct state *s, const char *fmt, const char *arg)
{
	if (s->n_notes < 16 && asprintf(&s->notes[s->n_notes], fmt, arg) >= 0)
		s->n_notes++;
}

static int make_dirs(struct plot_run *p, const char *dir)
{
	char *copy = strdup(dir);

	if (!copy)
		return EXIT_USAGE;
	for (char *q = copy + 1; *q; q++)
		if (*q == '/') {
			*q = '\0';
			mkdir(copy, 0777);
			*q = '/';
		}
	free(copy);
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		cli_error(&p->c, "%s: cannot create directory: %s", dir, strerror(errno));
		return EXIT_USAGE;
	}
	return 0;
}

struct out {
	FILE *f;
	char *path, *tmp;
};

static int out_open(struct state *s, const char *name, struct out *o)
{
	memset(o, 0, sizeof(*o));
	if ((s->p->one_file ? asprintf(&o->path, "%s", s->p->out)
			    : asprintf(&o->path, "%s/%s", s->p->out, name)) < 0 ||
	    asprintf(&o->tmp, "%s.tmp", o->path) < 0) {
		cli_error(&s->p->c, "out of memory");
		return EXIT_USAGE;
	}
	o->f = cli_output_fopen(o->path, &o->tmp);
	if (!o->f) {
		cli_error(&s->p->c, "%s: cannot write: %s", o->path, strerror(errno));
		free(o->path);
		free(o->tmp);
		return EXIT_USAGE;
	}
	return 0;
}

static int out_close(struct state *s, struct out *o)
{
	bool bad = ferror(o->f);
	int rc = 0;
	char **w;

	if (fclose(o->f) != 0 || bad || cli_output_rename(o->tmp, o->path) != 0) {
		cli_error(&s->p->c, "%s: write failed: %s", o->path, strerror(errno));
		cli_output_discard(o->tmp);
		rc = EXIT_USAGE;
	} else if ((w = realloc(s->written, (s->n_written + 1) * sizeof(*w)))) {
		s->written = w;
		s->written[s->n_written++] = o->path;
		o->path = NULL;
	}
	free(o->path);
	free(o->tmp);
	return rc;
}

static int reader_failure(struct state *s, int rc)
{
	cli_error(&s->p->c, "%s", rc == -ENOMEM ? "out of memory" : sp_reader_last_error());
	return EXIT_USAGE;
}

static int write_gantt(struct state *s)
{
	struct timeline *tls = calloc(s->n, sizeof(*tls));
	struct out o;
	int rc = tls ? 0 : -ENOMEM;

	for (size_t i = 0; i < s->n && rc == 0; i++)
		rc = timeline_build(&s->files[i], NULL, 0, &s->p->o, &tls[i]);
	if (rc < 0) {
		rc = reader_failure(s, rc);
	} else if ((rc = out_open(s, "gantt_plot.svg", &o)) == 0) {
		gantt_render(o.f, s->files, tls, s->n, &s->p->o);
		rc = out_close(s, &o);
	}
	for (size_t i = 0; tls && i < s->n; i++)
		timeline_free(&tls[i]);
	free(tls);
	return rc;
}

/* The flame chart of one rank of one file; name unique over the run. */
static int write_flame_one(struct state *s, size_t i, uint32_t rank, bool several)
{
	struct timeline t;
	struct out o;
	char name[512];
	int rc = timeline_build(&s->files[i], &rank, 1, &s->p->o, &t);

	if (rc < 0)
		return reader_failure(s, rc);
	if (several) {
		size_t k = (size_t)snprintf(name, sizeof(name), "flame_chart_plot_%s_rank%" PRIu32,
					    s->files[i].label, rank);

		for (size_t j = 17; j < k && j < sizeof(name); j++)
			if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.",
				    name[j]))
				name[j] = '_';
		snprintf(name + k, sizeof(name) - k, ".svg");
	} else {
		snprintf(name, sizeof(name), "flame_chart_plot.svg");
	}
	if ((rc = out_open(s, name, &o)) == 0) {
		flame_render(o.f, &s->files[i], &t, &s->p->o);
		rc = out_close(s, &o);
	}
	timeline_free(&t);
	return rc;
}

/* --ranks: one chart per selected rank; else the lowest rank (rank 0).
 * Without write: how many charts that is. */
static size_t flame_charts(struct state *s, bool write, int *rc)
{
	bool pick = sp_selection_has_ranks(s->p->c.sel);
	size_t total = write ? flame_charts(s, false, rc) : 0;

	for (size_t i = 0; i < s->n && *rc == 0; i++) {
		const uint32_t *ranks;
		size_t nr = sp_reader_ranks(s->files[i].r, &ranks);

		for (size_t k = 0; k < nr && *rc == 0; k++) {
			if (pick ? !sp_selection_match_rank(s->p->c.sel, ranks[k]) : k > 0)
				continue;
			if (write)
				*rc = write_flame_one(s, i, ranks[k], total > 1);
			else
				total++;
		}
	}
	return total;
}

static int write_flame(struct state *s)
{
	int rc = 0;

	(void)flame_charts(s, true, &rc);
	return rc;
}

/* How many charts write_all draws (a preset's scaling chart counted when
 * several files are given; it may still be skipped with a note). */
static size_t count_charts(struct state *s)
{
	unsigned k = s->p->kinds, m = s->p->metric_set;
	bool scaling = s->n >= 2 || !s->p->preset;
	size_t n = 0;
	int rc = 0;

	n += (k & K_GANTT) != 0;
	n += (k & K_FLAME) ? flame_charts(s, false, &rc) : 0;
	n += (k & K_DURATIONS) ? (size_t)__builtin_popcount(m) : 0;
	n += (k & K_IMBALANCE) != 0;
	n += scaling && (k & K_SPEEDUP);
	n += scaling && (k & K_WEAK);
	return n;
}

static int write_durations(struct state *s)
{
	unsigned metrics = s->p->metric_set;
	bool several = (metrics & (metrics - 1)) != 0;
	int rc = 0;

	for (int m = 0; m < 4 && rc == 0; m++) {
		struct dur_bar *bars = NULL;
		char name[64];
		struct out o;
		long nb;

		if (!(metrics & (1u << m)))
			continue;
		nb = durations_build(s->files, s->n, (enum dur_metric)m, &s->p->o, &bars);
		if (nb < 0)
			return reader_failure(s, (int)nb);
		if (several)
			snprintf(name, sizeof(name), "durations_plot_%s.svg",
				 dur_metric_name((enum dur_metric)m));
		else
			snprintf(name, sizeof(name), "durations_plot.svg");
		if ((rc = out_open(s, name, &o)) == 0) {
			durations_render(o.f, s->files, s->n, (enum dur_metric)m, bars,
					 (size_t)nb, &s->p->o);
			rc = out_close(s, &o);
		}
		free(bars);
	}
	return rc;
}

static int write_imbalance(struct state *s)
{
	struct imbalance im;
	struct out o;
	int rc = imbalance_build(s->files, s->n, &s->p->o, &im);

	if (rc < 0)
		return reader_failure(s, rc);
	if ((rc = out_open(s, "imbalance_plot.svg", &o)) == 0) {
		imbalance_render(o.f, s->files, s->n, &im, &s->p->o);
		rc = out_close(s, &o);
	}
	imbalance_free(&im);
	return rc;
}

static int write_scaling(struct state *s, bool weak)
{
	struct scale_chart sc;
	struct out o;
	char err[512];
	int rc;

	if (s->n < 2 && s->p->preset) {
		note(s, "%s skipped: it needs several files", weak ? "weak_scaling" : "speedup");
		return 0;
	}
	rc = scaling_build(s->files, s->n, s->p->x_field, weak, &s->p->o, &sc, err, sizeof(err));
	if (rc == -EINVAL && s->p->preset) {
		note(s, "speedup/weak_scaling skipped: %s", err);
		return 0;
	}
	if (rc == -EINVAL) {
		cli_error(&s->p->c, "%s", err);
		return EXIT_USAGE;
	}
	if (rc < 0)
		return reader_failure(s, rc);
	if ((rc = out_open(s, weak ? "weak_scaling_plot.svg" : "speedup_plot.svg", &o)) == 0) {
		scaling_render(o.f, &sc, s->map, &s->p->o);
		rc = out_close(s, &o);
	}
	scaling_free(&sc);
	return rc;
}

/* Kinds for `export plot-data --plots`, in the names of §4.7. */
static void data_kinds(const struct state *s, char *buf, size_t size)
{
	static const struct {
		unsigned kind;
		const char *name;
	} names[] = {
		{ K_GANTT, "gantt" }, { K_FLAME, "flame_chart" }, { K_DURATIONS, "durations" },
		{ K_IMBALANCE, "imbalance" }, { K_SPEEDUP, "speedup" }, { K_WEAK, "weak_scaling" },
	};
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; s->p->data && i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(s->p->kinds & names[i].kind))
			continue;
		if ((names[i].kind & (K_SPEEDUP | K_WEAK)) && s->n < 2)
			continue;
		len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s",
					len ? "," : "", names[i].name);
	}
	snprintf(buf + len, len < size ? size - len : 0, "%sregion_statistics", len ? "," : "");
}

/* Record the plot-data files that export wrote into the output directory. */
static void list_data(struct state *s, const char *kinds)
{
	char *copy = strdup(kinds), *save = NULL;

	for (char *k = copy ? strtok_r(copy, ",", &save) : NULL; k; k = strtok_r(NULL, ",", &save)) {
		char *path = NULL, **w;
		bool stats = strcmp(k, "region_statistics") == 0;

		if (asprintf(&path, "%s/%s%s.%s", s->p->out, k, stats ? "" : "_data",
			     stats || (s->p->data && !strcmp(s->p->data, "json")) ? "json" : "csv") < 0)
			break;
		if (access(path, F_OK) == 0 &&
		    (w = realloc(s->written, (s->n_written + 1) * sizeof(*w)))) {
			s->written = w;
			s->written[s->n_written++] = path;
			path = NULL;
		}
		free(path);
	}
	free(copy);
}

/*
 * region_statistics.json and --data: run `export plot-data` on the same
 * files and selection, so the written numbers come from the single
 * plot-data writer (full resolution, not the per-pixel aggregation of a
 * drawing).
 */
static int write_data(struct state *s)
{
	struct plot_run *p = s->p;
	char kinds_buf[160], metrics[64] = "";
	size_t argc = 0, max = p->c.n_files + p->n_fwd + 16;
	char **argv = calloc(max, sizeof(*argv));
	int rc;

	if (!argv)
		return EXIT_USAGE;
	data_kinds(s, kinds_buf, sizeof(kinds_buf));
	for (int m = 0; m < 4; m++)
		if (p->metric_set & (1u << m))
			snprintf(metrics + strlen(metrics), sizeof(metrics) - strlen(metrics), "%s%s",
				 metrics[0] ? "," : "", dur_metric_name((enum dur_metric)m));
	argv[argc++] = "plot-data";
	for (size_t i = 0; i < p->c.n_files; i++)
		argv[argc++] = p->c.files[i];
	argv[argc++] = "-o";
	argv[argc++] = (char *)p->out;
	argv[argc++] = "--format";
	argv[argc++] = (char *)(p->data ? p->data : "json");
	argv[argc++] = "--plots";
	argv[argc++] = kinds_buf;
	argv[argc++] = "--metrics";
	argv[argc++] = metrics;
	argv[argc++] = "--x";
	argv[argc++] = (char *)p->x_field;
	if (p->cmap) {
		argv[argc++] = "--cmap";
		argv[argc++] = (char *)p->cmap;
	}
	for (size_t i = 0; i < p->n_fwd; i++)
		argv[argc++] = (char *)p->fwd[i];
	rc = export_formats_run((int)argc, argv);
	free(argv);
	if (rc == 0)
		list_data(s, kinds_buf);
	return rc == 0 ? 0 : EXIT_USAGE;
}

static bool has_timing(const struct state *s)
{
	for (size_t i = 0; i < s->n; i++)
		for (size_t k = 0; k < sp_reader_num_rows(s->files[i].r); k++) {
			const struct sp_row *row = sp_reader_row(s->files[i].r, k);

			if (row->count || (row->has_aggregate && row->agg_count))
				return true;
		}
	return false;
}

static int open_all(struct state *s, const struct sp_palette *pal)
{
	struct plot_run *p = s->p;
	int rc;

	s->files = calloc(p->c.n_files, sizeof(*s->files));
	if (!s->files)
		return EXIT_USAGE;
	for (; s->n < p->c.n_files; s->n++)
		if ((rc = cli_open(&p->c, p->c.files[s->n], &s->files[s->n].r)) != 0)
			return rc;
	if (chart_files_init(s->files, s->n, p->o.sel, pal, &s->map) < 0)
		return reader_failure(s, -ENOMEM);
	for (size_t i = 0; i < p->n_labels; i++) {
		char *l = strdup(p->labels[i]);

		if (!l)
			return reader_failure(s, -ENOMEM);
		free(s->files[i].label);
		s->files[i].label = l;
	}
	return 0;
}

static void report_written(struct state *s)
{
	struct json_writer w;

	if (!s->p->c.json) {
		for (size_t i = 0; i < s->n_written; i++)
			printf("wrote %s\n", s->written[i]);
		for (size_t i = 0; i < s->n_notes; i++)
			fprintf(stderr, "scope-profiler plot: note: %s\n", s->notes[i]);
		return;
	}
	jw_init(&w, stdout, true);
	jw_begin_object(&w);
	jw_key(&w, "files");
	jw_begin_array(&w);
	for (size_t i = 0; i < s->n_written; i++)
		jw_string(&w, s->written[i]);
	jw_end_array(&w);
	jw_key(&w, "notes");
	jw_begin_array(&w);
	for (size_t i = 0; i < s->n_notes; i++)
		jw_string(&w, s->notes[i]);
	jw_end_array(&w);
	jw_end_object(&w);
	jw_finish(&w);
}

static int write_all(struct state *s)
{
	unsigned k = s->p->kinds;
	int rc = 0;

	if ((k & K_GANTT) && rc == 0)
		rc = write_gantt(s);
	if ((k & K_FLAME) && rc == 0)
		rc = write_flame(s);
	if ((k & K_DURATIONS) && rc == 0)
		rc = write_durations(s);
	if ((k & K_IMBALANCE) && rc == 0)
		rc = write_imbalance(s);
	if ((k & K_SPEEDUP) && rc == 0)
		rc = write_scaling(s, false);
	if ((k & K_WEAK) && rc == 0)
		rc = write_scaling(s, true);
	if (rc == 0 && !s->p->one_file)
		rc = write_data(s);
	return rc;
}

int plot_run(struct plot_run *p)
{
	struct state s = { .p = p };
	const struct sp_palette *pal;
	int rc;

	if (sp_palette_find(p->cmap, &pal) < 0)
		return cli_usage_error(&p->c, "unknown colormap '%s' (choose from %s)", p->cmap,
				       sp_palette_names());
	rc = open_all(&s, pal);
	if (rc == 0 && !has_timing(&s)) {
		printf("No timing data found \xe2\x80\x94 these files recorded no calls.\n");
	} else if (rc == 0 && p->one_file && count_charts(&s) != 1) {
		rc = cli_usage_error(&p->c, "-o %s names one SVG file, but this plot draws %zu "
				     "charts: give a directory, or one kind (one rank for flame, "
				     "one metric for durations)", p->out, count_charts(&s));
	} else if (rc == 0 && (p->one_file || (rc = make_dirs(p, p->out)) == 0)) {
		rc = write_all(&s);
		if (rc == 0)
			report_written(&s);
	}
	for (size_t i = 0; i < s.n; i++)
		sp_reader_destroy(s.files[i].r);
	chart_files_fini(s.files, s.n, s.map);
	free(s.files);
	for (size_t i = 0; i < s.n_written; i++)
		free(s.written[i]);
	free(s.written);
	for (size_t i = 0; i < s.n_notes; i++)
		free(s.notes[i]);
	return rc;
}
