/* SPDX-License-Identifier: MIT */
/*
 * The signal handler on another thread while the main thread records and
 * spills: usage: resil-offthread K
 * Main blocks SIGTERM and records K x "iter" inside "outer" (with a small
 * SCOPE_PROFILER_MAX_MEMORY it spills all the time). A second thread waits
 * until main has done K/2 iterations, prints that count ("sent after L"),
 * and sends the process SIGTERM, which only it can take. Main goes on until
 * the process ends; "iter" calls that completed before the dump are in the
 * spill file: at least L of them.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "scope_profiler.h"

static atomic_long done;
static long k;

static void *killer(void *arg)
{
	(void)arg;
	while (atomic_load(&done) < k / 2)
		;
	long l = atomic_load(&done);
	printf("sent after %ld\n", l);
	fflush(stdout);
	kill(getpid(), SIGTERM);
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	k = atol(argv[1]);
	sigset_t term;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_t t;
	if (pthread_create(&t, NULL, killer, NULL) != 0)
		return 2;
	pthread_sigmask(SIG_BLOCK, &term, NULL); /* after the create: the killer takes it */
	sp_begin_name("outer");
	for (long i = 0; i < k; i++) {
		sp_begin_name("iter");
		sp_end_name("iter");
		atomic_store(&done, i + 1);
	}
	sp_end_name("outer");
	for (;;)
		pause(); /* the signal ends the process (it lands on the killer) */
}
