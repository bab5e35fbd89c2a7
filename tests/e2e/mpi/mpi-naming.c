/* SPDX-License-Identifier: MIT */
/*
 * Functions named once per node (mpi-naming.c): each rank calls functions
 * the others do not, so the node's answering rank (its last) must name what
 * it never ran.
 *   every rank        main, everywhere
 *   rank 0            on_first_rank
 *   the last rank     on_last_rank
 *   rank 1            plugin_work of argv[1], dlopen'ed by its absolute
 *                     path: a module the last rank never mapped
 *   rank 2            plugin_work of argv[2], dlopen'ed by a path relative
 *                     to the working directory: not sent, named by rank 2
 * Each definition line carries a "naming:" marker: test-naming.sh finds
 * the expected source lines there. Prints one checksum line per rank.
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

static __attribute__((noinline)) double everywhere(int k) /* naming: everywhere */
{
	double s = 0;
	for (int i = 0; i < 1000; i++)
		s += (double)(i % (k + 3));
	return s;
}

__attribute__((noinline)) double on_first_rank(int k); /* a declaration: not the line */
__attribute__((noinline)) double on_first_rank(int k) /* naming: on_first_rank */
{
	return everywhere(k) + 1;
}

__attribute__((noinline)) double on_last_rank(int k);
__attribute__((noinline)) double on_last_rank(int k) /* naming: on_last_rank */
{
	return everywhere(k) * 2;
}

static double plugin(const char *path)
{
	void *h = dlopen(path, RTLD_NOW);
	double (*fn)(int) = h ? (double (*)(int))dlsym(h, "plugin_work") : NULL;
	if (!fn) {
		fprintf(stderr, "mpi-naming: %s: %s\n", path, dlerror());
		return -1;
	}
	return fn(7);
}

int main(int argc, char **argv) /* naming: main */
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	double s = everywhere(rank);
	if (rank == 0)
		s += on_first_rank(rank);
	if (rank == size - 1)
		s += on_last_rank(rank);
	if (rank == 1 && argc > 1)
		s += plugin(argv[1]);
	if (rank == 2 && argc > 2)
		s += plugin(argv[2]);
	printf("rank %d: %.1f\n", rank, s);
	MPI_Finalize();
	return 0;
}
