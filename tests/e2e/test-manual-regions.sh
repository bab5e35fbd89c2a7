#!/bin/bash
# End to end: the manual-regions example writes a file at exit; h5py checks
# the schema-2 layout, dtypes, counts and durations independently, and the
# CLI's `summary --json` must agree with h5py-computed statistics to the ns.
set -euo pipefail
build=${SP_BUILD_DIR:?}
src=${SP_SOURCE_DIR:?}
py=${SP_PYTHON:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

steps=7
SCOPE_PROFILER_OUTPUT="$work/manual.h5" "$build/examples/manual-regions" $steps > out.txt 2> err.txt
grep -q "result" out.txt
grep -q "scope-profiler: wrote $work/manual.h5" err.txt
test -f manual.h5
# No stray temporary files after an atomic publish.
test -z "$(ls -A | grep '\.tmp$' || true)"

$py "$src/tests/e2e/check_manual_file.py" manual.h5 $steps

# Compressed event columns: same content, gzip + shuffle filters, readable.
SCOPE_PROFILER_COMPRESSION=4 SCOPE_PROFILER_QUIET=1 SCOPE_PROFILER_OUTPUT="$work/z.h5" \
  "$build/examples/manual-regions" $steps > /dev/null
$py "$src/tests/e2e/check_manual_file.py" z.h5 $steps
$py - z.h5 <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
for col in ("start_times", "end_times"):
    d = f["events/" + col]
    assert d.compression == "gzip" and d.compression_opts == 4 and d.shuffle, col
print("compressed columns: gzip 4 + shuffle")
PY

cli="$build/tools/scope-profiler"
if [ -x "$cli" ]; then
  "$cli" summary manual.h5 --json > summary.json
  $py "$src/tests/e2e/compare_summary.py" manual.h5 summary.json
  "$cli" summary manual.h5 > summary.txt
  grep -q timestep summary.txt
else
  echo "note: CLI not built yet; summary comparison not run" >&2
  exit 1
fi
echo "manual-regions e2e: OK"
