/* SPDX-License-Identifier: MIT */
/*
 * 16 threads created and exiting during the run, in two waves of 8 (the
 * second starts after the first has exited), pthreads or OpenMP.
 * usage: resil-threads pthread|openmp N [SIG]
 * Each thread: "thread_body" once around N x "work". Main: "main" around
 * all. With SIG, the process raises it after every thread has exited.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scope_profiler.h"

static long n;

static void *body(void *arg)
{
	(void)arg;
	sp_begin_name("thread_body");
	for (long i = 0; i < n; i++) {
		sp_begin_name("work");
		sp_end_name("work");
	}
	sp_end_name("thread_body");
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	n = atol(argv[2]);
	sp_begin_name("main");
	for (int wave = 0; wave < 2; wave++) {
		if (strcmp(argv[1], "openmp") == 0) {
#pragma omp parallel num_threads(8)
			body(NULL);
		} else {
			pthread_t t[8];
			for (int i = 0; i < 8; i++)
				pthread_create(&t[i], NULL, body, NULL);
			for (int i = 0; i < 8; i++)
				pthread_join(t[i], NULL);
		}
	}
	printf("done\n");
	fflush(stdout);
	if (argc > 3)
		raise(atoi(argv[3]));
	sp_end_name("main");
	return 0;
}
