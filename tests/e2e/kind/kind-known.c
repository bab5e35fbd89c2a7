/* SPDX-License-Identifier: MIT */
/*
 * Regions of every kind with known MPI traffic, for the region-kind test:
 * a compiled function (compute, -finstrument-functions), a manual region
 * named like an MPI call (MPI_x, the begin/end API) around every MPI call,
 * and per rank, to the next rank: 3 MPI_Send of 10 bytes, 2 MPI_Isend of
 * 20 bytes, 1 MPI_Sendrecv of 30 bytes (the send matrix: 100 bytes, 6
 * messages); an MPI_Allreduce, an MPI_Put of 8 bytes (one-sided, not in the
 * matrix) and an MPI_File_write_at of 16 bytes to argv[1].
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "scope_profiler.h"

__attribute__((noinline)) double compute(int n);
__attribute__((noinline)) double compute(int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += i * 0.5;
	return s;
}

static void point_to_point(int rank, int next, int prev)
{
	char out[64], in[64];
	memset(out, rank, sizeof out);
	for (int i = 0; i < 3; i++) {
		if (rank % 2 == 0) {
			MPI_Send(out, 10, MPI_CHAR, next, 1, MPI_COMM_WORLD);
			MPI_Recv(in, 10, MPI_CHAR, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(in, 10, MPI_CHAR, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(out, 10, MPI_CHAR, next, 1, MPI_COMM_WORLD);
		}
	}
	MPI_Request req[4];
	for (int i = 0; i < 2; i++) {
		MPI_Irecv(in + 20 * i, 20, MPI_CHAR, prev, 2, MPI_COMM_WORLD, &req[2 * i]);
		MPI_Isend(out + 20 * i, 20, MPI_CHAR, next, 2, MPI_COMM_WORLD, &req[2 * i + 1]);
	}
	MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
	MPI_Sendrecv(out, 30, MPI_CHAR, next, 3, in, 30, MPI_CHAR, prev, 3, MPI_COMM_WORLD,
		     MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	sp_init(NULL, 0); /* the default context: sp_region() needs it */
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	double x = compute(1000 + rank), sum = 0;

	int h = sp_region("MPI_x");
	sp_begin(h);
	point_to_point(rank, next, prev);
	MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

	double cell = 0;
	MPI_Win win;
	MPI_Win_create(&cell, sizeof cell, sizeof cell, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	MPI_Win_fence(0, win);
	MPI_Put(&x, 1, MPI_DOUBLE, next, 0, 1, MPI_DOUBLE, win);
	MPI_Win_fence(0, win);
	MPI_Win_free(&win);

	MPI_File f;
	double two[2] = { x, sum };
	if (argc > 1 && MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY,
				      MPI_INFO_NULL, &f) == MPI_SUCCESS) {
		MPI_File_write_at(f, (MPI_Offset)rank * 16, two, 2, MPI_DOUBLE, MPI_STATUS_IGNORE);
		MPI_File_close(&f);
	}
	sp_end(h);

	x += compute(2000);
	printf("rank %d: %.1f %.1f %.1f\n", rank, x, sum, cell);
	MPI_Finalize();
	return 0;
}
