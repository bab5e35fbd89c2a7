/* SPDX-License-Identifier: MIT */
/*
 * A serial program that records exactly known calls, then ends the way the
 * test asks: usage: resil-serial K exit|signal SIG|segv|kill
 * Regions: "outer" (one call, open around everything), "iter" (K calls).
 * Prints "done K" on stdout before it ends, flushed.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scope_profiler.h"

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	long k = atol(argv[1]);
	const char *how = argv[2];
	sp_begin_name("outer");
	for (long i = 0; i < k; i++) {
		sp_begin_name("iter");
		sp_end_name("iter");
	}
	printf("done %ld\n", k);
	fflush(stdout);
	if (strcmp(how, "signal") == 0)
		raise(atoi(argv[3]));
	else if (strcmp(how, "segv") == 0)
		*(volatile int *)(uintptr_t)argc = 0; /* address 3: a real fault */
	else if (strcmp(how, "kill") == 0)
		raise(SIGKILL);
	sp_end_name("outer");
	return 0;
}
