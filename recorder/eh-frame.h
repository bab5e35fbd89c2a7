/* SPDX-License-Identifier: MIT */
/* The end of a function's code from its unwind table (eh-frame.c). */
#ifndef SP_EH_FRAME_H
#define SP_EH_FRAME_H

#include <link.h>
#include <stdint.h>

#include "compiler.h"

/*
 * The end of the code of the function that starts at fn (the address
 * after its last byte), as the FDE that starts there gives it, in the
 * loaded module `info`: found through the binary search table of its
 * PT_GNU_EH_FRAME (.eh_frame_hdr). 0 when no FDE starts at fn, or the
 * tables use an encoding not read here (the table must be datarel sdata4
 * pairs; pointers absolute or pc-relative, 2, 4 or 8 bytes). Reads only
 * inside the module's readable PT_LOAD segments, whatever the tables say.
 * The caller keeps the module mapped (dl_iterate_phdr's callback).
 */
SP_HIDDEN uintptr_t sp_eh_frame_end(const struct dl_phdr_info *info, uintptr_t fn);

#endif /* SP_EH_FRAME_H */
