/* SPDX-License-Identifier: MIT */
/*
 * Threads (docs/API.md): 4 threads share the default context and one
 * region, each opening and closing its own calls. The counts are exact
 * and the file has every call on its thread's lane.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>

#include "scope_profiler.h"

#define THREADS 4
#define CALLS 1000

static int region;

static void *body(void *arg)
{
	(void)arg;
	for (int i = 0; i < CALLS; i++) {
		sp_begin(region);
		sp_end(region);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	if (sp_init("threads", 0) != 0)
		return 1;
	region = sp_region("work");
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, body, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	sp_region_stats st;
	sp_profiler_get_region_stats(sp_default_profiler(), region, &st);
	printf("calls=%lld completed=%lld\n", (long long)sp_num_calls(region),
	       (long long)sp_profiler_completed_calls(sp_default_profiler(), region));
	return sp_finalize();
}
