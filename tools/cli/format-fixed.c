/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "format-fixed.h"

int cli_format_fixed9(char *buf, size_t size, int width, double v)
{
	/*
	 * v x 1e9 rounded to an integer gives the digits of "%.9f" whenever
	 * the exact product is not within a rounding error of a half (the
	 * double product is off by at most half an ulp, < 0.01 below 2^45):
	 * then both round the same way. Halves, huge values, NaN and a
	 * negative value that rounds to zero ("-0.000000000") go to printf.
	 */
	double p = v * 1e9;
	if (!(fabs(p) < 35184372088832.0)) /* 2^45, also false for NaN */
		return snprintf(buf, size, "%*.9f", width, v);
	double r = nearbyint(p);
	if (fabs(p - r) > 0.49 || (r == 0 && signbit(v)))
		return snprintf(buf, size, "%*.9f", width, v);
	long long n = (long long)r;
	unsigned long long a = n < 0 ? 0ull - (unsigned long long)n : (unsigned long long)n;
	char tmp[32];
	int k = 0;
	for (int i = 0; i < 9; i++, a /= 10)
		tmp[k++] = (char)('0' + a % 10);
	tmp[k++] = '.';
	do {
		tmp[k++] = (char)('0' + a % 10);
		a /= 10;
	} while (a);
	if (n < 0)
		tmp[k++] = '-';
	if ((size_t)(width > k ? width : k) >= size)
		return snprintf(buf, size, "%*.9f", width, v);
	int len = 0;
	for (int pad = width - k; pad > 0; pad--)
		buf[len++] = ' ';
	while (k)
		buf[len++] = tmp[--k];
	buf[len] = 0;
	return len;
}
