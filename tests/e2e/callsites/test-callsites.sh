#!/bin/bash
# MPI call sites end to end. callsites-known.c makes two MPI_Allreduce and
# two MPI_Send calls on lines marked CS:<name>, with known counts and sizes.
# Run under mpirun with call sites at depth 3 (4 ranks, LD_PRELOAD form) and
# depth 2 (2 ranks, `scope-profiler run --callsites 2`), and without call
# sites; check_callsites.py asserts file:line, counts and bytes through
# `line-profile --json`, the Chrome trace args, the report and h5py.
set -euo pipefail
build=${SP_BUILD_DIR:?}
src=${SP_SOURCE_DIR:?}
py=${SP_PYTHON:?}
source "$src/tests/lib/mpi.sh"  # once per MPI family
cli="$build/tools/scope-profiler"
prog="$build/tests/e2e/callsites/callsites-known$sp_sfx"
source="$src/tests/e2e/callsites/callsites-known.c"
lib="$sp_mpi_lib"
lib="${SP_SANITIZER_PRELOAD:+$SP_SANITIZER_PRELOAD:}$lib"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

timeout 120 mpirun --oversubscribe -n 4 "$prog" > plain.out 2> plain.err ||
  { cat plain.err; echo "FAIL: program without profiler"; exit 1; }

# prof NAME NP CALLSITES: LD_PRELOAD run into NAME.h5
prof() {
  SCOPE_PROFILER_OUTPUT="$work/$1.h5" SCOPE_PROFILER_CALLSITES=$3 timeout 120 \
    mpirun --oversubscribe -n "$2" -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_OUTPUT \
    -x SCOPE_PROFILER_CALLSITES "$prog" > "$1.out" 2> "$1.err" ||
    { cat "$1.err"; echo "FAIL: $1"; exit 1; }
  grep -q "scope-profiler: wrote $work/$1.h5 ($2 ranks" "$1.err" ||
    { cat "$1.err"; echo "FAIL: $1: no merged file"; exit 1; }
}

prof cs3 4 3
cmp plain.out cs3.out || { echo "FAIL: output changed under the profiler"; exit 1; }
prof off 4 0
cmp plain.out off.out

timeout 120 mpirun --oversubscribe -n 2 "$cli" run --callsites 2 -o "$work/cs2.h5" -- "$prog" \
  > cs2.out 2> cs2.err || { cat cs2.err; echo "FAIL: run --callsites 2"; exit 1; }

$py "$src/tests/e2e/callsites/check_callsites.py" "$cli" "$source" "$work"
# Row layout with call sites: the same output from the old layout, merge.
mkdir layout
$py "$src/tests/e2e/mpi/check_layout.py" "$cli" "$work/layout" cs3.h5
echo "callsites e2e ($sp_mpi_family): OK"
