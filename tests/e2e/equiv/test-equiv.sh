#!/bin/bash
# SPDX-License-Identifier: MIT
# Equivalence of the two finalize paths (issue 18, item 3). One run writes
# the parallel path's file and, with SCOPE_PROFILER_TEST_FINALIZE_COPY, the
# rank-0 stream's file of the same snapshot; compare_h5.py compares them
# dataset by dataset, attribute by attribute, and as upstream's read_h5()
# reads them. Runs (4 ranks): mpi-known (p2p, collectives, communicators,
# a thread with MPI on rank 0, instrumented functions), the same with MPI
# call sites (SCOPE_PROFILER_CALLSITES=2), and scale-ranks with 280,000
# events per rank (more than one 262,144-event chunk of the stream; a 27 MB
# file, gathered to rank 0 in 8 MiB rounds on a crowded host, and again
# through MPI-IO with FINALIZE=parallel); then
# scale-ranks at 1 rank and at 8 ranks without the thread. The small files
# (all but the 280,000 events) have their slices gathered to rank 0; the
# mpi-known run again with FINALIZE=parallel writes them through MPI-IO.
# Then the bounded finalize (docs/MPI.md, "A big rank streams"): with
# SCOPE_PROFILER_TEST_FINALIZE_PLAN=1 every rank keeps only its MPI rows in
# memory and streams the rest into its slices; the copy is the rank-0 stream
# of the whole snapshot taken again (same clock: CLOCK=monotonic), so the
# two must hold the same rows (compare_h5.py --rows: each rank's MPI rows
# come first in the streamed file). Also with only the odd ranks streaming,
# and with the parallel write refused (the fallback takes the whole
# snapshot again).
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
    -x SCOPE_PROFILER_TEST_FINALIZE_PLAN -x SCOPE_PROFILER_CLOCK -x SCOPE_PROFILER_TEST_MPIIO_FAIL \
    -x SCOPE_PROFILER_TEST_NO_TMPFILE -x SCOPE_PROFILER_DEBUG \
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

export SCOPE_PROFILER_CALLSITES=0 SCOPE_PROFILER_FINALIZE=auto SCOPE_PROFILER_TEST_FINALIZE_PLAN=0 \
  SCOPE_PROFILER_CLOCK=auto SCOPE_PROFILER_TEST_MPIIO_FAIL= SCOPE_PROFILER_TEST_NO_TMPFILE=0 SCOPE_PROFILER_DEBUG=
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
# equal NAME [NP [--rows]]: the run's two files are one file to a reader;
# each says its path.
equal() {
  [ -s "$1.copy.h5" ] || { tail "$1.err"; echo "FAIL: $1: no serial copy written"; exit 1; }
  $py "$cmp_h5" ${3:-} "$1.h5" "$1.copy.h5" "${2:-$np}"
  $py - "$1.h5" "$1.copy.h5" <<'PY'
import sys, h5py
p = [h5py.File(f)['metadata'].attrs.get('mpi_finalize_path') for f in sys.argv[1:]]
p = [x.decode() if isinstance(x, bytes) else x for x in p]
assert p == ['parallel', 'serial'], f'mpi_finalize_path of output and copy: {p}'
PY
}
run known "$build/tests/e2e/equiv/equiv-known$sp_sfx"
equal known
# a small file's slices go through rank 0 (auto); the same through MPI-IO
SCOPE_PROFILER_FINALIZE=parallel run known-mpiio "$build/tests/e2e/equiv/equiv-known$sp_sfx"
equal known-mpiio
SCOPE_PROFILER_CALLSITES=2 run sites "$build/tests/e2e/equiv/equiv-known$sp_sfx"
$py -c "import h5py, sys; sys.exit('no /callsites' if 'callsites' not in h5py.File('sites.h5') else 0)"
equal sites
SCOPE_PROFILER_DEBUG=finalize run big "$build/tests/e2e/scale/scale-ranks$sp_sfx" 100
equal big
# past 16 MiB on one crowded host (4 ranks, 2 CPUs here) the slices still go
# through rank 0, in rounds of at most 8 MiB; where the node is not crowded
# (CPUs >= 4) MPI-IO writes them, as FINALIZE=parallel does everywhere
if [ "$(nproc)" -lt "$np" ]; then
  grep -q "write=gather" big.err || { grep finalize big.err; echo "FAIL: big: not gathered"; exit 1; }
fi
SCOPE_PROFILER_FINALIZE=parallel SCOPE_PROFILER_DEBUG=finalize run big-mpiio "$build/tests/e2e/scale/scale-ranks$sp_sfx" 100
grep -q "write=mpiio" big-mpiio.err || { grep finalize big-mpiio.err; echo "FAIL: big-mpiio: not MPI-IO"; exit 1; }
equal big-mpiio
# One rank goes through the same path; 8 ranks without the thread.
NP=1 run one "$build/tests/e2e/scale/scale-ranks$sp_sfx" 10
equal one 1
NP=8 run eight "$build/tests/e2e/scale/scale-ranks$sp_sfx" 3 0
equal eight 8

export SCOPE_PROFILER_TEST_FINALIZE_PLAN=1 SCOPE_PROFILER_CLOCK=monotonic
run plan-known "$build/tests/e2e/equiv/equiv-known$sp_sfx"
equal plan-known "$np" --rows
# the streamed file really has another row order (else --rows proves nothing)
if $py "$cmp_h5" plan-known.h5 plan-known.copy.h5 "$np" > /dev/null; then
  echo "FAIL: plan-known: the streamed file is the copy byte for byte: nothing streamed?"; exit 1
fi
# --rows still sees one value changed
for change in "d = f['events/start_times']; d[-1] = d[-1] - 1" \
  "d = f['rank_region_index/exclusive_totals']; d[0] = d[0] + 1" \
  "d = f['events/mpi_bytes']; d[0] = d[0] + 1" "d = f['events/thread_ids']; d[-1] = d[-1] ^ 1"; do
  cp plan-known.h5 bad.h5
  $py -c "import h5py; f = h5py.File('bad.h5', 'r+'); $change"
  if $py "$cmp_h5" --rows bad.h5 plan-known.copy.h5 "$np" > diff.txt; then
    echo "FAIL: comparator --rows: '$change' not detected"; exit 1
  fi
done
SCOPE_PROFILER_CALLSITES=2 run plan-sites "$build/tests/e2e/equiv/equiv-known$sp_sfx"
equal plan-sites "$np" --rows
run plan-big "$build/tests/e2e/scale/scale-ranks$sp_sfx" 100
equal plan-big "$np" --rows
NP=8 run plan-eight "$build/tests/e2e/scale/scale-ranks$sp_sfx" 3 0
equal plan-eight 8 --rows
cat > odd.sh <<'SH'
#!/bin/sh
r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
SCOPE_PROFILER_TEST_FINALIZE_PLAN=$((r % 2)) exec "$@"
SH
chmod +x odd.sh
run plan-odd ./odd.sh "$build/tests/e2e/scale/scale-ranks$sp_sfx" 100
equal plan-odd "$np" --rows
SCOPE_PROFILER_FINALIZE=parallel SCOPE_PROFILER_TEST_MPIIO_FAIL=1 run plan-fallback "$build/tests/e2e/scale/scale-ranks$sp_sfx" 100
grep -q "rank 0 writes every rank's data instead" plan-fallback.err ||
  { cat plan-fallback.err; echo "FAIL: plan-fallback: no fallback"; exit 1; }
$py - plan-fallback.h5 plan-big.h5 <<'PY'
import sys, h5py
a, b = (h5py.File(p) for p in sys.argv[1:])
p = a['metadata'].attrs.get('mpi_finalize_path')
assert (p.decode() if isinstance(p, bytes) else p) == 'serial', p
assert a['events/start_times'].shape == b['events/start_times'].shape
PY
echo "equivalence ($sp_mpi_family): OK"
