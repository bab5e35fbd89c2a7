/* SPDX-License-Identifier: MIT */
/*
 * SCOPE_PROFILER_INCLUDE / _EXCLUDE: PCRE2 regexes on demangled function
 * names with Python re.match semantics (anchored at the start, not at the
 * end). A name is recorded when it matches INCLUDE (if set) and does not
 * match EXCLUDE (if set). Matching happens once per function; callers
 * serialize (the function table's lock), so one match_data is shared.
 */
#include "functions.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <pcre2.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

static pcre2_code *include_re, *exclude_re;
static pcre2_match_data *match_data;

static int compile(const char *what, const char *pattern, pcre2_code **ret)
{
	*ret = NULL;
	if (!pattern || !*pattern)
		return 0;
	int err;
	PCRE2_SIZE at;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
				       PCRE2_ANCHORED | PCRE2_UTF, &err, &at, NULL);
	if (!re) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(err, msg, sizeof msg);
		sp_log(SP_LOG_WARN, "filter", "ignoring SCOPE_PROFILER_%s=%s: %s at offset %zu",
			what, pattern, (const char *)msg, (size_t)at);
		return -EINVAL;
	}
	pcre2_jit_compile(re, PCRE2_JIT_COMPLETE); /* optional speed-up */
	*ret = re;
	return 0;
}

int sp_filter_set(const char *include, const char *exclude)
{
	sp_filter_free();
	int r1 = compile("INCLUDE", include, &include_re);
	int r2 = compile("EXCLUDE", exclude, &exclude_re);
	if ((include_re || exclude_re) && !(match_data = pcre2_match_data_create(1, NULL))) {
		sp_filter_free();
		return -ENOMEM;
	}
	return r1 < 0 ? r1 : r2;
}

bool sp_filter_active(void)
{
	return include_re || exclude_re;
}

static bool matches(pcre2_code *re, const char *name)
{
	return pcre2_match(re, (PCRE2_SPTR)name, strlen(name), 0, 0, match_data, NULL) >= 0;
}

bool sp_filter_accepts(const char *name)
{
	if (include_re && !matches(include_re, name))
		return false;
	if (exclude_re && matches(exclude_re, name))
		return false;
	return true;
}

void sp_filter_free(void)
{
	pcre2_code_free(include_re);
	pcre2_code_free(exclude_re);
	pcre2_match_data_free(match_data);
	include_re = exclude_re = NULL;
	match_data = NULL;
}
