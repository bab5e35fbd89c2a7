/* SPDX-License-Identifier: MIT */
/*
 * MPI calls with known counts, sizes and peers, for the e2e checks in
 * check_mpi.py (which derives the expected values from the rank count).
 * Uses MPI_Init_thread, a second thread calling MPI, a function that runs
 * before MPI_Init (compiled with -finstrument-functions), a reversed
 * sub-communicator (peers must come out as world ranks), persistent and
 * non-blocking requests and the main collectives. Prints a result line that
 * must not change under the profiler.
 */
#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static int rank, size, right, left;
static MPI_Comm tcomm;

/* Runs before MPI_Init: its event belongs to the rank all the same. */
int before_init(int x);
__attribute__((noinline)) int before_init(int x)
{
	return x * 3 + 1;
}

static void *thread_main(void *arg)
{
	int s[4] = { rank, rank, rank, rank }, r[4];
	/* 16 bytes to the right on a duplicated communicator (id 3). */
	MPI_Sendrecv(s, 4, MPI_INT, right, 21, r, 4, MPI_INT, left, 21, tcomm, MPI_STATUS_IGNORE);
	*(int *)arg = r[0];
	return NULL;
}

int main(int argc, char **argv)
{
	int provided, check = before_init(argc);
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	right = (rank + 1) % size;
	left = (rank + size - 1) % size;

	/* Sendrecv: 10 ints = 40 bytes to the right, tag 11. */
	int sr[10], rr[10];
	for (int i = 0; i < 10; i++)
		sr[i] = rank * 10 + i;
	MPI_Sendrecv(sr, 10, MPI_INT, right, 11, rr, 10, MPI_INT, left, 11, MPI_COMM_WORLD,
		     MPI_STATUS_IGNORE);
	check += rr[9];

	/* Send/Recv: rank 0 sends 1000 doubles (8000 bytes) to the last rank,
	 * which receives from MPI_ANY_SOURCE (peer comes from the status). */
	static double big[1000];
	if (rank == 0) {
		for (int i = 0; i < 1000; i++)
			big[i] = i;
		MPI_Send(big, 1000, MPI_DOUBLE, size - 1, 12, MPI_COMM_WORLD);
	}
	if (rank == size - 1) {
		MPI_Status st;
		MPI_Recv(big, 1000, MPI_DOUBLE, MPI_ANY_SOURCE, 12, MPI_COMM_WORLD, &st);
		check += (int)big[999];
	}

	/* 3 rounds of Isend/Irecv of 32 doubles (256 bytes) + Waitall. */
	double sb[32], rb[32];
	for (int round = 0; round < 3; round++) {
		MPI_Request q[2];
		for (int i = 0; i < 32; i++)
			sb[i] = rank + round;
		MPI_Irecv(rb, 32, MPI_DOUBLE, left, 13, MPI_COMM_WORLD, &q[0]);
		MPI_Isend(sb, 32, MPI_DOUBLE, right, 13, MPI_COMM_WORLD, &q[1]);
		MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
		check += (int)rb[0];
	}

	/* Waitany twice on 64 chars each way. */
	char cs[64], cr[64];
	memset(cs, 'a' + rank, sizeof cs);
	MPI_Request w[2];
	MPI_Irecv(cr, 64, MPI_CHAR, left, 14, MPI_COMM_WORLD, &w[0]);
	MPI_Isend(cs, 64, MPI_CHAR, right, 14, MPI_COMM_WORLD, &w[1]);
	for (int k = 0; k < 2; k++) {
		int idx;
		MPI_Waitany(2, w, &idx, MPI_STATUS_IGNORE);
	}
	check += cr[0];

	/* Persistent: 16 doubles (128 bytes), started 4 times. */
	double ps[16], pr[16];
	MPI_Request p[2];
	MPI_Recv_init(pr, 16, MPI_DOUBLE, left, 15, MPI_COMM_WORLD, &p[0]);
	MPI_Send_init(ps, 16, MPI_DOUBLE, right, 15, MPI_COMM_WORLD, &p[1]);
	for (int k = 0; k < 4; k++) {
		ps[0] = rank + k;
		MPI_Startall(2, p);
		MPI_Waitall(2, p, MPI_STATUSES_IGNORE);
		check += (int)pr[0];
	}
	MPI_Request_free(&p[0]);
	MPI_Request_free(&p[1]);

	/* Collectives. */
	int b[100];
	for (int i = 0; i < 100; i++)
		b[i] = rank == size - 1 ? i : -1;
	MPI_Bcast(b, 100, MPI_INT, size - 1, MPI_COMM_WORLD); /* 400 bytes, root last */
	double one = rank, sum = 0;
	MPI_Reduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD); /* 8 bytes, root 0 */
	for (int k = 0; k < 5; k++)
		MPI_Allreduce(MPI_IN_PLACE, &one, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	int g2[2] = { rank, rank }, gall[2 * 64];
	MPI_Gather(g2, 2, MPI_INT, gall, 2, MPI_INT, 0, MPI_COMM_WORLD); /* 8 bytes */
	int a2a_s[64], a2a_r[64], counts[64], displs[64];
	for (int i = 0; i < size; i++) {
		a2a_s[i] = rank * 100 + i;
		counts[i] = 1;
		displs[i] = i;
	}
	MPI_Alltoall(a2a_s, 1, MPI_INT, a2a_r, 1, MPI_INT, MPI_COMM_WORLD); /* 4 bytes */
	MPI_Alltoallv(a2a_s, counts, displs, MPI_INT, a2a_r, counts, displs, MPI_INT,
		      MPI_COMM_WORLD); /* 4 x size bytes */
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Request ib;
	MPI_Ibarrier(MPI_COMM_WORLD, &ib);
	MPI_Wait(&ib, MPI_STATUS_IGNORE);
	check += b[99] + (int)sum + a2a_r[0];

	/* Reversed sub-communicator (id 2): sub rank s is world rank size-1-s.
	 * Sub rank 0 sends 3 doubles (24 bytes) to sub rank 1. */
	MPI_Comm sub;
	MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &sub);
	int srank;
	MPI_Comm_rank(sub, &srank);
	double three[3] = { 1, 2, 3 };
	if (srank == 0)
		MPI_Send(three, 3, MPI_DOUBLE, 1, 16, sub);
	else if (srank == 1)
		MPI_Recv(three, 3, MPI_DOUBLE, 0, 16, sub, MPI_STATUS_IGNORE);

	/* Derived types freed and created again: the wrappers' cached type
	 * size must follow, even when the new type reuses the freed one's
	 * address. 2 x (2 doubles) = 32 bytes, then 2 x (4 doubles) = 64
	 * bytes, to the right, tag 17; MPI_Test polls the receive (completes
	 * once per round with its data). errno survives a wrapped call. */
	for (int k = 0; k < 2; k++) {
		MPI_Datatype t;
		MPI_Type_contiguous(2 << k, MPI_DOUBLE, &t);
		MPI_Type_commit(&t);
		double ts[8] = { rank, k }, tr[8];
		MPI_Request tq[2];
		MPI_Irecv(tr, 2, t, left, 17, MPI_COMM_WORLD, &tq[0]);
		MPI_Isend(ts, 2, t, right, 17, MPI_COMM_WORLD, &tq[1]);
		for (int done = 0; !done;)
			MPI_Test(&tq[0], &done, MPI_STATUS_IGNORE);
		MPI_Wait(&tq[1], MPI_STATUS_IGNORE);
		MPI_Type_free(&t);
		check += (int)tr[1];
	}
	/* MPI_Iprobe that finds nothing (no message ever has tag 99): the
	 * status is untouched, so its stale MPI_SOURCE must not become the
	 * peer (-1: MPI_ANY_SOURCE). */
	MPI_Status stale;
	stale.MPI_SOURCE = 0;
	stale.MPI_TAG = 7;
	int found = 1;
	MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &found, &stale);
	check += found;
	errno = 4242;
	MPI_Comm_rank(MPI_COMM_WORLD, &srank);
	check += errno == 4242 ? 0 : 1000000;

	/* A second thread calls MPI (id 3 = the duplicate). */
	MPI_Comm_dup(MPI_COMM_WORLD, &tcomm);
	int got = -1;
	pthread_t th;
	if (provided == MPI_THREAD_MULTIPLE) {
		pthread_create(&th, NULL, thread_main, &got);
		pthread_join(th, NULL);
	} else {
		thread_main(&got);
	}
	check += got;
	MPI_Pcontrol(1);
	MPI_Comm_free(&tcomm);
	MPI_Comm_free(&sub);

	int total = 0;
	MPI_Allreduce(&check, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* 6th, 4 bytes */
	if (rank == 0)
		printf("mpi-known: ranks=%d check=%d\n", size, total);
	MPI_Finalize();
	return 0;
}
