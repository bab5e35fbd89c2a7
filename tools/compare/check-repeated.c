/* SPDX-License-Identifier: MIT */
/*
 * The noise-aware check of repeated runs (`check --base ... --cand ...`).
 * One sample per run and region; estimate = median ratio - 1 with a seeded
 * percentile-bootstrap interval; a region fails only when the interval lies
 * above the budget and a budget-shifted Mann-Whitney U test agrees.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli-common.h"
#include "compare.h"

/*
 * Why these choices (docs/COMPARE.md has the long form):
 * - The run is the unit of replication. Calls inside one run share the
 *   machine state (frequency, cache, neighbours), so pooling per-call
 *   durations would treat correlated samples as independent and make tiny,
 *   meaningless differences "significant".
 * - Medians, not means: one run hit by a noisy neighbour must not move the
 *   estimate; the ratio makes the budget relative, like `check BASE CAND`.
 * - The bootstrap interval says how large the slowdown is; with 5-10 runs a
 *   percentile bootstrap of a median is somewhat too narrow, so the gate also
 *   requires the exact Mann-Whitney test of H0 "cand = base * (1 + budget)"
 *   (exchangeable under H0, so the exact test is valid for any n). Requiring
 *   both keeps false alarms below (1 - confidence) / 2 per region.
 */

enum verdict { V_OK, V_FAIL, V_INCONCLUSIVE, V_NEW, V_GONE, V_FEW };

static const char *const verdict_names[] = {
	"ok", "FAIL", "inconclusive", "new", "gone", "insufficient",
};

struct region_result {
	const char *name;
	size_t nb, nc;
	double base_median, cand_median;
	bool has_estimate;
	double estimate, lo, hi, u, p; /* fractions, p-value */
	bool exact;
	enum verdict verdict;
	bool failed;
};

struct runs {
	size_t n;
	struct cmp_side *sides;
	char *title; /* title of the first run */
};

static void runs_free(struct runs *r)
{
	for (size_t i = 0; i < r->n; i++)
		cmp_side_free(&r->sides[i]);
	free(r->sides);
	free(r->title);
}

/* ref: the file every run is compared with for cmp_warn_mismatch (the
 * first baseline); NULL: this group's first run. */
static int load_runs(struct cli_common *c, const struct check_opts *o,
		     char **files, size_t n, const char *ref, struct runs *ret)
{
	char title[4200];

	ret->sides = calloc(n, sizeof(*ret->sides));
	if (!ret->sides)
		return EXIT_USAGE;
	struct sp_reader *first = NULL;
	if (ref && cli_open(c, ref, &first) != 0)
		return EXIT_USAGE;
	if (!ref)
		ref = files[0];
	for (size_t i = 0; i < n; i++) {
		struct sp_reader *r;
		int rc = cli_open(c, files[i], &r);

		if (rc) {
			sp_reader_destroy(first);
			return rc;
		}
		if (i == 0) {
			cmp_run_title(r, title, sizeof(title));
			ret->title = strdup(title);
		}
		if (first)
			cmp_warn_mismatch(c, ref, first, files[i], r, true);
		rc = cmp_side_collect(r, c->sel, o->metric, &ret->sides[i]);
		if (!first)
			first = r;
		else
			sp_reader_destroy(r);
		if (rc < 0) {
			sp_reader_destroy(first);
			cli_error(c, "out of memory");
			return EXIT_USAGE;
		}
		ret->n++;
	}
	sp_reader_destroy(first);
	return 0;
}

/* Samples of one region over the runs; returns how many. */
static size_t samples_of(const struct runs *runs, const char *name, double *v)
{
	size_t n = 0;

	for (size_t i = 0; i < runs->n; i++)
		if (cmp_side_get(&runs->sides[i], name, &v[n]))
			n++;
	return n;
}

static void judge(struct region_result *res, const double *b, const double *c,
		  const struct check_opts *o)
{
	double budget = o->max_regression / 100, alpha = (100 - o->confidence) / 200;
	double tb[res->nb + 1], tc[res->nc + 1]; /* medians reorder */

	memcpy(tb, b, res->nb * sizeof(*b));
	memcpy(tc, c, res->nc * sizeof(*c));
	res->base_median = res->nb ? cmp_median(tb, res->nb) : NAN;
	res->cand_median = res->nc ? cmp_median(tc, res->nc) : NAN;
	if (res->nb == 0 || res->nc == 0) {
		res->verdict = res->nb ? V_GONE : V_NEW;
		res->failed = !res->nb && o->fail_on_new;
		return;
	}
	res->verdict = V_FEW;
	if (res->nb < 2 || res->nc < 2 || res->base_median == 0)
		return;
	if (cmp_bootstrap_ratio(b, res->nb, c, res->nc, o->resamples,
				o->confidence / 100, cmp_hash(res->name) ^ 0x5c09e,
				&res->lo, &res->hi) < 0 ||
	    cmp_mann_whitney(b, res->nb, c, res->nc, 1 + budget, &res->u,
			     &res->p, &res->exact) < 0)
		return;
	res->has_estimate = true;
	res->estimate = res->cand_median / res->base_median - 1;
	if (res->lo > budget && res->p < alpha)
		res->verdict = V_FAIL;
	else if (res->estimate > budget)
		res->verdict = V_INCONCLUSIVE;
	else
		res->verdict = V_OK;
	res->failed = res->verdict == V_FAIL;
}

/* Largest estimated slowdown first; regions without an estimate last. */
static int by_estimate(const void *x, const void *y)
{
	const struct region_result *a = x, *b = y;

	if (a->has_estimate != b->has_estimate)
		return a->has_estimate ? -1 : 1;
	if (a->has_estimate && a->estimate != b->estimate)
		return a->estimate > b->estimate ? -1 : 1;
	return strcmp(a->name, b->name);
}

static bool listed(const struct region_result *res, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(res[i].name, name) == 0)
			return true;
	return false;
}

/* One result per region name found in any run. Returns the count or -1. */
static long analyse(const struct runs *base, const struct runs *cand,
		    const struct check_opts *o, struct region_result **ret)
{
	size_t cap = 0, n = 0;
	struct region_result *res;
	double *b = malloc((base->n + 1) * sizeof(*b));
	double *c = malloc((cand->n + 1) * sizeof(*c));

	for (size_t i = 0; i < base->n + cand->n; i++)
		cap += (i < base->n ? base->sides[i] : cand->sides[i - base->n]).n;
	res = calloc(cap + 1, sizeof(*res));
	if (!res || !b || !c) {
		free(res), free(b), free(c);
		return -1;
	}
	for (size_t i = 0; i < base->n + cand->n; i++) {
		const struct cmp_side *s = i < base->n ? &base->sides[i]
						       : &cand->sides[i - base->n];

		for (size_t k = 0; k < s->n; k++) {
			struct region_result *r = &res[n];

			if (listed(res, n, s->names[k]))
				continue;
			r->name = s->names[k];
			r->nb = samples_of(base, r->name, b);
			r->nc = samples_of(cand, r->name, c);
			if (r->nb == 0 && r->nc == 0)
				continue; /* no calls on the selected ranks */
			judge(r, b, c, o);
			n++;
		}
	}
	free(b);
	free(c);
	qsort(res, n, sizeof(*res), by_estimate);
	*ret = res;
	return (long)n;
}

static void fmt_pct(char *buf, size_t size, double v)
{
	snprintf(buf, size, "%s%.3g%%", v >= 0 ? "+" : "", v * 100);
}

static void add_row(struct cmp_table *t, const struct region_result *r,
		    enum cmp_metric m)
{
	char n[32], mb[32], mc[32], est[32], lo[32], hi[32], ci[80], p[32];
	const char *row[8] = { r->name, n, mb, mc, est, ci, p, verdict_names[r->verdict] };

	snprintf(n, sizeof(n), "%zu/%zu", r->nb, r->nc);
	cmp_format_value(mb, sizeof(mb), r->nb > 0, r->base_median, m);
	cmp_format_value(mc, sizeof(mc), r->nc > 0, r->cand_median, m);
	if (m == CMP_CALLS) { /* medians of counts may be halves */
		cmp_format_value(mb, sizeof(mb), r->nb > 0, r->base_median, CMP_TOTAL);
		cmp_format_value(mc, sizeof(mc), r->nc > 0, r->cand_median, CMP_TOTAL);
	}
	snprintf(est, sizeof(est), "-");
	snprintf(ci, sizeof(ci), "-");
	snprintf(p, sizeof(p), "-");
	if (r->has_estimate) {
		fmt_pct(est, sizeof(est), r->estimate);
		fmt_pct(lo, sizeof(lo), r->lo);
		fmt_pct(hi, sizeof(hi), r->hi);
		snprintf(ci, sizeof(ci), "[%s, %s]", lo, hi);
		snprintf(p, sizeof(p), "%.2g", r->p);
	}
	cmp_table_add(t, row);
}

static void print_text(const struct runs *base, const struct runs *cand,
		       const struct region_result *res, size_t n,
		       const struct check_opts *o, size_t failures)
{
	static const char eq[] = "=============================================="
				 "================================";
	char h_mb[64], h_mc[64], h_ci[32];
	const char *headers[8] = { "region", "runs (b/c)", h_mb, h_mc, "change",
				   h_ci, "p", "verdict" };
	struct cmp_table t;
	bool first = true;

	printf("%s\nBaseline: %zu runs, first: %s\nCandidate: %zu runs, first: %s\n",
	       eq, base->n, base->title ? base->title : "", cand->n,
	       cand->title ? cand->title : "");
	printf("Regression budget: +%g%% (%s), noise-aware: %g%% bootstrap CI of the\n"
	       "  median ratio (%u resamples) + one-sided Mann-Whitney U (alpha %g)\n%s\n\n",
	       o->max_regression, cmp_metric_name(o->metric), o->confidence,
	       o->resamples, (100 - o->confidence) / 200, eq);
	printf("Regression check: %s\n", failures ? "FAIL" : "PASS");
	if (n == 0) {
		printf("  (no regions to compare)\n");
		return;
	}
	snprintf(h_mb, sizeof(h_mb), "median %s (b)", cmp_metric_label(o->metric));
	snprintf(h_mc, sizeof(h_mc), "median %s (c)", cmp_metric_label(o->metric));
	snprintf(h_ci, sizeof(h_ci), "%g%% CI", o->confidence);
	if (cmp_table_init(&t, 8, headers) < 0)
		return;
	t.left |= 1ul << 7;
	for (size_t i = 0; i < n; i++)
		add_row(&t, &res[i], o->metric);
	cmp_table_print(&t, stdout);
	cmp_table_free(&t);
	if (!failures)
		return;
	printf("Budget violations: ");
	for (size_t i = 0; i < n; i++)
		if (res[i].failed) {
			printf("%s%s", first ? "" : ", ", res[i].name);
			first = false;
		}
	printf("\n");
}

static void json_files(struct json_writer *w, const char *key, char **files,
		       size_t n)
{
	jw_key(w, key);
	jw_begin_array(w);
	for (size_t i = 0; i < n; i++)
		jw_string(w, files[i]);
	jw_end_array(w);
}

static void json_pct_or_null(struct json_writer *w, const char *key, bool has,
			     double v)
{
	jw_key(w, key);
	if (has)
		jw_double(w, v * 100);
	else
		jw_null(w);
}

static void json_region(struct json_writer *w, const struct region_result *r)
{
	jw_begin_object(w);
	jw_key(w, "name"); jw_string(w, r->name);
	jw_key(w, "n_base"); jw_int(w, (long long)r->nb);
	jw_key(w, "n_cand"); jw_int(w, (long long)r->nc);
	jw_key(w, "base_median"); jw_double(w, r->base_median);
	jw_key(w, "cand_median"); jw_double(w, r->cand_median);
	json_pct_or_null(w, "estimate_pct", r->has_estimate, r->estimate);
	json_pct_or_null(w, "ci_low_pct", r->has_estimate, r->lo);
	json_pct_or_null(w, "ci_high_pct", r->has_estimate, r->hi);
	jw_key(w, "u"); jw_double(w, r->has_estimate ? r->u : NAN);
	jw_key(w, "p_value"); jw_double(w, r->has_estimate ? r->p : NAN);
	jw_key(w, "exact"); jw_bool(w, r->has_estimate && r->exact);
	jw_key(w, "verdict"); jw_string(w, verdict_names[r->verdict]);
	jw_key(w, "failed"); jw_bool(w, r->failed);
	jw_end_object(w);
}

static void emit_json(char **bf, size_t nb, char **cf, size_t nc,
		      const struct region_result *res, size_t n,
		      const struct check_opts *o, size_t failures)
{
	struct json_writer w;

	jw_init(&w, stdout, true);
	jw_begin_object(&w);
	jw_key(&w, "mode"); jw_string(&w, "repeated");
	jw_key(&w, "method");
	jw_string(&w, "percentile bootstrap CI of median(cand)/median(base)-1 "
		      "+ one-sided Mann-Whitney U vs. base*(1+budget)");
	jw_key(&w, "metric"); jw_string(&w, cmp_metric_name(o->metric));
	jw_key(&w, "max_regression"); jw_double(&w, o->max_regression);
	jw_key(&w, "confidence"); jw_double(&w, o->confidence);
	jw_key(&w, "alpha"); jw_double(&w, (100 - o->confidence) / 200);
	jw_key(&w, "resamples"); jw_int(&w, o->resamples);
	jw_key(&w, "fail_on_new"); jw_bool(&w, o->fail_on_new);
	json_files(&w, "baseline", bf, nb);
	json_files(&w, "candidate", cf, nc);
	jw_key(&w, "status"); jw_string(&w, failures ? "FAIL" : "PASS");
	jw_key(&w, "regions");
	jw_begin_array(&w);
	for (size_t i = 0; i < n; i++)
		json_region(&w, &res[i]);
	jw_end_array(&w);
	jw_key(&w, "violations");
	jw_begin_array(&w);
	for (size_t i = 0; i < n; i++)
		if (res[i].failed)
			jw_string(&w, res[i].name);
	jw_end_array(&w);
	jw_end_object(&w);
	jw_finish(&w);
}

/* The smallest one-sided p-value of the exact Mann-Whitney U test with nb
 * and nc samples, all candidates above all baselines: 1 / C(nb + nc, nb). */
static double min_p_value(size_t nb, size_t nc)
{
	double p = 1;

	for (size_t i = 1; i <= nb; i++)
		p *= (double)i / (double)(nc + i);
	return p;
}

/*
 * A gate that can never fail is refused (exit 2), not passed: with too few
 * runs per side even the clearest slowdown has a p-value of at least
 * min_p_value, and a region fails only below alpha (docs/COMPARE.md).
 */
static int refuse_if_cannot_fail(struct cli_common *c, const struct check_opts *o,
				 size_t nb, size_t nc)
{
	double alpha = (100 - o->confidence) / 200, p = min_p_value(nb, nc);
	size_t n = 1;

	if (p < alpha)
		return 0;
	while (n < 64 && !(min_p_value(n, n) < alpha))
		n++;
	cli_error(c, "with %zu baseline and %zu candidate run%s no region can ever fail at "
		  "%g%% confidence (the smallest possible p-value is %.3g, not below alpha %g); "
		  "use at least %zu runs per side, or a lower --confidence",
		  nb, nc, nc == 1 ? "" : "s", o->confidence, p, alpha, n);
	return EXIT_USAGE;
}

int check_repeated(struct cli_common *c, const struct check_opts *o,
		   char **bf, size_t nb, char **cf, size_t nc)
{
	struct runs base = { 0 }, cand = { 0 };
	struct region_result *res = NULL;
	size_t failures = 0;
	long n = 0;
	int rc;

	rc = refuse_if_cannot_fail(c, o, nb, nc);
	if (rc == 0)
		rc = load_runs(c, o, bf, nb, NULL, &base);
	if (rc == 0)
		rc = load_runs(c, o, cf, nc, bf[0], &cand);
	if (rc == 0 && (n = analyse(&base, &cand, o, &res)) < 0) {
		cli_error(c, "out of memory");
		rc = EXIT_USAGE;
	}
	if (rc == 0) {
		for (long i = 0; i < n; i++)
			failures += res[i].failed;
		if (c->json)
			emit_json(bf, nb, cf, nc, res, (size_t)n, o, failures);
		else
			print_text(&base, &cand, res, (size_t)n, o, failures);
		rc = failures ? EXIT_CHECK_FAILED : EXIT_OK;
	}
	free(res);
	runs_free(&base);
	runs_free(&cand);
	return rc;
}
