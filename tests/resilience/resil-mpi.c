/* SPDX-License-Identifier: MIT */
/*
 * An MPI program with exactly known calls per rank, ending the way the test
 * asks. usage: resil-mpi K DIR wait|exit|abort|finalize|hdf5
 * Every rank: K x ("step" around one MPI_Barrier). Then
 *   wait:     create DIR/ready.<rank>, then sleep inside "waiting" until killed
 *   exit:     exit(0) without MPI_Finalize
 *   abort:    rank 1 calls MPI_Abort(3); the others wait as above
 *   fatal:    rank 1 sends to a rank that does not exist (MPI_ERR_RANK under
 *             MPI_ERRORS_ARE_FATAL: Open MPI aborts the job); the others wait
 *   handler:  every rank installs its own SIGTERM handler (after the
 *             profiler's), which calls _exit(0); then waits as above
 *   finalize: MPI_Finalize
 *   big M:    M calls of "work" (M = argv[4]), then DIR/ready.<rank>, then
 *             MPI_Finalize (a long write for a signal to land in)
 *   hdf5:     each rank writes DIR/app.<rank>.h5 with HDF5 (a dataset of K
 *             doubles) inside "app_write", then MPI_Finalize
 */
#include <hdf5.h>
#include <signal.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scope_profiler.h"

static void touch(const char *dir, const char *what, int rank)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/%s.%d", dir, what, rank);
	FILE *f = fopen(p, "w");
	if (f)
		fclose(f);
}

static void wait_forever(const char *dir, int rank)
{
	sp_begin_name("waiting");
	touch(dir, "ready", rank);
	for (;;)
		usleep(10000);
}

static int write_h5(const char *dir, int rank, long k)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/app.%d.h5", dir, rank);
	double *v = malloc((size_t)k * sizeof *v);
	for (long i = 0; i < k; i++)
		v[i] = (double)i * 0.5 + rank;
	sp_begin_name("app_write");
	hid_t f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	hsize_t dims = (hsize_t)k;
	hid_t sp = H5Screate_simple(1, &dims, NULL);
	hid_t d = H5Dcreate2(f, "values", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	int bad = f < 0 || d < 0 || H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0;
	H5Dclose(d);
	H5Sclose(sp);
	bad |= H5Fclose(f) < 0;
	sp_end_name("app_write");
	free(v);
	return bad;
}

static void on_term(int signo)
{
	(void)signo;
	_exit(0);
}

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
	printf("rank %d done %ld\n", rank, k);
	fflush(stdout);
	if (strcmp(how, "wait") == 0)
		wait_forever(dir, rank);
	if (strcmp(how, "exit") == 0)
		exit(0);
	if (strcmp(how, "abort") == 0) {
		if (rank == 1) {
			usleep(200000);
			MPI_Abort(MPI_COMM_WORLD, 3);
		}
		wait_forever(dir, rank);
	}
	if (strcmp(how, "fatal") == 0) {
		if (rank == 1) {
			int size, x = 1;
			usleep(200000);
			MPI_Comm_size(MPI_COMM_WORLD, &size);
			MPI_Send(&x, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
		}
		wait_forever(dir, rank);
	}
	if (strcmp(how, "handler") == 0) {
		signal(SIGTERM, on_term);
		wait_forever(dir, rank);
	}
	if (strcmp(how, "big") == 0 && argc > 4) {
		long m = atol(argv[4]);
		for (long i = 0; i < m; i++) {
			sp_begin_name("work");
			sp_end_name("work");
		}
		touch(dir, "ready", rank);
	}
	int bad = strcmp(how, "hdf5") == 0 ? write_h5(dir, rank, k) : 0;
	MPI_Finalize();
	return bad;
}
