/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler plot [KIND] FILES... -o DIR: write SVG charts (Gantt,
 * flame chart, durations, imbalance, speedup, weak scaling, or the presets
 * default / all) drawn natively from the charts of charts.h, with the
 * selection, colormap and plot-data (--data csv|json) options.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "charts.h"
#include "cli-common.h"
#include "cli-progress.h"
#include "commands.h"
#include "plot.h"

enum {
	OPT_OUT = OPT_FIRST_COMMAND_SPECIFIC, OPT_CMAP, OPT_METRICS, OPT_DATA,
	OPT_X, OPT_LABEL, OPT_WIDTH, OPT_MAX_BARS,
};

static const struct {
	const char *name;
	unsigned kinds;
	const char *help;
} kinds[] = {
	{ "default", K_GANTT | K_FLAME | K_DURATIONS | K_SPEEDUP,
	  "gantt, flame, durations and (several files) speedup" },
	{ "all", K_GANTT | K_FLAME | K_DURATIONS | K_IMBALANCE | K_SPEEDUP | K_WEAK,
	  "every chart (scaling charts need several files)" },
	{ "gantt", K_GANTT, "timeline, one lane per rank/thread" },
	{ "flame", K_FLAME, "flame chart of rank 0 (or each --ranks rank)" },
	{ "flame_chart", K_FLAME, "alias of flame" },
	{ "durations", K_DURATIONS, "bars per region: --metrics total,avg,min,max" },
	{ "imbalance", K_IMBALANCE, "per-rank totals of each region vs the mean" },
	{ "speedup", K_SPEEDUP, "speedup per region over several files (--x)" },
	{ "weak_scaling", K_WEAK, "normalized runtime over several files (--x)" },
};

#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

static const char usage[] =
	"[KIND] FILE... -o DIR|FILE.svg [--include RE]... [--exclude RE]... [--ranks 0,2,4-7]\n"
	"       [--cmap tab20|tab10|...] [--metrics total,avg,min,max] [--data csv|json]\n"
	"       [--x num_ranks|omp_num_threads|total_cores|KEY] [--label L]...\n"
	"       [--width PX] [--max-bars N] [--json]     (KIND 'list' lists the kinds)";

/* --help, in the help format of docs/CLI.md (man page and completion are
 * generated from it: tools/cli/gen-docs.py). */
static const char help[] =
	"usage: scope-profiler plot [options] [KIND] FILE...\n"
	"\n"
	"Write SVG charts into DIR, or the one chart drawn to FILE.svg. KIND is\n"
	"default (gantt, flame, durations and, with several files, speedup), all,\n"
	"gantt, flame (flame_chart), durations, imbalance, speedup or weak_scaling;\n"
	"'plot list' lists them. A first operand that is neither a kind nor a file\n"
	"is an error.\n"
	"\n"
	"options:\n"
	"  -o, --output DIR      the directory to write the charts to (required); a\n"
	"                        name ending in .svg that is not a directory is the\n"
	"                        file of the one chart drawn (one kind, one rank for\n"
	"                        flame, one metric for durations; no\n"
	"                        region_statistics.json)\n"
	"  --cmap PALETTE        colour palette: tab20, tab10, tab20b, tab20c, ...\n"
	"                        (default: tab20)\n"
	"  --metrics LIST        durations chart: comma list of total, avg, min, max\n"
	"                        (default: all four)\n"
	"  --data FMT            also write the data behind each chart: csv or json\n"
	"  --x FIELD             scaling charts: num_ranks, omp_num_threads,\n"
	"                        total_cores or a metadata KEY (default: num_ranks)\n"
	"  --label L             label of the next file in the charts (repeatable)\n"
	"  --width PX            chart width in pixels, 100-20000 (default: 900)\n"
	"  --max-bars N          most bars drawn per chart (default: 20000)\n"
	"  --json                print what was written as JSON\n"
	CLI_HELP_FILTERS
	"  -r, --ranks LIST      only these ranks, e.g. 0,2,4-7 (default: all); a rank\n"
	"                        the file does not have is an error\n"
	"  -h, --help            print this help and exit\n";

/* -o FILE.svg: a name ending in .svg that is not an existing directory
 * (which stays a directory, as before) names the one chart's file. */
static bool names_svg_file(const char *out)
{
	size_t n = strlen(out);
	struct stat st;

	if (n < 5 || strcasecmp(out + n - 4, ".svg") != 0)
		return false;
	return stat(out, &st) != 0 || !S_ISDIR(st.st_mode);
}

static int find_kind(const char *name)
{
	for (size_t i = 0; i < N_KINDS; i++)
		if (strcmp(kinds[i].name, name) == 0)
			return (int)i;
	return -1;
}

static void list_kinds(void)
{
	for (size_t i = 0; i < N_KINDS; i++)
		printf("%-13s %s\n", kinds[i].name, kinds[i].help);
}

static int parse_metrics(struct plot_run *p, const char *arg)
{
	char *copy = strdup(arg), *save = NULL;
	int rc = copy ? 0 : -ENOMEM;

	for (char *t = copy ? strtok_r(copy, ", ", &save) : NULL; t && rc == 0;
	     t = strtok_r(NULL, ", ", &save)) {
		enum dur_metric m;

		if (dur_metric_parse(t, &m) < 0) {
			cli_usage_error(&p->c, "unknown metric '%s' (choose from total, avg, min, max)",
					t);
			rc = -EINVAL;
		} else {
			p->metric_set |= 1u << m;
		}
	}
	free(copy);
	return rc;
}

/* Command-specific options. 0 handled, -1 error (reported). */
static int own_option(struct plot_run *p, int opt, const char *arg)
{
	char *end;

	switch (opt) {
	case OPT_OUT: p->out = arg; return 0;
	case OPT_CMAP: p->cmap = arg; return 0;
	case OPT_X: p->x_field = arg; return 0;
	case OPT_METRICS: return parse_metrics(p, arg) < 0 ? -1 : 0;
	case OPT_DATA:
		if (strcmp(arg, "csv") && strcmp(arg, "json"))
			return cli_usage_error(&p->c, "--data must be csv or json, not '%s'", arg), -1;
		p->data = arg;
		return 0;
	case OPT_LABEL:
		p->labels[p->n_labels < PLOT_MAX_LABELS ? p->n_labels++ : p->n_labels - 1] = arg;
		return 0;
	case OPT_WIDTH:
		p->o.width = strtod(arg, &end);
		if (*end || p->o.width < 100 || p->o.width > 20000)
			return cli_usage_error(&p->c, "--width must be 100..20000 pixels"), -1;
		return 0;
	case OPT_MAX_BARS:
		p->o.max_bars = strtoull(arg, &end, 10);
		if (*end || !*arg)
			return cli_usage_error(&p->c, "--max-bars needs a number"), -1;
		return 0;
	}
	return cli_usage_error(&p->c, "invalid option"), -1;
}

static int parse(struct plot_run *p, int argc, char **argv)
{
	static const struct option options[] = {
		CLI_COMMON_OPTIONS,
		{ "output", required_argument, NULL, OPT_OUT },
		{ "cmap", required_argument, NULL, OPT_CMAP },
		{ "metrics", required_argument, NULL, OPT_METRICS },
		{ "data", required_argument, NULL, OPT_DATA },
		{ "x", required_argument, NULL, OPT_X },
		{ "label", required_argument, NULL, OPT_LABEL },
		{ "width", required_argument, NULL, OPT_WIDTH },
		{ "max-bars", required_argument, NULL, OPT_MAX_BARS },
		{ 0 },
	};
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "ho:i:e:r:", options, NULL)) != -1) {
		int h;

		opt = opt == 'h' ? OPT_HELP : opt == 'o' ? OPT_OUT : opt == 'i' ? OPT_INCLUDE
		    : opt == 'e' ? OPT_EXCLUDE : opt == 'r' ? OPT_RANKS : opt;
		h = cli_common_option(&p->c, opt, optarg);
		if (h < 0)
			return -1;
		if ((opt == OPT_INCLUDE || opt == OPT_EXCLUDE || opt == OPT_RANKS) &&
		    p->n_fwd + 2 <= sizeof(p->fwd) / sizeof(p->fwd[0])) {
			p->fwd[p->n_fwd++] = opt == OPT_INCLUDE ? "--include"
					     : opt == OPT_EXCLUDE ? "--exclude" : "--ranks";
			p->fwd[p->n_fwd++] = optarg;
		}
		if (h == 0 && own_option(p, opt, optarg) < 0)
			return -1;
	}
	return 0;
}

/* KIND (if the first operand names one and is not a file), then files. */
static int operands(struct plot_run *p, int argc, char **argv)
{
	int first = optind, k;
	struct stat sb;

	p->kinds = kinds[0].kinds;
	p->preset = true;
	if (first < argc && (k = find_kind(argv[first])) >= 0 && stat(argv[first], &sb) != 0) {
		p->kinds = kinds[k].kinds;
		p->preset = k < 2;
		first++;
	} else if (first < argc && strcmp(argv[first], "list") == 0) {
		p->list = true;
		return 0;
	} else if (first < argc && stat(argv[first], &sb) != 0 &&
		   !strpbrk(argv[first], "./*?[")) {
		/* Not a file and not a path: a mistyped kind, not "No such file". */
		const char *names[N_KINDS], *guess;

		for (size_t i = 0; i < N_KINDS; i++)
			names[i] = kinds[i].name;
		guess = cli_suggest(argv[first], names, N_KINDS);
		fprintf(stderr, "scope-profiler plot: '%s' is not a chart kind ", argv[first]);
		if (guess)
			fprintf(stderr, "(did you mean '%s'?) ", guess);
		fprintf(stderr, "nor a file; kinds: ");
		for (size_t i = 0; i < N_KINDS; i++)
			fprintf(stderr, "%s%s", i ? ", " : "", names[i]);
		fprintf(stderr, " (see 'scope-profiler plot --help')\n");
		return -1;
	}
	if (cli_collect_files(&p->c, argc, argv, first) < 0 || p->c.n_files == 0)
		return cli_usage_error(&p->c, "no profile file given"), -1;
	if (!p->out)
		return cli_usage_error(&p->c, "missing -o DIR (where to write the charts)"), -1;
	p->one_file = names_svg_file(p->out);
	if (p->one_file && p->data)
		return cli_usage_error(&p->c, "--data writes several files: give -o a directory, "
				       "not '%s'", p->out), -1;
	if (p->n_labels > p->c.n_files)
		return cli_usage_error(&p->c, "%zu --label for %zu file(s)", p->n_labels,
				       p->c.n_files), -1;
	if (!p->preset && (p->kinds & (K_SPEEDUP | K_WEAK)) && p->c.n_files < 2)
		return cli_usage_error(&p->c, "%s needs at least two files",
				       p->kinds & K_SPEEDUP ? "speedup" : "weak_scaling"), -1;
	return 0;
}

int cmd_plot(int argc, char **argv)
{
	struct plot_run p;
	int rc = EXIT_USAGE;

	memset(&p, 0, sizeof(p));
	chart_opts_default(&p.o);
	p.o.standalone = true;
	p.x_field = "num_ranks";
	if (cli_common_init(&p.c, "plot", usage) < 0)
		return EXIT_USAGE;
	if (parse(&p, argc, argv) < 0)
		goto out;
	if (p.c.help) {
		fputs(help, stdout);
		rc = EXIT_OK;
		goto out;
	}
	if (operands(&p, argc, argv) < 0)
		goto out;
	if (p.list) {
		list_kinds();
		rc = EXIT_OK;
		goto out;
	}
	if (!p.metric_set)
		p.metric_set = 0xf;
	p.o.sel = p.c.sel;
	struct cli_progress *progress = cli_progress_begin("plot", 0);
	rc = plot_run(&p);
	cli_progress_stop(progress);
out:
	cli_common_fini(&p.c);
	return rc;
}
