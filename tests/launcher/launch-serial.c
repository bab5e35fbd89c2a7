/* SPDX-License-Identifier: MIT */
/*
 * A serial program for the launcher tests with exactly known calls:
 * "outer" (one call around everything) and K x "iter", then as asked:
 * usage: launch-serial K DIR wait|exit CODE|_exit CODE|raise SIG|usr1
 *   wait:  write its pid to DIR/ready, then sleep inside "waiting" until killed
 *   exit:  return CODE from main (the library writes the output)
 *   _exit: _exit(CODE): no output, only the spill file
 *   raise: raise(SIG) itself
 *   usr1:  like wait, but a SIGUSR1 ends the wait and main returns 0
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scope_profiler.h"

static volatile sig_atomic_t usr1;

static void on_usr1(int sig)
{
	(void)sig;
	usr1 = 1;
}

static void ready(const char *dir)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/ready", dir);
	FILE *f = fopen(p, "w");
	if (f) {
		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
	}
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	long k = atol(argv[1]);
	const char *dir = argv[2], *how = argv[3];
	int arg = argc > 4 ? atoi(argv[4]) : 0;
	if (strcmp(how, "usr1") == 0)
		signal(SIGUSR1, on_usr1);
	sp_begin_name("outer");
	for (long i = 0; i < k; i++) {
		sp_begin_name("iter");
		sp_end_name("iter");
	}
	if (strcmp(how, "wait") == 0 || strcmp(how, "usr1") == 0) {
		sp_begin_name("waiting");
		ready(dir);
		while (!usr1)
			usleep(10000);
		sp_end_name("waiting");
	} else if (strcmp(how, "_exit") == 0) {
		_exit(arg);
	} else if (strcmp(how, "raise") == 0) {
		raise(arg);
	}
	sp_end_name("outer");
	return strcmp(how, "exit") == 0 ? arg : 0;
}
