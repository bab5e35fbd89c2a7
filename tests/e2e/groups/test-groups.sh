#!/bin/bash
# /callsites and /mpi_communicators through every way of writing a file:
# a 3-rank mpirun job with call sites (the finalize merge), the same job
# leaving without MPI_Finalize (per-rank files) merged by `merge`, and
# `recover` and `merge` of the complete file. check_groups.py compares the
# groups with h5py against the files they came from.
# Once per MPI family. Under MPICH the exit case runs under `scope-profiler
# run` (Hydra SIGKILLs the other ranks when one exits without MPI_Finalize;
# each program, in its own process group under run, still writes its file:
# docs/MPI.md), and the hostile edits (no MPI in them) are left to the
# default family's variant.
set -euo pipefail
build=${SP_BUILD_DIR:?}; src=${SP_SOURCE_DIR:?}
py=${SP_PYTHON:?}
source "$src/tests/lib/mpi.sh"  # once per MPI family
cli="$build/tools/scope-profiler"; prog="$build/tests/e2e/groups/groups-prog$sp_sfx"
check="$src/tests/e2e/groups/check_groups.py"
lib="${SP_SANITIZER_PRELOAD:+$SP_SANITIZER_PRELOAD:}$sp_mpi_lib"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; cd "$work"

run() {  # DIR [ARG]: 3 ranks, call sites at depth 3, output DIR/out.h5
  mkdir "$1"
  local via=()
  [ "$sp_mpi_family:${2:-}" = mpich:exit ] && via=("$cli" run -q --)
  SCOPE_PROFILER_OUTPUT="$work/$1/out.h5" SCOPE_PROFILER_CALLSITES=3 timeout 120 \
    mpirun --oversubscribe -n 3 -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_OUTPUT \
    -x SCOPE_PROFILER_CALLSITES "${via[@]}" "$prog" ${2:-} > "$1/log" 2>&1 || [ "${2:-}" = exit ]
}

run full
[ -e full/out.h5 ] || { cat full/log; echo "FAIL: no merged file"; exit 1; }
"$cli" recover full/out.h5 -o full/recovered.h5 > /dev/null
$py "$check" same full/out.h5 full/recovered.h5
"$cli" merge full/out.h5 -o full/merged.h5 > /dev/null
$py "$check" same full/out.h5 full/merged.h5

run exit exit
[ "$(ls exit | grep -c '^out.h5.rank0000[0-2]$')" = 3 ] ||
  { cat exit/log; echo "FAIL: per-rank files"; exit 1; }
"$cli" merge exit/out.h5.rank* -o exit/merged.h5 > /dev/null
$py "$check" ranks exit/merged.h5 exit/out.h5.rank0000{0,1,2}
# A rank's own file holds what the finalize merge writes for that rank.
$py "$check" runs full/out.h5 exit/merged.h5

[ -z "$sp_sfx" ] || { echo "groups round-trip ($sp_mpi_family): OK"; exit 0; }
# Groups that do not hold together are refused, not copied (hostile input).
bad() {  # NAME PYTHON-EDIT
  cp full/out.h5 "full/bad-$1.h5"
  $py -c "import h5py, numpy as np; f = h5py.File('full/bad-$1.h5', 'r+'); $2"
  set +e; "$cli" merge "full/bad-$1.h5" -o "full/bad-$1.out.h5" 2> "full/bad-$1.err"; rc=$?; set -e
  [ $rc = 2 ] && grep -q "does not hold together" "full/bad-$1.err" && [ ! -e "full/bad-$1.out.h5" ] ||
    { cat "full/bad-$1.err"; echo "FAIL: $1: exit $rc"; exit 1; }
}
bad frame-offset "o = f['callsites/frame_offsets']; v = o[:]; v[-1] = 1 << 40; o[...] = v"
bad comm-length "g = f['mpi_communicators']; del g['sizes']; g['sizes'] = np.zeros(1, 'i4')"
echo "groups round-trip: OK"
