/* SPDX-License-Identifier: MIT */
/*
 * Progress for slow reads. A watcher thread waits one second on a condition
 * variable; if the read has not finished by then it prints "reading FILE…"
 * to stderr (a terminal, checked up front), and the line is erased when the
 * read ends. The main thread never blocks on the watcher for more than the
 * time it takes to print one line.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli-progress.h"

#define PROGRESS_DELAY_S 1

struct cli_progress {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;     /* set by the main thread (under lock) */
	bool printed;  /* set by the watcher (under lock) */
	char *path;
};

static void *watch(void *arg)
{
	struct cli_progress *p = arg;
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += PROGRESS_DELAY_S;
	pthread_mutex_lock(&p->lock);
	while (!p->done &&
	       pthread_cond_timedwait(&p->cond, &p->lock, &until) == 0)
		;
	if (!p->done) {
		fprintf(stderr, "scope-profiler: reading %s…", p->path);
		fflush(stderr);
		p->printed = true;
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct cli_progress *cli_progress_start(const char *path)
{
	struct cli_progress *p;
	pthread_condattr_t attr;

	if (!isatty(STDERR_FILENO))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->path = strdup(path);
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &attr);
	pthread_condattr_destroy(&attr);
	if (!p->path || pthread_create(&p->thread, NULL, watch, p) != 0) {
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
		free(p->path);
		free(p);
		return NULL;
	}
	return p;
}

void cli_progress_stop(struct cli_progress *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->done = true;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	if (p->printed) {
		/* Erase the line so the command's own output starts clean. */
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p->path);
	free(p);
}
