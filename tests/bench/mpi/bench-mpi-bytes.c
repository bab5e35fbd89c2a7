/* SPDX-License-Identifier: MIT */
/*
 * An MPI run whose events are mostly function calls (compiled with
 * -finstrument-functions): per loop step two tiny instrumented calls, every
 * 100 steps an MPI_Allreduce. bench-mpi.sh divides the file size by the
 * events: function events cost 16 B on disk, MPI events 40 B (row layout).
 * Usage: bench-mpi-bytes STEPS
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static double leaf(double x)
{
	return x * 1.0000001 + 1e-9;
}

__attribute__((noinline)) static double mid(double x)
{
	return leaf(x) + leaf(x * 0.5);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	long n = argc > 1 ? atol(argv[1]) : 300000;
	double acc = 0, buf[16] = { 0 };
	for (long i = 0; i < n; i++) {
		acc += mid((double)i);
		if (i % 100 == 0)
			MPI_Allreduce(MPI_IN_PLACE, buf, 16, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
	printf("%g\n", acc + buf[0]);
	MPI_Finalize();
	return 0;
}
