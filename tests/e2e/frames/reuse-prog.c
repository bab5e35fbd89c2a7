/* SPDX-License-Identifier: MIT */
/*
 * reuse-prog OUT.json ALPHA.so BETA.so (tests/e2e/frames), built without
 * -finstrument-functions: calls alpha_leaf 3000 times straight from here
 * (throttled after its first calls: counted only, the last counted entry
 * of the thread), unloads alpha, loads beta where alpha was and calls
 * beta_leaf, at alpha_leaf's address, twice 30 ms apart. Both of
 * beta_leaf's calls are recorded: their exits must end them then (a
 * counted-only entry's exit shortcut must not outlive its module).
 * Writes the calls per function and whether the address was reused.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

typedef long leaf_fn(long);

static leaf_fn *load(const char *path, const char *name, void **ret_handle)
{
	*ret_handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!*ret_handle) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		return NULL;
	}
	return (leaf_fn *)dlsym(*ret_handle, name);
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	void *h;
	leaf_fn *alpha = load(argv[2], "alpha_leaf", &h);
	if (!alpha)
		return 3;
	long x = 1;
	for (int i = 0; i < 3000; i++)
		x = alpha(x) & 0xffff;
	dlclose(h);
	leaf_fn *beta = load(argv[3], "beta_leaf", &h);
	if (!beta)
		return 3;
	x = beta(x);
	nanosleep(&(struct timespec){ 0, 30000000 }, NULL);
	x = beta(x);
	dlclose(h);
	FILE *f = fopen(argv[1], "w");
	if (!f)
		return 4;
	fprintf(f, "{\"calls\": {\"alpha_leaf\": 3000, \"beta_leaf\": 2}, \"reused\": %s, "
		"\"step_addrs\": [\"%p\", \"%p\"], \"x\": %ld}\n", (void *)alpha == (void *)beta ?
		"true" : "false", (void *)alpha, (void *)beta, x);
	return fclose(f) ? 4 : 0;
}
