/* SPDX-License-Identifier: MIT */
/*
 * Automatic function regions in C: nested calls, recursion, a static
 * function, a function in a dlopen'ed (and dlclose'd) plugin, and a longjmp
 * out of two frames. Build with -finstrument-functions and run under
 * `scope-profiler run`. The call counts are fixed by this source (see
 * tests/e2e/hooks): outer 3, middle 15, inner 60, twice 60, fib 177,
 * plugin_run 1, plugin_step 7, escape 1, escape_deep 1, main 1.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int inner(int x);
int middle(int x);
int outer(int x);
int fib(int n);
void escape_deep(void);
void escape(void);

static jmp_buf escape_point;
static volatile int sink;

/* A static function: only .symtab names it. */
static int twice(int x)
{
	sink = x;
	return 2 * x + 1;
}

int inner(int x)
{
	return twice(x) + 1;
}

int middle(int x)
{
	int s = 0;
	for (int i = 0; i < 4; i++)
		s += inner(x + i);
	return s;
}

int outer(int x)
{
	int s = 0;
	for (int i = 0; i < 5; i++)
		s += middle(x + i);
	return s;
}

/* fib(10) makes 177 calls in all. */
int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

void escape_deep(void)
{
	longjmp(escape_point, 1);
}

void escape(void)
{
	escape_deep();
	sink = -1; /* not reached */
}

static int run_plugin(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "functions-c: %s\n", dlerror());
		return -1;
	}
	int (*run)(int) = (int (*)(int))dlsym(h, "plugin_run");
	int r = run ? run(7) : -1;
	dlclose(h); /* its functions must still resolve at finalize */
	return r;
}

int main(int argc, char **argv)
{
	char path[PATH_MAX];
	if (argc > 1) {
		snprintf(path, sizeof path, "%s", argv[1]);
	} else {
		ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
		path[n > 0 ? n : 0] = '\0';
		char *slash = strrchr(path, '/');
		snprintf(slash ? slash + 1 : path, sizeof path - (size_t)(slash ? slash + 1 - path : 0),
			 "libfn-plugin.so");
	}
	int s = 0;
	for (int i = 0; i < 3; i++)
		s += outer(i);
	s += fib(10);
	int p = run_plugin(path);
	if (!setjmp(escape_point))
		escape();
	printf("functions-c: sum=%d plugin=%d\n", s, p);
	return p < 0;
}
