/* SPDX-License-Identifier: MIT */
/*
 * The MPI layer's state for libscope-profiler-serial.so, the library
 * without MPI wrappers that `scope-profiler run` preloads into a program
 * linked with no MPI (docs/MPI.md, "MPI families"): it loads no libmpi.
 * Without the wrappers MPI_Init never runs, so the process is never
 * MPI-owned and these are only read: one rank of one, MPI off.
 */
#include <errno.h>
#include <stdbool.h>

#include "compiler.h"
#include "lifecycle.h"

SP_HIDDEN int sp_mpi_world_rank, sp_mpi_world_size = 1;
const bool sp_lifecycle_has_mpi = false;
SP_HIDDEN bool sp_mpi_on;

int sp_mpi_flush_rank(void)
{
	return -ENOSYS; /* never called: sp_lifecycle_mpi_owned stays false */
}
