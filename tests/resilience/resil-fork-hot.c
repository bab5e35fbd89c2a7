/* SPDX-License-Identifier: MIT */
/*
 * A forked child's counts are its own (SCOPE_PROFILER_FORK=child). Built
 * with -finstrument-functions. usage: resil-fork-hot N
 *   the parent calls hot() N times (a tiny function: the auto-throttle
 *   counts most calls instead of recording them; MAX_MEMORY small enough,
 *   some are dropped too), forks; the child calls hot() 10 times and
 *   exits; the parent waits, calls hot() once more and prints "child PID".
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) static void hot(void)
{
	sink++;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	for (long i = 0; i < n; i++)
		hot();
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 10; i++)
			hot();
		exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	hot();
	printf("child %d\n", (int)pid);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
