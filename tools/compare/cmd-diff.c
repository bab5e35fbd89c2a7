/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler diff A B: one metric per region of two runs side by side,
 * with the absolute and relative change (§4.4 of the Python reference):
 * regions found in only one run are listed, --threshold hides small changes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli-common.h"
#include "commands.h"
#include "compare.h"

enum { OPT_METRIC = OPT_FIRST_COMMAND_SPECIFIC, OPT_SORT, OPT_THRESHOLD };

static const char usage[] =
	"A B [--metric " CMP_METRIC_NAMES "]\n"
	"       [--sort delta|pct|name] [--threshold PCT] [--json]\n"
	"       [--include RE]... [--exclude RE]... [--ranks 0,2,4-7]";

/* --help, in the help format of docs/CLI.md (man page and completion are
 * generated from it: tools/cli/gen-docs.py). */
static const char help[] =
	"usage: scope-profiler diff [options] A B\n"
	"\n"
	"Compare one statistic per region between two profiles (A = before,\n"
	"B = after). delta = B - A (a missing side counts as 0); delta [%] =\n"
	"delta / A * 100, '-' when A is missing or 0. Statistics are pooled over\n"
	"the selected ranks.\n"
	"\n"
	"options:\n"
	"  --metric M            total, avg, min, max, p50, p95, p99, imbalance or\n"
	"                        calls (default: total)\n"
	"  --sort KEY            delta: descending |delta|; pct: descending\n"
	"                        |delta [%]| (no percentage last); name (default:\n"
	"                        delta)\n"
	"  --threshold PCT       hide regions whose |delta [%]| is below PCT; regions\n"
	"                        in only one profile are always shown (default: 0)\n"
	"  --json                {a, b, metric, rows: [{name, a, b, delta, pct}],\n"
	"                        only_in_a, only_in_b}; null for a missing value\n"
	CLI_HELP_FILTERS
	"  -r, --ranks LIST      only these ranks, e.g. 0,2,4-7 (default: all); a rank\n"
	"                        the file does not have is an error\n"
	"  -h, --help            print this help and exit\n";

struct diff_opts {
	enum cmp_metric metric;
	enum cmp_sort sort;
	double threshold; /* NAN: none */
};

static void json_only_in(struct json_writer *w, const struct cmp_diff *d,
			 bool in_a)
{
	jw_key(w, in_a ? "only_in_a" : "only_in_b");
	jw_begin_array(w);
	for (size_t i = 0; i < d->n; i++)
		if (in_a ? !d->rows[i].has_b : !d->rows[i].has_a)
			jw_string(w, d->rows[i].name);
	jw_end_array(w);
}

static void emit_json(struct sp_reader *ra, struct sp_reader *rb,
		      const struct cmp_diff *d, const struct diff_opts *o)
{
	static const char *const sorts[] = { "delta", "pct", "name" };
	struct json_writer w;

	jw_init(&w, stdout, true);
	jw_begin_object(&w);
	cmp_json_run(&w, "a", ra);
	cmp_json_run(&w, "b", rb);
	jw_key(&w, "metric"); jw_string(&w, cmp_metric_name(o->metric));
	jw_key(&w, "sort"); jw_string(&w, sorts[o->sort]);
	jw_key(&w, "threshold"); jw_double(&w, o->threshold);
	jw_key(&w, "rows");
	jw_begin_array(&w);
	for (size_t i = 0; i < d->n; i++) {
		const struct cmp_row *r = &d->rows[i];

		jw_begin_object(&w);
		jw_key(&w, "name"); jw_string(&w, r->name);
		jw_key(&w, "a"); cmp_json_value(&w, r->has_a, r->a, o->metric);
		jw_key(&w, "b"); cmp_json_value(&w, r->has_b, r->b, o->metric);
		jw_key(&w, "delta"); cmp_json_value(&w, true, r->delta, o->metric);
		jw_key(&w, "pct"); cmp_json_value(&w, r->has_pct, r->pct, CMP_TOTAL);
		jw_end_object(&w);
	}
	jw_end_array(&w);
	json_only_in(&w, d, true);
	json_only_in(&w, d, false);
	jw_end_object(&w);
	jw_finish(&w);
}

static void print_text(struct sp_reader *ra, struct sp_reader *rb,
		       const struct cmp_diff *d, enum cmp_metric m)
{
	char ta[4200], tb[4200], title[64];
	static const char eq[] = "=============================================="
				 "================================";

	cmp_run_title(ra, ta, sizeof(ta));
	cmp_run_title(rb, tb, sizeof(tb));
	printf("%s\na: %s\nb: %s\n%s\n\n", eq, ta, tb, eq);
	snprintf(title, sizeof(title), "Regions (%zu)", d->n);
	cmp_print_diff(stdout, d, m, title);
}

static int run(struct cli_common *c, const struct diff_opts *o)
{
	struct sp_reader *ra = NULL, *rb = NULL;
	struct cmp_side sa = { 0 }, sb = { 0 };
	struct cmp_diff d = { 0 };
	int rc;

	rc = cli_open(c, c->files[0], &ra);
	if (rc == 0)
		rc = cli_open(c, c->files[1], &rb);
	if (rc == 0)
		cmp_warn_mismatch(c, c->files[0], ra, c->files[1], rb, true);
	if (rc == 0 && (cmp_side_collect(ra, c->sel, o->metric, &sa) < 0 ||
			cmp_side_collect(rb, c->sel, o->metric, &sb) < 0 ||
			cmp_diff_build(&sa, &sb, o->threshold, o->sort, &d) < 0)) {
		cli_error(c, "out of memory");
		rc = EXIT_USAGE;
	}
	if (rc == 0 && c->json)
		emit_json(ra, rb, &d, o);
	else if (rc == 0)
		print_text(ra, rb, &d, o->metric);
	cmp_diff_free(&d);
	cmp_side_free(&sa);
	cmp_side_free(&sb);
	sp_reader_destroy(ra);
	sp_reader_destroy(rb);
	return rc;
}

/* Parse one diff-specific option. Returns 0 or EXIT_USAGE (reported). */
static int parse_option(struct cli_common *c, int opt, const char *arg,
			struct diff_opts *o)
{
	char *end;

	switch (opt) {
	case OPT_METRIC:
		if (cmp_metric_parse(arg, &o->metric) == 0)
			return 0;
		return cli_usage_error(c, "unknown metric '%s' (choose from %s)",
				       arg, CMP_METRIC_NAMES);
	case OPT_SORT:
		if (cmp_sort_parse(arg, &o->sort) == 0)
			return 0;
		return cli_usage_error(c, "unknown sort key '%s' (choose from delta, pct, name)",
				       arg);
	case OPT_THRESHOLD:
		o->threshold = strtod(arg, &end);
		if (*arg && !*end && isfinite(o->threshold))
			return 0;
		return cli_usage_error(c, "--threshold: '%s' is not a number", arg);
	default:
		return cli_usage_error(c, "invalid option");
	}
}

int cmd_diff(int argc, char **argv)
{
	static const struct option options[] = {
		CLI_COMMON_OPTIONS,
		{ "metric", required_argument, NULL, OPT_METRIC },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ 0 },
	};
	struct diff_opts o = { CMP_TOTAL, CMP_SORT_DELTA, NAN };
	struct cli_common c;
	int opt, rc = 0;

	if (cli_common_init(&c, "diff", usage) < 0)
		return EXIT_USAGE;
	optind = 1;
	while (rc == 0 && (opt = getopt_long(argc, argv, "hi:e:r:", options, NULL)) != -1) {
		int h = cli_common_option(&c, opt == 'h' ? OPT_HELP : opt, optarg);

		if (h < 0)
			rc = EXIT_USAGE;
		else if (h == 0)
			rc = parse_option(&c, opt, optarg, &o);
	}
	if (rc == 0 && c.help) {
		fputs(help, stdout);
	} else if (rc == 0) {
		if (cli_collect_files(&c, argc, argv, optind) < 0)
			rc = cli_usage_error(&c, "out of memory");
		else if (c.n_files != 2)
			rc = cli_usage_error(&c, "expected two profiles (A B), got %zu",
					     c.n_files);
		else
			rc = run(&c, &o);
	}
	cli_common_fini(&c);
	return rc;
}
