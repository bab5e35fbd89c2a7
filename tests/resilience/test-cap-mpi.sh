#!/bin/bash
# Memory at MPI_Finalize (docs/RESILIENCE.md, "Memory at finalize"): two
# ranks record 25 M events each under a 64 MiB cap (they spill during the
# run), and the parallel finalize streams every rank's events from its
# spill and memory into the file in bounded pieces instead of building
# them in memory. Each rank's peak RSS (VmHWM after MPI_Finalize) stays
# within the same program's with 1000 calls plus the cap plus the stated
# constant; counts and exclusive_totals are exact per rank (check_cap.py).
set -euo pipefail
py=${SP_PYTHON:?}
build=${SP_BUILD_DIR:?}; src=${SP_SOURCE_DIR:?}
source "$src/tests/lib/mpi.sh"
export OMPI_MCA_btl=self,vader
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export SP_CAP_PRELOAD="$sp_mpi_lib" SP_CAP_MPIRUN="mpirun --oversubscribe -n 2"
# N calls of outer a rank give 10N/3 + 1 events of the program's functions.
$py "$src/tests/resilience/check_cap.py" "$build/tests/resilience/resil-cap-mpi" 7500000 1 64 32 \
  "$work/mpi.h5"
echo "resilience-cap-mpi: OK"
