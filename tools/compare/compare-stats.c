/* SPDX-License-Identifier: MIT */
/*
 * Statistics of the noise-aware check: medians, a seeded percentile
 * bootstrap of the ratio of medians and the one-sided Mann-Whitney U test
 * (exact distribution without ties). Pure functions, unit-tested on their
 * own in tests/compare/test-compare-stats.c.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double cmp_median(double *v, size_t n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

uint64_t cmp_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* splitmix64: small, fast, and good enough for resampling indices. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform index in [0, n) (multiply-shift; bias negligible for small n). */
static size_t random_index(uint64_t *state, size_t n)
{
	return (size_t)(((unsigned __int128)next_random(state) * n) >> 64);
}

static double resampled_median(const double *v, size_t n, double *tmp,
			       uint64_t *state)
{
	for (size_t i = 0; i < n; i++)
		tmp[i] = v[random_index(state, n)];
	return cmp_median(tmp, n);
}

/* numpy-style linear percentile of sorted v. */
static double sorted_percentile(const double *v, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t k = (size_t)floor(pos);

	if (k + 1 >= n)
		return v[n - 1];
	return v[k] + (v[k + 1] - v[k]) * (pos - (double)k);
}

int cmp_bootstrap_ratio(const double *base, size_t nb, const double *cand,
			size_t nc, unsigned resamples, double level,
			uint64_t seed, double *ret_lo, double *ret_hi)
{
	double *ratios, *tmp;
	uint64_t state = seed;
	size_t k = 0;

	if (nb == 0 || nc == 0 || resamples == 0 || !(level > 0 && level < 1))
		return -EINVAL;
	ratios = malloc(resamples * sizeof(*ratios));
	tmp = malloc((nb > nc ? nb : nc) * sizeof(*tmp));
	if (!ratios || !tmp) {
		free(ratios);
		free(tmp);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < resamples; i++) {
		double mb = resampled_median(base, nb, tmp, &state);
		double mc = resampled_median(cand, nc, tmp, &state);

		if (mb != 0)
			ratios[k++] = mc / mb - 1;
	}
	free(tmp);
	if (k == 0) {
		free(ratios);
		return -EINVAL;
	}
	qsort(ratios, k, sizeof(*ratios), cmp_double);
	*ret_lo = sorted_percentile(ratios, k, (1 - level) / 2);
	*ret_hi = sorted_percentile(ratios, k, 1 - (1 - level) / 2);
	free(ratios);
	return 0;
}

/*
 * Exact upper tail P(U >= u) for sample sizes m, n without ties. The number
 * of arrangements with U = k is the coefficient of q^k in the Gaussian
 * binomial [m+n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i),
 * built up one factor at a time (counts in double: exact up to 2^53, then
 * relative error ~1e-16, irrelevant for a p-value).
 */
static int exact_upper_tail(size_t m, size_t n, double u, double *ret)
{
	size_t max = m * n;
	double *c = calloc(max + 1, sizeof(*c)), total = 0, tail = 0;

	if (!c)
		return -ENOMEM;
	c[0] = 1;
	for (size_t i = 1; i <= m; i++) {
		/* multiply by (1 - q^(n+i)) */
		for (size_t k = max; k >= n + i; k--)
			c[k] -= c[k - n - i];
		/* divide by (1 - q^i): c[k] += c[k - i], ascending */
		for (size_t k = i; k <= max; k++)
			c[k] += c[k - i];
	}
	for (size_t k = 0; k <= max; k++) {
		total += c[k];
		if ((double)k >= u - 1e-9)
			tail += c[k];
	}
	free(c);
	*ret = tail / total;
	return 0;
}

static int cmp_value(const void *a, const void *b)
{
	return cmp_double(a, b);
}

/* Normal approximation with tie correction and continuity correction. */
static double normal_upper_tail(const double *base, size_t m,
				const double *cand, size_t n, double factor,
				double u)
{
	size_t N = m + n;
	double *all = malloc(N * sizeof(*all)), ties = 0, var, z;

	if (!all)
		return NAN;
	for (size_t i = 0; i < m; i++)
		all[i] = base[i] * factor;
	memcpy(all + m, cand, n * sizeof(*cand));
	qsort(all, N, sizeof(*all), cmp_value);
	for (size_t i = 0; i < N;) {
		size_t j = i;

		while (j < N && all[j] == all[i])
			j++;
		ties += pow((double)(j - i), 3) - (double)(j - i);
		i = j;
	}
	free(all);
	var = (double)m * (double)n / 12.0 *
	      ((double)(N + 1) - ties / ((double)N * (double)(N - 1)));
	if (var <= 0)
		return 1.0;
	z = (u - (double)m * (double)n / 2 - 0.5) / sqrt(var);
	return 0.5 * erfc(z / sqrt(2.0));
}

int cmp_mann_whitney(const double *base, size_t nb, const double *cand,
		     size_t nc, double factor, double *ret_u, double *ret_p,
		     bool *ret_exact)
{
	double u = 0, p;
	bool ties = false;
	int rc;

	if (nb == 0 || nc == 0)
		return -EINVAL;
	for (size_t i = 0; i < nc; i++)
		for (size_t j = 0; j < nb; j++) {
			double b = base[j] * factor;

			if (cand[i] > b) {
				u += 1;
			} else if (cand[i] == b) {
				u += 0.5;
				ties = true;
			}
		}
	if (!ties) {
		rc = exact_upper_tail(nb, nc, u, &p);
		if (rc < 0)
			return rc;
	} else {
		p = normal_upper_tail(base, nb, cand, nc, factor, u);
		if (isnan(p))
			return -ENOMEM;
	}
	*ret_u = u;
	*ret_p = p;
	*ret_exact = !ties;
	return 0;
}
