/* SPDX-License-Identifier: MIT */
/*
 * Instrumented C in the middle of exc-prog's exception path. Built without
 * -fexceptions: the unwinder passes through it (unwind tables) but runs no
 * cleanup, so its exit hook is skipped when cb throws.
 */
long n_mid;
void c_mid(long i, void (*cb)(long));
static volatile long sink;

__attribute__((noinline)) void c_mid(long i, void (*cb)(long))
{
	n_mid++;
	for (volatile int w = 0; w < 40; w++)
		;
	cb(i);
	sink += i;
}
