/* SPDX-License-Identifier: MIT */
/*
 * Many calls under a small memory cap (docs/RESILIENCE.md, "Memory at
 * finalize"): built with -finstrument-functions and run with everything
 * recorded, so the events spill to disk during the run and the finalize
 * must write them all without holding them.
 * Usage: resil-cap N [THREADS]
 *   each of THREADS threads (default 1: main alone) calls outer() N times;
 *   outer(i) calls inner(i) then leaf(); inner(i) calls leaf() when i % 3
 *   is 0. Per thread: outer N, inner N, leaf N + ceil(N / 3).
 * Built with -DUSE_MPI: MPI_Init_thread (funneled), an MPI_Allreduce
 * every 65536 calls of outer on the main thread and at the end (MPI rows,
 * which the finalize keeps in memory), the other threads as above,
 * MPI_Finalize, then "rank R hwm K" (VmHWM, KiB: the peak RSS, the
 * finalize's included) on stdout.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef USE_MPI
#include <mpi.h>
#endif

static volatile long sink;
static long calls;
static pthread_t main_thread;

__attribute__((noinline)) static void leaf(void)
{
	sink++;
}

__attribute__((noinline)) static void inner(long i)
{
	if (i % 3 == 0)
		leaf();
	sink += i;
}

__attribute__((noinline)) static void outer(long i)
{
	inner(i);
	leaf();
}

static void *run(void *arg)
{
	(void)arg;
	for (long i = 0; i < calls; i++) {
		outer(i);
#ifdef USE_MPI
		if ((i & 65535) == 65535 && pthread_equal(pthread_self(), main_thread)) {
			long v = sink, all;
			MPI_Allreduce(&v, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		}
#endif
	}
	return NULL;
}

#ifdef USE_MPI
/* The peak RSS so far (KiB), -1 unknown. */
static long hwm_kib(void)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "VmHWM:", 6))
			v = atol(line + 6);
	if (f)
		fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	int rank, provided;
	long v, all;
	pthread_t t[64];
	if (argc < 2)
		return 2;
	calls = atol(argv[1]);
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	if (threads < 1 || threads > 64)
		return 2;
	main_thread = pthread_self();
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int k = 1; k < threads; k++)
		if (pthread_create(&t[k], NULL, run, NULL) != 0)
			return 1;
	run(NULL);
	for (int k = 1; k < threads; k++)
		pthread_join(t[k], NULL);
	v = sink;
	MPI_Allreduce(&v, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	MPI_Finalize();
	printf("rank %d hwm %ld\n", rank, hwm_kib());
	return 0;
}
#else

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	calls = atol(argv[1]);
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	if (threads <= 1) {
		run(NULL);
		return 0;
	}
	pthread_t t[64];
	if (threads > 64)
		return 2;
	for (int k = 0; k < threads; k++)
		if (pthread_create(&t[k], NULL, run, NULL) != 0)
			return 1;
	for (int k = 0; k < threads; k++)
		pthread_join(t[k], NULL);
	printf("%ld\n", (long)sink);
	return 0;
}
#endif
