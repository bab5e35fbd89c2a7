/* SPDX-License-Identifier: MIT */
/*
 * A program for the disk-full test: usage: resil-disk K THREADS [FILE]
 * Regions: "outer" (one call, open around everything) and K calls of
 * "iter": in main with THREADS 0, else in each of THREADS threads (two
 * waves, the second started after the first has exited), each inside one
 * "body" call. Then the space comes back before the profile is written:
 * the soft RLIMIT_FSIZE is raised to the hard one, and FILE, if given, is
 * removed. Prints "done K" and exits 0, or with the status in
 * RESIL_EXIT (the profiler must not change it, whatever fails).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "scope_profiler.h"

static long k;

static void *body(void *arg)
{
	(void)arg;
	sp_begin_name("body");
	for (long i = 0; i < k; i++) {
		sp_begin_name("iter");
		sp_end_name("iter");
	}
	sp_end_name("body");
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	k = atol(argv[1]);
	int threads = atoi(argv[2]);
	if (threads < 0 || threads > 64)
		return 2;
	sp_begin_name("outer");
	if (threads == 0) {
		for (long i = 0; i < k; i++) {
			sp_begin_name("iter");
			sp_end_name("iter");
		}
	}
	for (int wave = 0; wave < 2 && threads; wave++) {
		pthread_t t[32];
		int n = wave == 0 ? threads / 2 : threads - threads / 2;
		for (int i = 0; i < n; i++)
			if (pthread_create(&t[i], NULL, body, NULL) != 0)
				return 3;
		for (int i = 0; i < n; i++)
			pthread_join(t[i], NULL);
	}
	struct rlimit rl;
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_FSIZE, &rl);
	}
	if (argc > 3 && unlink(argv[3]) != 0) {
		perror(argv[3]);
		return 3;
	}
	printf("done %ld\n", k);
	fflush(stdout);
	sp_end_name("outer");
	const char *status = getenv("RESIL_EXIT");
	return status ? atoi(status) : 0;
}
