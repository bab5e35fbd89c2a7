/* SPDX-License-Identifier: MIT */
/*
 * A context's owner and a second thread meet (preload/api.c, ctx_enter):
 * for each of many contexts the creating thread claims it, then it and a
 * worker start hammering one region at the same instant, so the switch to
 * the lock happens while the owner is inside a call. Every count must be
 * exact and every call closed; a lost update shows as a wrong count.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "scope_profiler.h"

#define CONTEXTS 100
#define PAIRS 20000

static sp_profiler *ctx[CONTEXTS];
static atomic_int go[CONTEXTS];

static void hammer(sp_profiler *p)
{
	for (int i = 0; i < PAIRS; i++) {
		sp_profiler_begin(p, 0);
		sp_profiler_end(p, 0);
	}
}

static void *worker(void *arg)
{
	(void)arg;
	for (int k = 0; k < CONTEXTS; k++) {
		while (!atomic_load(&go[k]))
			;
		hammer(ctx[k]);
	}
	return NULL;
}

int main(void)
{
	pthread_t t;
	int bad = 0;
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	for (int k = 0; k < CONTEXTS; k++) {
		ctx[k] = sp_create("owner", k);
		if (sp_profiler_region(ctx[k], "shared") != 0) /* claims it */
			return 1;
		for (int i = 0; i < 50; i++) { /* owned: no lock */
			sp_profiler_begin(ctx[k], 0);
			sp_profiler_end(ctx[k], 0);
		}
		atomic_store(&go[k], 1);
		hammer(ctx[k]);
	}
	pthread_join(t, NULL);
	for (int k = 0; k < CONTEXTS; k++) {
		sp_region_stats st;
		sp_profiler_get_region_stats(ctx[k], 0, &st);
		long long done = sp_profiler_completed_calls(ctx[k], 0);
		int reset = sp_profiler_reset(ctx[k]); /* SP_OK: nothing left open */
		if (st.calls != 2 * PAIRS + 50 || done != 2 * PAIRS + 50 || reset != SP_OK) {
			printf("context %d: calls=%lld completed=%lld reset=%d\n", k, (long long)st.calls,
			       done, reset);
			bad++;
		}
		sp_destroy(ctx[k]);
	}
	printf("owner: %d of %d contexts wrong\n", bad, CONTEXTS);
	return bad != 0;
}
