#!/bin/bash
# SPDX-License-Identifier: MIT
# MPI_Finalize with the profiler, every finalize path in one run
# (SCOPE_PROFILER_FINALIZE=serial: the rank-0 stream; auto: every rank's
# slices, gathered to rank 0 for a file of at most 16 MiB, else through
# MPI-IO; parallel: through MPI-IO at any size), interleaved per
# configuration:
#   - against ranks 1, 2, 8, 32, 64 at 100 k events per rank,
#   - against events per rank 10 k, 100 k, 1 M at 8 ranks.
# Per configuration: finalize wall time on rank 0 (median of RUNS, min-max),
# the path that wrote the file, bytes rank 0 received from the others, the
# per-phase ms (rank 0's SCOPE_PROFILER_DEBUG=finalize line; n/a when the
# library prints none), peak RSS (VmHWM) of rank 0 and of rank 1, and the
# file's size. Prints a markdown table and one JSON line per configuration.
# All ranks share this VM's 2 cores: times are not a scaling result; the
# traffic and memory columns are.
#   SP_PYTHON=python3-with-h5py tests/bench/mpi/bench-finalize.sh [BUILD_DIR]
# SP_BENCH_FINALIZE_RUNS (default 3), SP_BENCH_FINALIZE_RANKS ("1 2 8 32 64"),
# SP_BENCH_FINALIZE_EVENTS ("10000 100000 1000000"),
# SP_BENCH_FINALIZE_PATHS ("serial auto parallel").
set -euo pipefail
src=${SP_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
build=${SP_BUILD_DIR:-${1:-$src/build}}
export SP_BUILD_DIR=$build
py=${SP_PYTHON:?SP_PYTHON: a Python with h5py (meson sets it)}
export SP_MPI_FAMILY=openmpi
source "$src/tests/lib/mpi.sh"
export OMPI_MCA_btl=self,vader
export SCOPE_PROFILER_THROTTLE_CALLS=0  # every call an event
bin="$build/tests/bench/mpi/bench-finalize"
[ -x "$bin" ] || { echo "FAIL: $bin not built"; exit 1; }
runs=${SP_BENCH_FINALIZE_RUNS:-3}
read -r -a rank_list <<< "${SP_BENCH_FINALIZE_RANKS:-1 2 8 32 64}"
read -r -a event_list <<< "${SP_BENCH_FINALIZE_EVENTS:-10000 100000 1000000}"
read -r -a path_list <<< "${SP_BENCH_FINALIZE_PATHS:-serial auto parallel}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: > "$work/rows.json"

# one NP EVENTS PATH: RUNS runs; appends one JSON line to rows.json.
one() {
  local np=$1 ev=$2 path=$3 i
  : > "$work/times"
  for i in $(seq "$runs"); do
    rm -f "$work/f.h5"
    SCOPE_PROFILER_OUTPUT="$work/f.h5" SCOPE_PROFILER_FINALIZE=$path \
      SCOPE_PROFILER_DEBUG=finalize timeout 600 mpirun --oversubscribe -n "$np" \
      -x LD_PRELOAD="$sp_mpi_lib" -x SCOPE_PROFILER_OUTPUT -x SCOPE_PROFILER_FINALIZE \
      -x SCOPE_PROFILER_DEBUG -x SCOPE_PROFILER_THROTTLE_CALLS "$bin" "$ev" > "$work/out" 2> "$work/err" ||
      { tail "$work/err"; echo "FAIL: $np ranks, $ev events, $path"; exit 1; }
    awk '/^finalize_s/ { print $2 }' "$work/out" >> "$work/times"
  done
  "$py" - "$work" "$np" "$ev" "$path" <<'PY' >> "$work/rows.json"
import json, os, re, statistics, sys
import h5py
work, np_, ev, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
t = [float(x) for x in open(f'{work}/times').read().split()]
hwm = {int(a): int(b) for k, a, b in (l.split() for l in open(f'{work}/out') if l.startswith('hwm'))}
m = re.search(r'scope-profiler: debug: finalize: (.*)', open(f'{work}/err').read())
dbg = dict(kv.split('=', 1) for kv in m.group(1).split()) if m else {}
meta = h5py.File(f'{work}/f.h5')['metadata'].attrs
def key(k):
    v = meta.get(k)
    return v.decode() if isinstance(v, bytes) else (None if v is None else v.item() if hasattr(v, 'item') else v)
recv = dbg.get('rank0_recv_bytes', key('mpi_finalize_rank0_recv_bytes'))
row = {'metric': 'mpi_finalize', 'ranks': np_, 'events_per_rank': ev, 'requested': path,
       'path': dbg.get('path') or key('mpi_finalize_path') or 'n/a',
       'write': dbg.get('write'),  # gather | mpiio (parallel path), None before
       'finalize_s': statistics.median(t), 'finalize_min_s': min(t), 'finalize_max_s': max(t),
       'runs': len(t), 'rank0_recv_bytes': None if recv is None else int(recv),
       'phases_ms': {k[:-3]: float(v) for k, v in dbg.items() if k.endswith('_ms')},
       'hwm_rank0_kb': hwm.get(0), 'hwm_rank1_kb': hwm.get(1),
       'hwm_max_other_kb': max((v for k, v in hwm.items() if k), default=None),
       'file_bytes': os.path.getsize(f'{work}/f.h5'), 'mpi_merge_ns': key('mpi_merge_ns')}
print(json.dumps(row))
PY
  tail -1 "$work/rows.json"
}

configs=()
for np in "${rank_list[@]}"; do configs+=("$np 100000"); done
for ev in "${event_list[@]}"; do [ "$ev" = 100000 ] || configs+=("8 $ev"); done
for c in "${configs[@]}"; do
  for p in "${path_list[@]}"; do
    # shellcheck disable=SC2086
    one $c "$p"
  done
done
echo
echo "MPI_Finalize with the profiler, $(date -u +%Y-%m-%d), $(nproc) vCPUs, Open MPI, oversubscribed;"
echo "16 instrumented functions + 10 MPI_Allreduce per rank; median of $runs runs"
"$py" - "$work/rows.json" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
mib = lambda kb: '-' if kb is None else f'{kb / 1024:.1f}'
na = lambda v, f='{}': 'n/a' if v is None else f.format(v)
print('| path | ranks | events/rank | finalize s (min-max) | rank 0 recv B | recv B/(rank-1) '
      '| VmHWM r0 / r1 MiB | file B | phases ms |')
print('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |')
for r in rows:
    per = (None if r['rank0_recv_bytes'] is None or r['ranks'] < 2
           else round(r['rank0_recv_bytes'] / (r['ranks'] - 1)))
    ph = ' '.join(f'{k} {v:g}' for k, v in r['phases_ms'].items()) or 'n/a'
    how = r['path'] + (' ' + r['write'] if r.get('write') else '')
    print(f"| {how} ({r['requested']}) | {r['ranks']} | {r['events_per_rank']} "
          f"| {r['finalize_s']:.3f} ({r['finalize_min_s']:.3f}-{r['finalize_max_s']:.3f}) "
          f"| {na(r['rank0_recv_bytes'])} | {na(per)} "
          f"| {mib(r['hwm_rank0_kb'])} / {mib(r['hwm_rank1_kb'])} | {r['file_bytes']} | {ph} |")
PY
