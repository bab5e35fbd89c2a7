/* SPDX-License-Identifier: MIT */
/*
 * `export region-statistics`: per file and region the duration statistics
 * (count, average, min, max, first, last, population std, total; seconds)
 * pooled over the selected ranks, plus one entry per rank, as the Python
 * collect_region_statistics writes them. Sums use numpy's pairwise
 * summation over the seconds values so the numbers match numpy bit for bit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli-common.h"
#include "export-region-stats.h"

extern const char export_help[]; /* cmd-export.c */

enum { OPT_OUTPUT = OPT_FIRST_COMMAND_SPECIFIC };

static const char usage[] =
	"region-statistics FILE... -o PATH [--include RE]... [--exclude RE]...\n"
	"       [--ranks 0,2,4-7]   (PATH: a .json file, a directory or - for stdout)";

struct rs_ctx {
	struct cli_common c;
	const char *output;
	const char **include, **exclude;
	size_t n_include, n_exclude;
	int64_t *ranks;        /* --ranks expanded, sorted, unique */
	size_t n_ranks;
	bool has_ranks;
};

/* Duration statistics of one set of calls (seconds). */
struct rstats {
	uint64_t count;
	double avg, min, max, std, total, first, last;
	bool has_first, has_std;
};

/*
 * numpy's pairwise summation (float64 add.reduce over a contiguous array):
 * plain loop below 8 values, 8 accumulators up to 128, else split in two at
 * a multiple of 8.
 */
static double pairwise_sum(const double *a, size_t n)
{
	if (n < 8) {
		double res = 0.0;

		for (size_t i = 0; i < n; i++)
			res += a[i];
		return res;
	}
	if (n <= 128) {
		double r[8], res;
		size_t i;

		for (i = 0; i < 8; i++)
			r[i] = a[i];
		for (i = 8; i < n - (n % 8); i += 8)
			for (size_t j = 0; j < 8; j++)
				r[j] += a[i + j];
		res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
		for (; i < n; i++)
			res += a[i];
		return res;
	}
	size_t n2 = n / 2;

	n2 -= n2 % 8;
	return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

/* count, mean, min, max, std (np.std: ddof 0) and sum of v; scratch: n. */
static void stats_from_values(const double *v, size_t n, double *scratch,
			      struct rstats *st)
{
	double mean;

	st->count = n;
	if (n == 0)
		return;
	st->total = pairwise_sum(v, n);
	mean = st->total / (double)n;
	st->avg = mean;
	st->min = st->max = v[0];
	for (size_t i = 0; i < n; i++) {
		double d = v[i] - mean;

		st->min = v[i] < st->min ? v[i] : st->min;
		st->max = v[i] > st->max ? v[i] : st->max;
		scratch[i] = d * d;
	}
	st->std = sqrt(pairwise_sum(scratch, n) / (double)n);
	st->has_std = true;
}

static void json_opt(struct json_writer *w, const char *key, bool has, double v)
{
	jw_key(w, key);
	if (has)
		jw_double(w, v);
	else
		jw_null(w);
}

static void emit_stats(struct json_writer *w, const struct rstats *st)
{
	bool any = st->count > 0;

	jw_key(w, "count"); jw_int(w, (long long)st->count);
	json_opt(w, "average_duration_seconds", any, st->avg);
	json_opt(w, "min_duration_seconds", any, st->min);
	json_opt(w, "max_duration_seconds", any, st->max);
	json_opt(w, "first_duration_seconds", any && st->has_first, st->first);
	json_opt(w, "last_duration_seconds", any && st->has_first, st->last);
	json_opt(w, "std_duration_seconds", any && st->has_std, st->std);
	json_opt(w, "total_duration_seconds", any, st->total);
}

static bool rank_selected(const struct rs_ctx *x, uint32_t rank)
{
	return sp_selection_match_rank(x->c.sel, rank);
}

/* Durations (seconds) of a row into v; first/last from the row's own order. */
static size_t row_values(struct sp_reader *r, const struct sp_row *row, double *v)
{
	const int64_t *s = sp_reader_column(r, SP_COL_START_TIMES);
	const int64_t *e = sp_reader_column(r, SP_COL_END_TIMES);

	for (uint64_t k = 0; k < row->count; k++)
		v[k] = (double)(e[row->offset + k] - s[row->offset + k]) / 1e9;
	return row->count;
}

/* Aggregate-layout rows: stored count/total/min/max (std from moments). */
static void aggregate_stats(const struct sp_row *row, struct rstats *st)
{
	memset(st, 0, sizeof(*st));
	st->count = row->agg_count;
	if (!st->count)
		return;
	st->total = (double)row->agg_total_ns / 1e9;
	st->avg = st->total / (double)st->count;
	st->min = (double)row->agg_min_ns / 1e9;
	st->max = (double)row->agg_max_ns / 1e9;
	st->has_std = row->has_summary;
	if (row->has_summary)
		st->std = sqrt(row->summary.m2 / (double)st->count) / 1e9;
}

/* "per_rank" of one region: each selected rank's statistics, v and scratch
 * holding at least its count of values. */
static void emit_per_rank(struct rs_ctx *x, struct json_writer *w, struct sp_reader *r,
			  uint32_t id, bool aggregate, double *v, double *scratch)
{
	const uint32_t *ranks;
	size_t n_ranks = sp_reader_ranks(r, &ranks);

	jw_key(w, "per_rank");
	jw_begin_object(w);
	for (size_t k = 0; k < n_ranks; k++) {
		long i = sp_reader_row_find(r, id, ranks[k]);
		const struct sp_row *row;
		struct rstats one = { 0 };
		char key[16];

		if (i < 0 || !rank_selected(x, ranks[k]))
			continue;
		row = sp_reader_row(r, (size_t)i);
		if (aggregate) {
			aggregate_stats(row, &one);
		} else {
			size_t n = row_values(r, row, v);

			stats_from_values(v, n, scratch, &one);
			one.has_first = n > 0;
			if (n) {
				one.first = v[0];
				one.last = v[n - 1];
			}
		}
		snprintf(key, sizeof(key), "%u", ranks[k]);
		jw_key(w, key);
		jw_begin_object(w);
		emit_stats(w, &one);
		jw_end_object(w);
	}
	jw_end_object(w);
}

/*
 * One region of one file: pooled statistics and "per_rank". Returns 0 or
 * -ENOMEM.
 */
static int emit_region(struct rs_ctx *x, struct json_writer *w,
		       struct sp_reader *r, uint32_t id)
{
	const uint32_t *ranks;
	size_t n_ranks = sp_reader_ranks(r, &ranks), total = 0, at = 0;
	const struct sp_row *first_row = NULL, *last_row = NULL;
	double *v, *scratch;
	struct rstats pooled = { 0 };
	bool aggregate = sp_reader_layout(r) == SP_LAYOUT_AGGREGATE;

	for (size_t k = 0; k < n_ranks; k++) {
		long i = sp_reader_row_find(r, id, ranks[k]);

		if (i >= 0 && rank_selected(x, ranks[k]))
			total += sp_reader_row(r, (size_t)i)->count;
	}
	v = malloc((total + 1) * sizeof(*v));
	scratch = malloc((total + 1) * sizeof(*scratch));
	if (!v || !scratch) {
		free(v);
		free(scratch);
		return -ENOMEM;
	}
	jw_key(w, sp_reader_region_name(r, id));
	jw_begin_object(w);
	/* Pass 1: pooled values in rank order; first = earliest-starting rank. */
	for (size_t k = 0; k < n_ranks; k++) {
		long i = sp_reader_row_find(r, id, ranks[k]);
		const struct sp_row *row;
		struct sp_stats rs;

		if (i < 0 || !rank_selected(x, ranks[k]))
			continue;
		row = sp_reader_row(r, (size_t)i);
		at += row_values(r, row, v + at);
		if (row->count == 0 || sp_reader_row_stats(r, (size_t)i, &rs) < 0)
			continue;
		if (!first_row || rs.first_start < pooled.first) {
			first_row = row;
			pooled.first = rs.first_start;
		}
		if (!last_row || rs.last_end > pooled.last) {
			last_row = row;
			pooled.last = rs.last_end;
		}
	}
	stats_from_values(v, at, scratch, &pooled);
	pooled.has_first = first_row && last_row;
	if (pooled.has_first) {
		const int64_t *s = sp_reader_column(r, SP_COL_START_TIMES);
		const int64_t *e = sp_reader_column(r, SP_COL_END_TIMES);
		uint64_t fi = first_row->offset, li = last_row->offset + last_row->count - 1;

		pooled.first = (double)(e[fi] - s[fi]) / 1e9;
		pooled.last = (double)(e[li] - s[li]) / 1e9;
	}
	if (aggregate) {
		/* No events: pool the stored per-row values (one rank: exact). */
		memset(&pooled, 0, sizeof(pooled));
		for (size_t k = 0; k < n_ranks; k++) {
			long i = sp_reader_row_find(r, id, ranks[k]);
			struct rstats one;

			if (i < 0 || !rank_selected(x, ranks[k]))
				continue;
			aggregate_stats(sp_reader_row(r, (size_t)i), &one);
			if (!one.count)
				continue;
			if (!pooled.count || one.min < pooled.min)
				pooled.min = one.min;
			if (!pooled.count || one.max > pooled.max)
				pooled.max = one.max;
			pooled.count += one.count;
			pooled.total += one.total;
		}
		pooled.avg = pooled.count ? pooled.total / (double)pooled.count : 0.0;
	}
	emit_stats(w, &pooled);
	emit_per_rank(x, w, r, id, aggregate, v, scratch);
	jw_end_object(w);
	free(v);
	free(scratch);
	return 0;
}

/* Display label: metadata label, else the file stem (Path.stem). */
static char *display_label(struct sp_reader *r, const char *path)
{
	const struct sp_meta *m = sp_reader_metadata_find(r, "label");
	const char *base = strrchr(path, '/'), *dot;

	if (m && m->type == SP_META_STRING && m->s)
		return strdup(m->s);
	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	if (!dot || dot == base)
		return strdup(base);
	return strndup(base, (size_t)(dot - base));
}

static void emit_string_list(struct json_writer *w, const char **v, size_t n)
{
	if (n == 0) {
		jw_null(w);
		return;
	}
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++)
		jw_string(w, v[i]);
	jw_end_array(w);
}

/* Names of the first file's selected regions present in every file. */
static void emit_common(struct rs_ctx *x, struct json_writer *w,
			struct sp_reader **readers, size_t n)
{
	uint32_t *ids = NULL;
	int count = sp_reader_regions(readers[0], x->c.sel, &ids);

	jw_begin_array(w);
	for (int i = 0; i < count; i++) {
		const char *name = sp_reader_region_name(readers[0], ids[i]);
		bool everywhere = true;

		for (size_t f = 1; f < n && everywhere; f++)
			everywhere = sp_reader_region_find(readers[f], name) >= 0 &&
				     sp_selection_match_name(x->c.sel, name);
		if (everywhere)
			jw_string(w, name);
	}
	jw_end_array(w);
	free(ids);
}

static int emit_file(struct rs_ctx *x, struct json_writer *w,
		     struct sp_reader *r, const char *path, const char *label)
{
	struct sp_times t;
	uint32_t *ids = NULL;
	char *abs = realpath(path, NULL);
	int n = sp_reader_regions(r, x->c.sel, &ids), rc = n < 0 ? n : 0;

	sp_reader_times(r, &t);
	jw_begin_object(w);
	jw_key(w, "label"); jw_string(w, label);
	jw_key(w, "file_path"); jw_string(w, abs ? abs : path);
	jw_key(w, "num_ranks"); jw_int(w, sp_reader_num_ranks(r));
	jw_key(w, "total_time_seconds");
	if (t.has_total_time)
		jw_double(w, t.total_time);
	else
		jw_null(w);
	jw_key(w, "region_statistics");
	jw_begin_object(w);
	for (int i = 0; i < n && rc == 0; i++)
		rc = emit_region(x, w, r, ids[i]);
	jw_end_object(w);
	jw_end_object(w);
	free(ids);
	free(abs);
	return rc;
}

static void emit_document(struct rs_ctx *x, struct json_writer *w,
			  struct sp_reader **readers, char **labels, int *rc)
{
	jw_begin_object(w);
	jw_key(w, "format"); jw_string(w, "scope-profiler-plot-data");
	jw_key(w, "format_version"); jw_int(w, 1);
	jw_key(w, "plot"); jw_string(w, "region_statistics");
	jw_key(w, "units");
	jw_begin_object(w);
	jw_key(w, "durations"); jw_string(w, "seconds");
	jw_end_object(w);
	jw_key(w, "filters");
	jw_begin_object(w);
	jw_key(w, "include"); emit_string_list(w, x->include, x->n_include);
	jw_key(w, "exclude"); emit_string_list(w, x->exclude, x->n_exclude);
	jw_key(w, "ranks");
	if (x->has_ranks) {
		jw_begin_array(w);
		for (size_t i = 0; i < x->n_ranks; i++)
			jw_int(w, x->ranks[i]);
		jw_end_array(w);
	} else {
		jw_null(w);
	}
	jw_end_object(w);
	jw_key(w, "common_regions");
	emit_common(x, w, readers, x->c.n_files);
	jw_key(w, "files");
	jw_begin_array(w);
	for (size_t i = 0; i < x->c.n_files && *rc == 0; i++)
		if (emit_file(x, w, readers[i], x->c.files[i], labels[i]) < 0) {
			cli_error(&x->c, "%s: out of memory", x->c.files[i]);
			*rc = EXIT_USAGE;
		}
	jw_end_array(w);
	jw_end_object(w);
	jw_finish(w);
}

/* Labels de-duplicated as "label (2)", "label (3)" in input order. */
static int make_labels(struct sp_reader **readers, const char *const *paths,
		       size_t n, char **labels)
{
	for (size_t i = 0; i < n; i++) {
		char *base = display_label(readers[i], paths[i]);
		int seen = 1;

		if (!base)
			return -ENOMEM;
		for (size_t k = 0; k < i; k++) {
			char *prev = display_label(readers[k], paths[k]);

			seen += prev && strcmp(prev, base) == 0;
			free(prev);
		}
		if (seen == 1)
			labels[i] = base;
		else if (asprintf(&labels[i], "%s (%d)", base, seen) < 0)
			labels[i] = NULL;
		if (seen > 1)
			free(base);
		if (!labels[i])
			return -ENOMEM;
	}
	return 0;
}

/* Open PATH (a file, a directory for region_statistics.json, or "-"). */
static FILE *open_output(struct rs_ctx *x, char **ret_path, char **ret_tmp)
{
	struct stat st;
	size_t len = strlen(x->output);
	FILE *f;

	*ret_path = *ret_tmp = NULL;
	if (strcmp(x->output, "-") == 0)
		return stdout;
	if ((len && x->output[len - 1] == '/') ||
	    (stat(x->output, &st) == 0 && S_ISDIR(st.st_mode))) {
		mkdir(x->output, 0777);
		if (asprintf(ret_path, "%s%sregion_statistics.json", x->output,
			     x->output[len - 1] == '/' ? "" : "/") < 0)
			return NULL;
	} else if (!(*ret_path = strdup(x->output))) {
		return NULL;
	}
	if (asprintf(ret_tmp, "%s.tmp.%ld", *ret_path, (long)getpid()) < 0) {
		*ret_tmp = NULL;
		return NULL;
	}
	f = cli_output_fopen(*ret_path, ret_tmp);
	if (!f)
		cli_error(&x->c, "%s: %s", *ret_path, strerror(errno));
	return f;
}

static int write_document(struct rs_ctx *x, struct sp_reader **readers,
			  char **labels)
{
	char *path, *tmp;
	FILE *f = open_output(x, &path, &tmp);
	struct json_writer w;
	int rc = 0;

	if (!f) {
		free(path);
		free(tmp);
		return EXIT_USAGE;
	}
	jw_init(&w, f, true);
	emit_document(x, &w, readers, labels, &rc);
	if (f != stdout) {
		if (fclose(f) != 0 && rc == 0) {
			cli_error(&x->c, "%s: %s", path, strerror(errno));
			rc = EXIT_USAGE;
		}
		if (rc == 0 && cli_output_rename(tmp, path) < 0) {
			cli_error(&x->c, "%s: %s", path, strerror(errno));
			rc = EXIT_USAGE;
		}
		if (rc)
			cli_output_discard(tmp);
	}
	free(path);
	free(tmp);
	return rc;
}

static int run(struct rs_ctx *x)
{
	struct sp_reader **readers = calloc(x->c.n_files + 1, sizeof(*readers));
	char **labels = calloc(x->c.n_files + 1, sizeof(*labels));
	int rc = readers && labels ? 0 : EXIT_USAGE;

	for (size_t i = 0; i < x->c.n_files && rc == 0; i++)
		rc = cli_open(&x->c, x->c.files[i], &readers[i]);
	if (rc == 0 && make_labels(readers, (const char *const *)x->c.files,
				   x->c.n_files, labels) < 0) {
		cli_error(&x->c, "out of memory");
		rc = EXIT_USAGE;
	}
	if (rc == 0)
		rc = write_document(x, readers, labels);
	for (size_t i = 0; readers && labels && i < x->c.n_files; i++) {
		sp_reader_destroy(readers[i]);
		free(labels[i]);
	}
	free(readers);
	free(labels);
	return rc;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Expand a validated "0,2,4-7" spec into x->ranks (sorted, unique). */
static int add_rank_spec(struct rs_ctx *x, const char *spec)
{
	char *dup = strdup(spec), *save = NULL, *tok;
	size_t u = 0;

	if (!dup)
		return -ENOMEM;
	x->has_ranks = true;
	for (tok = strtok_r(dup, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		char *dash = strchr(tok + 1, '-');
		long long lo = strtoll(tok, NULL, 10), hi = dash ? strtoll(dash + 1, NULL, 10) : lo;
		int64_t *grown;

		if (hi < lo || hi - lo > 1000000)
			continue;
		grown = realloc(x->ranks, (x->n_ranks + (size_t)(hi - lo) + 1) * sizeof(*grown));
		if (!grown) {
			free(dup);
			return -ENOMEM;
		}
		x->ranks = grown;
		for (long long v = lo; v <= hi; v++)
			x->ranks[x->n_ranks++] = v;
	}
	free(dup);
	if (x->n_ranks)
		qsort(x->ranks, x->n_ranks, sizeof(*x->ranks), cmp_i64);
	for (size_t i = 0; i < x->n_ranks; i++)
		if (u == 0 || x->ranks[u - 1] != x->ranks[i])
			x->ranks[u++] = x->ranks[i];
	x->n_ranks = u;
	return 0;
}

static int remember(const char ***v, size_t *n, const char *arg)
{
	const char **grown = realloc(*v, (*n + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	*v = grown;
	grown[(*n)++] = arg;
	return 0;
}

static int parse_options(struct rs_ctx *x, int argc, char **argv)
{
	static const struct option options[] = {
		CLI_COMMON_OPTIONS,
		{ "output", required_argument, NULL, OPT_OUTPUT },
		{ 0 },
	};
	int opt;

	optind = 1;
	cli_command_argv = argv; /* argv after FORMAT: errors name its options */
	while ((opt = getopt_long(argc, argv, "ho:i:e:r:", options, NULL)) != -1) {
		int h, err = 0;

		if (opt == 'o' || opt == OPT_OUTPUT) {
			x->output = optarg;
			continue;
		}
		if (opt == 'h' || opt == 'i' || opt == 'e' || opt == 'r')
			opt = opt == 'h' ? OPT_HELP : opt == 'i' ? OPT_INCLUDE
			      : opt == 'e' ? OPT_EXCLUDE : OPT_RANKS;
		h = cli_common_option(&x->c, opt, optarg);
		if (h < 0)
			return -1;
		if (h == 0) {
			cli_usage_error(&x->c, "invalid option");
			return -1;
		}
		if (opt == OPT_INCLUDE)
			err = remember(&x->include, &x->n_include, optarg);
		else if (opt == OPT_EXCLUDE)
			err = remember(&x->exclude, &x->n_exclude, optarg);
		else if (opt == OPT_RANKS)
			err = add_rank_spec(x, optarg);
		if (err < 0) {
			cli_error(&x->c, "out of memory");
			return -1;
		}
	}
	return 0;
}

int export_region_stats_run(int argc, char **argv)
{
	struct rs_ctx x;
	int rc;

	if (argc < 1 || strcmp(argv[0], "region-statistics") != 0)
		return -1;
	memset(&x, 0, sizeof(x));
	if (cli_common_init(&x.c, "export", usage) < 0)
		return EXIT_USAGE;
	rc = parse_options(&x, argc, argv) < 0 ? EXIT_USAGE : 0;
	if (rc == 0 && x.c.help)
		printf("%s\nregion-statistics: per-region duration statistics "
		       "(region_statistics.json)\n", export_help);
	else if (rc == 0 && (cli_collect_files(&x.c, argc, argv, optind) < 0 ||
			     x.c.n_files == 0))
		rc = cli_usage_error(&x.c, "no profile file given");
	else if (rc == 0 && !x.output)
		rc = cli_usage_error(&x.c, "no output given (-o PATH)");
	else if (rc == 0)
		rc = run(&x);
	free(x.include);
	free(x.exclude);
	free(x.ranks);
	cli_common_fini(&x.c);
	return rc;
}
