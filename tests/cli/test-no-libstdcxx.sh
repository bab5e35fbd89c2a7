#!/bin/bash
# SPDX-License-Identifier: MIT
# The CLI starts once per rank (`scope-profiler run` under mpirun): it links
# double-conversion statically, so that no command loads libstdc++.so and
# runs its initializers (~1 ms of CPU each, docs/HOOKS.md "Since (stop 37)").
# Fails if the executable needs libstdc++ or libdouble-conversion at run time.
#   test-no-libstdcxx.sh CLI
set -euo pipefail
cli=$1
command -v readelf >/dev/null || { echo "SKIP: readelf not installed"; exit 77; }
needed=$(readelf -d "$cli" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ -n "$needed" ] || { echo "FAIL: no DT_NEEDED read from $cli"; exit 1; }
if grep -E '^lib(stdc\+\+|double-conversion)\.so' <<< "$needed"; then
  echo "FAIL: $cli needs the library above at run time"
  exit 1
fi
echo "OK: $cli needs $(tr '\n' ' ' <<< "$needed")"
