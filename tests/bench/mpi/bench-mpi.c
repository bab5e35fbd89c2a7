/* SPDX-License-Identifier: MIT */
/*
 * MPI wrapper benchmark. `calls N`: ns per call of MPI_Comm_rank, an 8-byte
 * MPI_Allreduce and an Isend/Irecv/Waitall exchange (run with and without
 * the preload; bench-mpi.sh takes the difference). `finalize K`: K recorded
 * calls per rank, then the wall time of MPI_Finalize (the merge) on rank 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size, r;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	const char *mode = argc > 1 ? argv[1] : "calls";
	long n = argc > 2 ? atol(argv[2]) : 1000000;
	if (strcmp(mode, "calls") == 0) {
		double t0 = now();
		for (long i = 0; i < n; i++)
			MPI_Comm_rank(MPI_COMM_WORLD, &r);
		double rank_ns = (now() - t0) * 1e9 / n;
		double x = 1, y;
		long m = n / 10;
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = now();
		for (long i = 0; i < m; i++)
			MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		double allreduce_ns = (now() - t0) * 1e9 / m;
		char sb[8] = { 0 }, rb[8];
		int peer = size > 1 ? rank ^ 1 : rank; /* 1 rank: messages to itself */
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = now();
		for (long i = 0; i < m && peer < size; i++) {
			MPI_Request q[2];
			MPI_Irecv(rb, 8, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &q[0]);
			MPI_Isend(sb, 8, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &q[1]);
			MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
		}
		double p2p_ns = (now() - t0) * 1e9 / m;
		if (rank == 0)
			printf("MPI_Comm_rank %.2f\nMPI_Allreduce_8B %.2f\nIsend_Irecv_Waitall %.2f\n",
			       rank_ns, allreduce_ns, p2p_ns);
		MPI_Finalize();
	} else {
		for (long i = 0; i < n; i++)
			MPI_Comm_rank(MPI_COMM_WORLD, &r);
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = now();
		MPI_Finalize();
		if (rank == 0)
			printf("finalize_s %.6f\n", now() - t0);
	}
	return 0;
}
