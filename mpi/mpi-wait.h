/* SPDX-License-Identifier: MIT */
/*
 * Waiting at finalize without spinning (mpi-wait.c): on a node with more
 * ranks than CPUs, a rank that waits for another's work sleeps between
 * polls instead of sharing the cores with it.
 */
#ifndef SP_MPI_WAIT_H
#define SP_MPI_WAIT_H

#include <mpi.h>
#include <stdbool.h>

#include "compiler.h"

/* Whether some node of the job has more ranks than CPUs (set at finalize
 * from every rank's sp_mpi_node_crowded(), so that all ranks agree). */
SP_HIDDEN extern bool sp_mpi_crowded;

/* Whether this node has more ranks (node: the node's communicator) than
 * online CPUs. */
SP_HIDDEN bool sp_mpi_node_crowded(MPI_Comm node);

/* Wait for req: test, then sleep nap ns, doubling up to most. 0 or -EIO. */
SP_HIDDEN int sp_mpi_wait_idle(MPI_Request *req, long nap, long most);

/*
 * Collective on comm, when sp_mpi_crowded: every rank but root returns once
 * root has called it, sleeping meanwhile (naps of 50 us to 1 ms); root
 * returns at once. Called before a collective in which the others wait for
 * root's work, so that they wait asleep; a no-op when not crowded. 0 or
 * -EIO (the collective after it then fails or waits as before).
 */
SP_HIDDEN int sp_mpi_await(MPI_Comm comm, int root);

/*
 * The finalize's collectives (after sp_mpi_crowded is agreed): on a crowded
 * node, with an MPI that spins in its blocking calls (MPICH and its kin, not
 * Open MPI), their nonblocking form, tested between sched_yield()s, so that
 * a rank that arrives early gives its core to a late one (MPICH, 4 ranks on
 * 2 CPUs: the finalize took 230-250 ms, ~30 ms so, as with Open MPI); the
 * blocking call elsewhere. Every rank of comm decides alike (the flag is
 * agreed, the MPI is the same), as MPI requires: a nonblocking collective
 * does not match a blocking one. Same arguments and result as the MPI call.
 */
SP_HIDDEN int sp_mpi_bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm);
SP_HIDDEN int sp_mpi_allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op,
			       MPI_Comm comm);
SP_HIDDEN int sp_mpi_reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root,
			    MPI_Comm comm);
SP_HIDDEN int sp_mpi_exscan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op,
			    MPI_Comm comm);
SP_HIDDEN int sp_mpi_gather(const void *s, int sn, MPI_Datatype st, void *r, int rn,
			    MPI_Datatype rt, int root, MPI_Comm comm);
SP_HIDDEN int sp_mpi_gatherv(const void *s, int sn, MPI_Datatype st, void *r, const int *rn,
			     const int *displs, MPI_Datatype rt, int root, MPI_Comm comm);
SP_HIDDEN int sp_mpi_scatter(const void *s, int sn, MPI_Datatype st, void *r, int rn,
			     MPI_Datatype rt, int root, MPI_Comm comm);
SP_HIDDEN int sp_mpi_scatterv(const void *s, const int *sn, const int *displs, MPI_Datatype st,
			      void *r, int rn, MPI_Datatype rt, int root, MPI_Comm comm);
/*
 * MPI_Init's own communicators, collective on world: a private duplicate
 * (*ret_private) and the ranks that share this node (*ret_node). Whether
 * the node is crowded is not known yet, so with an MPI that spins
 * (MPICH) every rank waits between yields, which costs nothing where a
 * core is free: MPI_Comm_idup, and when every rank is on one host (an
 * MPI_Iallreduce of host-name hashes) the node's communicator is another
 * idup, not MPI_Comm_split_type, which has no nonblocking form (4 ranks
 * on 2 CPUs: 50-90 ms spent in it). Open MPI (it yields in its own
 * waits), and several hosts: the blocking calls. MPI_SUCCESS, else
 * either may be MPI_COMM_NULL. *ret_how: which (a debug line).
 */
SP_HIDDEN int sp_mpi_init_comms(MPI_Comm world, MPI_Comm *ret_private, MPI_Comm *ret_node,
			       const char **ret_how);
/* Whether those wait between yields (crowded, and an MPI that spins). */
SP_HIDDEN bool sp_mpi_yielding_waits(void);
/* The same for the finalize's point-to-point waits: a send, a probe, a
 * receive (st may be MPI_STATUS_IGNORE). */
SP_HIDDEN int sp_mpi_send(const void *buf, int n, MPI_Datatype t, int dest, int tag,
			  MPI_Comm comm);
SP_HIDDEN int sp_mpi_probe(int src, int tag, MPI_Comm comm, MPI_Status *st);
SP_HIDDEN int sp_mpi_recv(void *buf, int n, MPI_Datatype t, int src, int tag, MPI_Comm comm,
			  MPI_Status *st);

#endif /* SP_MPI_WAIT_H */
