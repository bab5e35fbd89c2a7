/* SPDX-License-Identifier: MIT */
/*
 * sp_flush() in an MPI program: every rank checkpoints to its own
 * <output>.rank<NNNNN> (region "before" only), and MPI_Finalize still writes
 * the merged file with "before" and "after" on every rank.
 */
#include <mpi.h>

#include "scope_profiler.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	sp_begin_name("before");
	sp_end_name("before");
	int rc = sp_flush();
	sp_begin_name("after");
	sp_end_name("after");
	MPI_Finalize();
	return rc == 0 ? 0 : 1;
}
