/* SPDX-License-Identifier: MIT */
/*
 * A small MPI program whose file has both optional groups: a split and a
 * duplicated communicator (/mpi_communicators) and MPI calls on several
 * lines (/callsites with SCOPE_PROFILER_CALLSITES). With argument "exit"
 * it leaves without MPI_Finalize, so every rank writes its own file.
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

static void exchange(MPI_Comm comm, int rounds)
{
	int rank, size;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	for (int i = 0; i < rounds; i++) {
		int v = rank + i, sum = 0;
		MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, comm);
		if (size > 1 && rank == 0)
			MPI_Send(&sum, 1, MPI_INT, 1, 7, comm);
		else if (size > 1 && rank == 1)
			MPI_Recv(&v, 1, MPI_INT, 0, 7, comm, MPI_STATUS_IGNORE);
	}
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm half, copy;
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	MPI_Comm_dup(MPI_COMM_WORLD, &copy);
	exchange(MPI_COMM_WORLD, 3);
	exchange(half, 2 + rank % 2);
	exchange(copy, 1);
	MPI_Barrier(MPI_COMM_WORLD);
	if (argc > 1 && strcmp(argv[1], "exit") == 0)
		exit(0);
	MPI_Comm_free(&half);
	MPI_Comm_free(&copy);
	MPI_Finalize();
	return 0;
}
