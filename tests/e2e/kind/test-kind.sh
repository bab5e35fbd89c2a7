#!/bin/bash
# Region kinds end to end: kind-known.c under mpirun (2 ranks, call sites
# on), then check_kind.py checks region_table/kinds with h5py against
# mpi-functions.def and `comm`, `line-profile`, `inspect`, `merge`.
set -euo pipefail
build=${SP_BUILD_DIR:?}
src=${SP_SOURCE_DIR:?}
py=${SP_PYTHON:?}
source "$src/tests/lib/mpi.sh"  # once per MPI family
lib="$sp_mpi_lib"
lib="${SP_SANITIZER_PRELOAD:+$SP_SANITIZER_PRELOAD:}$lib"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

SCOPE_PROFILER_OUTPUT="$work/kind.h5" SCOPE_PROFILER_CALLSITES=2 timeout 120 \
  mpirun --oversubscribe -n 2 -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_OUTPUT \
  -x SCOPE_PROFILER_CALLSITES "$build/tests/e2e/kind/kind-known$sp_sfx" "$work/io.bin" \
  > run.out 2> run.err || { cat run.err; echo "FAIL: kind-known under mpirun"; exit 1; }
grep -q "scope-profiler: wrote $work/kind.h5 (2 ranks" run.err ||
  { cat run.err; echo "FAIL: no merged file"; exit 1; }
$py "$src/tests/e2e/kind/check_kind.py" "$build/tools/scope-profiler" \
  "$src/mpi/mpi-functions.def" "$work/kind.h5" 2
echo "region kinds e2e ($sp_mpi_family): OK"
