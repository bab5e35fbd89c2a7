#!/bin/bash
# Spilling cost: the same 8 Mi begin+end pairs (192 MiB of events) with
# MAX_MEMORY=1G (all in memory), 16M (spills ~12 times, 16 MiB per write),
# 1M (spills every 4096 events) and 16M with SPILL=0 (drops past the cap).
# Minimum of 5 runs each; the file write at exit is not timed.
set -euo pipefail
prog=${1:?bench-spill binary}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
N=${SP_BENCH_PAIRS:-8388608}
run() {
  local name=$1; shift
  local best=
  for _ in 1 2 3 4 5; do
    v=$(env SCOPE_PROFILER_QUIET=1 SCOPE_PROFILER_OUTPUT="$work/$name.h5" "$@" "$prog" "$name" "$N" 2>/dev/null |
        sed -n 's/.*"value": \([0-9.]*\).*/\1/p')
    best=$(echo "$v $best" | tr ' ' '\n' | grep . | sort -g | head -1)
  done
  printf '%-28s %8.2f ns per pair (min of 5)\n' "$name" "$best"
  printf '{"metric": "%s", "unit": "ns", "min": %s, "pairs": %s}\n' "$name" "$best" "$N"
}
run in_memory_1G env SCOPE_PROFILER_MAX_MEMORY=1G
run spill_16M env SCOPE_PROFILER_MAX_MEMORY=16M
run spill_1M env SCOPE_PROFILER_MAX_MEMORY=1M
run drop_16M_spill_off env SCOPE_PROFILER_MAX_MEMORY=16M SCOPE_PROFILER_SPILL=0
