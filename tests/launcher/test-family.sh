#!/bin/bash
# `scope-profiler run` picks the preload library of the program's MPI
# family from its dynamic dependencies (tools/cli/mpi-family.c), for every
# family built (SP_MPI_FAMILIES): the Jacobi example of each family under
# that family's launcher gets libscope-profiler-FAMILY.so and a merged file
# with its MPI calls; a serial program gets the default library; an MPI
# program that also links -lscope-profiler loads one library (the family's,
# no other libmpi); --mpi forces, and a mismatch, an unknown family or a
# family library that was not built is one error line, exit 2.
set -euo pipefail
build=${SP_BUILD_DIR:?}
src=${SP_SOURCE_DIR:?}
py=${SP_PYTHON:?}
cli="$build/tools/scope-profiler"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
read -r -a families <<< "${SP_MPI_FAMILIES:?}"
default=${families[0]}

for fam in "${families[@]}"; do
  ( export SP_MPI_FAMILY=$fam
    sfx=; [ "$fam" = "$default" ] || sfx=-$fam
    source "$src/tests/lib/mpi.sh"
    prog="$build/examples/jacobi/jacobi$sfx"
    timeout 120 mpirun --oversubscribe -n 2 "$cli" run -v -o "$work/$fam.h5" -- "$prog" 32 4 2 \
      > "$fam.out" 2> "$fam.err" || { cat "$fam.err"; fail "$fam: jacobi under run"; }
    [ "$(grep -c "preloading $build/preload/libscope-profiler-$fam.so\$" "$fam.err")" = 2 ] ||
      { cat "$fam.err"; fail "$fam: not its family's library on both ranks"; }
    grep -q "scope-profiler: wrote $work/$fam.h5 (2 ranks" "$fam.err" || { cat "$fam.err"; fail "$fam: no merged file"; }
    "$cli" summary --json "$fam.h5" > "$fam.json"
    $py - "$fam.json" <<'PY'
import json, sys
c = {}
for row in json.load(open(sys.argv[1])):
    c[row['name']] = c.get(row['name'], 0) + row['num_calls']
# 2 ranks x 4 iterations: 4 Isend each, one Waitall; 2 residual checks.
want = {'MPI_Isend': 32, 'MPI_Waitall': 8, 'exchange_halo': 8}
bad = {k: (c.get(k), v) for k, v in want.items() if c.get(k) != v}
sys.exit(f'counts (got, want): {bad}' if bad else 0)
PY
    # The manual API and the preload: one object, no other family's libmpi.
    api="$build/tests/launcher/family-api$sfx"
    LD_DEBUG=files timeout 120 mpirun --oversubscribe -n 2 -x LD_DEBUG "$cli" run -o "$work/api-$fam.h5" -- \
      "$api" > "api-$fam.out" 2> "api-$fam.err" || { tail -20 "api-$fam.err"; fail "$fam: family-api"; }
    grep -q "family-api: 2 ranks, sum 1" "api-$fam.out" || fail "$fam: family-api output"
    other=libmpich.so.12; [ "$fam" = mpich ] && other=libmpi.so.40
    ! grep -q "file=$other " "api-$fam.err" || fail "$fam: $other loaded next to its own MPI"
    # The default family's program may lack its libmpi in DT_NEEDED (its MPI_*
    # resolved by -lscope-profiler, --as-needed): then run preloads the
    # default library, the same object.
    loaded="libscope-profiler-$fam\.so"; [ -n "$sfx" ] || loaded="($loaded|libscope-profiler\.so\.0[.0-9]*)"
    [ "$(grep -cE "file=[^ ]*/$loaded " "api-$fam.err")" -ge 2 ] || fail "$fam: family library not loaded"
    ! grep -q "file=libscope-profiler.so.0 .*needed by $api" "api-$fam.err" ||
      fail "$fam: -lscope-profiler loaded a second library"
    [ "$(grep -c "^scope-profiler: wrote $work/api-$fam.h5 (2 ranks" "api-$fam.err")" = 1 ] ||
      fail "$fam: not one merged file"
    "$cli" summary --json "api-$fam.h5" > "api-$fam.json"
    $py - "api-$fam.json" <<'PY'
import json, sys
c = {}
for row in json.load(open(sys.argv[1])):
    c[row['name']] = c.get(row['name'], 0) + row['num_calls']
want = {'api_step': 6, 'MPI_Allreduce': 6}
bad = {k: (c.get(k), v) for k, v in want.items() if c.get(k) != v}
sys.exit(f'api counts (got, want): {bad}' if bad else 0)
PY
  ) || exit 1
done

# A serial program: the library without MPI, and no libmpi mapped, also
# when it links -lscope-profiler (the default library, which needs its
# libmpi: the same SONAME, so one object). Its 7 regions are recorded.
serial_lib="$build/preload/libscope-profiler-serial.so"
"$cli" run -v -q -o "$work/serial.h5" -- /bin/true 2> serial.err || { cat serial.err; fail "serial"; }
grep -q "/bin/true: no MPI, preloading $serial_lib\$" serial.err ||
  { cat serial.err; fail "serial: not the library without MPI"; }
"$cli" run -v -o "$work/nompi.h5" -- "$build/tests/launcher/no-mpi" 7 > nompi.out 2> nompi.err ||
  { cat nompi.err; fail "no-mpi under run"; }
grep -q "no-mpi: no MPI, preloading $serial_lib\$" nompi.err || { cat nompi.err; fail "no-mpi: library"; }
[ "$(grep '^mapped: ' nompi.out | sort -u)" = "mapped: libscope-profiler-serial.so" ] ||
  { cat nompi.out; fail "no-mpi: maps hold another library than the serial one"; }
"$cli" summary --json nompi.h5 | $py -c "
import json, sys
c = {r['name']: r['num_calls'] for r in json.load(sys.stdin)}
assert c == {'serial_step': 7}, c"
# Under an MPI launcher (a script, a wrapper or mpi4py may start or load
# MPI later): the library of the launcher's family, MPI wrappers included.
for fam in openmpi mpich; do
  [ -e "$build/preload/libscope-profiler-$fam.so" ] || continue
  title="Open MPI"; [ $fam = mpich ] && title=MPICH
  ( export SP_MPI_FAMILY=$fam SP_MPI_SUFFIX=
    source "$src/tests/lib/mpi.sh"
    timeout 60 mpirun -n 1 "$cli" run -v -q -o "$work/l-$fam.h5" -- /bin/true 2> launched.err ) ||
    { cat launched.err; fail "/bin/true under $fam's launcher"; }
  grep -q "/bin/true: $title (its launcher's), preloading $build/preload/libscope-profiler-$fam.so\$" launched.err ||
    { cat launched.err; fail "under $fam's launcher: not its library"; }
done

# Errors: one line, exit 2, the program never starts.
jacobi="$build/examples/jacobi/jacobi"
other=mpich; [ "$default" = mpich ] && other=openmpi
check_error() {  # WANT ARGS...: exit 2 and one stderr line matching WANT
  local want=$1; shift
  set +e; "$cli" run "$@" > err.out 2> err.txt; local rc=$?; set -e
  [ $rc = 2 ] || { cat err.txt; fail "exit $rc, not 2, for: $*"; }
  [ "$(wc -l < err.txt)" = 1 ] && grep -q -- "$want" err.txt || { cat err.txt; fail "message for: $*"; }
  [ ! -s err.out ] || fail "the program ran for: $*"
}
check_error "unknown MPI family 'nosuch' (known: openmpi, mpich)" --mpi nosuch -- "$jacobi" 8 1 1
check_error "--mpi $other, but $jacobi is linked with" --mpi "$other" -- "$jacobi" 8 1 1
# A family library missing from the install: a copy of the tree without it.
mkdir -p t/tools t/preload
cp "$cli" t/tools/
ln -s "$build/reader" t/reader
cp -L "$build/preload/libscope-profiler.so" t/preload/libscope-profiler.so
set +e; t/tools/scope-profiler run -- "$jacobi" 8 1 1 > miss.out 2> miss.txt; rc=$?; set -e
[ $rc = 2 ] && grep -q "needs the .* library, $work/t/preload/libscope-profiler-$default.so, which was not built" miss.txt ||
  { cat miss.txt; fail "missing family library: exit $rc"; }
# Hostile programs: a truncated ELF header, a FIFO (never opened for
# reading): no MPI, no hang.
printf '\177ELF\002\001\001' > trunc; chmod +x trunc; mkfifo fifo
for p in ./trunc ./fifo; do
  set +e; timeout 20 "$cli" run -v -q -o "$work/h.h5" -- "$p" > /dev/null 2> h.err; rc=$?; set -e
  [ $rc != 124 ] || fail "$p: hung"
  grep -q "$p: no MPI, preloading" h.err || { cat h.err; fail "$p: no choice"; }
done
echo "launcher family choice (${families[*]}): OK"
