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
# Two threads a rank sharing every row: streamed through a temporary
# (O_TMPFILE); with none anywhere (SCOPE_PROFILER_TEST_NO_TMPFILE=1) the
# rank builds its events in memory instead (no bound checked: 4 GiB of
# slack), with the same exact counts and exclusive times. Both forced to
# stream at this size (SCOPE_PROFILER_TEST_FINALIZE_PLAN=1).
rm -f "$work"/*.h5
SCOPE_PROFILER_TEST_FINALIZE_PLAN=1 \
  $py "$src/tests/resilience/check_cap.py" "$build/tests/resilience/resil-cap-mpi" 300000 2 64 32 \
  "$work/threads.h5"
first_row() { # FILE: the name of rank 0's row at event offset 0 (streamed: an MPI row)
  $py -c "import h5py, sys; f = h5py.File(sys.argv[1]); ix = f['rank_region_index']
n = [x.decode() for x in f['region_table/names'][()]]
print([n[r] for r, k, o in zip(ix['region_ids'][()], ix['ranks'][()], ix['event_offsets'][()])
       if k == 0 and o == 0][0])" "$1"
}
case $(first_row "$work/threads.h5") in MPI_*) ;; *) echo "FAIL: threads.h5 not streamed"; exit 1 ;; esac
rm -f "$work"/*.h5
SCOPE_PROFILER_TEST_FINALIZE_PLAN=1 SCOPE_PROFILER_TEST_NO_TMPFILE=1 \
  $py "$src/tests/resilience/check_cap.py" "$build/tests/resilience/resil-cap-mpi" 300000 2 64 4096 \
  "$work/threads-no-tmpfile.h5"
case $(first_row "$work/threads-no-tmpfile.h5") in MPI_*) echo "FAIL: streamed without a temporary"; exit 1 ;; esac
echo "resilience-cap-mpi: OK"
