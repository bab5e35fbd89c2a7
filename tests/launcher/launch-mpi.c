/* SPDX-License-Identifier: MIT */
/*
 * An MPI program for the launcher tests with exactly known calls per rank:
 * K x ("step" around one MPI_Barrier), then as asked:
 * usage: launch-mpi K DIR wait|exit|finalize
 *   wait:     write its pid to DIR/ready.<rank>, then sleep inside
 *             "waiting" until killed
 *   exit:     exit(0) without MPI_Finalize (each rank writes its own file)
 *   finalize: MPI_Finalize (the library writes the output)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scope_profiler.h"

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	long k = atol(argv[1]);
	const char *dir = argv[2], *how = argv[3];
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (long i = 0; i < k; i++) {
		sp_begin_name("step");
		MPI_Barrier(MPI_COMM_WORLD);
		sp_end_name("step");
	}
	if (strcmp(how, "wait") == 0) {
		sp_begin_name("waiting");
		char p[4096];
		snprintf(p, sizeof p, "%s/ready.%d", dir, rank);
		FILE *f = fopen(p, "w");
		if (f) {
			fprintf(f, "%d\n", (int)getpid());
			fclose(f);
		}
		for (;;)
			usleep(10000);
	}
	if (strcmp(how, "exit") == 0)
		exit(0);
	MPI_Finalize();
	return 0;
}
