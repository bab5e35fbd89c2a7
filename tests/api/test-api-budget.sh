#!/bin/bash
# 200000 calls of one region with SCOPE_PROFILER_MAX_MEMORY=1M: the
# context's stats count all of them, one stderr line says calls are no
# longer kept, and the .spt file keeps a prefix whose timestamp memory
# (16 bytes a call) is within the cap.
set -euo pipefail
build=${SP_BUILD_DIR:?}
py=${SP_PYTHON:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
SCOPE_PROFILER_QUIET=1 SCOPE_PROFILER_MAX_MEMORY=1M SCOPE_PROFILER_OUTPUT="$work/proc.h5" \
  "$build/tests/api/api-budget" 200000 > out.txt 2> err.txt || { cat out.txt err.txt; exit 1; }
grep -qxF "calls=200000 stats=200000" out.txt || { cat out.txt err.txt; echo "FAIL: counts"; exit 1; }
[ "$(grep -c "fill SCOPE_PROFILER_MAX_MEMORY" err.txt)" = 1 ] ||
  { cat err.txt; echo "FAIL: want one line about the cap"; exit 1; }
$py - budget_rank00000.spt <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"SCOPEPRF", b[:8]
o = 16
nreg, = struct.unpack_from("<q", b, o); o += 8
assert nreg == 1, nreg
ln, = struct.unpack_from("<i", b, o); o += 4 + ln
sl, = struct.unpack_from("<i", b, o); o += 4 + sl + 4
n, = struct.unpack_from("<q", b, o); o += 8
starts = struct.unpack_from(f"<{n}q", b, o); ends = struct.unpack_from(f"<{n}q", b, o + 8 * n)
assert 1024 <= n < 200000, n
assert n * 16 <= (1 << 20) + 1024 * 16, n          # within the cap (+ the first slots)
assert all(e >= s for s, e in zip(starts, ends)) and list(starts) == sorted(starts)
print(f"ok: {n} of 200000 calls kept")
PY
