/* SPDX-License-Identifier: MIT */
/*
 * A context's kept calls stay within SCOPE_PROFILER_MAX_MEMORY: N calls of
 * one region (argv[1]) with a small cap. Every call is still counted and
 * timed (the stats getters), the .spt file keeps a prefix. Prints
 * "calls=N stats=N".
 */
#include <stdio.h>
#include <stdlib.h>

#include "scope_profiler.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	sp_region_stats st;
	int r;

	sp_init("budget", 0);
	sp_set_output_format(SP_OUTPUT_TRACE);
	r = sp_region("hot");
	for (long i = 0; i < n; i++) {
		sp_begin(r);
		sp_end(r);
	}
	if (sp_profiler_get_region_stats(sp_default_profiler(), r, &st) != SP_OK)
		return 1;
	printf("calls=%lld stats=%lld\n", (long long)sp_num_calls(r), (long long)st.calls);
	return sp_finalize();
}
