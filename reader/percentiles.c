/* SPDX-License-Identifier: MIT */
/*
 * Percentiles as numpy's 'linear' method gives them (p50/p95/p99, §3.1):
 * by selection for few values, else from a counting pass over the
 * durations in place, narrowed by histogram passes over the wanted ranks'
 * buckets, never by a sort of the durations.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reader-internal.h"

/* ---- selection of order statistics -------------------------------------- */

static void swap64(int64_t *a, int64_t *b)
{
	int64_t t = *a;

	*a = *b;
	*b = t;
}

static int64_t median3(int64_t a, int64_t b, int64_t c)
{
	if (a > b)
		swap64(&a, &b);
	if (b > c)
		b = c;
	return a > b ? a : b;
}

/*
 * Reorder v so v[k] is the k-th smallest with nothing larger before it and
 * nothing smaller after it (Hoare/Wirth selection, median-of-3 pivot value).
 */
static void select_kth(int64_t *v, size_t n, size_t k_)
{
	ptrdiff_t l = 0, m = (ptrdiff_t)n - 1, k = (ptrdiff_t)k_;

	while (l < m) {
		int64_t x = median3(v[l], v[l + (m - l) / 2], v[m]);
		ptrdiff_t i = l, j = m;

		do {
			while (v[i] < x)
				i++;
			while (x < v[j])
				j--;
			if (i <= j) {
				swap64(&v[i], &v[j]);
				i++;
				j--;
			}
		} while (i <= j);
		if (j < k)
			l = i;
		if (k < i)
			m = j;
	}
}

static int64_t min_of(const int64_t *v, size_t n)
{
	int64_t m = v[0];

	for (size_t i = 1; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

/* numpy 'linear' with its _lerp (the b - (b-a)(1-t) form when t >= 0.5). */
static double lerp(double a, double b, double t)
{
	double diff = b - a;

	return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;
}

/* Percentile of the values in v[from..n) where v[0..from) are all <= them. */
static double percentile_from(int64_t *v, size_t n, size_t from, double q,
			      size_t *ret_k)
{
	double virt = (double)(n - 1) * q;
	size_t k = (size_t)floor(virt);
	double t = virt - (double)k;
	double a, b;

	if (k >= n - 1) {
		k = n - 1;
		t = 0;
	}
	if (k < from)
		k = from; /* cannot happen for ascending q */
	select_kth(v + from, n - from, k - from);
	a = (double)v[k] / SP_NS_PER_S;
	b = k + 1 < n ? (double)min_of(v + k + 1, n - k - 1) / SP_NS_PER_S : a;
	*ret_k = k;
	return lerp(a, b, t);
}

static const double pct_q[3] = { 50.0 / 100, 95.0 / 100, 99.0 / 100 };

/* Quickselect path: small arrays, and the fallback without memory. */
void percentiles3_select(int64_t *v, size_t n, double ret[3])
{
	size_t from = 0;

	for (int i = 0; i < 3; i++)
		ret[i] = n ? percentile_from(v, n, from, pct_q[i], &from) : 0.0;
}

/* Run BODY with int64_t D bound to each value of DS, in order. */
#define DUR_FOR_EACH(ds, D, BODY)                                              \
	for (size_t i_ = 0; i_ < (ds)->n_slices; i_++) {                       \
		const struct dur_slice *sl_ = &(ds)->slice[i_];                \
		const int64_t *s_ = sl_->s, *e_ = sl_->e;                      \
		if (s_) {                                                      \
			for (uint64_t k_ = sl_->lo; k_ < sl_->hi; k_++) {      \
				int64_t D = e_[k_] - s_[k_];                   \
				BODY                                           \
			}                                                      \
		} else {                                                       \
			for (uint64_t k_ = sl_->lo; k_ < sl_->hi; k_++) {      \
				int64_t D = e_[k_];                            \
				BODY                                           \
			}                                                      \
		}                                                              \
	}

/* Values gathered for the final selection at most (32 KiB): past it a
 * histogram pass narrows the ranges first (measured faster than
 * selecting among 1 M gathered values). */
#define GATHER_MAX ((size_t)1 << 12)

/* A wanted rank: its value lies in [lo, lo + 2^bits), which holds cnt of
 * the values, off of them below it. */
struct want_range {
	uint64_t lo;
	unsigned bits;
	size_t cnt, off;
	bool done;
};

/* Group of wanted ranks sharing one range (ranges are equal or disjoint). */
static size_t want_groups(const struct want_range *wr, int grp[6],
			  size_t ret_start[6])
{
	size_t ng = 0, at = 0;

	for (int w = 0; w < 6; w++) {
		grp[w] = -1;
		if (wr[w].done)
			continue;
		for (size_t g = 0; g < ng && grp[w] < 0; g++) {
			for (int v = 0; v < w; v++) {
				if (grp[v] == (int)g && wr[v].lo == wr[w].lo &&
				    wr[v].bits == wr[w].bits) {
					grp[w] = (int)g;
					break;
				}
			}
		}
		if (grp[w] < 0) {
			grp[w] = (int)ng;
			ret_start[ng++] = at;
			at += wr[w].cnt;
		}
	}
	return ng;
}

/* Group of value d (x = d - lo < 2^bits), or -1. */
#define GROUP_OF(wr, lead, ng, d, G)                                          \
	do {                                                                   \
		G = -1;                                                        \
		for (size_t g_ = 0; g_ < (ng); g_++) {                         \
			const struct want_range *q_ = &(wr)[(lead)[g_]];       \
			if ((((uint64_t)(d) - q_->lo) >> q_->bits) == 0) {     \
				G = (int)g_;                                   \
				break;                                         \
			}                                                      \
		}                                                              \
	} while (0)

/* Few values left in the ranges: gather them, select each wanted rank. */
static bool gather_ranks(const struct dur_set *ds, struct want_range *wr,
			 int64_t val[6])
{
	int grp[6], lead[6];
	size_t start[6], fill[6] = { 0 }, ng = want_groups(wr, grp, start), total = 0;
	int64_t *v;

	for (int w = 5; w >= 0; w--)
		if (grp[w] >= 0)
			lead[grp[w]] = w;
	for (size_t g = 0; g < ng; g++)
		total += wr[lead[g]].cnt;
	v = malloc((total + 1) * sizeof(*v));
	if (!v)
		return false;
	DUR_FOR_EACH(ds, d, {
		int g;

		GROUP_OF(wr, lead, ng, d, g);
		if (g >= 0 && fill[g] < wr[lead[g]].cnt)
			v[start[g] + fill[g]++] = d;
	})
	/* Wanted ranks ascend within a group: select each in what is left. */
	for (size_t g = 0; g < ng; g++) {
		int64_t *gv = v + start[g];
		size_t m = fill[g], from = 0;

		for (int w = 0; w < 6; w++) {
			if (grp[w] != (int)g || wr[w].off >= m)
				continue;
			select_kth(gv + from, m - from, wr[w].off - from);
			from = wr[w].off;
			val[w] = gv[from];
			wr[w].done = true;
		}
	}
	free(v);
	for (int w = 0; w < 6; w++)
		if (!wr[w].done)
			return false; /* counts changed under us: cannot be */
	return true;
}

/*
 * The wanted ranks' values when the first histogram's buckets were wider
 * than one value. Each pass histograms only the values inside the (at
 * most 6) wanted ranges, 16 bits finer, until a range is one value wide
 * or the values left are few enough to gather and select: a few linear
 * passes, never a sort of a big bucket (a region's millions of tiny calls
 * share the first bucket when a few long calls stretch the range).
 */
static bool refine_ranks(const struct dur_set *ds, struct want_range *wr,
			 int64_t val[6])
{
	for (;;) {
		int grp[6], lead[6];
		size_t start[6], ng = want_groups(wr, grp, start), total = 0;
		uint32_t *h[6] = { NULL };
		unsigned sub[6], gbits[6];
		uint64_t glo[6];
		bool ok = true;

		if (ng == 0)
			return true;
		for (int w = 5; w >= 0; w--)
			if (grp[w] >= 0)
				lead[grp[w]] = w;
		for (size_t g = 0; g < ng; g++)
			total += wr[lead[g]].cnt;
		if (total <= GATHER_MAX)
			return gather_ranks(ds, wr, val);
		for (size_t g = 0; g < ng; g++) {
			unsigned bits = wr[lead[g]].bits;

			sub[g] = bits > 16 ? bits - 16 : 0;
			h[g] = calloc((size_t)1 << (bits - sub[g]), sizeof(**h));
			ok &= h[g] != NULL;
		}
		if (ok) {
			DUR_FOR_EACH(ds, d, {
				int g;

				GROUP_OF(wr, lead, ng, d, g);
				if (g >= 0)
					h[g][((uint64_t)d - wr[lead[g]].lo) >> sub[g]]++;
			})
		}
		for (size_t g = 0; g < ng; g++) {
			glo[g] = wr[lead[g]].lo;
			gbits[g] = wr[lead[g]].bits;
		}
		for (int w = 0; ok && w < 6; w++) {
			size_t below = 0, b = 0, nb;
			int g = grp[w];

			if (g < 0)
				continue;
			nb = (size_t)1 << (gbits[g] - sub[g]);
			while (b < nb && below + h[g][b] <= wr[w].off)
				below += h[g][b++];
			if (b == nb) {
				ok = false; /* counts changed under us: cannot be */
				break;
			}
			wr[w].off -= below;
			wr[w].cnt = h[g][b];
			wr[w].lo = glo[g] + ((uint64_t)b << sub[g]);
			wr[w].bits = sub[g];
			if (sub[g] == 0) {
				val[w] = (int64_t)wr[w].lo;
				wr[w].done = true;
			}
		}
		for (size_t g = 0; g < ng; g++)
			free(h[g]);
		if (!ok)
			return false;
	}
}

/*
 * First-pass buckets. When the range fits in nb buckets they are the exact
 * values (shift 0); else linear buckets of 2^shift values would put a
 * region's millions of tiny calls into one bucket whenever a few long calls
 * stretch the range, and every wanted rank would need a refining pass. So
 * the buckets are log-linear instead: offsets x = v - mn below 2S are exact,
 * above it each power of two splits into S buckets of 2^sh values
 * (sh = floor(log2 x) - sbits, S = 2^sbits): bucket sh * S + (x >> sh).
 * Every bucket is an aligned power-of-two range, as refine_ranks wants.
 */
struct buckets {
	uint64_t mn;
	unsigned shift;       /* linear buckets (log-linear: sbits = 0) */
	unsigned sbits;       /* log-linear buckets of 2^sbits per octave */
	size_t nb;
};

static inline size_t bucket_of(const struct buckets *bk, int64_t v)
{
	uint64_t x = (uint64_t)v - bk->mn;
	unsigned top, sh;

	if (bk->sbits == 0)
		return (size_t)(x >> bk->shift);
	top = 63 - (unsigned)__builtin_clzll(x | 1);
	sh = top > bk->sbits ? top - bk->sbits : 0;
	return ((size_t)sh << bk->sbits) + (size_t)(x >> sh);
}

/* Values of bucket b: [lo, lo + 2^bits). */
static void bucket_range(const struct buckets *bk, size_t b, uint64_t *lo,
			 unsigned *bits)
{
	size_t S = (size_t)1 << bk->sbits, sh;

	if (bk->sbits == 0) {
		*lo = bk->mn + ((uint64_t)b << bk->shift);
		*bits = bk->shift;
		return;
	}
	sh = b < 2 * S ? 0 : b / S - 1;
	*lo = bk->mn + ((uint64_t)(b - (sh << bk->sbits)) << sh);
	*bits = (unsigned)sh;
}

/* Linear buckets when the range fits in as many as the values want (up to
 * 64K), else log-linear ones of as many per octave (S, up to 2048). */
static void buckets_plan(struct buckets *bk, size_t n, int64_t mn, int64_t mx)
{
	uint64_t range = (uint64_t)mx - (uint64_t)mn, nb = 64;
	unsigned sbits = 2;

	while (nb < n && nb < 65536)
		nb *= 2;
	bk->mn = (uint64_t)mn;
	bk->shift = 0;
	bk->sbits = 0;
	if (range < nb) {
		bk->nb = (size_t)range + 1;
		return;
	}
	while (((size_t)1 << (sbits + 5)) <= nb && sbits < 11)
		sbits++;
	bk->sbits = sbits;
	bk->nb = bucket_of(bk, mx) + 1;
}

/*
 * The six order statistics behind p50/p95/p99 (rank k and k + 1 of each)
 * from one counting pass over the n values of ds (min mn, max mx), in the
 * buckets of buckets_plan: a wanted rank in a one-value bucket is known,
 * the others are narrowed by refine_ranks. Same values as selection, so
 * the same doubles. With m2 set, the counting pass also sums the squared
 * deviations from mean (in value order).
 */
bool percentiles3_hist(const struct dur_set *ds, size_t n, int64_t mn,
		       int64_t mx, double mean, double *m2,
			      double ret[3])
{
	struct buckets bk;
	size_t want[6], off[6], b_of[6];
	int64_t val[6];
	uint32_t *hist;
	double sq = 0;
	struct want_range wr[6];
	bool all_exact = true;

	buckets_plan(&bk, n, mn, mx);
	hist = calloc(bk.nb, sizeof(*hist));
	if (!hist || n > UINT32_MAX) {
		free(hist);
		return false;
	}
	if (m2) {
		DUR_FOR_EACH(ds, d, {
			double dev = (double)d - mean;

			sq += dev * dev;
			hist[bucket_of(&bk, d)]++;
		})
		*m2 = sq;
	} else {
		DUR_FOR_EACH(ds, d, { hist[bucket_of(&bk, d)]++; })
	}
	for (int i = 0; i < 3; i++) {
		double virt = (double)(n - 1) * pct_q[i];
		size_t k = (size_t)floor(virt);

		if (k >= n - 1)
			k = n - 1;
		want[2 * i] = k;
		want[2 * i + 1] = k + 1 < n ? k + 1 : k;
	}
	/* Bucket and offset within the bucket of each wanted rank (ascending). */
	{
		size_t below = 0, b = 0;

		for (int w = 0; w < 6; w++) {
			while (below + hist[b] <= want[w])
				below += hist[b++];
			b_of[w] = b;
			off[w] = want[w] - below;
		}
	}
	for (int w = 0; w < 6; w++) {
		uint64_t lo;
		unsigned bits;

		bucket_range(&bk, b_of[w], &lo, &bits);
		wr[w] = (struct want_range){ lo, bits, hist[b_of[w]], off[w], bits == 0 };
		if (bits == 0)
			val[w] = (int64_t)lo;
		all_exact &= bits == 0;
	}
	free(hist);
	if (!all_exact && !refine_ranks(ds, wr, val))
		return false;
	for (int i = 0; i < 3; i++) {
		double virt = (double)(n - 1) * pct_q[i];
		double t = virt - floor(virt);
		double a = (double)val[2 * i] / SP_NS_PER_S;
		double b = (double)val[2 * i + 1] / SP_NS_PER_S;

		if (want[2 * i] >= n - 1)
			t = 0;
		ret[i] = lerp(a, b, t);
	}
	return true;
}

/* Pool the values of ds (n of them) into a new array, or NULL. */
int64_t *dur_pool(const struct dur_set *ds, size_t n)
{
	int64_t *pool = malloc((n + 1) * sizeof(*pool));
	size_t k = 0;

	if (!pool)
		return NULL;
	DUR_FOR_EACH(ds, d, { pool[k++] = d; })
	return pool;
}

int percentiles3_set(const struct dur_set *ds, size_t n, int64_t mn,
		     int64_t mx, double ret[3])
{
	int64_t *pool;

	if (n >= 256 && percentiles3_hist(ds, n, mn, mx, 0, NULL, ret))
		return 0;
	pool = dur_pool(ds, n);
	if (!pool)
		return -ENOMEM;
	percentiles3_select(pool, n, ret);
	free(pool);
	return 0;
}

int percentiles3_m2(const struct dur_set *ds, size_t n, int64_t mn,
		    int64_t mx, double mean, double *ret_m2, double ret[3])
{
	double m2 = 0;

	if (n >= 256 && percentiles3_hist(ds, n, mn, mx, mean, &m2, ret)) {
		*ret_m2 = m2;
		return 0;
	}
	m2 = 0; /* a histogram given up half way may have set it */
	DUR_FOR_EACH(ds, d, {
		double dev = (double)d - mean;

		m2 += dev * dev;
	})
	*ret_m2 = m2;
	return percentiles3_set(ds, n, mn, mx, ret);
}

double sp_percentile_ns(int64_t *ns, size_t n, double percent)
{
	size_t k;

	if (n == 0)
		return 0.0;
	return percentile_from(ns, n, 0, percent / 100, &k);
}
