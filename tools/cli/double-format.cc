// SPDX-License-Identifier: MIT
// Shortest round-trip formatting of doubles (the digits Python's repr()
// prints) through Google's double-conversion library: glibc's printf plus
// strtod probing cost ~1.5 us per number, which made 10 M-event exports
// take minutes; this takes ~0.1 us.
#include <double-conversion/double-to-string.h>

#include <cmath>
#include <cstdio>
#include <cstring>

extern "C" size_t cli_format_shortest(char *buf, size_t size, double v);

using double_conversion::DoubleToStringConverter;

// Write v like Python's repr(): shortest digits, fixed notation when the
// decimal exponent is in [-4, 16), else d.ddde[+-]XX; integers keep ".0".
extern "C" size_t cli_format_shortest(char *buf, size_t size, double v)
{
	if (!std::isfinite(v))
		return (size_t)snprintf(buf, size, "null");
	char digits[32];
	bool sign;
	int len, point;
	DoubleToStringConverter::DoubleToAscii(v, DoubleToStringConverter::SHORTEST, 0, digits,
					       sizeof digits, &sign, &len, &point);
	char out[64];
	size_t n = 0;
	if (sign)
		out[n++] = '-';
	int exp10 = point - 1;
	if (exp10 < -4 || exp10 >= 16) {
		out[n++] = digits[0];
		if (len > 1) {
			out[n++] = '.';
			memcpy(out + n, digits + 1, (size_t)len - 1);
			n += (size_t)len - 1;
		}
		n += (size_t)snprintf(out + n, sizeof out - n, "e%c%02d", exp10 < 0 ? '-' : '+',
				      exp10 < 0 ? -exp10 : exp10);
	} else if (point <= 0) {
		out[n++] = '0';
		out[n++] = '.';
		for (int i = 0; i < -point; i++)
			out[n++] = '0';
		memcpy(out + n, digits, (size_t)len);
		n += (size_t)len;
	} else if (point >= len) {
		memcpy(out + n, digits, (size_t)len);
		n += (size_t)len;
		for (int i = len; i < point; i++)
			out[n++] = '0';
		out[n++] = '.';
		out[n++] = '0';
	} else {
		memcpy(out + n, digits, (size_t)point);
		n += (size_t)point;
		out[n++] = '.';
		memcpy(out + n, digits + point, (size_t)(len - point));
		n += (size_t)(len - point);
	}
	out[n] = '\0';
	if (size)
		snprintf(buf, size, "%s", out);
	return n;
}
