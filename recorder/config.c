/* SPDX-License-Identifier: MIT */
/*
 * The one place SCOPE_PROFILER_* variables are read. Each entry of the
 * table below names the variable, its type, its default and its meaning;
 * adding a setting is one line here plus its field in struct sp_config.
 */
#include "config.h"

#include "log.h"
#include "sp-duration.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct sp_config sp_config;

/* K_CHOICE: a string from a fixed list (choices); K_INT: an integer in
 * [min, max]. Every value is checked here, once: a bad one warns and keeps
 * the default. */
enum kind { K_BOOL, K_STR, K_CHOICE, K_INT, K_DURATION, K_SIZE };

struct setting {
	const char *name; /* after SCOPE_PROFILER_ */
	enum kind kind;
	size_t offset;
	const char *def;
	const char *help;
	const char *const *choices; /* K_CHOICE: NULL-terminated, contains def */
	int64_t min, max;           /* K_INT */
};

static const char *const clock_choices[] = { "auto", "tsc", "monotonic", NULL };
static const char *const timing_choices[] = { "sampled", "exact", "estimate", NULL };
static const char *const fork_choices[] = { "none", "child", NULL };
static const char *const exec_choices[] = { "own", "none", NULL };
static const char *const finalize_choices[] = { "auto", "parallel", "serial", NULL };

#define S(name, kind, field, def, help) \
	{ name, kind, offsetof(struct sp_config, field), def, help, NULL, 0, 0 }
#define CHOICE(name, field, def, choices, help) \
	{ name, K_CHOICE, offsetof(struct sp_config, field), def, help, choices, 0, 0 }
#define INT(name, field, def, min, max, help) \
	{ name, K_INT, offsetof(struct sp_config, field), def, help, NULL, min, max }
static const struct setting settings[] = {
	S("ENABLE", K_BOOL, enabled, "1", "master switch; 0 records nothing and writes no file"),
	S("OUTPUT", K_STR, output, "profiling_data.h5",
	  "output HDF5 file; %p pid, %r rank, %h host, %j job id, %t start time, %% a %"),
	S("LABEL", K_STR, label, "", "run label stored as metadata `label`"),
	S("MAX_MEMORY", K_SIZE, max_memory, "1G",
	  "event memory cap per process; past it calls are dropped and counted"),
	CHOICE("CLOCK", clock, "auto", clock_choices,
	  "tick source: auto (TSC if invariant), tsc, monotonic"),
	S("FUNCTIONS", K_BOOL, functions, "1", "record -finstrument-functions hooks"),
	S("INCLUDE", K_STR, include, "", "regex (re.match) on function names to record"),
	S("EXCLUDE", K_STR, exclude, "", "regex (re.match) on function names to skip"),
	S("MIN_DURATION", K_DURATION, min_duration_ns, "0",
	  "function calls shorter than this are not on the timeline"),
	INT("MAX_DEPTH", max_depth, "0", 0, INT64_MAX,
	  "deepest function nesting recorded; 0 = unlimited"),
	INT("THROTTLE_CALLS", throttle_calls, "1000", 0, INT64_MAX,
	  "auto-throttle a function after this many calls (0 = off) ..."),
	S("THROTTLE_MEAN", K_DURATION, throttle_mean_ns, "10us",
	  "... when their mean own cost is below this"),
	INT("THROTTLE_EARLY", throttle_early, "50", 0, INT64_MAX,
	  "... or already after this many calls of a window when their mean is below "
	  "THROTTLE_MEAN/10 (0 = off; only below THROTTLE_CALLS)"),
	CHOICE("THROTTLE_TIMING", throttle_timing, "sampled", timing_choices,
	  "throttled calls: sampled (counted, 1 in THROTTLE_SAMPLE timed: unbiased total with a "
	  "95 % interval), exact (both timestamps, exact total) or estimate (counted only, total "
	  "= count x mean before the throttle)"),
	INT("THROTTLE_SAMPLE", throttle_sample, "256", 1, INT64_MAX,
	  "sampled timing: 1 in this many throttled calls is timed, at random"),
	S("PATCH", K_BOOL, patch, "0",
	  "rewrite the hook calls of throttled functions to NOPs (x86-64; their counts become "
	  "lower bounds)"),
	S("MPI", K_BOOL, mpi, "1", "record MPI calls"),
	INT("CALLSITES", callsites, "0", 0, 8,
	  "call-site stack depth for MPI calls (0 = off, 1-8)"),
	S("SPILL", K_BOOL, spill, "1",
	  "at MAX_MEMORY, write buffers to <output>.spill.* (0: drop and count)"),
	S("SIGNALS", K_BOOL, signals, "1",
	  "on SIGTERM/INT/XCPU/HUP and crashes, dump events to the spill file, re-raise"),
	CHOICE("FORK", fork, "none", fork_choices,
	  "forked child: none (records nothing) or child (writes <output>.pid<N>)"),
	CHOICE("EXEC", exec, "own", exec_choices,
	  "exec'd child of a profiled process: own (writes <output> with .pid<N> before the "
	  "extension) or none (records nothing)"),
	CHOICE("FINALIZE", finalize, "auto", finalize_choices,
	  "MPI_Finalize's write: auto (every rank its slices: gathered to rank 0 up to 16 MiB, "
	  "else through MPI-IO; the rank-0 stream when compressing or when MPI-IO fails), "
	  "parallel (through MPI-IO whatever the size) or serial (the rank-0 stream)"),
	INT("COMPRESSION", compression, "0", 0, 9,
	  "gzip level 1-9 (with byte shuffle) for the event columns; 0 = uncompressed"),
	S("QUIET", K_BOOL, quiet, "0", "do not print the \"wrote FILE\" line on stderr"),
	S("PRINT_CONFIG", K_BOOL, print_config, "0",
	  "print the effective configuration to stderr at start"),
	S("DEBUG", K_STR, debug, "",
	  "debug lines on stderr for these domains (comma list; 1 or all: every domain)"),
	S("TEST_CLOCK_SKEW", K_STR, test_clock_skew, "",
	  "test only: OFFSET_NS,DRIFT_PPM: MPI rank r's clock reads as if offset by r x OFFSET_NS "
	  "and drifting by r x DRIFT_PPM, for the clock alignment at MPI_Init/MPI_Finalize to undo"),
};
#undef S
#undef CHOICE
#undef INT

int sp_parse_size(const char *s, uint64_t *ret_bytes)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || v < 0 || !isfinite(v))
		return -EINVAL;
	static const struct { const char *suffix; double scale; } units[] = {
		{ "", 1 }, { "B", 1 }, { "K", 1024.0 }, { "KiB", 1024.0 }, { "M", 1048576.0 },
		{ "MiB", 1048576.0 }, { "G", 1073741824.0 }, { "GiB", 1073741824.0 },
	};
	for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
		if (strcasecmp(end, units[i].suffix) == 0) {
			*ret_bytes = (uint64_t)llround(v * units[i].scale);
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_bool(const char *s, bool *ret)
{
	static const char *const yes[] = { "1", "yes", "on", "true" };
	static const char *const no[] = { "0", "no", "off", "false" };
	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*ret = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_int(const char *s, int64_t *ret)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (end == s || *end || errno)
		return -EINVAL;
	*ret = v;
	return 0;
}

static bool is_choice(const char *const *choices, const char *value)
{
	for (const char *const *c = choices; *c; c++)
		if (strcmp(value, *c) == 0)
			return true;
	return false;
}

static int apply(const struct setting *st, const char *value)
{
	char *field = (char *)&sp_config + st->offset;
	switch (st->kind) {
	case K_BOOL:
		return parse_bool(value, (bool *)field);
	case K_INT: {
		int64_t v;
		if (parse_int(value, &v) < 0 || v < st->min || v > st->max)
			return -EINVAL;
		*(int64_t *)field = v;
		return 0;
	}
	case K_DURATION:
		return sp_duration_parse_per_call(value, (int64_t *)field);
	case K_SIZE:
		return sp_parse_size(value, (uint64_t *)field);
	case K_CHOICE:
	case K_STR: {
		if (st->kind == K_CHOICE && !is_choice(st->choices, value))
			return -EINVAL;
		char *copy = strdup(value);
		if (!copy)
			return -ENOMEM;
		free(*(char **)field);
		*(char **)field = copy;
		return 0;
	}
	}
	return -EINVAL;
}

/* The one warning of a bad value: what is allowed, and the default kept. */
static void warn_invalid(const struct setting *st, const char *value)
{
	if (st->kind == K_CHOICE) {
		char list[128] = "";
		for (const char *const *c = st->choices; *c; c++) {
			if (c != st->choices)
				strncat(list, c[1] ? ", " : " or ", sizeof list - strlen(list) - 1);
			strncat(list, *c, sizeof list - strlen(list) - 1);
		}
		sp_log(SP_LOG_WARN, "config", "SCOPE_PROFILER_%s must be %s, using %s", st->name,
			list, st->def);
	} else if (st->kind == K_INT && st->max != INT64_MAX) {
		sp_log(SP_LOG_WARN, "config", "SCOPE_PROFILER_%s must be %" PRId64 "-%" PRId64
			", using %s", st->name, st->min, st->max, st->def);
	} else if (st->kind == K_INT && st->min > 0) {
		sp_log(SP_LOG_WARN, "config", "SCOPE_PROFILER_%s must be >= %" PRId64 ", using %s",
			st->name, st->min, st->def);
	} else if (st->kind == K_DURATION) {
		sp_log(SP_LOG_WARN, "config", "ignoring SCOPE_PROFILER_%s=%s: not a duration "
			"per call (" SP_DURATION_EXAMPLES "; a bare number of 1 or more is ambiguous: "
			"write its unit), using %s", st->name, value, st->def);
	} else {
		sp_log(SP_LOG_WARN, "config", "ignoring SCOPE_PROFILER_%s=%s (invalid value), using %s",
			st->name, value, st->def);
	}
}

int sp_config_load(void)
{
	int bad = 0;
	for (size_t i = 0; i < sizeof settings / sizeof *settings; i++) {
		const struct setting *st = &settings[i];
		apply(st, st->def);
		char var[64] = "SCOPE_PROFILER_";
		strncat(var, st->name, sizeof var - strlen(var) - 1);
		const char *v = getenv(var);
		if (v && apply(st, v) < 0) {
			warn_invalid(st, v);
			apply(st, st->def);
			bad++;
		}
	}
	return bad;
}

void sp_config_print(FILE *out)
{
	fprintf(out, "scope-profiler: effective configuration\n");
	for (size_t i = 0; i < sizeof settings / sizeof *settings; i++) {
		const struct setting *st = &settings[i];
		const char *field = (const char *)&sp_config + st->offset;
		char buf[64];
		const char *v = buf;
		switch (st->kind) {
		case K_BOOL:
			v = *(const bool *)field ? "1" : "0";
			break;
		case K_INT:
			snprintf(buf, sizeof buf, "%" PRId64, *(const int64_t *)field);
			break;
		case K_DURATION:
			snprintf(buf, sizeof buf, "%" PRId64 "ns", *(const int64_t *)field);
			break;
		case K_SIZE:
			snprintf(buf, sizeof buf, "%" PRIu64 "B", *(const uint64_t *)field);
			break;
		case K_CHOICE:
		case K_STR:
			v = *(char *const *)field;
			break;
		}
		fprintf(out, "  SCOPE_PROFILER_%-14s = %-20s # %s\n", st->name, v ? v : "", st->help);
	}
}
