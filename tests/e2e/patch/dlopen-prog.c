/* SPDX-License-Identifier: MIT */
/*
 * dlopen-prog N PLUGIN[@OFF]...: for each plugin path in turn (twice
 * over), dlopen it, run plugin_run(N) on 4 threads (its step() and stir()
 * are patched while they run), dlclose it and open the next one, possibly
 * at the same address. Prints each round's result (independent of the
 * profiler); with @OFF, also the 5 bytes at OFF in the plugin's stir()
 * (plugin_stir()) before the dlclose: its tail exit, patched or not.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned long run_fn(unsigned long, long);
typedef void *stir_fn(void);

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
		char path[4096];
		snprintf(path, sizeof path, "%s", argv[2 + round % (argc - 2)]);
		char *at = strchr(path, '@');
		long off = at ? atol(at + 1) : -1;
		if (at)
			*at = '\0';
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
		stir_fn *stir = (stir_fn *)dlsym(h, "plugin_stir");
		if (off >= 0 && stir) {
			const unsigned char *c = (const unsigned char *)stir() + off;
			printf("tail %d: %p %02x%02x%02x%02x%02x\n", round, (void *)c, c[0], c[1], c[2],
			       c[3], c[4]);
		}
		if (dlclose(h) != 0)
			return 4;
	}
	return 0;
}
