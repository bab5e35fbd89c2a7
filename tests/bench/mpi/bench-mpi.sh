#!/bin/bash
# MPI benchmark: (1) ns added per call by the wrappers (2 ranks pinned, then
# 1 rank; median of 9 runs of with minus without the preload) for
# MPI_Comm_rank, an 8-byte MPI_Allreduce and one Isend+Irecv+Waitall
# exchange (3 wrapped calls: added/call is a third of the exchange's), for
# every MPI family built (SP_MPI_FAMILIES), then side by side;
# (2) call sites (1 rank): ns added by SCOPE_PROFILER_CALLSITES=1/3/8 over
# call sites off, for calls made three application frames deep (best of 20
# batches in a process, best of 5 processes); SP_BENCH_BASE_LIB=path of
# another build's libscope-profiler.so adds its call-sites-off figures (the
# hot path with call sites off must not move); (3) MPI_Finalize time (the
# merge) against ranks 1..16 (oversubscribed) and recorded calls per rank;
# (4) bytes per event on disk of a run of mostly function events.
# Prints a table and one JSON line per metric.
set -euo pipefail
build=${SP_BUILD_DIR:-$(dirname "$0")/../../..}
export SP_BUILD_DIR=$build
src=${SP_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
read -r -a families <<< "${SP_MPI_FAMILIES:-openmpi}"
export OMPI_MCA_btl=self,vader
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
calls=${SP_BENCH_MPI_CALLS:-2000000}

# Section 1: both ranks pinned (--bind-to core: one rank per vCPU), runs
# with and without the preload interleaved so that drift of the host hits
# both alike; per run, each op's best-of-10-batches time (bench-mpi.c).
run_calls() { # run_calls NP PRELOAD(0/1) -> "op ns" lines
  if [ "$2" = 1 ]; then
    SCOPE_PROFILER_OUTPUT="$work/b.h5" SCOPE_PROFILER_QUIET=1 mpirun --bind-to core -n "$1" \
      -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_OUTPUT -x SCOPE_PROFILER_QUIET "$bin" calls "$calls"
  else
    mpirun --bind-to core -n "$1" "$bin" calls "$calls"
  fi
}
runs=${SP_BENCH_MPI_RUNS:-9}
: > "$work/added.json"
for fam in "${families[@]}"; do (
export SP_MPI_FAMILY=$fam
export SP_MPI_SUFFIX=; [ "$fam" = "${families[0]}" ] || SP_MPI_SUFFIX=-$fam
source "$src/tests/lib/mpi.sh"
bin="$build/tests/bench/mpi/bench-mpi$sp_sfx"
lib=$sp_mpi_lib
for np in 2 1; do
  : > "$work/pairs.txt"
  for i in $(seq "$runs"); do
    run_calls $np 0 > "$work/base.txt"
    run_calls $np 1 > "$work/prof.txt"
    join "$work/base.txt" "$work/prof.txt" >> "$work/pairs.txt"
  done
  echo "$fam: ns per call, $np rank(s) pinned, $runs runs (with and without interleaved), median [min-max]"
  printf "%-22s %10s %10s %22s %12s\n" operation without with "added (min-max)" "added/call"
  # Isend_Irecv_Waitall is one exchange of 3 wrapped calls.
  "${SP_PYTHON:?}" - "$work/pairs.txt" "$np" "$fam" <<'PY' | tee -a "$work/added.json"
import json, statistics, sys
by = {}
for line in open(sys.argv[1]):
    op, a, b = line.split()
    by.setdefault(op, []).append((float(a), float(b)))
for op, v in by.items():
    calls = 3 if op == "Isend_Irecv_Waitall" else 1
    d = [b - a for a, b in v]
    med = statistics.median(d)
    print("%-22s %10.1f %10.1f %10.1f (%5.1f-%5.1f) %12.1f" % (
        op, statistics.median(a for a, _ in v), statistics.median(b for _, b in v),
        med, min(d), max(d), med / calls))
    print(json.dumps({"metric": "mpi_added_ns", "family": sys.argv[3], "ranks": int(sys.argv[2]), "pinned": True,
                      "op": op, "runs": len(v), "wrapped_calls": calls,
                      "without_ns": statistics.median(a for a, _ in v),
                      "with_ns": statistics.median(b for _, b in v),
                      "added_ns": round(med, 2), "added_min": round(min(d), 2),
                      "added_max": round(max(d), 2),
                      "added_per_call_ns": round(med / calls, 2)}))
PY
  echo
done
) || exit 1; done
echo "wrapper cost by MPI family: added ns per wrapped call (median of $runs runs)"
"${SP_PYTHON:?}" - "$work/added.json" "${families[@]}" <<'PY'
import json, sys
fams = sys.argv[2:]
rows = {}
for line in open(sys.argv[1]):
    if line.startswith('{'):
        j = json.loads(line)
        rows.setdefault((j['ranks'], j['op']), {})[j['family']] = j['added_per_call_ns']
print('%-6s %-22s' % ('ranks', 'operation') + ''.join(' %10s' % f for f in fams))
for (np, op), v in sorted(rows.items(), key=lambda kv: (-kv[0][0], kv[0][1])):
    print('%-6d %-22s' % (np, op) + ''.join(' %10s' % (f'{v[f]:.1f}' if f in v else '-') for f in fams))
PY
echo
# The rest: the default family.
export SP_MPI_FAMILY=${families[0]}
source "$src/tests/lib/mpi.sh"
bin="$build/tests/bench/mpi/bench-mpi"
lib=$sp_mpi_lib
sites() { # best-of-5 ns per op: sites LIB|- DEPTH
  for i in 1 2 3 4 5; do
    if [ "$1" = - ]; then
      mpirun -n 1 "$bin" sites "$calls"
    else
      SCOPE_PROFILER_CALLSITES=$2 SCOPE_PROFILER_OUTPUT="$work/s.h5" SCOPE_PROFILER_QUIET=1 \
        mpirun -n 1 -x LD_PRELOAD="$1" -x SCOPE_PROFILER_CALLSITES -x SCOPE_PROFILER_OUTPUT \
        -x SCOPE_PROFILER_QUIET "$bin" sites "$calls"
    fi
  done | awk '{ if (!($1 in m) || $2 < m[$1]) m[$1] = $2 } END { for (k in m) print k, m[k] }' | sort
}
sites - 0 > "$work/s-none.txt"
for d in 0 1 3 8; do sites "$lib" $d > "$work/s-$d.txt"; done
cols="no-preload off depth1 depth3 depth8"
files="$work/s-none.txt $work/s-0.txt $work/s-1.txt $work/s-3.txt $work/s-8.txt"
if [ -n "${SP_BENCH_BASE_LIB:-}" ]; then
  sites "$SP_BENCH_BASE_LIB" 0 > "$work/s-base.txt"
  cols="$cols base-off"
  files="$files $work/s-base.txt"
fi
echo "MPI call sites, 1 rank: ns per call made 3 application frames deep (best of 5 runs)"
printf "%-18s" operation; for c in $cols; do printf " %11s" "$c"; done; printf " %12s\n" "added@3"
# shellcheck disable=SC2086
paste $files | awk -v cols="$cols" '{
  n = split(cols, c, " "); printf "%-18s", $1
  for (i = 1; i <= n; i++) { v[c[i]] = $(2 * i); printf " %11.1f", v[c[i]] }
  printf " %12.1f\n", v["depth3"] - v["off"]
  printf "{\"metric\": \"mpi_callsite_ns\", \"op\": \"%s\"", $1
  for (i = 1; i <= n; i++) printf ", \"%s_ns\": %s", c[i], v[c[i]]
  printf ", \"added_depth3_ns\": %.1f}\n", v["depth3"] - v["off"]
}'
cat <<'EOF'
Reference (reference/hpc-tracers.md section 2b, same machine class, a throwaway PMPI
wrapper on Open MPI 4.1.4): unw_backtrace of 3 frames took the wrapper from 146 to
275 ns (+129 ns), glibc backtrace of 3 frames to 1430 ns (+1284 ns). mpiP is not
installed here and the reference holds no per-call mpiP figures (default -k 1 or
-k 0): there is no mpiP row. Budget: <= +150 ns per call at depth 3.

EOF
# (4) Bytes per event on disk of a 2-rank run whose events are mostly
# function calls (bench-mpi-bytes: 300 per MPI call): function events cost
# 16 B, MPI events 40 B (MPI columns in the row layout, docs/FORMAT.md).
echo "bytes per event on disk, 2 ranks, 300 function calls per MPI_Allreduce, 1.8 M events"
for z in 0 4; do
  SCOPE_PROFILER_OUTPUT="$work/bytes.h5" SCOPE_PROFILER_COMPRESSION=$z mpirun -n 2 \
    -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_OUTPUT -x SCOPE_PROFILER_COMPRESSION \
    "$build/tests/bench/mpi/bench-mpi-bytes" 300000 > /dev/null 2> "$work/bytes.err"
  ev=$(sed -n 's/.*regions, \([0-9]*\) events).*/\1/p' "$work/bytes.err")
  size=$(stat -c %s "$work/bytes.h5")
  bpe=$(awk -v s="$size" -v e="$ev" 'BEGIN { printf "%.2f", s / e }')
  printf "compression %d: %d events, %d bytes, %s B/event\n" "$z" "$ev" "$size" "$bpe"
  goal=""
  [ "$z" = 0 ] && goal=', "goal": "<= 16.5"'
  echo "{\"metric\": \"mpi_bytes_per_event\", \"ranks\": 2, \"compression\": $z, \"events\": $ev, \"file_bytes\": $size, \"bytes_per_event\": $bpe, \"unit\": \"B/event\"$goal}"
done
echo

[ "${SP_BENCH_MPI_FINALIZE:-1}" = 0 ] && exit 0

echo "MPI_Finalize wall time on rank 0 [s] (merge included), by ranks and recorded calls per rank"
printf "%6s %10s %12s %12s\n" ranks calls without with
for np in 1 2 4 8 16; do
  for k in 1000 100000 1000000; do
    [ "$np" -ge 8 ] && [ "$k" -ge 1000000 ] && continue
    a=$(mpirun --oversubscribe -n $np "$bin" finalize $k | awk '/finalize_s/ { print $2 }')
    b=$(SCOPE_PROFILER_OUTPUT="$work/f.h5" SCOPE_PROFILER_QUIET=1 mpirun --oversubscribe -n $np \
      -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_OUTPUT -x SCOPE_PROFILER_QUIET "$bin" finalize $k |
      awk '/finalize_s/ { print $2 }')
    size=$(stat -c %s "$work/f.h5")
    printf "%6d %10d %12.4f %12.4f   file %d bytes\n" $np $k "$a" "$b" "$size"
    echo "{\"metric\": \"mpi_finalize_s\", \"ranks\": $np, \"calls_per_rank\": $k, \"without_s\": $a, \"with_s\": $b, \"file_bytes\": $size}"
  done
done
