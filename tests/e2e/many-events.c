/* SPDX-License-Identifier: MIT */
/*
 * Many events per row, for the finalize that streams times into the file
 * in blocks (rows of more than one block, blocks of rows interleaved).
 * Usage: many-events CALLS [threads]
 *   one thread: "outer" holds "inner" then "tail" (CALLS each), with
 *   varying amounts of work; "threads": also two threads, each with its own
 *   region "worker0" / "worker1" (CALLS / 2 each): a thread column, no row
 *   shared between threads; "shared": both threads also call "both" (a row
 *   to sort, which is built in memory).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scope_profiler.h"

static long calls;
static int shared;
static volatile double sink;

static void spin(long k)
{
	double s = 0;
	for (long i = 0; i < k % 13; i++)
		s += i * 0.5;
	sink = s;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	char name[16];
	snprintf(name, sizeof name, "worker%ld", id);
	int r = sp_region(name), b = sp_region("both");
	for (long i = 0; i < calls / 2; i++) {
		sp_begin(r);
		spin(i + id);
		sp_end(r);
		if (shared) {
			sp_begin(b);
			sp_end(b);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	calls = atol(argv[1]);
	sp_init(NULL, 0); /* the default context: sp_region() needs it */
	const char *mode = argc > 2 ? argv[2] : "";
	shared = strcmp(mode, "shared") == 0;
	int outer = sp_region("outer"), inner = sp_region("inner"), tail = sp_region("tail");
	for (long i = 0; i < calls; i++) {
		sp_begin(outer);
		sp_begin(inner);
		spin(i);
		sp_end(inner);
		sp_begin(tail);
		spin(i * 7);
		sp_end(tail);
		sp_end(outer);
	}
	if (*mode) {
		pthread_t t[2];
		for (long k = 0; k < 2; k++)
			pthread_create(&t[k], NULL, worker, (void *)k);
		for (int k = 0; k < 2; k++)
			pthread_join(t[k], NULL);
	}
	return 0;
}
