/* SPDX-License-Identifier: MIT */
/*
 * Statistics as the Python analysis API defines them (§3.1-3.3): per-row
 * basics, pooled per-region statistics over ranks (int64 sums, population
 * std, percentiles from percentiles.c), rank imbalance, region order and
 * time origins.
 */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "reader-internal.h"
#include "sp-format.h"

static int bad_time(struct sp_reader *r, size_t row)
{
	return sp_error(SP_E_CORRUPT,
			"%s: corrupt events: row %zu (region '%s', rank %u) has a timestamp outside (-2^62, 2^62) ns",
			r->path, row, r->names[r->rows[row].region],
			r->rows[row].rank);
}

/*
 * One pass over a row's events: calls, total (wrapping), min, max,
 * first/last duration, first start, last end, whether the events are in
 * call-stack order already, and the timestamp range check that keeps later
 * differences free of overflow. Returns false on a timestamp out of range.
 */
static bool row_basics(struct sp_reader *r, size_t i)
{
	const int64_t *s = r->col[SP_COL_START_TIMES], *e = r->col[SP_COL_END_TIMES];
	const struct sp_row *row = &r->rows[i];
	struct row_basic *b = &r->basic[i];
	uint64_t lo = row->offset, hi = row->offset + row->count;
	int64_t smin, smax, emin, emax, dmin, dmax;
	uint64_t total = 0;
	bool sorted = true;

	if (row->count == 0 && row->has_aggregate) {
		b->calls = row->agg_count;
		b->total = row->agg_total_ns;
		b->min = row->agg_min_ns;
		b->max = row->agg_max_ns;
		b->has_timing = b->calls > 0;
		if (row->has_summary) {
			b->first_start = row->summary.start_minimum;
			b->last_end = row->summary.end_maximum;
		}
		return true;
	}
	if (row->count == 0)
		return true;
	smin = smax = s[lo];
	emin = emax = e[lo];
	dmin = dmax = sp_sub_wrap(e[lo], s[lo]);
	for (uint64_t k = lo; k < hi; k++) {
		int64_t d = sp_sub_wrap(e[k], s[k]);

		total += (uint64_t)d;
		dmin = d < dmin ? d : dmin;
		dmax = d > dmax ? d : dmax;
		smin = s[k] < smin ? s[k] : smin;
		smax = s[k] > smax ? s[k] : smax;
		emin = e[k] < emin ? e[k] : emin;
		emax = e[k] > emax ? e[k] : emax;
		if (k > lo)
			sorted &= s[k - 1] < s[k] ||
				  (s[k - 1] == s[k] && e[k - 1] >= e[k]);
	}
	if (smin <= -SP_TIME_LIMIT || emin <= -SP_TIME_LIMIT ||
	    smax >= SP_TIME_LIMIT || emax >= SP_TIME_LIMIT)
		return false;
	b->calls = row->count;
	b->has_timing = true;
	b->first = e[lo] - s[lo];
	b->last = e[hi - 1] - s[hi - 1];
	b->total = (int64_t)total;
	b->min = dmin;
	b->max = dmax;
	b->first_start = smin;
	b->last_end = emax;
	b->sorted = sorted;
	return true;
}

/* Rows are independent: big files spread them over threads. */
struct basics_work {
	struct sp_reader *r;
	bool *bad;
	atomic_size_t next;
};

static void *basics_worker(void *arg)
{
	struct basics_work *w = arg;
	size_t i;

	while ((i = atomic_fetch_add(&w->next, 1)) < w->r->n_rows)
		w->bad[i] = !row_basics(w->r, i);
	return NULL;
}

int reader_compute_basics(struct sp_reader *r)
{
	struct basics_work w = { r, NULL, 0 };

	r->basic = calloc(r->n_rows + 1, sizeof(*r->basic));
	w.bad = calloc(r->n_rows + 1, sizeof(*w.bad));
	if (!r->basic || !w.bad) {
		free(w.bad);
		return -ENOMEM;
	}
	reader_parallel(r, r->n_rows, basics_worker, &w);
	for (size_t i = 0; i < r->n_rows; i++) {
		if (w.bad[i]) {
			free(w.bad);
			return bad_time(r, i); /* the first, in row order */
		}
	}
	free(w.bad);
	return 0;
}

/* ---- pooled statistics ------------------------------------------------- */

static int exclusive_of_rows(struct sp_reader *r, const size_t *rows,
			     size_t n, struct sp_stats *st)
{
	int rc = reader_compute_exclusive(r);

	st->has_exclusive = true;
	st->exclusive_ns = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t x = r->row_exclusive[rows[i]];

		if (x < 0)
			st->has_exclusive = false;
		else
			st->exclusive_ns = sp_add_wrap(st->exclusive_ns, x);
	}
	if (!st->has_exclusive)
		st->exclusive_ns = st->total_ns;
	st->exclusive = (double)st->exclusive_ns / SP_NS_PER_S;
	return rc == -ENOMEM ? rc : 0;
}

/*
 * Population std and percentiles over the pooled events of the rows (min mn,
 * max mx): counted in place from the columns; pooled into a copy only when
 * few (selection) or when the histogram cannot be had.
 */
static int spread_of_rows(struct sp_reader *r, const size_t *rows, size_t n,
			  int64_t mn, int64_t mx, struct sp_stats *st)
{
	const int64_t *s = r->col[SP_COL_START_TIMES], *e = r->col[SP_COL_END_TIMES];
	double mean = (double)st->total_ns / (double)st->num_calls, m2 = 0;
	size_t n_ev = 0;
	struct dur_slice *slice;
	struct dur_set ds;
	int64_t *pool;
	double p[3];
	bool done;

	/* Sized by the events (aggregate counts are untrusted numbers). */
	slice = malloc((n + 1) * sizeof(*slice));
	if (!slice)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct sp_row *row = &r->rows[rows[i]];

		slice[i] = (struct dur_slice){ s, e, row->offset, row->offset + row->count };
		n_ev += row->count;
	}
	ds = (struct dur_set){ slice, n };
	done = n_ev >= 256 &&
	       percentiles3_hist(&ds, n_ev, mn, mx, mean, &m2, p);
	if (!done) {
		pool = dur_pool(&ds, n_ev);
		if (!pool) {
			free(slice);
			return -ENOMEM;
		}
		for (size_t k = 0; k < n_ev; k++) {
			double dev = (double)pool[k] - mean;

			m2 += dev * dev;
		}
		percentiles3_select(pool, n_ev, p);
		free(pool);
	}
	free(slice);
	st->std = sqrt(m2 / (double)n_ev) / SP_NS_PER_S;
	st->p50 = p[0];
	st->p95 = p[1];
	st->p99 = p[2];
	return 0;
}

/* Combine stored moments when only aggregates exist (no events). */
static void spread_from_aggregates(struct sp_reader *r, const size_t *rows,
				   size_t n, struct sp_stats *st)
{
	double count = 0, mean = 0, m2 = 0;

	for (size_t i = 0; i < n; i++) {
		const struct sp_row *row = &r->rows[rows[i]];
		double c = (double)r->basic[rows[i]].calls, nm;

		if (!row->has_summary || c == 0)
			continue;
		nm = (count * mean + c * row->summary.mean) / (count + c);
		m2 += row->summary.m2 + count * (mean - nm) * (mean - nm) +
		      c * (row->summary.mean - nm) * (row->summary.mean - nm);
		mean = nm;
		count += c;
	}
	st->std = count > 0 ? sqrt(fmax(m2, 0) / count) / SP_NS_PER_S : 0.0;
	st->has_percentiles = false;
	st->p50 = st->p95 = st->p99 = NAN;
}

static void imbalance_of_rows(struct sp_reader *r, const size_t *rows,
			      size_t n, struct sp_stats *st)
{
	double max = 0, sum = 0;
	size_t used = 0;

	for (size_t i = 0; i < n; i++) {
		double t = (double)r->basic[rows[i]].total / SP_NS_PER_S;

		if (t > 0) {
			sum += t;
			used++;
			if (t > max)
				max = t;
		}
	}
	st->rank_imbalance = used >= 2 ? max / (sum / (double)used) : 0.0;
	st->rank_imbalance_pct = st->rank_imbalance != 0.0
					 ? (st->rank_imbalance - 1) * 100 : 0.0;
}

/* Without spread (SP_STATS_NO_SPREAD): std and percentiles NAN. */
static void no_spread(struct sp_stats *st)
{
	st->std = st->p50 = st->p95 = st->p99 = NAN;
	st->has_percentiles = false;
}

/* rows: ascending rank order. */
static int stats_of_rows(struct sp_reader *r, const size_t *rows, size_t n,
			 bool spread, struct sp_stats *ret)
{
	struct sp_stats st = { 0 };
	const struct row_basic *bf = NULL, *bl = NULL;
	bool events = false;
	int rc;

	st.num_ranks = (unsigned)n;
	st.has_percentiles = true;
	for (size_t i = 0; i < n; i++) {
		const struct row_basic *b = &r->basic[rows[i]];

		if (!b->has_timing)
			continue;
		if (r->rows[rows[i]].count > 0)
			events = true;
		st.num_calls += b->calls;
		st.total_ns = sp_add_wrap(st.total_ns, b->total);
		if (!bf || (double)b->first_start / SP_NS_PER_S <
				   (double)bf->first_start / SP_NS_PER_S)
			bf = b;
		if (!bl || (double)b->last_end / SP_NS_PER_S >
				   (double)bl->last_end / SP_NS_PER_S)
			bl = b;
	}
	if (st.num_calls > 0) {
		int64_t mn = INT64_MAX, mx = INT64_MIN;

		for (size_t i = 0; i < n; i++) {
			const struct row_basic *b = &r->basic[rows[i]];

			if (!b->has_timing)
				continue;
			mn = b->min < mn ? b->min : mn;
			mx = b->max > mx ? b->max : mx;
		}
		st.total = (double)st.total_ns / SP_NS_PER_S;
		st.average = st.total / (double)st.num_calls;
		st.min = (double)mn / SP_NS_PER_S;
		st.max = (double)mx / SP_NS_PER_S;
		st.first = (double)bf->first / SP_NS_PER_S;
		st.last = (double)bl->last / SP_NS_PER_S;
		st.first_start = (double)bf->first_start / SP_NS_PER_S;
		st.last_end = (double)bl->last_end / SP_NS_PER_S;
		if (!spread) {
			no_spread(&st);
		} else if (events) {
			rc = spread_of_rows(r, rows, n, mn, mx, &st);
			if (rc < 0)
				return rc;
		} else {
			spread_from_aggregates(r, rows, n, &st);
		}
	} else if (!spread) {
		no_spread(&st);
	}
	imbalance_of_rows(r, rows, n, &st);
	rc = exclusive_of_rows(r, rows, n, &st);
	if (rc < 0)
		return rc;
	*ret = st;
	return 0;
}

int sp_reader_region_stats(struct sp_reader *r, uint32_t region,
			   const struct sp_selection *sel, struct sp_stats *ret)
{
	return sp_reader_region_stats_flags(r, region, sel, 0, ret);
}

int sp_reader_region_stats_flags(struct sp_reader *r, uint32_t region,
				 const struct sp_selection *sel, unsigned flags,
				 struct sp_stats *ret)
{
	bool spread = !(flags & SP_STATS_NO_SPREAD);
	size_t *rows, n = 0;
	bool all;
	int rc;

	if (region >= r->n_regions)
		return -ENOENT;
	rows = malloc((r->region_off[region + 1] - r->region_off[region] + 1) *
		      sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (size_t k = r->region_off[region]; k < r->region_off[region + 1]; k++) {
		size_t i = r->region_rows[k];

		if (sp_selection_match_rank(sel, r->rows[i].rank))
			rows[n++] = i;
	}
	/* All of the region's rows: the statistics depend on nothing else,
	 * so they are computed once per region. */
	all = n == r->region_off[region + 1] - r->region_off[region];
	if (all && !r->region_stats) {
		r->region_stats = malloc((r->n_regions + 1) * sizeof(*r->region_stats));
		r->region_stats_done = calloc(r->n_regions + 1, sizeof(*r->region_stats_done));
		if (!r->region_stats || !r->region_stats_done) {
			free(r->region_stats);
			free(r->region_stats_done);
			r->region_stats = NULL;
			r->region_stats_done = NULL;
			all = false;
		}
	}
	if (all && r->region_stats_done[region]) {
		*ret = r->region_stats[region];
		if (!spread)
			no_spread(ret);
		free(rows);
		return 0;
	}
	/* Only statistics with spread are kept for later calls. */
	rc = stats_of_rows(r, rows, n, spread, ret);
	if (rc == 0 && all && spread) {
		r->region_stats[region] = *ret;
		r->region_stats_done[region] = true;
	}
	free(rows);
	return rc;
}

int sp_reader_row_stats(struct sp_reader *r, size_t row, struct sp_stats *ret)
{
	return sp_reader_row_stats_flags(r, row, 0, ret);
}

int sp_reader_row_stats_flags(struct sp_reader *r, size_t row, unsigned flags,
			      struct sp_stats *ret)
{
	if (row >= r->n_rows)
		return -ENOENT;
	return stats_of_rows(r, &row, 1, !(flags & SP_STATS_NO_SPREAD), ret);
}

/* ---- region order and time origins -------------------------------------- */

struct order_key {
	double first_start;
	uint32_t id;
};

static int cmp_order(const void *a, const void *b)
{
	const struct order_key *x = a, *y = b;

	if (x->first_start != y->first_start)
		return x->first_start < y->first_start ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id); /* stable: file order */
}

int sp_reader_regions(const struct sp_reader *r,
		      const struct sp_selection *sel, uint32_t **ret_ids)
{
	struct order_key *keys = malloc((r->n_regions + 1) * sizeof(*keys));
	uint32_t *ids;
	size_t n = 0;

	if (!keys)
		return -ENOMEM;
	for (uint32_t id = 0; id < r->n_regions; id++) {
		double best = INFINITY;
		bool any = false;

		if (!sp_selection_match_name(sel, r->names[id]))
			continue;
		for (size_t k = r->region_off[id]; k < r->region_off[id + 1]; k++) {
			size_t i = r->region_rows[k];
			double fs;

			fs = r->basic[i].has_timing
				     ? (double)r->basic[i].first_start / SP_NS_PER_S
				     : 0.0;
			if (!any || fs < best)
				best = fs;
			any = true;
		}
		keys[n].first_start = any ? best : 0.0;
		keys[n++].id = id;
	}
	qsort(keys, n, sizeof(*keys), cmp_order);
	ids = malloc((n + 1) * sizeof(*ids));
	if (!ids) {
		free(keys);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		ids[i] = keys[i].id;
	free(keys);
	*ret_ids = ids;
	return (int)n;
}

static bool meta_number(const struct sp_reader *r, const char *key,
			double *ret)
{
	const struct sp_meta *m = sp_reader_metadata_find(r, key);

	if (!m)
		return false;
	if (m->type == SP_META_INT)
		*ret = (double)m->i / SP_NS_PER_S;
	else if (m->type == SP_META_FLOAT && isfinite(m->f))
		*ret = m->f / SP_NS_PER_S;
	else
		return false; /* unparsable (e.g. a string): ignored */
	return true;
}

void sp_reader_times(const struct sp_reader *r, struct sp_times *ret)
{
	struct sp_times t = { 0 };
	bool any = false;

	for (size_t i = 0; i < r->n_rows; i++) {
		const struct row_basic *b = &r->basic[i];
		double fs, le;

		if (!b->has_timing)
			continue;
		fs = (double)b->first_start / SP_NS_PER_S;
		le = (double)b->last_end / SP_NS_PER_S;
		if (!any || fs < t.minimum_start_time)
			t.minimum_start_time = fs;
		if (!any || le > t.maximum_end_time)
			t.maximum_end_time = le;
		any = true;
	}
	t.time_span = any ? t.maximum_end_time - t.minimum_start_time : 0.0;
	t.has_run_start = meta_number(r, SP_META_START_TIME_NS, &t.run_start_time);
	t.time_origin = t.has_run_start ? t.run_start_time : t.minimum_start_time;
	t.startup_time = t.has_run_start ? t.minimum_start_time - t.time_origin : 0.0;
	t.has_finalize = meta_number(r, SP_META_FINALIZE_TIME_NS, &t.finalize_time);
	t.has_total_time = t.has_finalize && t.has_run_start;
	t.total_time = t.has_total_time ? t.finalize_time - t.run_start_time : 0.0;
	*ret = t;
}
