/* SPDX-License-Identifier: MIT */
/*
 * scope-profiler check: a regression gate for CI. `check BASE CAND` applies
 * the budget to one pair of runs (§4.5); `check --base B... --cand C...`
 * compares repeated runs and fails only on a statistically significant
 * slowdown beyond the budget (check-repeated.c). Exit 1 on a violation.
 */
#include <glob.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli-common.h"
#include "commands.h"
#include "compare.h"

enum {
	OPT_MAX_REGRESSION = OPT_FIRST_COMMAND_SPECIFIC, OPT_METRIC,
	OPT_FAIL_ON_NEW, OPT_CONFIDENCE, OPT_RESAMPLES,
};

static const char usage[] =
	"BASE CAND [--max-regression PCT] [--metric M] [--fail-on-new] [--json]\n"
	"       [--include RE]... [--exclude RE]... [--ranks 0,2,4-7]\n"
	"   or: scope-profiler check --base B1 B2... --cand C1 C2... [same options]\n"
	"       [--confidence PCT] [--resamples N]";

/* --help, in the help format of docs/CLI.md (man page and completion are
 * generated from it: tools/cli/gen-docs.py). */
static const char help[] =
	"usage: scope-profiler check [options] BASE CAND\n"
	"   or: scope-profiler check [options] --base B1 B2... --cand C1 C2...\n"
	"\n"
	"Fail (exit 1) when a region got slower than the budget allows.\n"
	"\n"
	"One run per side (BASE CAND): a region fails when its change\n"
	"delta [%] = (cand - base) / base * 100 is greater than PCT. Regions that\n"
	"disappear or whose baseline is 0 never fail.\n"
	"\n"
	"Repeated runs (--base FILES... --cand FILES..., globs accepted): per\n"
	"region, each run gives one sample of the metric (over the selected ranks).\n"
	"The estimate is the change of medians, median(cand) / median(base) - 1,\n"
	"with a percentile-bootstrap confidence interval (fixed seed). A region\n"
	"FAILS only when the whole interval lies above the budget AND a one-sided\n"
	"Mann-Whitney U rank test rejects 'cand = base * (1 + PCT/100)' at level\n"
	"(1 - confidence) / 2. A slowdown that is not significant is reported as\n"
	"'inconclusive' and passes.\n"
	"\n"
	"options:\n"
	"  --max-regression PCT  allowed slowdown in percent (default: 0)\n"
	"  --metric M            total, avg, min, max, p50, p95, p99, imbalance or\n"
	"                        calls (default: total)\n"
	"  --fail-on-new         also fail on regions missing from the baseline\n"
	"  --base FILE...        repeated runs: the baseline runs\n"
	"  --cand FILE...        repeated runs: the candidate runs\n"
	"  --confidence PCT      repeated runs: confidence level (default: 95)\n"
	"  --resamples N         repeated runs: bootstrap resamples (default: 10000)\n"
	"  --json                machine-readable verdict (same exit codes)\n"
	CLI_HELP_FILTERS
	"  -r, --ranks LIST      only these ranks, e.g. 0,2,4-7 (default: all); a rank\n"
	"                        the file does not have is an error\n"
	"  -h, --help            print this help and exit\n"
	"\n"
	"With too few repeated runs no region can ever fail (fewer than 4 per side\n"
	"at 95 %): check then refuses to run (exit 2) instead of passing. Use at\n"
	"least 5 runs per side and interleave base and candidate runs; see\n"
	"docs/COMPARE.md.\n";

static const char eq_rule[] = "=============================================="
			      "================================";

/* ---- one run per side ------------------------------------------------------ */

static size_t mark_failures(struct cmp_diff *d, const struct check_opts *o)
{
	size_t n = 0;

	for (size_t i = 0; i < d->n; i++) {
		struct cmp_row *r = &d->rows[i];

		r->failed = (r->has_pct && r->pct > o->max_regression) ||
			    (o->fail_on_new && !r->has_a);
		n += r->failed;
	}
	return n;
}

static void emit_json(struct sp_reader *ra, struct sp_reader *rb,
		      const struct cmp_diff *d, const struct check_opts *o,
		      size_t failures)
{
	struct json_writer w;

	jw_init(&w, stdout, true);
	jw_begin_object(&w);
	jw_key(&w, "mode"); jw_string(&w, "single");
	cmp_json_run(&w, "baseline", ra);
	cmp_json_run(&w, "candidate", rb);
	jw_key(&w, "metric"); jw_string(&w, cmp_metric_name(o->metric));
	jw_key(&w, "max_regression"); jw_double(&w, o->max_regression);
	jw_key(&w, "fail_on_new"); jw_bool(&w, o->fail_on_new);
	jw_key(&w, "status"); jw_string(&w, failures ? "FAIL" : "PASS");
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
		jw_key(&w, "failed"); jw_bool(&w, r->failed);
		jw_end_object(&w);
	}
	jw_end_array(&w);
	jw_key(&w, "violations");
	jw_begin_array(&w);
	for (size_t i = 0; i < d->n; i++)
		if (d->rows[i].failed)
			jw_string(&w, d->rows[i].name);
	jw_end_array(&w);
	jw_end_object(&w);
	jw_finish(&w);
}

static void print_text(struct sp_reader *ra, struct sp_reader *rb,
		       const struct cmp_diff *d, const struct check_opts *o,
		       size_t failures)
{
	char ta[4200], tb[4200];
	bool first = true;

	cmp_run_title(ra, ta, sizeof(ta));
	cmp_run_title(rb, tb, sizeof(tb));
	printf("%s\nBaseline: %s\nCandidate: %s\nRegression budget: +%g%% (%s)\n%s\n\n",
	       eq_rule, ta, tb, o->max_regression, cmp_metric_name(o->metric),
	       eq_rule);
	cmp_print_diff(stdout, d, o->metric,
		       failures ? "Regression check: FAIL" : "Regression check: PASS");
	if (!failures)
		return;
	printf("Budget violations: ");
	for (size_t i = 0; i < d->n; i++)
		if (d->rows[i].failed) {
			printf("%s%s", first ? "" : ", ", d->rows[i].name);
			first = false;
		}
	printf("\n");
}

static int check_pair(struct cli_common *c, const struct check_opts *o)
{
	struct sp_reader *ra = NULL, *rb = NULL;
	struct cmp_side sa = { 0 }, sb = { 0 };
	struct cmp_diff d = { 0 };
	size_t failures = 0;
	int rc;

	rc = cli_open(c, c->files[0], &ra);
	if (rc == 0)
		rc = cli_open(c, c->files[1], &rb);
	if (rc == 0)
		cmp_warn_mismatch(c, c->files[0], ra, c->files[1], rb, true);
	if (rc == 0 && (cmp_side_collect(ra, c->sel, o->metric, &sa) < 0 ||
			cmp_side_collect(rb, c->sel, o->metric, &sb) < 0 ||
			cmp_diff_build(&sa, &sb, NAN, CMP_SORT_PCT, &d) < 0)) {
		cli_error(c, "out of memory");
		rc = EXIT_USAGE;
	}
	if (rc == 0) {
		failures = mark_failures(&d, o);
		if (c->json)
			emit_json(ra, rb, &d, o, failures);
		else
			print_text(ra, rb, &d, o, failures);
		rc = failures ? EXIT_CHECK_FAILED : EXIT_OK;
	}
	cmp_diff_free(&d);
	cmp_side_free(&sa);
	cmp_side_free(&sb);
	sp_reader_destroy(ra);
	sp_reader_destroy(rb);
	return rc;
}

/* ---- argument handling ------------------------------------------------------ */

struct file_list {
	char **v;
	size_t n;
	bool given;
};

static int list_add(struct file_list *l, const char *path)
{
	char **v = realloc(l->v, (l->n + 1) * sizeof(*v));

	if (!v)
		return -1;
	l->v = v;
	l->v[l->n] = strdup(path);
	if (!l->v[l->n])
		return -1;
	l->n++;
	return 0;
}

/* Add a file argument, expanding a glob (no match: keep it literally). */
static int list_add_glob(struct file_list *l, const char *arg)
{
	glob_t g;
	int rc = 0;

	if (!strpbrk(arg, "*?[") || glob(arg, 0, NULL, &g) != 0)
		return list_add(l, arg);
	for (size_t k = 0; k < g.gl_pathc && rc == 0; k++)
		rc = list_add(l, g.gl_pathv[k]);
	globfree(&g);
	return rc;
}

static void list_free(struct file_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

/*
 * getopt cannot take several values per option, so --base/--cand lists are
 * taken out of argv first: every following argument up to the next option
 * belongs to the list. The rest goes to ret_argv (argv[0] kept).
 */
static int split_lists(int argc, char **argv, struct file_list *base,
		       struct file_list *cand, char **ret_argv, int *ret_argc)
{
	struct file_list *cur = NULL;
	int n = 0;

	ret_argv[n++] = argv[0];
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			for (; i < argc; i++)
				ret_argv[n++] = argv[i];
			break;
		}
		if (strcmp(a, "--base") == 0 || strcmp(a, "--cand") == 0) {
			cur = a[2] == 'b' ? base : cand;
			cur->given = true;
			continue;
		}
		if (strncmp(a, "--base=", 7) == 0 || strncmp(a, "--cand=", 7) == 0) {
			cur = a[2] == 'b' ? base : cand;
			cur->given = true;
			if (list_add_glob(cur, a + 7) < 0)
				return -1;
			continue;
		}
		if (a[0] == '-' && a[1]) {
			cur = NULL;
			ret_argv[n++] = argv[i];
			continue;
		}
		if (cur) {
			if (list_add_glob(cur, a) < 0)
				return -1;
		} else {
			ret_argv[n++] = argv[i];
		}
	}
	ret_argv[n] = NULL;
	*ret_argc = n;
	return 0;
}

static int parse_number(struct cli_common *c, const char *name,
			const char *arg, double lo, double hi, double *ret)
{
	char *end;
	double v = strtod(arg, &end);

	if (!*arg || *end || !(v >= lo && v <= hi))
		return cli_usage_error(c, "--%s: '%s' is not a number in [%g, %g]",
				       name, arg, lo, hi);
	*ret = v;
	return 0;
}

static int parse_option(struct cli_common *c, int opt, const char *arg,
			struct check_opts *o)
{
	double v;
	int rc;

	switch (opt) {
	case OPT_MAX_REGRESSION:
		return parse_number(c, "max-regression", arg, 0, INFINITY,
				    &o->max_regression);
	case OPT_METRIC:
		if (cmp_metric_parse(arg, &o->metric) == 0)
			return 0;
		return cli_usage_error(c, "unknown metric '%s' (choose from %s)",
				       arg, CMP_METRIC_NAMES);
	case OPT_FAIL_ON_NEW:
		o->fail_on_new = true;
		return 0;
	case OPT_CONFIDENCE:
		return parse_number(c, "confidence", arg, 50, 99.9, &o->confidence);
	case OPT_RESAMPLES:
		rc = parse_number(c, "resamples", arg, 100, 10000000, &v);
		o->resamples = (unsigned)v;
		return rc;
	default:
		return cli_usage_error(c, "invalid option");
	}
}

static int parse_options(struct cli_common *c, int argc, char **argv,
			 struct check_opts *o)
{
	static const struct option options[] = {
		CLI_COMMON_OPTIONS,
		{ "max-regression", required_argument, NULL, OPT_MAX_REGRESSION },
		{ "metric", required_argument, NULL, OPT_METRIC },
		{ "fail-on-new", no_argument, NULL, OPT_FAIL_ON_NEW },
		{ "confidence", required_argument, NULL, OPT_CONFIDENCE },
		{ "resamples", required_argument, NULL, OPT_RESAMPLES },
		{ 0 },
	};
	int opt, rc = 0;

	optind = 1;
	while (rc == 0 && (opt = getopt_long(argc, argv, "hi:e:r:", options, NULL)) != -1) {
		int h = cli_common_option(c, opt == 'h' ? OPT_HELP : opt, optarg);

		if (h < 0)
			rc = EXIT_USAGE;
		else if (h == 0)
			rc = parse_option(c, opt, optarg, o);
	}
	return rc;
}

static int dispatch(struct cli_common *c, const struct check_opts *o,
		    struct file_list *base, struct file_list *cand)
{
	if (!base->given && !cand->given) {
		if (c->n_files != 2)
			return cli_usage_error(c, "expected two profiles (BASE CAND), got %zu",
					       c->n_files);
		return check_pair(c, o);
	}
	if (c->n_files)
		return cli_usage_error(c, "give either BASE CAND or --base/--cand lists, not both");
	if (base->n < 2 || cand->n < 2)
		return cli_usage_error(c, "--base and --cand need at least 2 runs each "
				       "(got %zu and %zu; 5 or more recommended)",
				       base->n, cand->n);
	return check_repeated(c, o, base->v, base->n, cand->v, cand->n);
}

int cmd_check(int argc, char **argv)
{
	struct check_opts o = { CMP_TOTAL, 0, false, 95, 10000 };
	struct file_list base = { 0 }, cand = { 0 };
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	struct cli_common c;
	int nargs = 0, rc;

	if (!args || cli_common_init(&c, "check", usage) < 0) {
		free(args);
		return EXIT_USAGE;
	}
	if (split_lists(argc, argv, &base, &cand, args, &nargs) < 0)
		rc = cli_usage_error(&c, "out of memory");
	else
		rc = parse_options(&c, nargs, args, &o);
	if (rc == 0 && c.help)
		fputs(help, stdout);
	else if (rc == 0 && cli_collect_files(&c, nargs, args, optind) < 0)
		rc = cli_usage_error(&c, "out of memory");
	else if (rc == 0)
		rc = dispatch(&c, &o, &base, &cand);
	cli_common_fini(&c);
	list_free(&base);
	list_free(&cand);
	free(args);
	return rc;
}
