/* SPDX-License-Identifier: MIT */
/*
 * dlopen-prog N PLUGIN...: for each plugin path in turn (twice over),
 * dlopen it, run plugin_run(N) on 4 threads (its step() is patched while
 * they run), dlclose it and open the next one, possibly at the same
 * address. Prints each round's result (independent of the profiler).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

typedef unsigned long run_fn(unsigned long, long);

static run_fn *run;
static long n_calls;

static void *worker(void *arg)
{
	return (void *)run((unsigned long)arg, n_calls);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	n_calls = atol(argv[1]);
	for (int round = 0; round < 2 * (argc - 2); round++) {
		const char *path = argv[2 + round % (argc - 2)];
		void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h || !(run = (run_fn *)dlsym(h, "plugin_run"))) {
			fprintf(stderr, "dlopen-prog: %s\n", dlerror());
			return 3;
		}
		pthread_t th[4];
		unsigned long sum = 0;
		for (long i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, worker, (void *)(i + round));
		for (int i = 0; i < 4; i++) {
			void *r;
			pthread_join(th[i], &r);
			sum ^= (unsigned long)r << i;
		}
		printf("round %d: %lx\n", round, sum);
		if (dlclose(h) != 0)
			return 4;
	}
	return 0;
}
