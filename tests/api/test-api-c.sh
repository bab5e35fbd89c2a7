#!/bin/bash
# Upstream's C API (tests/api/api-c.c, built -std=c99 -pedantic -Werror):
# its own checks, its stdout against upstream's expected lines, its stderr
# diagnostics, and its files (check_api_c.py).
set -euo pipefail
build=${SP_BUILD_DIR:?}
src=${SP_SOURCE_DIR:?}
py=${SP_PYTHON:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
before=$($py -c 'import time; print(time.perf_counter_ns())')
SCOPE_PROFILER_QUIET=1 SCOPE_PROFILER_OUTPUT="$work/proc.h5" \
  "$build/tests/api/api-c" > out.txt 2> err.txt || { cat out.txt err.txt; exit 1; }
expect() { grep -qxF -- "$1" "$2" || { echo "missing in $2: $1"; cat out.txt err.txt; exit 1; }; }
after=$($py -c 'import time; print(time.perf_counter_ns())')
echo "$before $after" > clock.txt
expect "id=-1 active=0 calls=0" out.txt
expect "0 main_rank00000.h5" out.txt
expect "1 main_rank00000.spt" out.txt
expect "tokens 5 0 0 5" out.txt
expect "scope_profiler: sp_end('work') without a matching sp_begin" err.txt
expect "scope_profiler: region 'partial' still open at sp_finalize (depth 1); its last call(s) are dropped" err.txt
expect "scope_profiler: region 'deep' nested deeper than 64; this call is not timed" err.txt
PYTHONPATH="$src/tests/api${PYTHONPATH:+:$PYTHONPATH}" $py "$src/tests/api/check_api_c.py" "$work"
echo "api-c: OK"
