/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of tools/compare/compare-stats.c: medians, the exact Mann-Whitney
 * distribution against brute-force enumeration, the tie fallback, and the
 * seeded bootstrap (reproducible, degenerate cases exact).
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "compare.h"
#include "check-main.h"

START_TEST(median_values)
{
	double odd[] = { 5, 1, 3 }, even[] = { 4, 1, 3, 2 }, one[] = { 7 };

	ck_assert_double_eq(cmp_median(odd, 3), 3);
	ck_assert_double_eq(cmp_median(even, 4), 2.5);
	ck_assert_double_eq(cmp_median(one, 1), 7);
	ck_assert(isnan(cmp_median(NULL, 0)));
}
END_TEST

/* P(U >= u) by enumerating every split of ranks 0..m+n-1 into base/cand. */
static double brute_force_tail(size_t m, size_t n, double u)
{
	size_t N = m + n, hits = 0, total = 0;

	for (unsigned long mask = 0; mask < (1ul << N); mask++) {
		size_t cand = 0, count = 0;

		if ((size_t)__builtin_popcountl(mask) != n)
			continue;
		/* U = pairs (cand i, base j) with rank(i) > rank(j). */
		for (size_t r = 0; r < N; r++) {
			if (mask >> r & 1)
				cand++, count += r - (cand - 1);
		}
		total++;
		hits += (double)count >= u;
	}
	return (double)hits / (double)total;
}

START_TEST(mann_whitney_exact_matches_enumeration)
{
	unsigned seed = 12345;

	for (size_t m = 1; m <= 6; m++)
		for (size_t n = 1; n <= 6; n++)
			for (int trial = 0; trial < 20; trial++) {
				double v[12], u, p;
				bool exact;

				/* A random split of the distinct values 0..m+n-1. */
				for (size_t i = 0; i < m + n; i++)
					v[i] = (double)i;
				for (size_t i = m + n - 1; i > 0; i--) {
					size_t j = (size_t)rand_r(&seed) % (i + 1);
					double t = v[i];

					v[i] = v[j];
					v[j] = t;
				}
				ck_assert_int_eq(cmp_mann_whitney(v, m, v + m, n, 1.0,
								  &u, &p, &exact), 0);
				ck_assert(exact);
				ck_assert_double_eq_tol(p, brute_force_tail(m, n, u), 1e-12);
			}
}
END_TEST

START_TEST(mann_whitney_known_values)
{
	double b3[] = { 1, 2, 3 }, c3[] = { 4, 5, 6 }, c3b[] = { 2.5, 5, 6 };
	double b5[] = { 1.00, 1.01, 0.99, 1.02, 0.98 };
	double c5[] = { 1.30, 1.31, 1.29, 1.32, 1.28 };
	double u, p;
	bool exact;

	ck_assert_int_eq(cmp_mann_whitney(b3, 3, c3, 3, 1.0, &u, &p, &exact), 0);
	ck_assert_double_eq(u, 9);
	ck_assert_double_eq_tol(p, 1.0 / 20, 1e-15);
	ck_assert_int_eq(cmp_mann_whitney(b3, 3, c3b, 3, 1.0, &u, &p, &exact), 0);
	ck_assert_double_eq(u, 8);
	ck_assert_double_eq_tol(p, 2.0 / 20, 1e-15);
	/* Reversed roles: nothing larger, p = 1. */
	ck_assert_int_eq(cmp_mann_whitney(c3, 3, b3, 3, 1.0, &u, &p, &exact), 0);
	ck_assert_double_eq(u, 0);
	ck_assert_double_eq_tol(p, 1.0, 1e-15);
	/* 30% slower against budgets of 20% and 40%. */
	ck_assert_int_eq(cmp_mann_whitney(b5, 5, c5, 5, 1.2, &u, &p, &exact), 0);
	ck_assert_double_eq(u, 25);
	ck_assert_double_eq_tol(p, 1.0 / 252, 1e-15);
	ck_assert_int_eq(cmp_mann_whitney(b5, 5, c5, 5, 1.4, &u, &p, &exact), 0);
	ck_assert_double_eq(u, 0);
	ck_assert_double_eq_tol(p, 1.0, 1e-15);
	ck_assert_int_eq(cmp_mann_whitney(b5, 0, c5, 5, 1.0, &u, &p, &exact), -EINVAL);
}
END_TEST

START_TEST(mann_whitney_ties_use_normal_approximation)
{
	double base[] = { 1, 2, 3 }, cand[] = { 2, 4, 6 }, same[] = { 1, 1, 1 };
	double u, p;
	bool exact;

	/* factor 2: every cand equals one scaled base value. */
	ck_assert_int_eq(cmp_mann_whitney(base, 3, cand, 3, 2.0, &u, &p, &exact), 0);
	ck_assert(!exact);
	ck_assert_double_eq(u, 4.5);
	ck_assert(p > 0.5 && p < 1);
	/* All values tied: no evidence at all. */
	ck_assert_int_eq(cmp_mann_whitney(same, 3, same, 3, 1.0, &u, &p, &exact), 0);
	ck_assert_double_eq(p, 1.0);
}
END_TEST

START_TEST(bootstrap_reproducible_and_bounded)
{
	double b[] = { 1.00, 1.01, 0.99, 1.02, 0.98, 1.03, 0.97 };
	double c[] = { 1.30, 1.31, 1.29, 1.32, 1.28, 1.25, 1.35 };
	double lo, hi, lo2, hi2;

	ck_assert_int_eq(cmp_bootstrap_ratio(b, 7, c, 7, 10000, 0.95, 42, &lo, &hi), 0);
	ck_assert_int_eq(cmp_bootstrap_ratio(b, 7, c, 7, 10000, 0.95, 42, &lo2, &hi2), 0);
	ck_assert_double_eq(lo, lo2);
	ck_assert_double_eq(hi, hi2);
	/* Medians of resamples stay within the sample ranges. */
	ck_assert(lo <= 0.30 && hi >= 0.30);
	ck_assert(lo >= 1.25 / 1.03 - 1 && hi <= 1.35 / 0.97 - 1);
	ck_assert(lo < hi);
	/* A wider level gives a wider interval. */
	ck_assert_int_eq(cmp_bootstrap_ratio(b, 7, c, 7, 10000, 0.50, 42, &lo2, &hi2), 0);
	ck_assert(lo2 >= lo && hi2 <= hi);
}
END_TEST

START_TEST(bootstrap_degenerate)
{
	double two[] = { 2, 2, 2 }, three[] = { 3, 3, 3, 3 }, zero[] = { 0, 0 };
	double lo, hi;

	ck_assert_int_eq(cmp_bootstrap_ratio(two, 3, three, 4, 1000, 0.95, 1, &lo, &hi), 0);
	ck_assert_double_eq(lo, 0.5);
	ck_assert_double_eq(hi, 0.5);
	ck_assert_int_eq(cmp_bootstrap_ratio(zero, 2, three, 4, 1000, 0.95, 1, &lo, &hi),
			 -EINVAL);
	ck_assert_int_eq(cmp_bootstrap_ratio(two, 0, three, 4, 1000, 0.95, 1, &lo, &hi),
			 -EINVAL);
	ck_assert_int_eq(cmp_bootstrap_ratio(two, 3, three, 4, 1000, 1.5, 1, &lo, &hi),
			 -EINVAL);
}
END_TEST

START_TEST(hash_is_fnv1a)
{
	ck_assert_uint_eq(cmp_hash(""), 0xcbf29ce484222325ull);
	ck_assert_uint_eq(cmp_hash("a"), 0xaf63dc4c8601ec8cull);
}
END_TEST

static Suite *compare_stats_suite(void)
{
	Suite *s = suite_create("compare-stats");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, median_values);
	tcase_add_test(tc, mann_whitney_exact_matches_enumeration);
	tcase_add_test(tc, mann_whitney_known_values);
	tcase_add_test(tc, mann_whitney_ties_use_normal_approximation);
	tcase_add_test(tc, bootstrap_reproducible_and_bounded);
	tcase_add_test(tc, bootstrap_degenerate);
	tcase_add_test(tc, hash_is_fnv1a);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sp_check_run(compare_stats_suite(), false);
}
