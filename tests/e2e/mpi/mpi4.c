/* SPDX-License-Identifier: MIT */
/*
 * MPI-4.0 calls (MPICH 4 declares them; docs/MPI.md, "Wrappers"), on 2
 * ranks, each a known number of times (test-mpi4.sh checks the profile):
 *   MPI_Send_c / MPI_Recv_c   3 x 1000 doubles, rank 0 -> 1, tag 7
 *   MPI_Isendrecv + MPI_Wait  2 x 10 ints with the other rank, tag 3
 *   MPI_Allreduce_init        once, 4 doubles; MPI_Start + MPI_Wait 5 times
 *   MPI_Bcast_c               2 x 100 ints from rank 0
 *   MPI_Psend_init (rank 0) / MPI_Precv_init (rank 1): 4 partitions of 16
 *                             doubles, tag 9; MPI_Start, MPI_Pready x 4
 *                             (rank 0), MPI_Wait
 * Prints one line per rank with what it received (checked against the
 * values sent).
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, other;
	double big[1000], part[64], in[4], out[4];
	int ten[10], got[10], hundred[100];
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "mpi4: run on 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	other = 1 - rank;
	for (int i = 0; i < 1000; i++)
		big[i] = rank == 0 ? i : -1;
	for (int k = 0; k < 3; k++) {
		if (rank == 0)
			MPI_Send_c(big, (MPI_Count)1000, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD);
		else
			MPI_Recv_c(big, (MPI_Count)1000, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD,
				   MPI_STATUS_IGNORE);
	}
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < 10; i++)
			ten[i] = 100 * rank + i + k;
		MPI_Isendrecv(ten, 10, MPI_INT, other, 3, got, 10, MPI_INT, other, 3, MPI_COMM_WORLD,
			      &req);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
	}
	for (int i = 0; i < 4; i++)
		in[i] = rank + i;
	MPI_Allreduce_init(in, out, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
	for (int k = 0; k < 5; k++) {
		MPI_Start(&req);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
	}
	MPI_Request_free(&req);
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < 100; i++)
			hundred[i] = rank == 0 ? i * k : -1;
		MPI_Bcast_c(hundred, (MPI_Count)100, MPI_INT, 0, MPI_COMM_WORLD);
	}
	for (int i = 0; i < 64; i++)
		part[i] = rank == 0 ? 0.5 * i : -1;
	if (rank == 0)
		MPI_Psend_init(part, 4, (MPI_Count)16, MPI_DOUBLE, 1, 9, MPI_COMM_WORLD, MPI_INFO_NULL,
			       &req);
	else
		MPI_Precv_init(part, 4, (MPI_Count)16, MPI_DOUBLE, 0, 9, MPI_COMM_WORLD, MPI_INFO_NULL,
			       &req);
	MPI_Start(&req);
	if (rank == 0)
		for (int p = 0; p < 4; p++)
			MPI_Pready(p, req);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	MPI_Request_free(&req);
	printf("rank %d: big[999] %g got[9] %d out[3] %g hundred[99] %d part[63] %g\n", rank,
	       big[999], got[9], out[3], hundred[99], part[63]);
	MPI_Finalize();
	return 0;
}
