/* SPDX-License-Identifier: MIT */
/*
 * The counting-pass percentiles (percentiles3_hist and its squared
 * deviations) against selection over a sorted copy, bit for bit, on the
 * shapes that exercise each bucket scheme: exact linear buckets, log-linear
 * buckets with ranks in one-value buckets, ranks in wide buckets that need
 * refining, gathering, huge ranges and split slices.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reader-internal.h"
#include "check-main.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Values of one shape; v[0..n). */
static void fill(int64_t *v, size_t n, int shape)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t x = rnd();

		switch (shape) {
		case 0: v[i] = 10 + (int64_t)(x % 50); break;     /* narrow: exact */
		case 1: /* tiny calls, rare long outliers */
			v[i] = 12 + (int64_t)(x % 60);
			if (x % 1000 == 7)
				v[i] += 2000 + (int64_t)(rnd() % 2000000);
			break;
		case 2: v[i] = (int64_t)(x % ((uint64_t)1 << 40)); break; /* wide */
		case 3: /* long calls: ranks in wide log-linear buckets */
			v[i] = 100000 + (int64_t)(x % 5000000);
			break;
		case 4: v[i] = (int64_t)(x >> (x % 60)); break;   /* all scales */
		default: v[i] = 1 + (int64_t)(x % 3) * ((int64_t)1 << 50); break;
		}
	}
}

static void check_shape(size_t n, int shape)
{
	int64_t *v = malloc(n * sizeof(*v)), *copy = malloc(n * sizeof(*v));
	int64_t mn = INT64_MAX, mx = INT64_MIN;
	/* Two slices, the second holding end - start differences. */
	int64_t *s = calloc(n, sizeof(*s)), *e = malloc(n * sizeof(*e));
	size_t half = n / 3;
	struct dur_slice sl[2] = { { NULL, v, 0, half }, { s, e, half, n } };
	struct dur_set ds = { sl, 2 };
	double mean = 0, m2 = -1, m2_ref = 0, p[3], ref[3];

	fill(v, n, shape);
	for (size_t i = 0; i < n; i++) {
		s[i] = (int64_t)(rnd() % 1000);
		e[i] = s[i] + v[i];
		mn = v[i] < mn ? v[i] : mn;
		mx = v[i] > mx ? v[i] : mx;
		mean += (double)v[i];
	}
	mean /= (double)n;
	for (size_t i = 0; i < n; i++)
		m2_ref += ((double)v[i] - mean) * ((double)v[i] - mean);
	memcpy(copy, v, n * sizeof(*v));
	percentiles3_select(copy, n, ref);
	/* The counting pass wants n >= 256 (its wanted ranks ascend). */
	if (n >= 256) {
		ck_assert(percentiles3_hist(&ds, n, mn, mx, mean, &m2, p));
		for (int i = 0; i < 3; i++)
			ck_assert_msg(p[i] == ref[i], "n %zu shape %d p[%d] %.17g != %.17g",
				      n, shape, i, p[i], ref[i]);
		ck_assert_msg(m2 == m2_ref, "n %zu shape %d m2", n, shape);
	}
	ck_assert_int_eq(percentiles3_m2(&ds, n, mn, mx, mean, &m2, p), 0);
	for (int i = 0; i < 3; i++)
		ck_assert(p[i] == ref[i]);
	ck_assert(m2 == m2_ref);
	free(v);
	free(copy);
	free(s);
	free(e);
}

START_TEST(hist_equals_selection)
{
	static const size_t sizes[] = { 256, 300, 1000, 5000, 70000, 300000 };

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
		for (int shape = 0; shape < 6; shape++)
			check_shape(sizes[k], shape);
}
END_TEST

START_TEST(small_by_selection)
{
	/* Fewer than 256 values: selection, the same m2. */
	for (size_t n = 1; n < 256; n += 37)
		check_shape(n < 2 ? 2 : n, 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("percentiles");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, hist_equals_selection);
	tcase_add_test(tc, small_by_selection);
	suite_add_tcase(s, tc);
	return sp_check_run(s, false);
}
