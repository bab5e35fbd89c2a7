/* SPDX-License-Identifier: MIT */
/*
 * Records regions with hostile names through the manual API, so the file is
 * written by the project's own recorder: '/', spaces, quotes, " > ", a
 * backslash, control characters, invalid UTF-8 and a 10 kB name. Each name
 * is called once at top level and once nested inside the first name.
 * Output: $SCOPE_PROFILER_OUTPUT. The names are listed by names_expected.py.
 */
#include <string.h>

#include "scope_profiler.h"

static char long_name[10241];

static const char *const names[] = {
	"outer/with/slashes",
	"name with spaces",
	"double \"quoted\" name",
	"single 'quoted' name",
	"a > b > c",
	"back\\slash",
	"ctl\x01\x1f\ttab\nnewline",
	"latin1 caf\xe9 \xff\xfe",
	"truncated utf8 \xe2\x82",
	"surrogate \xed\xa0\x80 overlong \xc0\xaf",
	"valid utf8 caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x9a\x80",
	long_name,
};

int main(void)
{
	size_t n = sizeof(names) / sizeof(names[0]);

	memset(long_name, 'L', sizeof(long_name) - 1);
	memcpy(long_name, "long-", 5);
	sp_begin_name(names[0]);
	for (size_t i = 1; i < n; i++) {
		sp_begin_name(names[i]);
		sp_end_name(names[i]);
	}
	sp_end_name(names[0]);
	for (size_t i = 1; i < n; i++) {
		sp_begin_name(names[i]);
		sp_end_name(names[i]);
	}
	return 0;
}
