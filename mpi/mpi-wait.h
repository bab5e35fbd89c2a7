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

#endif /* SP_MPI_WAIT_H */
