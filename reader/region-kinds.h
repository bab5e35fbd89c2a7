/* SPDX-License-Identifier: MIT */
/* Loading region kinds from an HDF5 file (region-kinds.c). */
#ifndef SP_READER_REGION_KINDS_H
#define SP_READER_REGION_KINDS_H

#include <hdf5.h>

#include "reader-internal.h"

/* Read region_table/kinds (one per region already added): 0 also when the
 * dataset is absent, -SP_E_CORRUPT on a wrong length or value, -ENOMEM. */
int reader_load_kinds(struct sp_reader *r, hid_t region_table);

#endif
