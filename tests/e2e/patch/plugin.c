/* SPDX-License-Identifier: MIT */
/*
 * A plugin for dlopen-prog.c, built twice (-DSALT=1, -DSALT=2) with
 * -finstrument-functions: plugin_run() calls the tiny step() n times, so
 * step()'s hook calls are patched inside the plugin while it is loaded.
 */
#ifndef SALT
#define SALT 1
#endif

__attribute__((noinline)) static unsigned long step(unsigned long x)
{
	return (x ^ SALT) * 31 + 7;
}

unsigned long plugin_run(unsigned long seed, long n)
{
	for (long i = 0; i < n; i++)
		seed = step(seed);
	return seed;
}
