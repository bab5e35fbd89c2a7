/* SPDX-License-Identifier: MIT */
/*
 * Progress for slow commands. A watcher thread waits one second on a
 * condition variable; if the operation has not finished by then it prints
 * "scope-profiler: WHAT…" to stderr (a terminal, checked up front) and the
 * elapsed seconds every second after, and the line is erased when the
 * operation ends. The main thread never blocks on the watcher for more than
 * the time it takes to print one line. Only the main thread starts and
 * stops watchers, so `active` (one watcher at a time) needs no lock.
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

#define PROGRESS_DELAY_MS 1000
#define PROGRESS_WHAT_MAX 72 /* longer descriptions are cut (paths) */

struct cli_progress {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;     /* set by the main thread (under lock) */
	bool printed;  /* set by the watcher (under lock) */
	long delay_ms;
	char what[PROGRESS_WHAT_MAX + 4];
};

static bool active;

static void add_ms(struct timespec *t, long ms)
{
	t->tv_sec += ms / 1000;
	t->tv_nsec += (ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

/* Wait until `until` or done; true when done. Called with the lock held. */
static bool wait_until(struct cli_progress *p, const struct timespec *until)
{
	while (!p->done && pthread_cond_timedwait(&p->cond, &p->lock, until) == 0)
		;
	return p->done;
}

static void *watch(void *arg)
{
	struct cli_progress *p = arg;
	struct timespec until;
	long elapsed_ms = p->delay_ms;
	bool first = true;

	clock_gettime(CLOCK_MONOTONIC, &until);
	add_ms(&until, p->delay_ms);
	pthread_mutex_lock(&p->lock);
	while (!wait_until(p, &until)) {
		if (first)
			fprintf(stderr, "scope-profiler: %s\xe2\x80\xa6", p->what);
		else
			fprintf(stderr, "\r\033[Kscope-profiler: %s\xe2\x80\xa6 %ld s", p->what,
				elapsed_ms / 1000);
		fflush(stderr);
		p->printed = true;
		first = false;
		elapsed_ms += 1000;
		add_ms(&until, 1000);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static long delay_ms(void)
{
	const char *s = getenv("SCOPE_PROFILER_PROGRESS_DELAY_MS");
	char *end;
	long v;

	if (!s || !*s)
		return PROGRESS_DELAY_MS;
	v = strtol(s, &end, 10);
	return *end || v < 0 || v > 3600000 ? PROGRESS_DELAY_MS : v;
}

struct cli_progress *cli_progress_begin(const char *what, unsigned flags)
{
	struct cli_progress *p;
	pthread_condattr_t attr;
	size_t len = strlen(what);

	if (active || !isatty(STDERR_FILENO) ||
	    ((flags & CLI_PROGRESS_STREAMS_STDOUT) && isatty(STDOUT_FILENO)))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (len <= PROGRESS_WHAT_MAX)
		memcpy(p->what, what, len + 1);
	else { /* keep the end (the file name), from a character boundary */
		const char *tail = what + len - (PROGRESS_WHAT_MAX - 3);

		while (((unsigned char)*tail & 0xC0) == 0x80)
			tail++;
		snprintf(p->what, sizeof(p->what), "\xe2\x80\xa6%s", tail);
	}
	p->delay_ms = delay_ms();
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &attr);
	pthread_condattr_destroy(&attr);
	if (pthread_create(&p->thread, NULL, watch, p) != 0) {
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
		free(p);
		return NULL;
	}
	active = true;
	return p;
}

struct cli_progress *cli_progress_start(const char *path)
{
	char what[PROGRESS_WHAT_MAX * 4];

	snprintf(what, sizeof(what), "reading %s", path);
	return cli_progress_begin(what, 0);
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
	free(p);
	active = false;
}
