/* SPDX-License-Identifier: MIT */
/*
 * An MPI program that also uses the manual API (linked with
 * -lscope-profiler, the default family's library): under `scope-profiler
 * run` the preloaded family library must be that same object (one SONAME),
 * so one recorder records both the region and the MPI calls.
 */
#include <mpi.h>
#include <stdio.h>

#include "scope_profiler.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size, sum = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 0; i < 3; i++) {
		sp_begin_name("api_step");
		MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		sp_end_name("api_step");
	}
	if (rank == 0)
		printf("family-api: %d ranks, sum %d\n", size, sum);
	MPI_Finalize();
	return 0;
}
