#!/bin/bash
# SPDX-License-Identifier: MIT
# Equivalence of the two finalize paths (issue 18, item 3). One run writes
# the parallel path's file and, with SCOPE_PROFILER_TEST_FINALIZE_COPY, the
# rank-0 stream's file of the same snapshot; compare_h5.py compares them
# dataset by dataset, attribute by attribute, and as upstream's read_h5()
# reads them. Runs (4 ranks): mpi-known (p2p, collectives, communicators,
# a thread with MPI on rank 0, instrumented functions), the same with MPI
# call sites (SCOPE_PROFILER_CALLSITES=2), and scale-ranks with 280,000
# events per rank (more than one 262,144-event chunk of the stream); then
# scale-ranks at 1 rank and at 8 ranks without the thread.
# First the comparator itself: a file equals itself and a copy that differs
# only in an ignored timing, and differs from copies with one value changed.
set -euo pipefail
build=${SP_BUILD_DIR:?}
src=${SP_SOURCE_DIR:?}
py=${SP_PYTHON:?}
source "$src/tests/lib/mpi.sh"
export SCOPE_PROFILER_THROTTLE_CALLS=0  # every call on the timeline
lib="${SP_SANITIZER_PRELOAD:+$SP_SANITIZER_PRELOAD:}$sp_mpi_lib"
cmp_h5="$src/tests/e2e/equiv/compare_h5.py"
export OMPI_MCA_btl=self,vader
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
np=4

# run NAME PROGRAM ARGS...: profiled run into NAME.h5 (+ NAME.copy.h5 when copying).
run() {
  local name=$1; shift
  SCOPE_PROFILER_OUTPUT="$work/$name.h5" SCOPE_PROFILER_TEST_FINALIZE_COPY="$work/$name.copy.h5" \
    timeout 300 mpirun --oversubscribe -n "${NP:-$np}" -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_OUTPUT \
    -x SCOPE_PROFILER_TEST_FINALIZE_COPY -x SCOPE_PROFILER_CALLSITES -x SCOPE_PROFILER_FINALIZE -x SCOPE_PROFILER_THROTTLE_CALLS \
    "$@" > "$name.out" 2> "$name.err" || { tail -20 "$name.err"; echo "FAIL: $name"; exit 1; }
  grep -q "scope-profiler: wrote $work/$name.h5 (${NP:-$np} rank" "$name.err" ||
    { tail -20 "$name.err"; echo "FAIL: $name: no merged file reported"; exit 1; }
}

# must_differ WHAT PYTHON: a copy of base.h5 changed by PYTHON (h5py, f open r+) differs.
must_differ() {
  cp base.h5 bad.h5
  $py -c "import h5py, numpy as np; f = h5py.File('bad.h5', 'r+'); $2"
  if $py "$cmp_h5" base.h5 bad.h5 > diff.txt; then
    cat diff.txt; echo "FAIL: comparator: $1 not detected"; exit 1
  fi
  echo "  comparator sees $1: $(sed -n 2p diff.txt | sed 's/^ *//')"
}

export SCOPE_PROFILER_CALLSITES=0 SCOPE_PROFILER_FINALIZE=auto
run base "$build/tests/e2e/scale/scale-ranks$sp_sfx" 1
$py "$cmp_h5" base.h5 base.h5 "$np"
cp base.h5 same.h5
$py -c "import h5py; f = h5py.File('same.h5', 'r+'); f['metadata'].attrs['mpi_merge_ns'] = 12345"
$py "$cmp_h5" base.h5 same.h5 "$np"
must_differ "one start time" "d = f['events/start_times']; d[7] = d[7] + 1"
must_differ "one rank number" "d = f['rank_region_index/ranks']; d[-1] = d[-1] ^ 1"
must_differ "one summary total" \
  "d = f['rank_region_index/summary_statistics']; v = d[3]; v['total'] += 1; d[3] = v"
must_differ "one metadata value" "f['metadata'].attrs['hostname'] = 'elsewhere'"
must_differ "a metadata type" "a = f['metadata'].attrs; a['mpi_size'] = np.int32(a['mpi_size'])"
must_differ "one region name" "d = f['region_table/names']; d[0] = 'renamed'"
must_differ "an extra dataset" "f['events'].create_dataset('extra', data=[1])"
must_differ "a chunked column" \
  "v = f['events/end_times'][()]; del f['events/end_times']; f['events'].create_dataset('end_times', data=v, chunks=(64,))"

if ! grep -q SCOPE_PROFILER_TEST_FINALIZE_COPY "$sp_mpi_lib"; then
  echo "n/a: $sp_mpi_lib has no SCOPE_PROFILER_TEST_FINALIZE_COPY (no parallel path): comparator checked only"
  exit 0
fi
# equal NAME: the run's two files are one file to a reader; each says its path.
equal() {
  [ -s "$1.copy.h5" ] || { tail "$1.err"; echo "FAIL: $1: no serial copy written"; exit 1; }
  $py "$cmp_h5" "$1.h5" "$1.copy.h5" "${2:-$np}"
  $py - "$1.h5" "$1.copy.h5" <<'PY'
import sys, h5py
p = [h5py.File(f)['metadata'].attrs.get('mpi_finalize_path') for f in sys.argv[1:]]
p = [x.decode() if isinstance(x, bytes) else x for x in p]
assert p == ['parallel', 'serial'], f'mpi_finalize_path of output and copy: {p}'
PY
}
run known "$build/tests/e2e/equiv/equiv-known$sp_sfx"
equal known
SCOPE_PROFILER_CALLSITES=2 run sites "$build/tests/e2e/equiv/equiv-known$sp_sfx"
$py -c "import h5py, sys; sys.exit('no /callsites' if 'callsites' not in h5py.File('sites.h5') else 0)"
equal sites
run big "$build/tests/e2e/scale/scale-ranks$sp_sfx" 100
equal big
# One rank goes through the same path; 8 ranks without the thread.
NP=1 run one "$build/tests/e2e/scale/scale-ranks$sp_sfx" 10
equal one 1
NP=8 run eight "$build/tests/e2e/scale/scale-ranks$sp_sfx" 3 0
equal eight 8
echo "equivalence ($sp_mpi_family): OK"
