/* SPDX-License-Identifier: MIT */
/* The hooks' calibration target (calib-probe.c). */
#ifndef SP_CALIB_PROBE_H
#define SP_CALIB_PROBE_H

#include "compiler.h"

/* Empty; its calls go through __cyg_profile_func_enter/exit. */
SP_HIDDEN void sp_calib_probe(void);

#endif /* SP_CALIB_PROBE_H */
