#!/bin/bash
# The main job: set up and build, profile the example MPI application
# (2-D Jacobi heat solver, 4 ranks) and print its summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/setup build
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${1:-jacobi.h5}
if [ -x build/examples/jacobi/jacobi ]; then
  mpirun --oversubscribe -n 4 build/tools/scope-profiler run -o "$out" -- build/examples/jacobi/jacobi
else
  SCOPE_PROFILER_OUTPUT="$out" build/examples/manual-regions
fi
build/tools/scope-profiler summary "$out"
