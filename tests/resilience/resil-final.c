/* SPDX-License-Identifier: MIT */
/*
 * A program whose output path goes bad during the run, for
 * test-final-write.sh: usage: resil-final K STATUS [rename FROM TO | wait FILE]
 * K calls of "iter" inside one "outer" call; then "rename" moves FROM to TO
 * (the output's directory), "wait" creates FILE.ready and waits (60 s at
 * most) until FILE exists. Prints "done K" and exits with STATUS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "scope_profiler.h"

static int wait_for(const char *file)
{
	char ready[4096];
	snprintf(ready, sizeof ready, "%s.ready", file);
	FILE *f = fopen(ready, "w");
	if (!f || fclose(f) != 0)
		return -1;
	for (int i = 0; i < 6000 && access(file, F_OK) != 0; i++)
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	return access(file, F_OK);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	long k = atol(argv[1]);
	sp_begin_name("outer");
	for (long i = 0; i < k; i++) {
		sp_begin_name("iter");
		sp_end_name("iter");
	}
	if (argc > 5 && strcmp(argv[3], "rename") == 0 && rename(argv[4], argv[5]) != 0) {
		perror("rename");
		return 3;
	}
	if (argc > 3 && strcmp(argv[3], "wait") == 0 && wait_for(argv[4]) != 0) {
		perror("wait");
		return 3;
	}
	printf("done %ld\n", k);
	fflush(stdout);
	sp_end_name("outer");
	return atoi(argv[2]);
}
