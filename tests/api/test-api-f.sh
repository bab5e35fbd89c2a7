#!/bin/bash
# Upstream's Fortran module over our library (tests/api/api-f.f90).
set -euo pipefail
build=${SP_BUILD_DIR:?}
src=${SP_SOURCE_DIR:?}
py=${SP_PYTHON:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
SCOPE_PROFILER_QUIET=1 SCOPE_PROFILER_OUTPUT="$work/proc.h5" "$build/tests/api/api-f" > out.txt 2> err.txt ||
  { cat out.txt err.txt; exit 1; }
grep -qxF "api-f: OK" out.txt || { cat out.txt err.txt; exit 1; }
PYTHONPATH="$src/tests/api${PYTHONPATH:+:$PYTHONPATH}" $py "$src/tests/api/check_api_f.py" "$work"
echo "api-f: OK"
