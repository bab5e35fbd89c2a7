/* SPDX-License-Identifier: MIT */
/*
 * Durations: "250ns", "10us", "10µs", "1.5ms", "2s", "2" (seconds). One
 * parser for the preload's settings and the CLI's options (sp-duration.h).
 */
#include "sp-duration.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *unit;
	double scale;
} units[] = {
	{ "ns", 1 }, { "us", 1e3 }, { "\xc2\xb5s", 1e3 }, /* µs, U+00B5 */
	{ "\xce\xbcs", 1e3 },                               /* μs, U+03BC */
	{ "ms", 1e6 }, { "s", 1e9 }, { "", 1e9 },
};

int sp_duration_parse(const char *s, int64_t *ret_ns)
{
	char *end;
	double v;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	/* Only decimal numbers: strtod also takes "inf", "nan" and hex (the
	 * sign of an exponent is fine; a leading sign was refused above). */
	if (end == s || errno || !isfinite(v) || v < 0 ||
	    strspn(s, "0123456789.eE+-") < (size_t)(end - s))
		return errno == ERANGE ? -ERANGE : -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(end, units[i].unit) == 0) {
			double ns = v * units[i].scale;

			if (ns > 9.2e18)
				return -ERANGE;
			*ret_ns = (int64_t)llround(ns);
			return 0;
		}
	return -EINVAL;
}

int sp_duration_parse_per_call(const char *s, int64_t *ret_ns)
{
	int64_t ns;
	int rc = sp_duration_parse(s, &ns);
	char *end;

	if (rc < 0)
		return rc;
	(void)strtod(s, &end);
	if (*end == '\0' && ns >= 1000000000LL)
		return -EDOM;
	*ret_ns = ns;
	return 0;
}
