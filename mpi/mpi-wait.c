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
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
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

/* Open MPI yields in its blocking calls when it knows the node is
 * oversubscribed (mpi_yield_when_idle): its own wait is the better one
 * there (64 ranks on 2 CPUs: the finalize 0.31-0.33 s blocking, 0.43-0.45 s
 * through these). MPICH and the MPIs built on it spin: for them, on a
 * crowded node, the nonblocking form and a test between yields (16 ranks:
 * 2.3-2.4 s -> 0.23-0.26 s). */
#ifdef OPEN_MPI
#define MPI_SPINS false
#else
#define MPI_SPINS true
#endif

static bool yielding(void)
{
	return MPI_SPINS && sp_mpi_crowded;
}

bool sp_mpi_yielding_waits(void)
{
	return yielding();
}

/* The nonblocking call's request, tested between yields of the CPU (its
 * status into st): the MPI result. */
static int idle_status(int started, MPI_Request *req, MPI_Status *st)
{
	if (started != MPI_SUCCESS)
		return started;
	int done = 0, ret;
	while ((ret = PMPI_Test(req, &done, st)) == MPI_SUCCESS && !done)
		sched_yield();
	return ret;
}

static int idle(int started, MPI_Request *req)
{
	return idle_status(started, req, MPI_STATUS_IGNORE);
}

/* FNV-1a of the host name: the same on every rank of a host.
 * SCOPE_PROFILER_TEST_HOSTS=N (tests only): world rank r hashes as if on
 * host r % N, so that one machine takes the several-hosts path. */
static uint64_t host_hash(MPI_Comm world)
{
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	uint64_t h = 1469598103934665603ull;
	for (const char *c = host; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	const char *t = getenv("SCOPE_PROFILER_TEST_HOSTS");
	int rank = 0, n = t ? atoi(t) : 0;
	if (n > 1 && PMPI_Comm_rank(world, &rank) == MPI_SUCCESS)
		h = (h ^ (uint64_t)(rank % n)) * 1099511628211ull;
	return h;
}

int sp_mpi_init_comms(MPI_Comm world, MPI_Comm *ret_private, MPI_Comm *ret_node,
		      const char **ret_how)
{
	*ret_private = *ret_node = MPI_COMM_NULL;
	*ret_how = MPI_SPINS ? "MPI_Comm_idup between yields" : "MPI_Comm_dup, MPI_Comm_split_type";
	MPI_Request req;
	int ret = MPI_SPINS ? idle(PMPI_Comm_idup(world, ret_private, &req), &req)
			    : PMPI_Comm_dup(world, ret_private);
	if (ret != MPI_SUCCESS) {
		*ret_private = MPI_COMM_NULL;
		return ret;
	}
	/* Errors return on it from here: the profiler never ends the job. */
	PMPI_Comm_set_errhandler(*ret_private, MPI_ERRORS_RETURN);
	if (!MPI_SPINS)
		return PMPI_Comm_split_type(*ret_private, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
					    ret_node);
	/* One host for every rank (the largest hash and the largest
	 * complement agree): the node's ranks are all of them, in the same
	 * order as MPI_Comm_split_type(SHARED, key 0) gives, without it. */
	uint64_t h = host_hash(world), v[2] = { h, ~h }, m[2];
	if (idle(PMPI_Iallreduce(v, m, 2, MPI_UINT64_T, MPI_MAX, *ret_private, &req), &req) ==
		    MPI_SUCCESS && m[0] == ~m[1]) {
		*ret_how = "MPI_Comm_idup between yields, twice (one host)";
		return idle(PMPI_Comm_idup(*ret_private, ret_node, &req), &req);
	}
	*ret_how = "MPI_Comm_idup between yields, MPI_Comm_split_type (several hosts)";
	return PMPI_Comm_split_type(*ret_private, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, ret_node);
}

int sp_mpi_bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm)
{
	MPI_Request req;
	if (!yielding())
		return PMPI_Bcast(buf, n, t, root, comm);
	return idle(PMPI_Ibcast(buf, n, t, root, comm, &req), &req);
}

int sp_mpi_allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
	MPI_Request req;
	if (!yielding())
		return PMPI_Allreduce(s, r, n, t, op, comm);
	return idle(PMPI_Iallreduce(s, r, n, t, op, comm, &req), &req);
}

int sp_mpi_reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root,
		  MPI_Comm comm)
{
	MPI_Request req;
	if (!yielding())
		return PMPI_Reduce(s, r, n, t, op, root, comm);
	return idle(PMPI_Ireduce(s, r, n, t, op, root, comm, &req), &req);
}

int sp_mpi_exscan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
	MPI_Request req;
	if (!yielding())
		return PMPI_Exscan(s, r, n, t, op, comm);
	return idle(PMPI_Iexscan(s, r, n, t, op, comm, &req), &req);
}

int sp_mpi_gather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
		  int root, MPI_Comm comm)
{
	MPI_Request req;
	if (!yielding())
		return PMPI_Gather(s, sn, st, r, rn, rt, root, comm);
	return idle(PMPI_Igather(s, sn, st, r, rn, rt, root, comm, &req), &req);
}

int sp_mpi_gatherv(const void *s, int sn, MPI_Datatype st, void *r, const int *rn,
		   const int *displs, MPI_Datatype rt, int root, MPI_Comm comm)
{
	MPI_Request req;
	if (!yielding())
		return PMPI_Gatherv(s, sn, st, r, rn, displs, rt, root, comm);
	return idle(PMPI_Igatherv(s, sn, st, r, rn, displs, rt, root, comm, &req), &req);
}

int sp_mpi_scatter(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
		   int root, MPI_Comm comm)
{
	MPI_Request req;
	if (!yielding())
		return PMPI_Scatter(s, sn, st, r, rn, rt, root, comm);
	return idle(PMPI_Iscatter(s, sn, st, r, rn, rt, root, comm, &req), &req);
}

int sp_mpi_scatterv(const void *s, const int *sn, const int *displs, MPI_Datatype st, void *r,
		    int rn, MPI_Datatype rt, int root, MPI_Comm comm)
{
	MPI_Request req;
	if (!yielding())
		return PMPI_Scatterv(s, sn, displs, st, r, rn, rt, root, comm);
	return idle(PMPI_Iscatterv(s, sn, displs, st, r, rn, rt, root, comm, &req), &req);
}

int sp_mpi_send(const void *buf, int n, MPI_Datatype t, int dest, int tag, MPI_Comm comm)
{
	MPI_Request req;
	if (!yielding())
		return PMPI_Send(buf, n, t, dest, tag, comm);
	return idle(PMPI_Isend(buf, n, t, dest, tag, comm, &req), &req);
}

int sp_mpi_probe(int src, int tag, MPI_Comm comm, MPI_Status *st)
{
	if (!yielding())
		return PMPI_Probe(src, tag, comm, st);
	for (;;) {
		int found = 0, ret = PMPI_Iprobe(src, tag, comm, &found, st);
		if (ret != MPI_SUCCESS || found)
			return ret;
		sched_yield();
	}
}

int sp_mpi_recv(void *buf, int n, MPI_Datatype t, int src, int tag, MPI_Comm comm,
		MPI_Status *st)
{
	MPI_Request req;
	if (!yielding())
		return PMPI_Recv(buf, n, t, src, tag, comm, st);
	return idle_status(PMPI_Irecv(buf, n, t, src, tag, comm, &req), &req, st);
}
