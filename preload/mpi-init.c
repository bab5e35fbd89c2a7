/* SPDX-License-Identifier: MIT */
/*
 * The hand-written MPI wrappers: MPI_Init, MPI_Init_thread, MPI_Finalize
 * and MPI_Pcontrol, in C and as Fortran entry points (every mangling
 * gfortran and Open MPI use). Init sets up the MPI layer; Finalize merges
 * all ranks into one file before PMPI_Finalize. Init also takes the first
 * clock measurement against rank 0 (mpi-clock.h).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "lifecycle.h"
#include "log.h"
#include "mpi-clock.h"
#include "mpi-record.h"
#include "mpi-wait.h"
#include "spill.h"

MPI_Comm sp_mpi_private_comm = MPI_COMM_NULL, sp_mpi_node_comm = MPI_COMM_NULL;
const bool sp_lifecycle_has_mpi = true;
int sp_mpi_world_rank, sp_mpi_world_size = 1;
static bool initialized;

__attribute__((constructor(102))) static void sp_mpi_constructor(void)
{
	sp_mpi_on = sp_config.mpi; /* config is loaded by the constructor at 101 */
}

/*
 * Runs on every rank that has the preload, whatever the configuration, so
 * the collective Comm_dup matches on all ranks. The private communicator
 * returns errors instead of aborting: the merge must never kill the job.
 */
void sp_mpi_after_init(void)
{
	int e = errno;
	if (!initialized) {
		initialized = true;
		PMPI_Comm_rank(MPI_COMM_WORLD, &sp_mpi_world_rank);
		PMPI_Comm_size(MPI_COMM_WORLD, &sp_mpi_world_size);
		sp_mpi_record_init();
		sp_mpi_comms_init();
		/* Our own traffic's communicator, and the ranks that share this
		 * node's files (finalize's naming). */
		const char *how;
		if (sp_mpi_init_comms(MPI_COMM_WORLD, &sp_mpi_private_comm, &sp_mpi_node_comm,
				      &how) != MPI_SUCCESS)
			sp_mpi_node_comm = MPI_COMM_NULL;
		if (!sp_mpi_world_rank)
			sp_log(SP_LOG_DEBUG, "mpi", "init: communicators by %s", how);
		if (sp_mpi_node_comm != MPI_COMM_NULL)
			PMPI_Comm_set_errhandler(sp_mpi_node_comm, MPI_ERRORS_RETURN);
		sp_mpi_clock_init(sp_mpi_private_comm); /* collective, like the dup */
		sp_lifecycle_mpi_owned = true;
		sp_spill_set_rank(sp_config.output, sp_mpi_world_rank, sp_mpi_world_size);
	}
	errno = e;
}

SP_EXPORT int MPI_Init(int *argc, char ***argv)
{
	struct sp_mpi_call c;
	sp_mpi_begin(&c, SP_MPI_MPI_Init);
	sp_mpi_enter(&c);
	int ret = PMPI_Init(argc, argv);
	sp_mpi_leave(&c);
	sp_mpi_end(&c);
	if (ret == MPI_SUCCESS)
		sp_mpi_after_init();
	return ret;
}

SP_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	struct sp_mpi_call c;
	sp_mpi_begin(&c, SP_MPI_MPI_Init_thread);
	sp_mpi_enter(&c);
	int ret = PMPI_Init_thread(argc, argv, required, provided);
	sp_mpi_leave(&c);
	sp_mpi_end(&c);
	if (ret == MPI_SUCCESS)
		sp_mpi_after_init();
	return ret;
}

SP_EXPORT int MPI_Finalize(void)
{
	sp_mpi_before_finalize();
	return PMPI_Finalize();
}

/* Recorded as a region; the level is not interpreted (recording stays on). */
SP_EXPORT int MPI_Pcontrol(const int level, ...)
{
	struct sp_mpi_call c;
	sp_mpi_begin(&c, SP_MPI_MPI_Pcontrol);
	sp_mpi_enter(&c);
	int ret = PMPI_Pcontrol(level);
	sp_mpi_leave(&c);
	sp_mpi_end(&c);
	return ret;
}

/* ---- Fortran ------------------------------------------------------------ */
/* Open MPI only: MPICH's mpi_init_ etc. reach the C wrappers above
 * (SP_MPI_FORTRAN_WRAPPERS, mpi-record.h). */
#if SP_MPI_FORTRAN_WRAPPERS

#pragma GCC diagnostic ignored "-Wmissing-prototypes"

extern void pmpi_init_(MPI_Fint *ierr) __attribute__((weak));
extern void pmpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
	__attribute__((weak));
extern void pmpi_finalize_(MPI_Fint *ierr) __attribute__((weak));
extern void pmpi_pcontrol_(MPI_Fint *level) __attribute__((weak));

#define SP_F_ALIASES(ret, low, up, params)                                             \
	SP_EXPORT ret low params __attribute__((alias(#low "_")));                     \
	SP_EXPORT ret low##__ params __attribute__((alias(#low "_")));                 \
	SP_EXPORT ret up params __attribute__((alias(#low "_")));

SP_EXPORT void mpi_init_(MPI_Fint *ierr)
{
	struct sp_mpi_call c;
	sp_mpi_begin(&c, SP_MPI_MPI_Init);
	sp_mpi_enter(&c);
	if (pmpi_init_)
		pmpi_init_(ierr);
	else
		*ierr = MPI_ERR_INTERN;
	sp_mpi_leave(&c);
	sp_mpi_end(&c);
	if (*ierr == MPI_SUCCESS)
		sp_mpi_after_init();
}
SP_F_ALIASES(void, mpi_init, MPI_INIT, (MPI_Fint *ierr))

SP_EXPORT void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
	struct sp_mpi_call c;
	sp_mpi_begin(&c, SP_MPI_MPI_Init_thread);
	sp_mpi_enter(&c);
	if (pmpi_init_thread_)
		pmpi_init_thread_(required, provided, ierr);
	else
		*ierr = MPI_ERR_INTERN;
	sp_mpi_leave(&c);
	sp_mpi_end(&c);
	if (*ierr == MPI_SUCCESS)
		sp_mpi_after_init();
}
SP_F_ALIASES(void, mpi_init_thread, MPI_INIT_THREAD,
	     (MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr))

SP_EXPORT void mpi_finalize_(MPI_Fint *ierr)
{
	sp_mpi_before_finalize();
	if (pmpi_finalize_)
		pmpi_finalize_(ierr);
	else
		*ierr = PMPI_Finalize();
}
SP_F_ALIASES(void, mpi_finalize, MPI_FINALIZE, (MPI_Fint *ierr))

SP_EXPORT void mpi_pcontrol_(MPI_Fint *level)
{
	struct sp_mpi_call c;
	sp_mpi_begin(&c, SP_MPI_MPI_Pcontrol);
	sp_mpi_enter(&c);
	if (pmpi_pcontrol_)
		pmpi_pcontrol_(level);
	sp_mpi_leave(&c);
	sp_mpi_end(&c);
}
SP_F_ALIASES(void, mpi_pcontrol, MPI_PCONTROL, (MPI_Fint *level))
#endif /* SP_MPI_FORTRAN_WRAPPERS */

/*
 * A rank that exits without MPI_Finalize cannot take part in a merge: it
 * writes its own events to <output>.rank<N> so nothing is lost silently.
 * Runs before the lifecycle destructor (which skips MPI-owned processes).
 */
__attribute__((destructor(102))) static void sp_mpi_destructor(void)
{
	int finalized = 1;
	if (!sp_lifecycle_mpi_owned || PMPI_Finalized(&finalized) != MPI_SUCCESS || finalized)
		return;
	sp_mpi_write_rank_alone("MPI_Finalize was not called");
}
