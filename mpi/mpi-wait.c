/* SPDX-License-Identifier: MIT */
/*
 * Waiting at finalize without taking the cores from the rank that works.
 * In the finalize's rounds one rank works (the node's answering rank
 * names every rank's functions, rank 0 lays the file out and commits it)
 * while the others wait in a collective. A blocked MPI call spins (Open
 * MPI yields between polls when it knows the node is oversubscribed, which
 * under CFS still takes a time slice now and then): with more ranks than
 * cores, the waiting ranks share the cores with the working one and
 * stretch its work. On such a node a waiting rank sleeps instead: it
 * receives a "go" from the working rank, polled with naps that grow from
 * 50 us to 1 ms. On a node with a core per rank nothing changes.
 */
#define _GNU_SOURCE
#include "mpi-wait.h"

#include <errno.h>
#include <time.h>
#include <unistd.h>

/* A tag of its own (below the guaranteed MPI_TAG_UB of 32767), apart
 * from the clock's (23000-23004) and the merge's (1-41). */
enum { TAG_AWAIT = 23100 };

#define FIRST_NAP_NS 50000
#define LONGEST_NAP_NS 1000000

bool sp_mpi_crowded;

bool sp_mpi_node_crowded(MPI_Comm node)
{
	int size = 0;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return node != MPI_COMM_NULL && PMPI_Comm_size(node, &size) == MPI_SUCCESS && cpus > 0 &&
	       size > cpus;
}

int sp_mpi_wait_idle(MPI_Request *req, long nap, long most)
{
	int done = 0;
	while (PMPI_Test(req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
		struct timespec ts = { 0, nap };
		nanosleep(&ts, NULL);
		nap = 2 * nap < most ? 2 * nap : most;
	}
	return done ? 0 : -EIO;
}

int sp_mpi_await(MPI_Comm comm, int root)
{
	int rank = 0, size = 1;
	if (!sp_mpi_crowded)
		return 0;
	if (comm == MPI_COMM_NULL || PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS ||
	    PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
		return -EIO;
	int ret = 0;
	char go = 0;
	if (rank == root) {
		for (int r = 0; r < size; r++)
			if (r != root && PMPI_Send(&go, 0, MPI_CHAR, r, TAG_AWAIT, comm) != MPI_SUCCESS)
				ret = -EIO;
		return ret;
	}
	MPI_Request req;
	if (PMPI_Irecv(&go, 0, MPI_CHAR, root, TAG_AWAIT, comm, &req) != MPI_SUCCESS)
		return -EIO;
	return sp_mpi_wait_idle(&req, FIRST_NAP_NS, LONGEST_NAP_NS);
}
