/* SPDX-License-Identifier: MIT */
/*
 * Names of the function regions of spill files for `recover` and `merge`
 * (docs/RESILIENCE.md, "Names in recover and merge").
 */
#ifndef SP_SPILL_NAMES_H
#define SP_SPILL_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "cli-common.h"
#include "spill-read.h"

/* The sp_spill_namer of sp_spill_to_snapshot; ctx is the command's
 * struct cli_common (for the one stderr line per unresolved module).
 * Returns a malloc'd name, or NULL for module+0xoffset; *ret_file stays
 * valid until spill_names_free(). */
char *spill_names_namer(const struct sp_spill_mdata *module, uint64_t addr, void *ctx,
			const char **ret_file, int64_t *ret_line);
/* The modules whose functions could not be named, as "path: reason"
 * (owned here). Returns their count. */
size_t spill_names_reasons(const char *const **ret_reasons);
/* Free everything, close the symbolizer's modules. */
void spill_names_free(void);

#endif /* SP_SPILL_NAMES_H */
