/* SPDX-License-Identifier: MIT */
/*
 * --origin: which instant is zero on the printed timeline. The default is the
 * Python time_origin (metadata start_time_ns, else the first region entry);
 * "first" is the first entry, "absolute" the raw clock, a number an explicit
 * origin in seconds, or a duration with a unit (which overrides both, as
 * origin= does upstream).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli-origin.h"
#include "sp-duration.h"

int cli_origin_parse(const char *arg, struct cli_origin *ret)
{
	char *end;
	double v;

	if (strcmp(arg, "run") == 0 || strcmp(arg, "default") == 0) {
		ret->kind = CLI_ORIGIN_RUN;
		return 0;
	}
	if (strcmp(arg, "first") == 0) {
		ret->kind = CLI_ORIGIN_FIRST;
		return 0;
	}
	if (strcmp(arg, "absolute") == 0 || strcmp(arg, "raw") == 0) {
		ret->kind = CLI_ORIGIN_ABSOLUTE;
		return 0;
	}
	/* A duration from the clock's zero (bare: seconds, the one rule), or
	 * a negative number of seconds. */
	int64_t ns;
	if (sp_duration_parse(arg, &ns) == 0) {
		ret->kind = CLI_ORIGIN_SECONDS;
		ret->seconds = (double)ns / 1e9;
		return 0;
	}
	errno = 0;
	v = strtod(arg, &end);
	if (end == arg || *end || errno || !isfinite(v))
		return -EINVAL;
	ret->kind = CLI_ORIGIN_SECONDS;
	ret->seconds = v;
	return 0;
}

double cli_origin_resolve(const struct cli_origin *o, const struct sp_reader *r)
{
	struct sp_times t;

	sp_reader_times(r, &t);
	switch (o->kind) {
	case CLI_ORIGIN_FIRST:
		return t.minimum_start_time;
	case CLI_ORIGIN_ABSOLUTE:
		return 0.0;
	case CLI_ORIGIN_SECONDS:
		return o->seconds;
	case CLI_ORIGIN_DEFAULT:
	case CLI_ORIGIN_RUN:
	default:
		return t.time_origin;
	}
}
