/* SPDX-License-Identifier: MIT */
/*
 * A serial program that uses the manual API (linked with -lscope-profiler,
 * the default family's library, which needs its libmpi): under
 * `scope-profiler run` it gets libscope-profiler-serial.so, the same
 * SONAME, so no libmpi may be mapped. Prints which of our libraries and
 * which MPI libraries /proc/self/maps holds, then makes N regions.
 * usage: no-mpi N
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scope_profiler.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return 1;
	while (fgets(line, sizeof line, f)) {
		const char *name = strrchr(line, '/');
		if (name && (strstr(name, "libmpi") || strstr(name, "libscope-profiler")))
			printf("mapped: %s", name + 1);
	}
	fclose(f);
	for (long i = 0; i < n; i++) {
		sp_begin_name("serial_step");
		sp_end_name("serial_step");
	}
	printf("no-mpi: %ld steps\n", n);
	return 0;
}
