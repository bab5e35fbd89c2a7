/* SPDX-License-Identifier: MIT */
/*
 * `scope-profiler export chrome-trace|speedscope|folded|json|plot-data`:
 * the format table, option parsing, loading the inputs (time origin and
 * window of each) and naming the outputs; the writers live in export-*.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "export.h"
#include "sp-duration.h"

/* call_bytes measured on a LULESH-shaped file (22-byte names): chrome-trace
 * 127 B per call (the name in each), speedscope 78, json 30. */
static const struct export_format formats[] = {
	{ "chrome-trace", ".trace.json", "Trace Event JSON (Perfetto, chrome://tracing)",
	  export_chrome_write, NULL, 105, true },
	{ "speedscope", ".speedscope.json", "speedscope evented profiles (one per rank/thread)",
	  export_speedscope_write, NULL, 78, false },
	{ "folded", ".folded", "folded stacks (flamegraph.pl, inferno, speedscope)",
	  export_folded_write, NULL, 0, false },
	{ "json", ".json", "JSON profile v1 (read back by every command)",
	  export_json_write, NULL, 30, false },
	{ "plot-data", NULL, "the data behind each chart, CSV or JSON (<kind>_data.csv|json)",
	  NULL, export_plot_data_write, 0, false },
};
#define N_FORMATS (sizeof(formats) / sizeof(formats[0]))

enum {
	OPT_OUTPUT = OPT_FIRST_COMMAND_SPECIFIC, OPT_MIN_DURATION, OPT_START,
	OPT_END, OPT_MERGE_RANKS, OPT_FORMAT, OPT_PLOTS, OPT_METRICS,
	OPT_IMBALANCE_METRIC, OPT_X, OPT_CMAP,
};

static const char usage[] =
	"chrome-trace|speedscope|folded|json|plot-data FILE... -o PATH\n"
	"       [--include RE]... [--exclude RE]... [--ranks 0,2,4-7]\n"
	"       [--min-duration DUR] [--start TIME] [--end TIME]   (traces, folded, gantt)\n"
	"       [--merge-ranks]                                    (folded)\n"
	"       [--format csv|json] [--plots KIND,...] [--metrics total,avg,min,max]\n"
	"       [--imbalance-metric METRIC] [--x FIELD] [--cmap PALETTE]  (plot-data)";

const char *export_formats_names(void)
{
	return "chrome-trace, speedscope, folded, json, plot-data";
}

static int time_option(struct export_ctx *x, const char *what, const char *arg,
		       int64_t *ret)
{
	if (ex_parse_duration(arg, ret) == 0)
		return 1;
	cli_usage_error(&x->c, "invalid duration '%s' for %s (use " SP_DURATION_EXAMPLES ")",
			arg, what);
	return -1;
}

/* Options of export itself. 1 handled, 0 unknown, -1 error (reported). */
static int own_option(struct export_ctx *x, int opt, const char *arg)
{
	switch (opt) {
	case 'o': case OPT_OUTPUT: x->output = arg; return 1;
	case OPT_MIN_DURATION:
		return time_option(x, "--min-duration", arg, &x->min_duration_ns);
	case OPT_START:
		x->has_start = true;
		return time_option(x, "--start", arg, &x->start_ns);
	case OPT_END:
		x->has_end = true;
		return time_option(x, "--end", arg, &x->end_ns);
	case OPT_MERGE_RANKS: x->merge_ranks = true; return 1;
	case OPT_FORMAT:
		if (strcmp(arg, "csv") && strcmp(arg, "json")) {
			cli_usage_error(&x->c, "invalid --format '%s' (choose from csv, json)", arg);
			return -1;
		}
		x->pd.json = strcmp(arg, "json") == 0;
		return 1;
	case OPT_PLOTS: x->pd.plots = arg; return 1;
	case OPT_METRICS: x->pd.metrics = arg; return 1;
	case OPT_IMBALANCE_METRIC: x->pd.imbalance_metric = arg; return 1;
	case OPT_X: x->pd.x_field = arg; return 1;
	case OPT_CMAP: x->pd.cmap = arg; return 1;
	}
	return 0;
}

/* Keep --include/--exclude/--ranks as given, for export_region_stats_run. */
static int remember_filter(struct export_ctx *x, int opt, const char *arg)
{
	const char *name = opt == OPT_INCLUDE ? "include" : opt == OPT_EXCLUDE
			   ? "exclude" : opt == OPT_RANKS ? "ranks" : NULL;
	char **v;

	if (!name)
		return 0;
	v = realloc(x->filter_args, (x->n_filter_args + 1) * sizeof(*v));
	if (!v || asprintf(&v[x->n_filter_args], "--%s=%s", name, arg) < 0) {
		if (v)
			x->filter_args = v;
		cli_error(&x->c, "out of memory");
		return -1;
	}
	x->filter_args = v;
	x->n_filter_args++;
	return 0;
}

static int parse_options(struct export_ctx *x, int argc, char **argv)
{
	static const struct option options[] = {
		CLI_COMMON_OPTIONS,
		{ "output", required_argument, NULL, OPT_OUTPUT },
		{ "min-duration", required_argument, NULL, OPT_MIN_DURATION },
		{ "start", required_argument, NULL, OPT_START },
		{ "end", required_argument, NULL, OPT_END },
		{ "merge-ranks", no_argument, NULL, OPT_MERGE_RANKS },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "plots", required_argument, NULL, OPT_PLOTS },
		{ "metrics", required_argument, NULL, OPT_METRICS },
		{ "imbalance-metric", required_argument, NULL, OPT_IMBALANCE_METRIC },
		{ "x", required_argument, NULL, OPT_X },
		{ "cmap", required_argument, NULL, OPT_CMAP },
		{ 0 },
	};
	int opt;

	optind = 1;
	cli_command_argv = argv; /* argv after FORMAT: errors name its options */
	while ((opt = getopt_long(argc, argv, "ho:i:e:r:", options, NULL)) != -1) {
		int h;

		if (opt == 'h' || opt == 'i' || opt == 'e' || opt == 'r')
			opt = opt == 'h' ? OPT_HELP : opt == 'i' ? OPT_INCLUDE
			      : opt == 'e' ? OPT_EXCLUDE : OPT_RANKS;
		h = cli_common_option(&x->c, opt, optarg);
		if (h > 0 && remember_filter(x, opt, optarg) < 0)
			h = -1;
		if (h == 0)
			h = own_option(x, opt, optarg);
		if (h < 0)
			return -1;
		if (h == 0) {
			cli_usage_error(&x->c, "invalid option");
			return -1;
		}
	}
	if (x->c.json)
		x->pd.json = true;
	if (x->has_start && x->has_end && x->end_ns <= x->start_ns) {
		cli_usage_error(&x->c, "--end must be after --start");
		return -1;
	}
	return 0;
}

/* File stem: basename without .h5/.hdf5/.json/.json.gz/.spt. */
static char *make_label(struct export_ctx *x, const char *path)
{
	static const char *const exts[] = { ".json.gz", ".h5", ".hdf5", ".json", ".spt" };
	const char *base = strrchr(path, '/');
	char *label, *dup;
	size_t len;

	base = base ? base + 1 : path;
	len = strlen(base);
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		size_t el = strlen(exts[i]);

		if (len > el && strcmp(base + len - el, exts[i]) == 0) {
			len -= el;
			break;
		}
	}
	label = strndup(base, len);
	for (int k = 2; label; k++) {
		bool seen = false;

		for (size_t i = 0; i < x->n_files && !seen; i++)
			seen = strcmp(x->files[i].label, label) == 0;
		if (!seen)
			return label;
		free(label);
		if (asprintf(&dup, "%.*s-%d", (int)len, base, k) < 0)
			return NULL;
		label = dup;
	}
	return NULL;
}

/* First entry and last exit over every event of the file. */
static void file_times(struct export_ctx *x, struct export_file *f)
{
	const int64_t *s = sp_reader_column(f->r, SP_COL_START_TIMES);
	const int64_t *e = sp_reader_column(f->r, SP_COL_END_TIMES);
	size_t n = sp_reader_num_events(f->r);
	int64_t lo = INT64_MAX, hi = INT64_MIN;

	for (size_t k = 0; k < n; k++) {
		if (s[k] < lo)
			lo = s[k];
		if (e[k] > hi)
			hi = e[k];
	}
	f->origin_ns = n ? lo : 0;
	f->span_ns = n ? hi - lo : 0;
	f->lo_ns = f->origin_ns + (x->has_start ? x->start_ns : 0);
	f->hi_ns = x->has_end ? f->origin_ns + x->end_ns : f->origin_ns + f->span_ns;
	if (f->hi_ns > f->origin_ns + f->span_ns)
		f->hi_ns = f->origin_ns + f->span_ns;
	if (f->hi_ns < f->lo_ns)
		f->hi_ns = f->lo_ns;
}

static int load_files(struct export_ctx *x)
{
	x->files = calloc(x->c.n_files, sizeof(*x->files));
	if (!x->files) {
		cli_error(&x->c, "out of memory");
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < x->c.n_files; i++) {
		struct export_file *f = &x->files[x->n_files];
		int rc = cli_open(&x->c, x->c.files[i], &f->r);

		if (rc)
			return rc;
		f->path = x->c.files[i];
		f->label = make_label(x, f->path);
		x->n_files++;
		if (!f->label) {
			cli_error(&x->c, "out of memory");
			return EXIT_USAGE;
		}
		file_times(x, f);
	}
	return 0;
}

static bool is_dir_path(const char *path)
{
	struct stat st;
	size_t n = strlen(path);

	return (n && path[n - 1] == '/') ||
	       (stat(path, &st) == 0 && S_ISDIR(st.st_mode));
}

/* Warn above this output / input size ratio (a trace that big is slow to
 * write and to load; --min-duration shrinks it). */
#define SIZE_WARN_RATIO 100

static void human_bytes(char *buf, size_t size, double b)
{
	static const char *const unit[] = { "B", "kB", "MB", "GB", "TB", "PB" };
	size_t u = 0;

	while (b >= 1000 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		b /= 1000;
		u++;
	}
	snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", b, unit[u]);
}

static void warn_size(const struct export_ctx *x, const struct export_file *f)
{
	uint64_t in = sp_reader_file_size(f->r), out = ex_estimate_bytes(x, f);
	char a[32], b[32];

	if (in == 0 || out / SIZE_WARN_RATIO <= in)
		return;
	human_bytes(a, sizeof(a), (double)out);
	human_bytes(b, sizeof(b), (double)in);
	cli_error(&x->c, "warning: %s: the %s output will be about %s, %.0fx the "
		  "input (%s); --min-duration DUR (e.g. 1us) leaves out shorter calls, "
		  "--start/--end export a time window", f->path, x->format->name, a,
		  (double)out / (double)in, b);
}

/* One output per input: PATH itself, or PATH/<label><suffix>. */
static int write_per_input(struct export_ctx *x)
{
	bool dir = x->n_files > 1 || is_dir_path(x->output);
	int rc = 0;

	if (strcmp(x->output, "-") == 0 && x->n_files > 1)
		return cli_usage_error(&x->c, "-o - (stdout) takes a single input file");
	if (strcmp(x->output, "-") == 0)
		dir = false;
	for (size_t i = 0; i < x->n_files; i++)
		if (x->format->write_one != export_json_write &&
		    sp_reader_layout(x->files[i].r) == SP_LAYOUT_AGGREGATE) {
			cli_error(&x->c, "%s: no timeline (aggregate layout) for %s; "
				  "export json or plot-data durations instead",
				  x->files[i].path, x->format->name);
			return EXIT_USAGE;
		}
	if (dir && (rc = ex_make_dir(x, x->output)))
		return rc;
	for (size_t i = 0; i < x->n_files && rc == 0; i++) {
		struct export_file *f = &x->files[i];
		struct ex_output o;
		char *path = NULL;

		warn_size(x, f);

		if (dir && asprintf(&path, "%s%s%s%s", x->output,
				    x->output[strlen(x->output) - 1] == '/' ? "" : "/",
				    f->label, x->format->suffix) < 0) {
			cli_error(&x->c, "out of memory");
			return EXIT_USAGE;
		}
		rc = ex_open_output(x, dir ? path : x->output, &o);
		if (rc == 0) {
			rc = x->format->write_one(x, f, o.f);
			rc = ex_close_output(x, &o, rc == 0) ? EXIT_USAGE : rc;
		}
		free(path);
	}
	return rc;
}

static int run(struct export_ctx *x)
{
	int rc;

	if (x->c.n_files == 0)
		return cli_usage_error(&x->c, "no profile file given");
	if (!x->output)
		return cli_usage_error(&x->c, "no output given (-o PATH)");
	if (x->format->write_all && strcmp(x->output, "-") == 0)
		return cli_usage_error(&x->c, "%s writes a directory; -o - is not possible",
				       x->format->name);
	if ((rc = load_files(x)))
		return rc;
	return x->format->write_all ? x->format->write_all(x) : write_per_input(x);
}

int export_formats_run(int argc, char **argv)
{
	struct export_ctx x;
	int rc;

	memset(&x, 0, sizeof(x));
	for (size_t i = 0; i < N_FORMATS && !x.format; i++)
		if (argc > 0 && strcmp(argv[0], formats[i].name) == 0)
			x.format = &formats[i];
	if (!x.format)
		return -1;
	if (cli_common_init(&x.c, "export", usage) < 0)
		return EXIT_USAGE;
	rc = parse_options(&x, argc, argv) < 0 ? EXIT_USAGE : 0;
	if (rc == 0 && x.c.help) {
		fputs(export_help, stdout);
		printf("\n%s: %s\n", x.format->name, x.format->help);
	} else if (rc == 0) {
		rc = cli_collect_files(&x.c, argc, argv, optind) < 0 ? EXIT_USAGE : 0;
		if (rc == 0)
			rc = run(&x);
	}
	for (size_t i = 0; i < x.n_files; i++) {
		sp_reader_destroy(x.files[i].r);
		free(x.files[i].label);
	}
	free(x.files);
	for (size_t i = 0; i < x.n_filter_args; i++)
		free(x.filter_args[i]);
	free(x.filter_args);
	cli_common_fini(&x.c);
	return rc;
}
