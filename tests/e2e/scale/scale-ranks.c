// SPDX-License-Identifier: MIT
/*
 * Known calls per rank, for the scale and equivalence tests
 * (tests/e2e/scale/check_scale.py computes the same counts):
 *   work_j, j = 0..6:  ((r + j) % 7 + 1) * 100 * MULT calls (2800 * MULT per rank)
 *   rank_tail:         10 * r calls (no row on rank 0: a name rank 0 never saw)
 *   odd_only:          1 call on odd ranks
 *   thread_work:       250 calls on a second thread of rank 1 (when THREAD is 1)
 *   MPI_Allreduce:     10 calls, 8 bytes
 *   MPI_Sendrecv:      5 calls around the ring, 8 * (r + 1) bytes to r + 1, tag 7
 *   MPI_Barrier:       1 call
 * usage: scale-ranks [MULT [THREAD]]  (defaults 1 1; at most 1024 ranks). Prints one
 * line on rank 0. Every function is instrumented (main and thread_main too).
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;

#define WORK(j)                                              \
	__attribute__((noinline)) void work_##j(long i);     \
	__attribute__((noinline)) void work_##j(long i)      \
	{                                                    \
		sink += i + j;                               \
		__asm__ volatile("" ::: "memory");           \
	}
WORK(0) WORK(1) WORK(2) WORK(3) WORK(4) WORK(5) WORK(6)

static void (*const work[7])(long) = { work_0, work_1, work_2, work_3, work_4, work_5, work_6 };

__attribute__((noinline)) void rank_tail(long i);
__attribute__((noinline)) void rank_tail(long i)
{
	sink -= i;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void odd_only(void);
__attribute__((noinline)) void odd_only(void)
{
	sink ^= 1;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void thread_work(long i);
__attribute__((noinline)) void thread_work(long i)
{
	sink += 2 * i;
	__asm__ volatile("" ::: "memory");
}

static void *thread_main(void *arg)
{
	(void)arg;
	for (long i = 0; i < 250; i++)
		thread_work(i);
	return NULL;
}

int main(int argc, char **argv)
{
	long mult = argc > 1 ? atol(argv[1]) : 1;
	int with_thread = argc > 2 ? atoi(argv[2]) : 1;
	int provided, rank, size;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	pthread_t th;
	int started = with_thread && rank == 1 &&
		      pthread_create(&th, NULL, thread_main, NULL) == 0;

	for (int j = 0; j < 7; j++) {
		long n = ((rank + j) % 7 + 1) * 100L * mult;
		for (long i = 0; i < n; i++)
			work[j](i);
	}
	for (long i = 0; i < 10L * rank; i++)
		rank_tail(i);
	if (rank % 2)
		odd_only();
	if (started)
		pthread_join(th, NULL);

	double x = rank, sum = 0;
	for (int i = 0; i < 10; i++)
		MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

	/* Ring: r + 1 doubles to the right, as many from the left as it sends. */
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	static double out[1024], in[1024];

	if (size > 1024)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (int i = 0; i < 5; i++)
		MPI_Sendrecv(out, rank + 1, MPI_DOUBLE, right, 7, in, left + 1, MPI_DOUBLE, left, 7,
			     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("scale-ranks: ranks=%d mult=%ld sum=%.0f\n", size, mult, sum);
	MPI_Finalize();
	return 0;
}
