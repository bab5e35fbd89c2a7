/* SPDX-License-Identifier: MIT */
/*
 * Pooled statistics in the Python reader's floating-point arithmetic, bit
 * for bit (§3.1-3.2): seconds per rank first, rank totals added one after
 * another in rank order (Python's sum()), and numpy's mean and std over the
 * pooled seconds with numpy's pairwise summation. The ns-exact figures of
 * stats.c stay as they are; summary --json prints both.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "reader-internal.h"
#include "sp-format.h"

/*
 * A cursor over the pooled durations (the rows' events back to back, in
 * rank order), as seconds, or as squared deviations from `mean` when
 * `squares` is set: numpy's pairwise sum reads its array strictly left to
 * right, so the values are made as it asks for them and never stored.
 */
struct pool {
	const struct sp_reader *r;
	const size_t *rows;
	size_t n_rows, row;
	uint64_t k;
	bool squares;
	double mean;
};

static double pool_next(struct pool *p)
{
	const int64_t *s = p->r->col[SP_COL_START_TIMES], *e = p->r->col[SP_COL_END_TIMES];
	const struct sp_row *row = &p->r->rows[p->rows[p->row]];

	while (p->k >= row->count) {
		p->row++;
		p->k = 0;
		row = &p->r->rows[p->rows[p->row]];
	}
	uint64_t i = row->offset + p->k++;
	double x = (double)sp_sub_wrap(e[i], s[i]) / SP_NS_PER_S;

	if (p->squares) {
		x = x - p->mean;
		x = x * x;
	}
	return x;
}

/* numpy's pairwise_sum for float64 (umath/loops_utils.h): a plain loop
 * under 8 values, 8 accumulators up to 128, halves (a multiple of 8) above. */
static double pairwise(struct pool *p, uint64_t n)
{
	if (n < 8) {
		double res = 0.;

		for (uint64_t i = 0; i < n; i++)
			res += pool_next(p);
		return res;
	}
	if (n <= 128) {
		double r[8], res;
		uint64_t i;

		for (int j = 0; j < 8; j++)
			r[j] = pool_next(p);
		for (i = 8; i < n - (n % 8); i += 8)
			for (int j = 0; j < 8; j++)
				r[j] += pool_next(p);
		res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
		for (; i < n; i++)
			res += pool_next(p);
		return res;
	}
	uint64_t n2 = n / 2;

	n2 -= n2 % 8;
	double a = pairwise(p, n2);

	return a + pairwise(p, n - n2);
}

/*
 * np.sum over the pooled values: numpy's reduction hands its inner loop
 * buffers of np.getbufsize() = 8192 values and adds each buffer's pairwise
 * sum to the running result (from 0), so longer arrays are summed in
 * 8192-value blocks, left to right (checked against numpy 1.24).
 */
#define NUMPY_BUFSIZE 8192

static double pool_sum(const struct sp_reader *r, const size_t *rows, size_t n_rows,
		       uint64_t n, bool squares, double mean)
{
	struct pool p = { r, rows, n_rows, 0, 0, squares, mean };
	double acc = 0.;

	for (uint64_t at = 0; at < n; at += NUMPY_BUFSIZE)
		acc += pairwise(&p, n - at < NUMPY_BUFSIZE ? n - at : NUMPY_BUFSIZE);
	return acc;
}

/* np.sum of an array of doubles (rank totals): the same pairwise sum. */
static double list_sum(const double *v, size_t n)
{
	double res;

	if (n < 8) {
		res = 0.;
		for (size_t i = 0; i < n; i++)
			res += v[i];
		return res;
	}
	if (n <= 128) {
		double a[8];
		size_t i;

		for (int j = 0; j < 8; j++)
			a[j] = v[j];
		for (i = 8; i < n - (n % 8); i += 8)
			for (int j = 0; j < 8; j++)
				a[j] += v[i + j];
		res = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
		for (; i < n; i++)
			res += v[i];
		return res;
	}
	size_t n2 = n / 2;

	n2 -= n2 % 8;
	return list_sum(v, n2) + list_sum(v + n2, n - n2);
}

/*
 * The Python reader's figures of the rows (ascending rank) into st, whose
 * ns-exact fields stats.c has filled: total and exclusive as sums of the
 * ranks' seconds, average and std by numpy over the pooled seconds, the
 * imbalance as max / np.mean of the ranks' positive totals.
 */
static int numpy_of_rows(struct sp_reader *r, const size_t *rows, size_t n,
			 struct sp_stats *st)
{
	double *totals = malloc((n + 1) * sizeof(*totals)), total = 0, excl = 0, max = 0;
	uint64_t n_ev = 0;
	size_t used = 0;

	if (!totals)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct row_basic *b = &r->basic[rows[i]];
		double t = b->has_timing ? (double)b->total / SP_NS_PER_S : 0.0;

		total += t;
		if (st->has_exclusive && b->has_timing)
			excl += (double)r->row_exclusive[rows[i]] / SP_NS_PER_S;
		if (t > 0) {
			totals[used++] = t;
			max = t > max ? t : max;
		}
		n_ev += r->rows[rows[i]].count;
	}
	st->total = total;
	if (st->has_exclusive)
		st->exclusive = excl;
	st->rank_imbalance = used >= 2 ? max / (list_sum(totals, used) / (double)used) : 0.0;
	st->rank_imbalance_pct = st->rank_imbalance != 0.0 ? (st->rank_imbalance - 1.0) * 100.0
							  : 0.0;
	free(totals);
	/* Aggregate-only rows keep stats.c's moments (no events to pool). */
	if (n_ev == 0 || n_ev != st->num_calls)
		return 0;
	st->average = pool_sum(r, rows, n, n_ev, false, 0) / (double)n_ev;
	st->std = sqrt(pool_sum(r, rows, n, n_ev, true, st->average) / (double)n_ev);
	return 0;
}

int sp_reader_region_stats_numpy(struct sp_reader *r, uint32_t region,
				 const struct sp_selection *sel, struct sp_stats *ret)
{
	struct sp_stats st;
	size_t *rows, n = 0;
	int rc = sp_reader_region_stats(r, region, sel, &st);

	if (rc < 0)
		return rc;
	rows = malloc((r->region_off[region + 1] - r->region_off[region] + 1) * sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (size_t k = r->region_off[region]; k < r->region_off[region + 1]; k++) {
		size_t i = r->region_rows[k];

		if (sp_selection_match_rank(sel, r->rows[i].rank))
			rows[n++] = i;
	}
	rc = numpy_of_rows(r, rows, n, &st);
	free(rows);
	if (rc == 0)
		*ret = st;
	return rc;
}
