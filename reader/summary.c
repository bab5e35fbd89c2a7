/* SPDX-License-Identifier: MIT */
/*
 * Summary-table rows (§3.8): the calls of every selected rank are nested
 * (callstack.c) and folded into a tree with one node per distinct call path
 * (consecutive repeats of a region collapse into one recursive node). Each
 * node becomes a row with per-path statistics; nodes with children get an
 * "(own)" exclusive-time row first among their children. Without a
 * reconstructible tree the rows are the flat per-region statistics.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reader-internal.h"
#include "sp-array.h"
#include "sp-format.h"
#include "summary-tree.h"

struct sp_summary {
	struct sp_summary_row *rows;
	size_t n, cap;
	bool has_session;
	bool flat;
};

static const char *const sort_names[] = {
	"start", "total", "calls", "avg", "min", "max", "first", "last", "std",
	"p50", "p95", "p99", "imbalance", "name",
};

int sp_sort_key_parse(const char *name, enum sp_sort_key *ret)
{
	for (size_t i = 0; i < sizeof(sort_names) / sizeof(sort_names[0]); i++) {
		if (strcmp(name, sort_names[i]) == 0) {
			*ret = (enum sp_sort_key)i;
			return 0;
		}
	}
	return sp_error(EINVAL, "unknown sort key '%s'", name);
}

static struct sp_summary_row *add_row(struct sp_summary *s)
{
	struct sp_summary_row *row;

	if (SP_ARRAY_RESERVE(s->rows, s->cap, s->n + 1, 32) < 0)
		return NULL;
	row = &s->rows[s->n++];
	memset(row, 0, sizeof(*row));
	row->total = row->avg = row->min = row->max = row->std = NAN;
	row->p50 = row->p95 = row->p99 = row->first = row->last = NAN;
	row->imbalance = row->percent = row->first_start = NAN;
	return row;
}

/* ---- sibling ordering ------------------------------------------------ */

static double sort_value(const struct sp_summary_row *row, enum sp_sort_key key)
{
	switch (key) {
	case SP_SORT_START: return row->first_start;
	case SP_SORT_TOTAL: return row->calls ? row->total : NAN;
	case SP_SORT_CALLS: return row->calls ? (double)row->calls : NAN;
	case SP_SORT_AVG: return row->avg;
	case SP_SORT_MIN: return row->min;
	case SP_SORT_MAX: return row->max;
	case SP_SORT_FIRST: return row->first;
	case SP_SORT_LAST: return row->last;
	case SP_SORT_STD: return row->std;
	case SP_SORT_P50: return row->p50;
	case SP_SORT_P95: return row->p95;
	case SP_SORT_P99: return row->p99;
	case SP_SORT_IMBALANCE: return row->imbalance;
	default: return 0;
	}
}

/* start ascending, name alphabetical, others descending; NaN last; ties by name. */
int summary_row_cmp(const struct sp_summary_row *a,
		    const struct sp_summary_row *b, enum sp_sort_key key)
{
	if (key != SP_SORT_NAME) {
		double x = sort_value(a, key), y = sort_value(b, key);
		bool nx = isnan(x), ny = isnan(y);

		if (nx != ny)
			return nx ? 1 : -1;
		if (!nx && x != y) {
			if (key == SP_SORT_START)
				return x < y ? -1 : 1;
			return x > y ? -1 : 1;
		}
	}
	return strcmp(a->name, b->name);
}

/* ---- flat rows ------------------------------------------------------ */

static void row_from_stats(struct sp_summary_row *row, const struct sp_stats *st)
{
	row->num_ranks = st->num_ranks;
	row->calls = st->num_calls;
	row->total_ns = st->total_ns;
	row->coverage_ns = st->total_ns;
	if (st->num_calls == 0)
		return;
	row->total = st->total;
	row->avg = st->average;
	row->min = st->min;
	row->max = st->max;
	row->std = st->std;
	row->p50 = st->has_percentiles ? st->p50 : NAN;
	row->p95 = st->has_percentiles ? st->p95 : NAN;
	row->p99 = st->has_percentiles ? st->p99 : NAN;
	row->first = st->first;
	row->last = st->last;
	row->imbalance = st->rank_imbalance_pct;
	row->first_start = st->first_start;
}

static int cmp_rows_ctx(const void *a, const void *b, void *ctx)
{
	return summary_row_cmp(a, b, *(enum sp_sort_key *)ctx);
}

static int build_flat(struct sp_reader *r, const struct sp_selection *sel,
		      enum sp_sort_key sort, struct sp_summary *s)
{
	uint32_t *ids = NULL;
	int n = sp_reader_regions(r, sel, &ids);
	double session = NAN;

	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		struct sp_summary_row *row = add_row(s);
		struct sp_stats st;
		int rc;

		rc = row ? sp_reader_region_stats(r, ids[i], sel, &st) : -ENOMEM;
		if (rc < 0) {
			free(ids);
			return rc;
		}
		row->name = r->names[ids[i]];
		row->region = ids[i];
		row_from_stats(row, &st);
		if (strcmp(row->name, SP_SESSION_REGION) == 0 && st.num_calls)
			session = (double)st.total_ns;
	}
	free(ids);
	if (sort != SP_SORT_START)
		qsort_r(s->rows, s->n, sizeof(*s->rows), cmp_rows_ctx, &sort);
	s->has_session = !isnan(session);
	for (size_t i = 0; i < s->n && s->has_session; i++)
		s->rows[i].percent = session > 0
			? (double)s->rows[i].coverage_ns / session * 100 : NAN;
	s->flat = true;
	return 0;
}

/* ---- public ------------------------------------------------------------ */

int sp_summary_build(struct sp_reader *r, const struct sp_selection *sel,
		     enum sp_sort_key sort, struct sp_summary **ret)
{
	return sp_summary_build_flags(r, sel, sort, 0, ret);
}

/* Rows without std and percentiles: NAN, as documented for the flag. */
static void drop_spread(struct sp_summary *s)
{
	for (size_t i = 0; i < s->n; i++)
		s->rows[i].std = s->rows[i].p50 = s->rows[i].p95 = s->rows[i].p99 = NAN;
}

int sp_summary_build_flags(struct sp_reader *r, const struct sp_selection *sel,
			   enum sp_sort_key sort, unsigned flags,
			   struct sp_summary **ret)
{
	struct sp_summary *s = calloc(1, sizeof(*s));
	struct summary_tree *t = NULL;
	bool spread = !(flags & SP_SUMMARY_NO_SPREAD) || sort == SP_SORT_STD ||
		      sort == SP_SORT_P50 || sort == SP_SORT_P95 || sort == SP_SORT_P99;
	bool drop = !spread;
	int rc;

	if (!s)
		return -ENOMEM;
	rc = summary_tree_build(r, sel, spread, &t);
	if (rc == 0 && !spread && !summary_tree_exact(t)) {
		/* Sums too big for exact averages: keep the durations. */
		summary_tree_destroy(t);
		t = NULL;
		rc = summary_tree_build(r, sel, true, &t);
	}
	if (rc == 0)
		rc = summary_tree_rows(t, r, sel, sort, s);
	else if (rc == -SP_E_NESTING)
		rc = build_flat(r, sel, sort, s);
	summary_tree_destroy(t);
	if (rc == 0 && drop)
		drop_spread(s);
	if (rc < 0) {
		sp_summary_destroy(s);
		return rc;
	}
	*ret = s;
	return 0;
}

struct sp_summary_row *summary_add_row(struct sp_summary *s)
{
	return add_row(s);
}

void summary_set_session(struct sp_summary *s, bool has_session)
{
	s->has_session = has_session;
}

void sp_summary_destroy(struct sp_summary *s)
{
	if (!s)
		return;
	free(s->rows);
	free(s);
}

size_t sp_summary_count(const struct sp_summary *s)
{
	return s->n;
}

const struct sp_summary_row *sp_summary_get(const struct sp_summary *s,
					    size_t i)
{
	return i < s->n ? &s->rows[i] : NULL;
}

bool sp_summary_has_session(const struct sp_summary *s)
{
	return s->has_session;
}

bool sp_summary_is_flat(const struct sp_summary *s)
{
	return s->flat;
}
