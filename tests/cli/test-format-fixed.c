/* SPDX-License-Identifier: MIT */
/*
 * cli_format_fixed9() must print exactly what printf("%*.9f") prints:
 * random nanosecond timestamps minus fractional origins, values near
 * halves of the last digit, negatives, -0, huge values, NaN/inf, widths.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format-fixed.h"
#include "check-main.h"

static void same(double v, int width)
{
	char want[512], got[512];
	int n = snprintf(want, sizeof want, "%*.9f", width, v);
	int m = cli_format_fixed9(got, sizeof got, width, v);
	ck_assert_msg(strcmp(want, got) == 0 && n == m, "v=%a width=%d: printf \"%s\", ours \"%s\"",
		      v, width, want, got);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

START_TEST(test_edges)
{
	const double v[] = { 0.0, -0.0, 1e-9, -1e-9, 4e-10, -4e-10, 5e-10, -5e-10, 6e-10, 1.5e-9,
			     2.5e-9, 0.1, 0.5, 1.0, -1.0, 123.456789012, -123.456789012, 9.9999999995,
			     9.9999999985, 35184.0, 35184.372088832, 1e5, 1e12, -1e12, 1e300, INFINITY,
			     -INFINITY, NAN, 1.0000000005, 0.0000000005, 1234567.8912345 };
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		for (int w = 0; w <= 20; w += 5)
			same(v[i], w);
}
END_TEST

START_TEST(test_random_timestamps)
{
	/* What tree and events print: ns / 1e9 - origin (origin fractional). */
	for (int i = 0; i < 2000000; i++) {
		int64_t ns = (int64_t)(next() % 40000000000000ull); /* up to ~11 h */
		double origin = (double)(next() % 4000000000000ull) / 1e9 +
				(double)(next() % 1000) * 1e-12;
		same((double)ns / 1e9 - origin, 15);
		same((double)(int64_t)(next() % 5000000000ull) / 1e9, 15); /* durations */
	}
}
END_TEST

START_TEST(test_near_halves)
{
	/* k + 0.5 units of the last digit, and neighbours one ulp away. */
	for (int i = 0; i < 200000; i++) {
		double v = ((double)(next() % 100000000000ull) + 0.5) / 1e9;
		same(v, 15);
		same(nextafter(v, 0), 15);
		same(nextafter(v, 1e30), 15);
		same(-v, 15);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("format-fixed");
	TCase *tc = tcase_create("fixed9");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_edges);
	tcase_add_test(tc, test_random_timestamps);
	tcase_add_test(tc, test_near_halves);
	suite_add_tcase(s, tc);
	return sp_check_run(s, false);
}
