// SPDX-License-Identifier: MIT
// Upstream's API under mpirun (2 ranks): the default context named by the
// rank argument, an explicit context whose argument disagrees with the MPI
// rank, sp_finalize called by rank 0 only (never collective, never hangs),
// and the C++ MPI helpers passing through to our PMPI layer.
#include "scope_profiler_mpi.hpp"

#include <cstdio>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank = 0, size = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	sp_init("mpiapi", rank);
	sp_profiler *other = sp_create("ranked", rank + 10);
	int step = sp_region("step"), o = sp_profiler_region(other, "other");
	double buf[4] = {1, 2, 3, 4};
	for (int i = 0; i < 3; i++) {
		sp_begin(step);
		sp_profiler_begin(other, o);
		if (rank == 0)
			sp::mpi::send(buf, 4, MPI_DOUBLE, 1, 9, MPI_COMM_WORLD);
		else
			sp::mpi::recv(buf, 4, MPI_DOUBLE, 0, 9, MPI_COMM_WORLD);
		sp_profiler_end(other, o);
		sp_end(step);
	}
	sp::mpi::barrier(MPI_COMM_WORLD);
	std::printf("rank %d intercepted=%d regions=%d\n", rank, sp_mpi_intercepted(),
		    sp_profiler_num_regions(sp_default_profiler()));
	std::fflush(stdout);
	if (rank == 1) // a flush is local: rank 1 alone writes a snapshot
		sp_profiler_flush(sp_default_profiler());
	int ret = sp_profiler_finalize(other);
	if (rank == 0)
		ret |= sp_finalize(); // rank 1 never calls it
	sp_destroy(other);
	MPI_Finalize();
	return ret;
}
