/* SPDX-License-Identifier: MIT */
/*
 * The program of the output-path tests: records the manual region NAME
 * (default "work") CALLS times, around an optional chdir(DIR) and an
 * optional system(CMD) (a child that inherits the preload), and prints
 * its pid on stdout. It also creates the file RAN, if given, to show that
 * it was started at all.
 *   paths-app [--name NAME] [--calls N] [--chdir DIR] [--system CMD]
 *             [--ran FILE] [ARGS...]   (extra ARGS are only recorded)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scope_profiler.h"

int main(int argc, char **argv)
{
	const char *name = "work", *dir = NULL, *cmd = NULL, *ran = NULL;
	long calls = 1;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--name"))
			name = argv[i + 1];
		else if (!strcmp(argv[i], "--calls"))
			calls = strtol(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--chdir"))
			dir = argv[i + 1];
		else if (!strcmp(argv[i], "--system"))
			cmd = argv[i + 1];
		else if (!strcmp(argv[i], "--ran"))
			ran = argv[i + 1];
	}
	if (ran) {
		FILE *f = fopen(ran, "w");
		if (f)
			fclose(f);
	}
	printf("%d\n", (int)getpid());
	fflush(stdout);
	if (dir && chdir(dir) != 0) {
		perror(dir);
		return 3;
	}
	for (long i = 0; i < calls; i++) {
		sp_begin_name(name);
		sp_end_name(name);
	}
	if (cmd) {
		int st = system(cmd);
		if (st != 0) {
			fprintf(stderr, "paths-app: %s: status %d\n", cmd, st);
			return 4;
		}
	}
	return 0;
}
