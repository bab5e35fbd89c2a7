/* SPDX-License-Identifier: MIT */
/*
 * A program that closes every descriptor mid-run and reopens its own file,
 * for test-fds.sh: usage: resil-fds K CLOSE FILE [END [SPILL]]
 * K calls of "iter" inside one "outer" call, then every descriptor from 3
 * up is closed (CLOSE: "loop", close() up to the soft RLIMIT_NOFILE, or
 * "range", close_range()), FILE is created and 1000 lines are written to it
 * with K more "iter" calls between them (the profiler spills meanwhile).
 * END: "exit" (default: closes FILE, exits 0), "term" (raises SIGTERM with
 * FILE open) or "replace": before reopening, SPILL (the profiler's spill
 * file) is removed and a file of 100 bytes 'x' put at its path. With
 * RESIL_THREADS=N, N threads make K calls of "titer" each while the lines
 * are written (they spill at the same time as main). Prints "done K"
 * before it ends.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "scope_profiler.h"

static void calls(long n)
{
	for (long i = 0; i < n; i++) {
		sp_begin_name("iter");
		sp_end_name("iter");
	}
}

static long k;

static void *thread_calls(void *arg)
{
	(void)arg;
	for (long i = 0; i < k; i++) {
		sp_begin_name("titer");
		sp_end_name("titer");
	}
	return NULL;
}

static int close_all(const char *how)
{
	if (strcmp(how, "range") == 0)
		return close_range(3, ~0U, 0);
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return -1;
	for (rlim_t fd = 3; fd < rl.rlim_cur; fd++)
		close((int)fd);
	return 0;
}

static int replace(const char *path)
{
	if (unlink(path) != 0)
		return -1;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	char x[100];
	memset(x, 'x', sizeof x);
	if (fd < 0 || write(fd, x, sizeof x) != (ssize_t)sizeof x)
		return -1;
	return close(fd);
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	k = atol(argv[1]);
	const char *end = argc > 4 ? argv[4] : "exit";
	sp_begin_name("outer");
	calls(k);
	if (close_all(argv[2]) != 0) {
		perror("close");
		return 3;
	}
	if (strcmp(end, "replace") == 0 && (argc < 6 || replace(argv[5]) != 0)) {
		perror("replace");
		return 3;
	}
	int fd = open(argv[3], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(argv[3]);
		return 3;
	}
	pthread_t t[16];
	int nthreads = getenv("RESIL_THREADS") ? atoi(getenv("RESIL_THREADS")) : 0;
	if (nthreads < 0 || nthreads > 16)
		return 2;
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, thread_calls, NULL) != 0)
			return 3;
	for (int line = 0; line < 1000; line++) {
		char buf[64];
		int n = snprintf(buf, sizeof buf, "line %04d of the application's own file\n", line);
		if (write(fd, buf, (size_t)n) != n)
			return 4;
		calls(k / 1000);
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	printf("done %ld\n", k);
	fflush(stdout);
	if (strcmp(end, "term") == 0)
		raise(SIGTERM);
	close(fd);
	sp_end_name("outer");
	return 0;
}
