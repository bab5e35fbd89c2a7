/* SPDX-License-Identifier: MIT */
/*
 * Loading the MPI event columns stored in the row layout (mpi-layout.c):
 * the part the HDF5 loader calls. The accessors are in reader-internal.h
 * and the public header.
 */
#ifndef SP_MPI_LAYOUT_H
#define SP_MPI_LAYOUT_H

#include "hdf5-util.h"

/*
 * When /events names the row layout (attribute mpi_layout), read the MPI
 * columns and rank_region_index/mpi_offsets and check them against the
 * index rows, which must be loaded already. Returns 0, -ENOENT when the
 * file has no such attribute (full-length columns: the old layout, read as
 * any event column), -SP_E_CORRUPT, -SP_E_SCHEMA (a layout this reader does
 * not know) or -ENOMEM.
 */
int mpi_rows_load(struct sp_reader *r, hid_t file, hid_t events);
/* Whether column c is one the row layout holds (the MPI columns). */
bool mpi_rows_holds(enum sp_column c);

#endif /* SP_MPI_LAYOUT_H */
