#!/bin/bash
# Upstream's API under mpirun with 2 ranks (tests/api/api-mpi.cpp): file
# naming, rank source, a sp_finalize only rank 0 calls (the job must end:
# meson's timeout is the hang check), and the C++ MPI helpers with our
# PMPI layer on (pass-through) and off (upstream's region names).
set -euo pipefail
build=${SP_BUILD_DIR:?}
src=${SP_SOURCE_DIR:?}
py=${SP_PYTHON:?}
# api-mpi is the first MPI family's: its own launcher (tests/lib/mpi.sh)
source "$src/tests/lib/mpi.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for mode in wrapped plain; do
  mkdir "$work/$mode"
  cd "$work/$mode"
  mpi=1
  [ $mode = plain ] && mpi=0
  SCOPE_PROFILER_QUIET=1 SCOPE_PROFILER_MPI=$mpi SCOPE_PROFILER_OUTPUT="$work/$mode/proc.h5" \
    mpirun -n 2 "$build/tests/api/api-mpi" > out.txt 2> err.txt || { cat out.txt err.txt; exit 1; }
  # wrapped: the default context has "step" only; plain: also send or
  # recv, and barrier.
  want="intercepted=1 regions=1"
  [ $mode = plain ] && want="intercepted=0 regions=3"
  for r in 0 1; do
    grep -qxF "rank $r $want" out.txt || { cat out.txt err.txt; exit 1; }
  done
  PYTHONPATH="$src/tests/api${PYTHONPATH:+:$PYTHONPATH}" $py "$src/tests/api/check_api_mpi.py" "$work/$mode" $mode
done
echo "api-mpi: OK"
