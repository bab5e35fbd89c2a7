/* SPDX-License-Identifier: MIT */
/*
 * An empty function, the only code of the library compiled with
 * -finstrument-functions: at the first attach the hooks time it through
 * their sampled path, exactly as they time a throttled function, to learn
 * how much of a sampled call's duration is their own work (cyg-hooks.c,
 * calibrate_sample_bias).
 */
#include "calib-probe.h"

__attribute__((noinline)) void sp_calib_probe(void)
{
	__asm__ volatile("" : : : "memory");
}
