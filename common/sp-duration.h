/* SPDX-License-Identifier: MIT */
/*
 * The one parser of durations, shared by the preload's settings
 * (recorder/config.c) and every duration option of the CLI: a number with
 * an optional unit, ns, us, µs, ms or s; a bare number is seconds, as
 * upstream's durations are (docs/CLI.md, "Units").
 */
#ifndef SP_DURATION_H
#define SP_DURATION_H

#include <stdint.h>

#include "compiler.h"

/* What the error messages list as examples. */
#define SP_DURATION_EXAMPLES "250ns, 10us, 1.5ms, 2s; a bare number is seconds"

/**
 * Parse a non-negative duration into nanoseconds (rounded to nearest).
 * @return 0, -EINVAL (not a number, negative, unknown unit), or -ERANGE
 * (over 292 years). *ret_ns is written only on success.
 */
SP_HIDDEN int sp_duration_parse(const char *s, int64_t *ret_ns);

/**
 * A per-call threshold (MIN_DURATION, THROTTLE_MEAN and their `run`
 * options), whose bare numbers meant nanoseconds before: as
 * sp_duration_parse, but a bare number of 1 or more (a second or more per
 * call, surely meant as ns) is ambiguous: -EDOM. With a unit it is taken.
 */
SP_HIDDEN int sp_duration_parse_per_call(const char *s, int64_t *ret_ns);

#endif /* SP_DURATION_H */
