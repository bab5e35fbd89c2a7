// SPDX-License-Identifier: MIT
/*
 * bench-finalize E: every rank makes E calls of 16 instrumented functions
 * (round robin) and 10 MPI_Allreduce, then MPI_Finalize. Rank 0 prints
 * `finalize_s S`, the wall time of MPI_Finalize after a barrier (the
 * profiler's merge and write happen in it); every rank prints
 * `hwm RANK KB`, its peak resident set (VmHWM) after MPI_Finalize.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile long sink;

#define F(j)                                             \
	__attribute__((noinline)) void fn_##j(long i);   \
	__attribute__((noinline)) void fn_##j(long i)    \
	{                                                \
		sink += i ^ j;                           \
		__asm__ volatile("" ::: "memory");       \
	}
F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11) F(12) F(13) F(14) F(15)

static void (*const fn[16])(long) = { fn_0, fn_1, fn_2, fn_3, fn_4, fn_5, fn_6, fn_7,
				      fn_8, fn_9, fn_10, fn_11, fn_12, fn_13, fn_14, fn_15 };

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long vm_hwm_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "VmHWM:", 6) == 0)
			kb = atol(line + 6);
	fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	long events = argc > 1 ? atol(argv[1]) : 100000;
	int rank;
	double x = 1, y;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (long i = 0; i < events; i++)
		fn[i & 15](i);
	for (int i = 0; i < 10; i++)
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = now();
	MPI_Finalize();
	double t = now() - t0;
	if (rank == 0)
		printf("finalize_s %.6f\n", t);
	printf("hwm %d %ld\n", rank, vm_hwm_kb());
	return 0;
}
