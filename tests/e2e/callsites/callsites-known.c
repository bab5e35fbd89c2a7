/* SPDX-License-Identifier: MIT */
/*
 * MPI calls on known lines (the CS:<name> markers, which the test greps for
 * line numbers), with known counts and sizes per rank:
 *   allreduce_a  1 double, 5 calls per rank (3 via phase_one, 2 via phase_two)
 *   allreduce_b  100 ints, 3 calls per rank
 *   send_a       10 chars to the next rank, 7 calls per rank
 *   send_b       256 doubles from rank 0 to every other rank, once each
 * The MPI results are used after each call, so no call is a tail call.
 */
#include <mpi.h>
#include <stdio.h>

static double sink;

__attribute__((noinline)) static double reduce_small(double x)
{
	double y = 0;
	MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* CS:allreduce_a */
	sink += y;
	return y;
}

__attribute__((noinline)) static int reduce_large(int rank)
{
	int in[100], out[100];
	for (int i = 0; i < 100; i++)
		in[i] = rank + i;
	MPI_Allreduce(in, out, 100, MPI_INT, MPI_MAX, MPI_COMM_WORLD); /* CS:allreduce_b */
	return out[99];
}

__attribute__((noinline)) static int send_ring(int rank, int size, int round)
{
	char msg[10] = { (char)round }, got[10];
	MPI_Send(msg, 10, MPI_CHAR, (rank + 1) % size, round, MPI_COMM_WORLD); /* CS:send_a */
	MPI_Recv(got, 10, MPI_CHAR, (rank + size - 1) % size, round, MPI_COMM_WORLD,
		 MPI_STATUS_IGNORE);
	return got[0];
}

__attribute__((noinline)) static double phase_one(void)
{
	double s = 0;
	for (int i = 0; i < 3; i++)
		s += reduce_small(i); /* CS:call_one */
	return s;
}

__attribute__((noinline)) static double phase_two(void)
{
	double s = 0;
	for (int i = 0; i < 2; i++)
		s += reduce_small(10 + i); /* CS:call_two */
	return s;
}

int main(int argc, char **argv)
{
	int rank, size, check = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	double s = phase_one() + phase_two(); /* CS:call_phases */
	for (int i = 0; i < 3; i++)
		check += reduce_large(rank);
	for (int i = 0; i < 7; i++)
		check += send_ring(rank, size, i);
	double big[256] = { 1.0 };
	if (rank == 0) {
		for (int dest = 1; dest < size; dest++) {
			int rc = MPI_Send(big, 256, MPI_DOUBLE, dest, 99, MPI_COMM_WORLD); /* CS:send_b */
			check += rc;
		}
	} else {
		MPI_Recv(big, 256, MPI_DOUBLE, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	if (rank == 0)
		printf("callsites-known: ranks=%d sum=%g check=%d\n", size, s, check);
	MPI_Finalize();
	return 0;
}
