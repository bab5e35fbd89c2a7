/* SPDX-License-Identifier: MIT */
/*
 * A plugin for dl-prog.c, built twice from this file (-DPLUGIN=alpha,
 * -DPLUGIN=beta): the same code, so the same layout, under other names.
 * Loaded in turn at the same address, each must keep its own names.
 */
#ifndef PLUGIN
#error "PLUGIN names the plugin"
#endif
#define CAT2(a, b) a##_##b
#define CAT(a, b) CAT2(a, b)
#define FN(x) CAT(PLUGIN, x)

long FN(leaf)(long x);
long FN(step)(long x);
long FN(run)(long n);

static volatile long sink;

__attribute__((noinline)) long FN(leaf)(long x)
{
	sink += x;
	return x * 3 + 1;
}

__attribute__((noinline)) long FN(step)(long x)
{
	return FN(leaf)(x) ^ 5;
}

long FN(run)(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += FN(step)(i);
	return s;
}
