/* SPDX-License-Identifier: MIT */
/*
 * Comparing runs (diff, check, scaling): the per-region metrics, the diff
 * rows of §4.4, run titles, a small framed table renderer, and the
 * statistics of the noise-aware check (medians, bootstrap, Mann-Whitney U).
 */
#ifndef SP_COMPARE_H
#define SP_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli-common.h"

/* ---- metrics ----------------------------------------------------------- */

enum cmp_metric {
	CMP_TOTAL = 0, CMP_AVG, CMP_MIN, CMP_MAX, CMP_P50, CMP_P95, CMP_P99,
	CMP_IMBALANCE, CMP_CALLS,
};

#define CMP_METRIC_NAMES "total|avg|min|max|p50|p95|p99|imbalance|calls"

/** Parse a metric name. @return 0 or -EINVAL. */
int cmp_metric_parse(const char *name, enum cmp_metric *ret);
const char *cmp_metric_name(enum cmp_metric m);
/** Column label: "total [s]", "imbalance [%]", "calls", ... */
const char *cmp_metric_label(enum cmp_metric m);

/**
 * The metric of a region's pooled statistics. false ("None") when the
 * region has no calls on the selected ranks, or for percentiles of
 * aggregate-only data.
 */
bool cmp_metric_value(const struct sp_stats *st, enum cmp_metric m,
		      double *ret);

/** One run's metric per selected region (names owned by the side). */
struct cmp_side {
	size_t n;
	char **names;
	double *values; /* NAN = None (no calls on the selected ranks) */
};

/**
 * Collect the metric of every region matching the selection, in the
 * get_regions() order. @return 0, -ENOMEM or another negative errno.
 */
int cmp_side_collect(struct sp_reader *r, const struct sp_selection *sel,
		     enum cmp_metric m, struct cmp_side *ret);
void cmp_side_free(struct cmp_side *side);
/** Value of a region, false when absent or None. */
bool cmp_side_get(const struct cmp_side *side, const char *name, double *ret);

/* ---- diff rows (§4.4) ----------------------------------------------------- */

enum cmp_sort { CMP_SORT_DELTA = 0, CMP_SORT_PCT, CMP_SORT_NAME };

/** @return 0 or -EINVAL for a name other than delta, pct, name. */
int cmp_sort_parse(const char *name, enum cmp_sort *ret);

struct cmp_row {
	const char *name; /* points into one of the sides */
	bool has_a, has_b, has_pct;
	double a, b, delta, pct;
	bool failed;      /* check: violates the budget */
};

struct cmp_diff {
	size_t n;
	struct cmp_row *rows;
};

/**
 * The rows of `diff` over the union of region names: delta = (b or 0) -
 * (a or 0), pct = delta / a * 100 unless a is None or 0; rows with a pct
 * whose magnitude is below threshold are dropped (threshold NAN: none);
 * sorted by name, then stably by |delta| or |pct| descending (None last).
 * The sides must outlive the diff. @return 0 or -ENOMEM.
 */
int cmp_diff_build(const struct cmp_side *a, const struct cmp_side *b,
		   double threshold, enum cmp_sort sort, struct cmp_diff *ret);
void cmp_diff_free(struct cmp_diff *diff);

/* Cell formatting of the diff table ("-" for None). */
void cmp_format_value(char *buf, size_t size, bool has, double v,
		      enum cmp_metric m);
void cmp_format_delta(char *buf, size_t size, double v, enum cmp_metric m);
void cmp_format_pct(char *buf, size_t size, bool has, double v);

/**
 * Print the framed diff table titled "<title>" (or "(no regions to
 * compare)"), then "Only in a: ..." / "Only in b: ..." lines.
 */
void cmp_print_diff(FILE *f, const struct cmp_diff *d, enum cmp_metric m,
		    const char *title);

/** The Python default_title(): "[<label> - ]<path> (<N> rank|ranks)". */
void cmp_run_title(const struct sp_reader *r, char *buf, size_t size);

/**
 * Warn on stderr ("scope-profiler <cmd>: warning: ...") when run b is not
 * the same experiment as run a: a different command line (metadata
 * command_line) and, with ranks, a different rank count (mpi_size, else
 * the ranks holding rows). A file that does not store a value is not
 * compared on it. @return the number of warnings printed.
 */
int cmp_warn_mismatch(const struct cli_common *c, const char *file_a,
		      const struct sp_reader *a, const char *file_b,
		      const struct sp_reader *b, bool ranks);
/** The metadata label, or NULL. */
const char *cmp_run_label(const struct sp_reader *r);
/** A metric value: null when !has, an integer for calls, else a float. */
void cmp_json_value(struct json_writer *w, bool has, double v,
		    enum cmp_metric m);
/** "key": {file, label, num_ranks, title} of one run. */
void cmp_json_run(struct json_writer *w, const char *key,
		  const struct sp_reader *r);

/* ---- framed table ------------------------------------------------------- */

struct cmp_table {
	size_t ncols, nrows, cap;
	char **cells; /* row-major, header row first */
	unsigned long left; /* bit c: column c left-aligned (init: column 0) */
};

/** @return 0 or -ENOMEM. headers: ncols strings. */
int cmp_table_init(struct cmp_table *t, size_t ncols,
		   const char *const *headers);
/** Append a row of ncols strings (copied). @return 0 or -ENOMEM. */
int cmp_table_add(struct cmp_table *t, const char *const *cells);
/** Rounded frame; columns in t->left left-aligned, others right-aligned. */
void cmp_table_print(const struct cmp_table *t, FILE *f);
void cmp_table_free(struct cmp_table *t);

/* ---- statistics of repeated runs (compare-stats.c) ------------------------ */

/** Median of v[0..n) (average of the middle two); reorders v. NAN if n 0. */
double cmp_median(double *v, size_t n);

/**
 * Percentile bootstrap of the relative change of medians,
 * median(cand) / median(base) - 1, resampling each side independently with
 * replacement (splitmix64 generator seeded with seed, so results are
 * reproducible). Resamples whose base median is 0 are skipped.
 * @param level   confidence level, e.g. 0.95 (two-sided interval)
 * @return 0, -EINVAL (empty side, base median 0) or -ENOMEM.
 */
int cmp_bootstrap_ratio(const double *base, size_t nb, const double *cand,
			size_t nc, unsigned resamples, double level,
			uint64_t seed, double *ret_lo, double *ret_hi);

/**
 * One-sided Mann-Whitney U test of "cand is stochastically larger than
 * base * factor" (factor = 1 + budget). U counts pairs cand_i > base_j *
 * factor (ties count 1/2). The p-value P(U >= u) under H0 is exact without
 * ties, else from the normal approximation with tie and continuity
 * corrections.
 * @return 0, -EINVAL (empty side) or -ENOMEM.
 */
int cmp_mann_whitney(const double *base, size_t nb, const double *cand,
		     size_t nc, double factor, double *ret_u, double *ret_p,
		     bool *ret_exact);

/** FNV-1a hash of a string (bootstrap seed per region). */
uint64_t cmp_hash(const char *s);

/* ---- check ------------------------------------------------------------------- */

struct check_opts {
	enum cmp_metric metric;
	double max_regression; /* percent, >= 0 */
	bool fail_on_new;
	double confidence;     /* repeated runs: two-sided level in %, e.g. 95 */
	unsigned resamples;    /* repeated runs: bootstrap resamples */
};

/**
 * The noise-aware check of repeated runs (check-repeated.c): prints the
 * verdict (text or JSON) and returns EXIT_OK, EXIT_CHECK_FAILED or
 * EXIT_USAGE.
 */
int check_repeated(struct cli_common *c, const struct check_opts *o,
		   char **base, size_t nb, char **cand, size_t nc);

#endif /* SP_COMPARE_H */
