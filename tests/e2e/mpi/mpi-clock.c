/* SPDX-License-Identifier: MIT */
/*
 * Barrier-synchronised steps for the clock alignment test (test-clock.sh):
 * at step i, rank i % size arrives at MPI_Barrier last (it pauses longer),
 * so every rank is the last one in turn and the other ranks leave the
 * barrier right after its entry; after_barrier() follows each barrier. A
 * second thread runs helper() meanwhile, so the file has a thread table.
 * Usage: mpi-clock [STEPS]. Built with -finstrument-functions.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void pause_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts))
		;
}

void after_barrier(int step);
void *helper(void *arg);

__attribute__((noinline)) void after_barrier(int step)
{
	pause_us(200 + step % 3);
}

__attribute__((noinline)) void *helper(void *arg)
{
	pause_us(20000);
	return arg;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int steps = argc > 1 ? atoi(argv[1]) : 40;
	pthread_t th;
	if (pthread_create(&th, NULL, helper, NULL))
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int i = 0; i < steps; i++) {
		pause_us(i % size == rank ? 30000 : 5000);
		MPI_Barrier(MPI_COMM_WORLD);
		after_barrier(i);
	}
	pthread_join(th, NULL);
	if (rank == 0)
		printf("mpi-clock: %d steps on %d ranks\n", steps, size);
	MPI_Finalize();
	return 0;
}
