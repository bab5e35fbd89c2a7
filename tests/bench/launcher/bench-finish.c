/* SPDX-License-Identifier: MIT */
/*
 * A rank that records N calls of "e" (no communication, so 64 ranks on two
 * cores start quickly), writes its pid to DIR/ready.<rank> and waits to be
 * killed: the load for launcher-finish.sh. usage: bench-finish N DIR
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "scope_profiler.h"

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	long n = atol(argv[1]);
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (long i = 0; i < n; i++) {
		sp_begin_name("e");
		sp_end_name("e");
	}
	char p[4096];
	snprintf(p, sizeof p, "%s/ready.%d", argv[2], rank);
	FILE *f = fopen(p, "w");
	if (f) {
		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
	}
	for (;;)
		sleep(1);
}
