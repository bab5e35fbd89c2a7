#!/bin/bash
# SPDX-License-Identifier: MIT
# The preloads load HDF5 and libdw on first use (recorder/lazy.h), not with
# the program: no DT_NEEDED on them or their dependencies, and no undefined
# H5*/dw*/elf* symbol left (a name missing from lazy-hdf5.h or lazy-dw.h
# would bring the library back at start-up); a preloaded process does not
# map them before it writes (every writing test loads them).
set -euo pipefail
build=${1:?build dir}
fail=0
for lib in "$build"/preload/libscope-profiler-serial.so "$build"/preload/libscope-profiler-*.so; do
  [ -e "$lib" ] || continue
  needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  if echo " $needed" | grep -qE " lib(hdf5|dw|elf|curl)"; then
    echo "FAIL: $lib needs: $needed"; fail=1
  fi
  undef=$(nm -D --undefined-only "$lib" | awk '{print $2}' | grep -E '^(H5|dw|elf_|gelf_)' || true)
  if [ -n "$undef" ]; then
    echo "FAIL: $lib still references: $(echo $undef)"; fail=1
  fi
done
[ $fail = 0 ] || exit 1
# A preloaded shell, before its exit (where it writes its file); not in a
# sanitizer build (its runtime must come first in a program's libraries).
if readelf -d "$build/preload/libscope-profiler-serial.so" | grep -qE 'lib(asan|tsan|ubsan)'; then
  echo "lazy libs: OK (no HDF5/libdw needed; sanitizer build: the maps check is skipped)"
  exit 0
fi
maps=$(mktemp); trap 'rm -f "$maps" "$maps"*.h5' EXIT
SCOPE_PROFILER_OUTPUT="$maps.h5" LD_PRELOAD="$build/preload/libscope-profiler-serial.so" \
  sh -c 'cat /proc/$$/maps' > "$maps"
if grep -qE 'libhdf5|libdw' "$maps"; then
  echo "FAIL: a preloaded process maps HDF5 or libdw before writing:"; grep -E 'libhdf5|libdw' "$maps"; exit 1
fi
echo "lazy libs: OK (no HDF5/libdw at start-up)"
