/* SPDX-License-Identifier: MIT */
/*
 * --origin for commands that print timestamps (events, tree): the zero of
 * the timeline, as in the Python events()/call_stack() (§3.3).
 */
#ifndef SP_CLI_ORIGIN_H
#define SP_CLI_ORIGIN_H

#include "scope-profiler-reader.h"

enum cli_origin_kind {
	CLI_ORIGIN_DEFAULT = 0, /* time_origin: run start, else first entry */
	CLI_ORIGIN_RUN,         /* same as the default (named for clarity) */
	CLI_ORIGIN_FIRST,       /* minimum_start_time */
	CLI_ORIGIN_ABSOLUTE,    /* raw clock (relative=False) */
	CLI_ORIGIN_SECONDS,     /* an explicit origin in seconds */
};

struct cli_origin {
	enum cli_origin_kind kind;
	double seconds;
};

#define CLI_ORIGIN_HELP "run|first|absolute|DURATION"

/** Parse "run", "first", "absolute" or a number of seconds. 0 or -EINVAL. */
int cli_origin_parse(const char *arg, struct cli_origin *ret);

/** The origin in seconds for a profile (0.0 for absolute). */
double cli_origin_resolve(const struct cli_origin *origin,
			  const struct sp_reader *reader);

#endif /* SP_CLI_ORIGIN_H */
