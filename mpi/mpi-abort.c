/* SPDX-License-Identifier: MIT */
/*
 * A rank that will not reach MPI_Finalize (MPI_Abort, exit() without
 * finalize) cannot take part in the merge: it writes its own events to
 * <output>.rank<NNNNN>, a schema-2 file with its real rank, which
 * `scope-profiler merge` combines with the others. No collective call, so
 * nothing waits for the other ranks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "lifecycle.h"
#include "log.h"
#include "mpi-record.h"

void sp_mpi_write_rank_alone(const char *why)
{
	if (!sp_lifecycle_mpi_owned || !sp_lifecycle_begin_finalize())
		return;
	char *path = NULL;
	const char *out = sp_config.output ? sp_config.output : "profiling_data.h5";
	if (asprintf(&path, "%s.rank%05d", out, sp_mpi_world_rank) >= 0) {
		sp_log(SP_LOG_WARN, "mpi", "%s; writing rank %d alone to %s", why,
			sp_mpi_world_rank, path);
		sp_lifecycle_write_rank(path, sp_mpi_world_rank, sp_mpi_world_size);
		free(path);
	}
	sp_lifecycle_end_finalize();
}

int sp_mpi_flush_rank(void)
{
	char *path = NULL;
	const char *out = sp_config.output ? sp_config.output : "profiling_data.h5";
	if (asprintf(&path, "%s.rank%05d", out, sp_mpi_world_rank) < 0)
		return -ENOMEM;
	int ret = sp_lifecycle_write_rank(path, sp_mpi_world_rank, sp_mpi_world_size);
	free(path);
	return ret;
}

/* Recorded as a region; the call is closed when the file is written, just
 * before PMPI_Abort ends the job. */
SP_EXPORT int MPI_Abort(MPI_Comm comm, int errorcode)
{
	struct sp_mpi_call c;
	sp_mpi_begin(&c, SP_MPI_MPI_Abort);
	sp_mpi_enter(&c);
	sp_mpi_write_rank_alone("MPI_Abort was called");
	int ret = PMPI_Abort(comm, errorcode);
	sp_mpi_leave(&c);
	sp_mpi_end(&c);
	return ret;
}

/* Open MPI's Fortran binding (MPICH's reaches MPI_Abort above). */
#if SP_MPI_FORTRAN_WRAPPERS
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

SP_EXPORT void mpi_abort_(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr)
{
	*ierr = MPI_Abort(PMPI_Comm_f2c(*comm), (int)*errorcode);
}
SP_EXPORT void mpi_abort(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr)
	__attribute__((alias("mpi_abort_")));
SP_EXPORT void mpi_abort__(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr)
	__attribute__((alias("mpi_abort_")));
SP_EXPORT void MPI_ABORT(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr)
	__attribute__((alias("mpi_abort_")));
#endif /* SP_MPI_FORTRAN_WRAPPERS */
