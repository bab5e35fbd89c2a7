/* SPDX-License-Identifier: MIT */
/* An MPI program for the output-path tests: CALLS barriers (default 3)
 * per rank, then MPI_Finalize (which writes the one merged file). */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int calls = argc > 1 ? atoi(argv[1]) : 3;
	for (int i = 0; i < calls; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
