/* SPDX-License-Identifier: MIT */
/*
 * Between the spill file (spill.c) and its module table (spill-modules.c).
 * Not for the rest of the recorder: spill.h is the spill's interface.
 */
#ifndef SP_SPILL_INTERNAL_H
#define SP_SPILL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

/* Append one record (payload a then b, header last); any failure stops the
 * spill. Async-signal-safe. Returns 0 or -errno. */
SP_HIDDEN int sp_spill_put_rec(uint32_t type, uint32_t thread, const void *a, size_t na,
			       const void *b, size_t nb);

/* Forget the modules described (a new spill file). */
SP_HIDDEN void sp_spill_modules_reset(void);
/* Describe every loaded module not described yet (normal context: takes
 * the loader's lock). */
SP_HIDDEN void sp_spill_modules_describe(void);
/* Index of the described module holding addr, -1 if none; the newest
 * first. Async-signal-safe. */
SP_HIDDEN int32_t sp_spill_module_index(uintptr_t addr);
/* The same, describing new modules first if none holds addr (normal
 * context only). */
SP_HIDDEN int32_t sp_spill_module_of(uintptr_t addr);

#endif /* SP_SPILL_INTERNAL_H */
