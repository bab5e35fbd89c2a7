/* SPDX-License-Identifier: MIT */
/*
 * The configuration table validates every value once: choice settings take
 * only their listed strings, bounded integers only their range; a bad value
 * keeps the default and prints one line naming what is allowed. sp_log()
 * prints info, warning and (per SCOPE_PROFILER_DEBUG domain) debug lines.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "check-main.h"

static const char *const all_vars[] = {
	"SCOPE_PROFILER_CLOCK", "SCOPE_PROFILER_FORK", "SCOPE_PROFILER_THROTTLE_TIMING",
	"SCOPE_PROFILER_COMPRESSION", "SCOPE_PROFILER_CALLSITES", "SCOPE_PROFILER_THROTTLE_SAMPLE",
	"SCOPE_PROFILER_MAX_DEPTH", "SCOPE_PROFILER_DEBUG", "SCOPE_PROFILER_QUIET", NULL,
};

static void clear_env(void)
{
	for (const char *const *v = all_vars; *v; v++)
		unsetenv(*v);
}

static void log_lines(void)
{
	sp_log(SP_LOG_DEBUG, "spill", "one %d", 1);
	sp_log(SP_LOG_DEBUG, "clock", "two");
	sp_log(SP_LOG_DEBUG, "spil", "not a prefix match");
	sp_log(SP_LOG_INFO, "lifecycle", "wrote %s", "x.h5");
	sp_log(SP_LOG_WARN, "filter", "careful");
}

/* sp_config_load() (then, with_log, log_lines()) with stderr captured into buf. */
static int capture(char *buf, size_t size, bool with_log)
{
	FILE *tmp = tmpfile();
	ck_assert_ptr_nonnull(tmp);
	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	dup2(fileno(tmp), STDERR_FILENO);
	int bad = sp_config_load();
	if (with_log)
		log_lines();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	size_t n = fread(buf, 1, size - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
	return bad;
}

static int load_capturing(char *buf, size_t size)
{
	return capture(buf, size, false);
}

START_TEST(test_defaults)
{
	char err[512];
	clear_env();
	ck_assert_int_eq(load_capturing(err, sizeof err), 0);
	ck_assert_str_eq(err, "");
	ck_assert_str_eq(sp_config.clock, "auto");
	ck_assert_str_eq(sp_config.fork, "none");
	ck_assert_str_eq(sp_config.throttle_timing, "sampled");
	ck_assert_int_eq(sp_config.compression, 0);
	ck_assert_int_eq(sp_config.throttle_sample, 256);
}
END_TEST

START_TEST(test_choices_accept_their_values)
{
	char err[512];
	clear_env();
	setenv("SCOPE_PROFILER_CLOCK", "monotonic", 1);
	setenv("SCOPE_PROFILER_FORK", "child", 1);
	setenv("SCOPE_PROFILER_THROTTLE_TIMING", "estimate", 1);
	ck_assert_int_eq(load_capturing(err, sizeof err), 0);
	ck_assert_str_eq(sp_config.clock, "monotonic");
	ck_assert_str_eq(sp_config.fork, "child");
	ck_assert_str_eq(sp_config.throttle_timing, "estimate");
}
END_TEST

START_TEST(test_choices_refuse_others)
{
	char err[1024];
	clear_env();
	setenv("SCOPE_PROFILER_CLOCK", "bogus", 1);
	setenv("SCOPE_PROFILER_FORK", "Child", 1); /* exact spelling only */
	setenv("SCOPE_PROFILER_THROTTLE_TIMING", "", 1);
	ck_assert_int_eq(load_capturing(err, sizeof err), 3);
	ck_assert_str_eq(sp_config.clock, "auto");
	ck_assert_str_eq(sp_config.fork, "none");
	ck_assert_str_eq(sp_config.throttle_timing, "sampled");
	ck_assert_str_eq(err,
		"scope-profiler: SCOPE_PROFILER_CLOCK must be auto, tsc or monotonic, using auto\n"
		"scope-profiler: SCOPE_PROFILER_THROTTLE_TIMING must be sampled, exact or estimate, "
		"using sampled\n"
		"scope-profiler: SCOPE_PROFILER_FORK must be none or child, using none\n");
}
END_TEST

START_TEST(test_integer_ranges)
{
	char err[1024];
	clear_env();
	setenv("SCOPE_PROFILER_COMPRESSION", "9", 1);
	setenv("SCOPE_PROFILER_CALLSITES", "8", 1);
	setenv("SCOPE_PROFILER_THROTTLE_SAMPLE", "1", 1);
	ck_assert_int_eq(load_capturing(err, sizeof err), 0);
	ck_assert_int_eq(sp_config.compression, 9);
	ck_assert_int_eq(sp_config.callsites, 8);
	ck_assert_int_eq(sp_config.throttle_sample, 1);

	setenv("SCOPE_PROFILER_COMPRESSION", "10", 1);
	setenv("SCOPE_PROFILER_CALLSITES", "-1", 1);
	setenv("SCOPE_PROFILER_THROTTLE_SAMPLE", "0", 1);
	setenv("SCOPE_PROFILER_MAX_DEPTH", "-3", 1);
	ck_assert_int_eq(load_capturing(err, sizeof err), 4);
	ck_assert_int_eq(sp_config.compression, 0);
	ck_assert_int_eq(sp_config.callsites, 0);
	ck_assert_int_eq(sp_config.throttle_sample, 256);
	ck_assert_int_eq(sp_config.max_depth, 0);
	ck_assert_ptr_nonnull(strstr(err, "SCOPE_PROFILER_COMPRESSION must be 0-9, using 0\n"));
	ck_assert_ptr_nonnull(strstr(err, "SCOPE_PROFILER_CALLSITES must be 0-8, using 0\n"));
	ck_assert_ptr_nonnull(strstr(err, "SCOPE_PROFILER_THROTTLE_SAMPLE must be >= 1, using 256\n"));
	ck_assert_ptr_nonnull(strstr(err, "ignoring SCOPE_PROFILER_MAX_DEPTH=-3 (invalid value), using 0\n"));
}
END_TEST

START_TEST(test_log_levels_and_debug_domains)
{
	char err[1024];
	clear_env();
	capture(err, sizeof err, true);
	ck_assert_str_eq(err, "scope-profiler: wrote x.h5\nscope-profiler: careful\n");

	setenv("SCOPE_PROFILER_DEBUG", "clock,spill", 1);
	setenv("SCOPE_PROFILER_QUIET", "1", 1);
	capture(err, sizeof err, true);
	ck_assert_str_eq(err, "scope-profiler: debug: spill: one 1\n"
			      "scope-profiler: debug: clock: two\n"
			      "scope-profiler: careful\n");

	setenv("SCOPE_PROFILER_DEBUG", "all", 1);
	capture(err, sizeof err, true);
	ck_assert_ptr_nonnull(strstr(err, "scope-profiler: debug: spil: not a prefix match\n"));
	clear_env();
	sp_config_load();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("table");
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_choices_accept_their_values);
	tcase_add_test(tc, test_choices_refuse_others);
	tcase_add_test(tc, test_integer_ranges);
	tcase_add_test(tc, test_log_levels_and_debug_domains);
	suite_add_tcase(s, tc);
	return sp_check_run(s, true);
}
