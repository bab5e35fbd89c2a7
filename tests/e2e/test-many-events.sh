#!/bin/bash
# End to end: finalize with rows of many blocks. Uncompressed files stream
# the times straight into the file (one thread; several threads with their
# own regions, plus a thread column); a row shared by threads and a
# compressed file take the in-memory path. Every file is checked against
# numpy (check_many_events.py), and the CLI must read each.
set -euo pipefail
build=${SP_BUILD_DIR:?}
src=${SP_SOURCE_DIR:?}
py=${SP_PYTHON:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
prog="$build/tests/e2e/many-events"
calls=30011   # 7+ blocks of 4096 per row, not a multiple of the block
export SCOPE_PROFILER_QUIET=1
for mode in "" threads shared; do
  for z in 0 4; do
    out="$work/m-${mode:-one}-$z.h5"
    SCOPE_PROFILER_COMPRESSION=$z SCOPE_PROFILER_OUTPUT="$out" "$prog" $calls $mode
    $py "$src/tests/e2e/check_many_events.py" "$out" $calls $mode
    "$build/tools/scope-profiler" summary --json "$out" > /dev/null
  done
done
# A kernel without MADV_POPULATE_WRITE (before 5.14): the first mapped
# chunk is faulted in as written, the later ones populated at their mmap;
# the same events.
out="$work/m-no-madvise.h5"
SCOPE_PROFILER_TEST_NO_MADV_POPULATE=1 SCOPE_PROFILER_OUTPUT="$out" "$prog" $calls threads
$py "$src/tests/e2e/check_many_events.py" "$out" $calls threads
echo "many-events e2e: OK"
