/* SPDX-License-Identifier: MIT */
/*
 * A plugin for dlopen-prog.c, built twice (-DSALT=1, -DSALT=2) with
 * -finstrument-functions: plugin_run() calls the tiny step() and stir() n
 * times, so their hook calls are patched inside the plugin while it is
 * loaded. stir() returns nothing: at -O2 its exit hook is a tail call
 * (`jmp`, its last instruction), patched through the alias entry of its
 * caller's return address.
 *
 * The two builds have the same layout (same size, likely loaded at the same
 * address) except stir(), which SALT=2 aligns to 512 bytes: plugin_run's
 * call of stir() ends at the same address in both, with another rel32
 * before it, so the alias entry that the first plugin left there must be
 * decided again for the second (its tail exit is elsewhere). Built with
 * GCC's -fno-toplevel-reorder (functions in source order, as clang emits
 * them); step() is aligned to 512 bytes in both, so that .text starts at the
 * same place whatever stir()'s alignment.
 */
#ifndef SALT
#define SALT 1
#endif

#define LOCAL __attribute__((noinline, visibility("hidden")))
#if SALT == 2
#define STIR_ALIGN __attribute__((aligned(512)))
#else
#define STIR_ALIGN
#endif

LOCAL __attribute__((aligned(512))) unsigned long step(unsigned long x)
{
	return (x ^ SALT) * 31 + 7;
}

LOCAL void stir(unsigned long *x);

unsigned long plugin_run(unsigned long seed, long n)
{
	for (long i = 0; i < n; i++) {
		seed = step(seed);
		stir(&seed);
	}
	return seed;
}

LOCAL STIR_ALIGN void stir(unsigned long *x)
{
	*x ^= *x >> 3;
}

/* For dlopen-prog's report of stir()'s code. */
void *plugin_stir(void)
{
	return (void *)stir;
}
