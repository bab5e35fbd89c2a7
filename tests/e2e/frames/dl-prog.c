/* SPDX-License-Identifier: MIT */
/*
 * dlopen, run and dlclose two plugins in turn (tests/e2e/frames):
 * usage: dl-prog OUT.json ALPHA.so BETA.so. Rounds alpha, beta, alpha,
 * beta with different call counts; each round notes the address of its
 * plugin's functions, so OUT.json says whether the second plugin really
 * was loaded where the first had been. Writes the calls per function.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct round {
	const char *name;
	long n;
	void *run, *step, *leaf;
};

static long n_round;

__attribute__((noinline)) static int one_round(const char *path, struct round *r)
{
	n_round++;
	char sym[64];
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		return -1;
	}
	snprintf(sym, sizeof sym, "%s_run", r->name);
	r->run = dlsym(h, sym);
	snprintf(sym, sizeof sym, "%s_step", r->name);
	r->step = dlsym(h, sym);
	snprintf(sym, sizeof sym, "%s_leaf", r->name);
	r->leaf = dlsym(h, sym);
	if (!r->run || !r->step || !r->leaf)
		return -1;
	((long (*)(long))r->run)(r->n);
	return dlclose(h);
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	struct round rounds[] = {
		{ "alpha", 3000 }, { "beta", 5000 }, { "alpha", 1200 }, { "beta", 700 },
	};
	for (int i = 0; i < 4; i++)
		if (one_round(argv[2 + i % 2], &rounds[i]) != 0)
			return 3;
	long na = rounds[0].n + rounds[2].n, nb = rounds[1].n + rounds[3].n;
	int reused = rounds[1].run == rounds[0].run && rounds[1].step == rounds[0].step &&
		     rounds[1].leaf == rounds[0].leaf && rounds[3].step == rounds[2].step;
	FILE *f = fopen(argv[1], "w");
	if (!f)
		return 2;
	fprintf(f, "{\"calls\": {\"main\": 1, \"one_round\": %ld, \"alpha_run\": 2, \"alpha_step\": %ld, "
		   "\"alpha_leaf\": %ld, \"beta_run\": 2, \"beta_step\": %ld, \"beta_leaf\": %ld},\n",
		n_round, na, na, nb, nb);
	fprintf(f, " \"reused\": %s, \"step_addrs\": [\"%p\", \"%p\", \"%p\", \"%p\"]}\n",
		reused ? "true" : "false", rounds[0].step, rounds[1].step, rounds[2].step, rounds[3].step);
	return fclose(f) == 0 ? 0 : 2;
}
