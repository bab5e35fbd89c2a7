/* SPDX-License-Identifier: MIT */
/*
 * The MPI program of the statistics test: nested manual regions on the main
 * thread and on two more threads, call counts that differ per rank, one
 * region with thousands of calls (numpy's pairwise blocks), and a region
 * that is registered but never called.
 */
#include <mpi.h>
#include <pthread.h>
#include <time.h>

#include "scope_profiler.h"

static void spin(long ns)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

static int rank;

static void *work(void *arg)
{
	int outer = sp_region("outer"), inner = sp_region("inner");
	long lane = (long)arg;

	for (int k = 0; k < 3 + rank + (int)lane; k++) {
		sp_begin(outer);
		spin(3000 + 700 * k);
		sp_begin(inner);
		spin(2000 + 300 * lane);
		sp_end(inner);
		sp_begin(inner);
		sp_end(inner);
		sp_end(outer);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	int many, never;

	sp_init(NULL, 0); /* the default context (upstream's API) */
	many = sp_region("many");
	never = sp_region("never_called");

	(void)never;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, work, (void *)(i + 1));
	work(NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int k = 0; k < (rank == 0 ? 9000 : 37 * rank); k++) {
		sp_begin(many);
		spin(100 + (k * 7919) % 900);
		sp_end(many);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
