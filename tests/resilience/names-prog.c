/* SPDX-License-Identifier: MIT */
/*
 * Functions named by -finstrument-functions, for the names tests: serial,
 * or an MPI program (USE_MPI), or another build of the same source
 * (VARIANT: one more function in front, so every offset moves).
 * usage: names-prog K DIR exit|wait [PLUGIN]
 * main -> K x middle(4) -> 4 x leaf; with PLUGIN (a library dlopened now,
 * after recording started) also K x plugin_step -> plugin_leaf. Then
 * wait_here once: it creates DIR/ready.<rank> holding the pid and, with
 * `wait`, sleeps until killed.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef USE_MPI
#include <mpi.h>
#endif

int middle(int n);
#ifdef VARIANT
int variant_pad(int x);
int variant_pad(int x)
{
	return x * 7 + VARIANT;
}
#endif

static int leaf(int i)
{
	return i * 3 + 1;
}

int middle(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += leaf(i);
	return s;
}

static void wait_here(const char *dir, int rank, int forever)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/ready.%d", dir, rank);
	FILE *f = fopen(p, "w");
	if (f) {
		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
	}
	while (forever)
		usleep(10000);
}

int main(int argc, char **argv)
{
	if (argc != 4 && argc != 5)
		return 2;
	long k = atol(argv[1]), s = 0;
	int rank = 0;
#ifdef USE_MPI
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#endif
#ifdef VARIANT
	s += variant_pad(1);
#endif
	for (long i = 0; i < k; i++) {
		s += middle(4);
#ifdef USE_MPI
		MPI_Barrier(MPI_COMM_WORLD);
#endif
	}
	if (argc == 5) {
		void *h = dlopen(argv[4], RTLD_NOW);
		int (*step)(int) = h ? (int (*)(int))dlsym(h, "plugin_step") : NULL;
		if (!step) {
			fprintf(stderr, "names-prog: %s\n", dlerror());
			return 2;
		}
		for (long i = 0; i < k; i++)
			s += step((int)i);
	}
	printf("sum %ld\n", s);
	fflush(stdout);
	wait_here(argv[2], rank, argv[3][0] == 'w');
#ifdef USE_MPI
	MPI_Finalize();
#endif
	return 0;
}
