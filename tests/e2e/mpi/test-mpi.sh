#!/bin/bash
# End to end under real mpirun with NP ranks (argument): the known-calls C
# program, the Jacobi example and the Fortran programs, each run with and
# without the profiler. Checks: identical application output, one merged
# file, exact counts / bytes / peers per rank (h5py and the CLI's --json).
# NP=2 uses `mpirun scope-profiler run --`, NP=4 the LD_PRELOAD form.
# Once per MPI family (SP_MPI_FAMILY, tests/lib/mpi.sh).
set -euo pipefail
np=${1:?NP}
build=${SP_BUILD_DIR:?}
src=${SP_SOURCE_DIR:?}
py=${SP_PYTHON:?}
source "$src/tests/lib/mpi.sh"
cli="$build/tools/scope-profiler"
lib="$sp_mpi_lib"
# Sanitizer builds: the sanitizer runtime must be preloaded first.
lib="${SP_SANITIZER_PRELOAD:+$SP_SANITIZER_PRELOAD:}$lib"
[ -x "$cli" ] || { echo "FAIL: CLI not built ($cli)"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# run NAME PROGRAM ARGS...: plain run, then profiled run into NAME.h5.
run() {
  local name=$1; shift
  timeout 120 mpirun --oversubscribe -n "$np" "$@" > "$name.plain" 2> "$name.plain.err" ||
    { cat "$name.plain.err"; echo "FAIL: $name without profiler"; exit 1; }
  if [ "$np" = 2 ]; then
    timeout 120 mpirun --oversubscribe -n "$np" "$cli" run -o "$work/$name.h5" -- "$@" \
      > "$name.prof" 2> "$name.prof.err" || { cat "$name.prof.err"; echo "FAIL: $name"; exit 1; }
  else
    SCOPE_PROFILER_OUTPUT="$work/$name.h5" timeout 120 mpirun --oversubscribe -n "$np" \
      -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_OUTPUT "$@" \
      > "$name.prof" 2> "$name.prof.err" || { cat "$name.prof.err"; echo "FAIL: $name"; exit 1; }
  fi
  cmp "$name.plain" "$name.prof" || { echo "FAIL: $name output changed under the profiler"; exit 1; }
  grep -q "scope-profiler: wrote $work/$name.h5 ($np ranks" "$name.prof.err" ||
    { cat "$name.prof.err"; echo "FAIL: $name: no merged file reported"; exit 1; }
  [ "$(ls "$work" | grep -c "^$name.h5")" = 1 ] || { ls "$work"; echo "FAIL: stray files"; exit 1; }
}

run known "$build/tests/e2e/mpi/mpi-known$sp_sfx"
$py "$src/tests/e2e/mpi/check_mpi.py" known.h5 "$np" known "$cli"
# Compressed (chunked + deflate) MPI columns in the row layout: same values.
export SCOPE_PROFILER_COMPRESSION=4
run zknown "$build/tests/e2e/mpi/mpi-known$sp_sfx"
unset SCOPE_PROFILER_COMPRESSION
$py "$src/tests/e2e/mpi/check_mpi.py" zknown.h5 "$np" known "$cli"
$py - zknown.h5 <<'PY'
import sys, h5py
ev = h5py.File(sys.argv[1])['events']
for k in ('start_times', 'mpi_bytes', 'mpi_peers', 'mpi_comms'):
    assert ev[k].compression == 'gzip' and ev[k].shuffle and ev[k].chunks, f'{k} not compressed'
PY
# The row layout: old-layout copies read the same, merge and recover round-trip.
mkdir layout
$py "$src/tests/e2e/mpi/check_layout.py" "$cli" "$work/layout" known.h5 zknown.h5

run jacobi "$build/examples/jacobi/jacobi$sp_sfx" 96 40 5
grep -q "^jacobi: N=96 ranks=$np" jacobi.prof
# Per rank: 40 halo exchanges of 4 Isend/Irecv each, 8 residuals, 1 checksum.
for r in $(seq 0 $((np - 1))); do
  "$cli" summary jacobi.h5 --json --ranks "$r" > "j$r.json"
  $py - "j$r.json" <<'PY'
import json, sys
from collections import Counter
c = Counter()
for row in json.load(open(sys.argv[1])):
    c[row['name']] += row['num_calls']
want = {'MPI_Isend': 160, 'MPI_Irecv': 160, 'MPI_Waitall': 40, 'MPI_Allreduce': 8,
        'MPI_Reduce': 1, 'MPI_Cart_create': 1, 'exchange_halo': 40, 'jacobi_sweep': 40}
bad = {k: (c.get(k), v) for k, v in want.items() if c.get(k) != v}
sys.exit(f'jacobi counts (got, want): {bad}' if bad else 0)
PY
done
# Hooks and wrappers share one timeline: every MPI_Isend lies inside an
# exchange_halo call of the same rank.
$py - jacobi.h5 "$np" <<'PY'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1]); n = int(sys.argv[2])
names = [s.decode() for s in f['region_table/names'][:]]
idx, ev = f['rank_region_index'], f['events']
st, en = ev['start_times'][:], ev['end_times'][:]
rows = {(names[g], int(r)): (int(o), int(c)) for g, r, o, c in zip(
    idx['region_ids'][:], idx['ranks'][:], idx['event_offsets'][:], idx['event_counts'][:])}
for r in range(n):
    o, c = rows[('exchange_halo', r)]
    hs, he = st[o:o + c], en[o:o + c]
    o, c = rows[('MPI_Isend', r)]
    for s, e in zip(st[o:o + c], en[o:o + c]):
        k = np.searchsorted(hs, s, side='right') - 1
        if k < 0 or not (hs[k] <= s and e <= he[k]):
            sys.exit(f'rank {r}: MPI_Isend [{s}, {e}] not inside an exchange_halo call')
PY
"$cli" comm jacobi.h5 > comm.txt
grep -q "point-to-point bytes sent" comm.txt

# Calls past the memory cap without a spill are dropped and counted; rank 0
# says so once for the job, on the parallel path and the rank-0 stream
# (compressed), with the total the file holds.
for z in 0 4; do
  SCOPE_PROFILER_OUTPUT="$work/drop$z.h5" SCOPE_PROFILER_SPILL=0 SCOPE_PROFILER_MAX_MEMORY=1K \
    SCOPE_PROFILER_COMPRESSION=$z SCOPE_PROFILER_QUIET=1 timeout 120 mpirun --oversubscribe -n "$np" \
    -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_OUTPUT -x SCOPE_PROFILER_SPILL \
    -x SCOPE_PROFILER_MAX_MEMORY -x SCOPE_PROFILER_COMPRESSION -x SCOPE_PROFILER_QUIET \
    "$build/examples/jacobi/jacobi$sp_sfx" 96 1200 5 > "drop$z.out" 2> "drop$z.err" ||
    { cat "drop$z.err"; echo "FAIL: drop$z"; exit 1; }
  n=$($py -c "import h5py,sys; print(int(h5py.File(sys.argv[1])['metadata'].attrs['dropped_events']))" "$work/drop$z.h5")
  [ "$n" -gt 0 ] || { echo "FAIL: drop$z: nothing dropped under a 1 KiB cap"; exit 1; }
  [ "$(grep -c "calls were dropped" "drop$z.err")" = 1 ] &&
    grep -q "scope-profiler: $n calls were dropped over the $np ranks (memory cap SCOPE_PROFILER_MAX_MEMORY or nesting depth); counts are in the file" "drop$z.err" ||
    { cat "drop$z.err"; echo "FAIL: drop$z: one line with the $n dropped calls"; exit 1; }
done

if [ -x "$build/examples/fortran/ring-usempi$sp_sfx" ]; then
  run usempi "$build/examples/fortran/ring-usempi$sp_sfx"
  $py "$src/tests/e2e/mpi/check_mpi.py" usempi.h5 "$np" usempi "$cli"
  run mpifh "$build/examples/fortran/ring-mpifh$sp_sfx"
  $py "$src/tests/e2e/mpi/check_mpi.py" mpifh.h5 "$np" mpifh "$cli"
else
  echo "FAIL: Fortran examples not built for $sp_mpi_family (gfortran + its Fortran bindings expected)"; exit 1
fi
# The output's directory is missing: every rank still returns from
# MPI_Finalize, exit 0, same output; rank 0 says once where the profile
# went instead ($TMPDIR, docs/CONFIG.md), and only that one file is there.
mkdir "$work/tmp"
TMPDIR="$work/tmp" SCOPE_PROFILER_OUTPUT="$work/missing/dir/x.h5" timeout 120 mpirun --oversubscribe -n "$np" \
  -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_OUTPUT -x TMPDIR "$build/tests/e2e/mpi/mpi-known$sp_sfx" \
  > fail.out 2> fail.err || { cat fail.err; echo "FAIL: a failed write broke the run"; exit 1; }
cmp known.plain fail.out
[ "$(grep -c "cannot write $work/missing/dir/x.h5: No such file or directory; the profile goes to" fail.err)" = 1 ] ||
  { cat fail.err; echo "FAIL: the fallback line"; exit 1; }
[ ! -e "$work/missing" ]
fb=$(ls "$work/tmp"); [ "$(echo "$fb" | wc -l)" = 1 ] || { echo "FAIL: fallback files: $fb"; exit 1; }
$py "$src/tests/e2e/mpi/check_mpi.py" "$work/tmp/$fb" "$np" known "$cli"

# The start-up cost in the metadata (docs/FORMAT.md, profiler_startup_ns):
# wall time from the launcher's start, but on a node with more ranks than
# online CPUs, where that is mostly the wait for a CPU, the CPU time (the
# launcher's, passed in SCOPE_PROFILER_LAUNCH_CPU_NS, and the library
# constructor's). A launcher that started 10 s ago and used 2 s of CPU:
now=$($py -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))')
SCOPE_PROFILER_OUTPUT="$work/startup.h5" SCOPE_PROFILER_LAUNCH_NS=$((now - 10000000000)) \
  SCOPE_PROFILER_LAUNCH_CPU_NS=2000000000 SCOPE_PROFILER_DEBUG=finalize,mpi timeout 120 \
  mpirun --oversubscribe -n "$np" -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_OUTPUT \
  -x SCOPE_PROFILER_LAUNCH_NS -x SCOPE_PROFILER_LAUNCH_CPU_NS -x SCOPE_PROFILER_DEBUG \
  "$build/tests/e2e/mpi/mpi-known$sp_sfx" > startup.out 2> startup.err ||
  { cat startup.err; echo "FAIL: the start-up run"; exit 1; }
cmp known.plain startup.out
cpus=$(getconf _NPROCESSORS_ONLN)
# The finalize's waits (mpi/mpi-wait.c): on a crowded node MPICH's, which
# spin, become nonblocking collectives tested between yields; Open MPI
# yields itself.
if [ "$np" -le "$cpus" ]; then waits="the MPI's own (a core per rank)"
elif [ "$sp_mpi_family" = mpich ]; then waits="nonblocking, tested between yields"
else waits="the MPI's own (a crowded node; the MPI yields)"; fi
[ "$(grep -c "finalize: waits: $waits" startup.err)" = 1 ] ||
  { grep "waits:" startup.err; echo "FAIL: $np ranks on $cpus CPUs ($sp_mpi_family): waits '$waits'"; exit 1; }
# MPI_Init's own communicators (mpi/mpi-wait.c): MPICH's, which spin, by
# MPI_Comm_idup between yields (one host: no MPI_Comm_split_type).
if [ "$sp_mpi_family" = mpich ]; then how="MPI_Comm_idup between yields, twice (one host)"
else how="MPI_Comm_dup, MPI_Comm_split_type"; fi
[ "$(grep -c "mpi: init: communicators by $how\$" startup.err)" = 1 ] ||
  { grep "init:" startup.err; echo "FAIL: $sp_mpi_family: communicators not by '$how'"; exit 1; }
if [ "$sp_mpi_family" = mpich ]; then
  # As if on two hosts (test knob): MPI_Comm_split_type makes the node's
  # communicator; the run and its file as usual.
  SCOPE_PROFILER_OUTPUT="$work/hosts.h5" SCOPE_PROFILER_TEST_HOSTS=2 SCOPE_PROFILER_DEBUG=mpi \
    timeout 120 mpirun --oversubscribe -n "$np" -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_OUTPUT \
    -x SCOPE_PROFILER_TEST_HOSTS -x SCOPE_PROFILER_DEBUG "$build/tests/e2e/mpi/mpi-known$sp_sfx" \
    > hosts.out 2> hosts.err || { cat hosts.err; echo "FAIL: the two-hosts run"; exit 1; }
  cmp known.plain hosts.out
  grep -q "mpi: init: communicators by MPI_Comm_idup between yields, MPI_Comm_split_type (several hosts)$" hosts.err &&
    [ -s "$work/hosts.h5" ] || { cat hosts.err; echo "FAIL: the two-hosts run's communicators"; exit 1; }
fi
# The ranks that could run at once (profiler_concurrency: one node here)
# and the footer's fixed part: start-up and memory on every rank, the
# finalize on each of those (docs/FORMAT.md, "Self-measurement").
"$cli" summary "$work/startup.h5" > startup.summary
$py - "$work/startup.h5" "$np" "$cpus" startup.summary <<'PY'
import re, sys, h5py
md = h5py.File(sys.argv[1])["metadata"].attrs
s = int(md["profiler_startup_ns"]) / 1e9
np_, cpus = int(sys.argv[2]), int(sys.argv[3])
lo, hi = (2.0, 2.5) if np_ > cpus else (10.0, 60.0)
assert lo <= s < hi, "%d ranks on %d CPUs: profiler_startup_ns %.3f s, expected [%g, %g)" % (
    np_, cpus, s, lo, hi)
print("start-up: %d ranks on %d CPUs: %.3f s (%s time)" % (np_, cpus, s,
                                                          "CPU" if np_ > cpus else "wall"))
conc = int(md["profiler_concurrency"])
assert conc == min(np_, cpus), "profiler_concurrency %d, expected %d" % (conc, min(np_, cpus))
footer = open(sys.argv[4]).read().strip().splitlines()[-1]
m = re.search(r"\+ ([\d.]+) s start-up, memory and finalize", footer)
assert m, footer
want = ((int(md["profiler_alloc_ns"]) + int(md["profiler_startup_ns"])) * np_
        + int(md["profiler_finalize_ns"]) * conc) / 1e9
assert abs(float(m.group(1)) - want) < 1.5e-3, "footer's fixed part %s s, expected %.4f s: %s" % (
    m.group(1), want, footer)
# The share: of the run time and the finalize on the ranks that ran at once.
m = re.search(r"= ([\d.]+) s \(([\d.]+) % of the run and its finalize\)$", footer)
assert m, footer
run_s = (int(md["finalize_time_ns"]) - int(md["start_time_ns"])) / 1e9
pct = 100 * float(m.group(1)) / ((run_s + int(md["profiler_finalize_ns"]) / 1e9) * conc)
assert abs(float(m.group(2)) - pct) < 2e-3 + 1e-5 * pct, "footer's share %s %%, expected %.4f %%: %s" % (
    m.group(2), pct, footer)
PY

echo "mpi e2e with $np ranks ($sp_mpi_family): OK"
