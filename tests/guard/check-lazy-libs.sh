#!/bin/bash
# SPDX-License-Identifier: MIT
# The preloads load HDF5 and libdw on first use (recorder/lazy/lazy.h), not with
# the program: no DT_NEEDED on them or their dependencies, and no undefined
# H5*/dw*/elf* symbol left (a name missing from lazy-hdf5.h or lazy-dw.h
# would bring the library back at start-up); a preloaded process does not
# map them before it writes (every writing test loads them).
set -euo pipefail
build=${1:?build dir}
# $2: the source dir (a fixture profile), $3: the SONAME lazy.c loads HDF5 by
# .ci/run also runs the guard suite in a fresh clone that is configured,
# not built: nothing to check there.
[ -e "$build/preload/libscope-profiler-serial.so" ] || { echo "SKIP: not built ($build)"; exit 77; }
fail=0
# check OBJ NEEDED_RE UNDEF_RE: OBJ needs no library matching NEEDED_RE and
# references no symbol matching UNDEF_RE.
check() {
  local needed undef
  needed=$(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  if echo " $needed" | grep -qE " lib($2)"; then
    echo "FAIL: $1 needs: $needed"; fail=1
  fi
  undef=$(nm -D --undefined-only "$1" | awk '{print $2}' | grep -E "^($3)" || true)
  if [ -n "$undef" ]; then
    echo "FAIL: $1 still references: $(echo $undef)"; fail=1
  fi
}
for lib in "$build"/preload/libscope-profiler-serial.so "$build"/preload/libscope-profiler-*.so; do
  [ -e "$lib" ] && check "$lib" 'hdf5|dw|elf|curl' 'H5|dw|elf_|gelf_'
done
# The reader library and the CLI load HDF5 when a file is opened: the
# CLI starts (every `scope-profiler run` of an mpirun, once per rank)
# without it and the ~35 libraries it brings.
for obj in "$build"/reader/libscope-profiler-reader.so "$build"/tools/scope-profiler; do
  if [ -e "$obj" ]; then check "$obj" 'hdf5|curl' 'H5'; else echo "FAIL: not built: $obj"; fail=1; fi
done
[ $fail = 0 ] || exit 1
# A preloaded shell, before its exit (where it writes its file); not in a
# sanitizer build (its runtime must come first in a program's libraries).
if readelf -d "$build/preload/libscope-profiler-serial.so" | grep -qE 'lib(asan|tsan|ubsan)'; then
  echo "lazy libs: OK (no HDF5/libdw needed; sanitizer build: the maps check is skipped)"
  exit 0
fi
maps=$(mktemp); trap 'rm -rf "$maps" "$maps"*.h5 "$maps.lib"' EXIT
SCOPE_PROFILER_OUTPUT="$maps.h5" LD_PRELOAD="$build/preload/libscope-profiler-serial.so" \
  sh -c 'cat /proc/$$/maps' > "$maps"
if grep -qE 'libhdf5|libdw' "$maps"; then
  echo "FAIL: a preloaded process maps HDF5 or libdw before writing:"; grep -E 'libhdf5|libdw' "$maps"; exit 1
fi
# Without a loadable HDF5 the CLI says which library is missing and fails
# (a file of that name that is not a library comes first in the search).
h5=${2:?source dir}/tests/fixtures/hdf5-schema-3.h5
"$build/tools/scope-profiler" summary "$h5" > /dev/null || { echo "FAIL: summary of $h5 failed"; exit 1; }
mkdir "$maps.lib"; : > "$maps.lib/${3:?HDF5 SONAME}"
err=$(LD_LIBRARY_PATH="$maps.lib" "$build/tools/scope-profiler" summary "$h5" 2>&1 >/dev/null) &&
  { echo "FAIL: summary succeeded without a loadable HDF5"; exit 1; }
echo "$err" | grep -q "cannot read HDF5 files: libhdf5.*could not be loaded" ||
  { echo "FAIL: no clear message without a loadable HDF5: $err"; exit 1; }
# A library of that SONAME from another build, lacking a name we use
# (here: only H5open and H5check_version): refused when it is loaded,
# with one message; never an abort at the first call of the missing name.
# The CLI fails cleanly; a preloaded program keeps its own exit status.
cc=$(command -v cc || command -v gcc || true)
[ -n "$cc" ] || { echo "FAIL: no C compiler for the fake HDF5"; exit 1; }
printf '%s\n' 'int H5open(void) { return 0; }' \
  'int H5check_version(unsigned a, unsigned b, unsigned c) { (void)a; (void)b; (void)c; return 0; }' \
  > "$maps.lib/fake.c"
"$cc" -shared -fPIC -Wl,-soname,"$3" -o "$maps.lib/$3" "$maps.lib/fake.c"
rc=0
bad=$(LD_LIBRARY_PATH="$maps.lib" "$build/tools/scope-profiler" summary "$h5" 2>&1 >/dev/null) || rc=$?
[ $rc -gt 0 ] && [ $rc -lt 128 ] ||
  { echo "FAIL: summary with an HDF5 lacking names: exit $rc (want an error, not a signal): $bad"; exit 1; }
echo "$bad" | grep -q "could not be loaded (it has no H5" ||
  { echo "FAIL: no clear message with an HDF5 lacking names: $bad"; exit 1; }
printf '%s\n' 'static int f(int x) { return x + 1; }' \
  'int main(void) { int s = 0; for (int i = 0; i < 10; i++) s = f(s); return s == 10 ? 3 : 4; }' \
  > "$maps.lib/prog.c"
"$cc" -O0 -finstrument-functions -o "$maps.lib/prog" "$maps.lib/prog.c"
rc=0
err2=$(SCOPE_PROFILER_OUTPUT="$maps.h5" LD_LIBRARY_PATH="$maps.lib" \
  LD_PRELOAD="$build/preload/libscope-profiler-serial.so" "$maps.lib/prog" 2>&1) || rc=$?
[ $rc = 3 ] || { echo "FAIL: a preloaded program exiting 3 with an HDF5 lacking names: exit $rc: $err2"; exit 1; }
echo "$err2" | grep -q "could not load $3: it has no H5" ||
  { echo "FAIL: the preload said nothing clear with an HDF5 lacking names: $err2"; exit 1; }
# (the write's own line gives the load's errno, ELIBACC: not a missing file)
if echo "$err2" | grep -q "No such file"; then
  echo "FAIL: the write error blames a missing file: $err2"; exit 1
fi
# Under MPI (the parallel finalize: rank 0 creates the file), the line
# comes once, from rank 0, and the program keeps its exit status (Open MPI
# and its jacobi example, if built).
mpi_note="MPI part skipped (no mpirun.openmpi or Open MPI build)"
if command -v mpirun.openmpi > /dev/null && [ -e "$build/preload/libscope-profiler-openmpi.so" ] &&
   [ -x "$build/examples/jacobi/jacobi" ]; then
  rc=0
  err3=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader \
    SCOPE_PROFILER_OUTPUT="$maps.lib/mpi.h5" timeout 120 mpirun.openmpi --oversubscribe -n 2 \
    -x LD_LIBRARY_PATH="$maps.lib" -x LD_PRELOAD="$build/preload/libscope-profiler-openmpi.so" \
    -x SCOPE_PROFILER_OUTPUT "$build/examples/jacobi/jacobi" 32 4 2 2>&1) || rc=$?
  [ $rc = 0 ] || { echo "FAIL: jacobi with an HDF5 lacking names: exit $rc: $err3"; exit 1; }
  n=$(echo "$err3" | grep -c "could not load $3: it has no H5" || true)
  [ "$n" = 1 ] || { echo "FAIL: under MPI, the HDF5 line came $n times (want 1): $err3"; exit 1; }
  mpi_note="under MPI: exit 0 kept, the line once"
fi
echo "lazy libs: OK (no HDF5/libdw at start-up; the CLI without HDF5: $err; with an HDF5 lacking" \
  "names, the CLI: $bad; a preloaded program: exit 3 kept, $(echo "$err2" | head -1); $mpi_note)"
