#!/bin/bash
# SPDX-License-Identifier: MIT
# Run every benchmark (meson suite 'bench') and print the table
# of goals: metric, measured, goal, met yes/no, floor. Each benchmark prints
# its own table and one JSON line per metric (median of >= 5 runs, min-max,
# ratio to its reference measured in the same run); the full log is kept.
#   tests/bench/run-all.sh [BUILD_DIR] [BENCHMARK...]     (default: build, all)
# Example: tests/bench/run-all.sh build hooks write      (a subset)
# The C++ proxy app (examples/proxy) alone, < 3 minutes: tests/bench/run-all.sh build proxy
# Takes about 30-60 minutes for all of them on a 2-vCPU VM.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
shift || true
log=${SP_BENCH_LOG:-$build/meson-logs/bench-all.txt}
ninja -C "$build" >/dev/null || exit 1
meson test -C "$build" --benchmark --suite bench --verbose --no-rebuild "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
echo
echo "== goals (log: $log) =="
"$here/summarize-goals.py" "$log"
exit "$status"
