#!/bin/bash
# The output path under a real mpirun: a template with %r gives one merged
# file named by world rank 0, with every rank's calls; a previous file is
# rotated once (by rank 0 alone); diff warns on different rank counts.
set -euo pipefail
py=${SP_PYTHON:?}
build=${SP_BUILD_DIR:?}
source "${SP_SOURCE_DIR:?}/tests/lib/mpi.sh"  # once per MPI family
prog="$build/tests/paths/paths-mpi$sp_sfx"; cli="$build/tools/scope-profiler"
# Without run, a program of another family than the default needs its own
# library preloaded: its -lscope-profiler is the default family's
# (docs/MPI.md). For the default family preloading it changes nothing.
lib="${SP_SANITIZER_PRELOAD:+$SP_SANITIZER_PRELOAD:}$sp_mpi_lib"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl=self,vader
unset SCOPE_PROFILER_OUTPUT SCOPE_PROFILER_ROOT
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
check() {  # FILE NP CALLS: one row per rank, CALLS barriers each, mpi_size NP
  $py - "$@" <<'PY'
import os, sys, h5py
path, np_, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
f = h5py.File(path, "r")
names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][()]]
idx = f["rank_region_index"]
got = {}
for r, i, c in zip(idx["ranks"][()], idx["region_ids"][()], idx["event_counts"][()]):
    if names[i] == "MPI_Barrier":
        got[int(r)] = int(c)
assert got == {r: calls for r in range(np_)}, got
assert int(f["metadata"].attrs["mpi_size"]) == np_
cl = [x.decode() if isinstance(x, bytes) else x for x in f["metadata"].attrs["command_line"]]
assert cl[0].endswith("/paths-mpi" + os.environ.get("SP_MPI_SUFFIX", "")) and cl[1:] == [str(calls)], cl
print(path, "barriers per rank", got)
PY
}

# A relative template with %r: rank 0 names the one merged file.
SCOPE_PROFILER_QUIET=1 SCOPE_PROFILER_OUTPUT='mpi-%r.h5' mpirun -n 2 -x SCOPE_PROFILER_OUTPUT \
  -x SCOPE_PROFILER_QUIET -x LD_PRELOAD="$lib" "$prog" 3 > log 2>&1 || { cat log; fail "mpirun"; }
[ "$(ls | grep -v '^log$')" = "mpi-0.h5" ] || fail "files: $(ls | tr '\n' ' ')"
check mpi-0.h5 2 3

# run under mpirun, twice into m.h5: rank 0 alone keeps the first as m.1.h5.
for n in 4 5; do
  mpirun -n 2 "$cli" run -q -o m.h5 -- "$prog" $n > "log$n" 2>&1 || { cat "log$n"; fail "mpirun run"; }
done
[ "$(ls m*)" = "$(printf 'm.1.h5\nm.h5\nmpi-0.h5')" ] || fail "rotation: $(ls | tr '\n' ' ')"
check m.1.h5 2 4
check m.h5 2 5
[ "$(grep -c "exists: kept it as $work/m.1.h5" log5)" = 1 ] || fail "rotation line: $(cat log5)"

# A wrapper on every rank (a shell script: bash ends with exit(), dash with
# _exit()): the merged file, written by rank 0's program as the wrapper's
# exec'd child, gets the name asked for; no rank writes an empty file.
for sh in bash sh; do
  mkdir "wrap-$sh"; cd "wrap-$sh"
  mpirun -n 2 "$cli" run -o w.h5 -- "$sh" -c '"$0" 4; exit $?' "$prog" > log 2>&1 ||
    { cat log; fail "wrapped by $sh"; }
  [ "$(ls | tr '\n' ' ')" = "log w.h5 " ] || fail "wrapped by $sh: files $(ls | tr '\n' ' ')"
  check w.h5 2 4
  grep -q "$sh recorded nothing: $work/wrap-$sh/w.h5 is the profile of the program it started" log ||
    fail "wrapped by $sh: $(cat log)"
  ! grep -q "nothing was instrumented\|writes without MPI's merge" log || fail "wrapped by $sh: $(cat log)"
  # Again: the first is kept aside once, and the new merged file named.
  mpirun -n 2 "$cli" run -o w.h5 -- "$sh" -c '"$0" 5; exit $?' "$prog" > log 2>&1 ||
    { cat log; fail "wrapped by $sh, again"; }
  [ "$(ls | tr '\n' ' ')" = "log w.1.h5 w.h5 " ] || fail "wrapped by $sh, again: files $(ls | tr '\n' ' ')"
  [ "$(grep -c "exists: kept it as" log)" = 1 ] || fail "wrapped by $sh, again: $(cat log)"
  check w.1.h5 2 4
  check w.h5 2 5
  cd ..
done

# run before mpirun, inside a script: the script has no MPI, so run gives
# it the library without MPI; rank 0 says so and how to fix it (the
# program's MPI calls, all it has, are not recorded: no file). With --mpi
# FAMILY the ranks merge into one file, which gets the name asked for.
mkdir script; cd script
"$cli" run -o s.h5 -- sh -c 'mpirun -n 2 "$0" 3; exit $?' "$prog" > log 2>&1 ||
  { cat log; fail "a script that runs mpirun"; }
[ "$(ls | tr '\n' ' ')" = "log " ] || fail "a script that runs mpirun: $(ls | tr '\n' ' ')"
[ "$(grep -c "^scope-profiler: paths-mpi$sp_sfx is an MPI program (it loads libmpi.*), profiled by the library without MPI, .* give run --mpi openmpi|mpich$" log)" = 1 ] &&
  grep -q "^scope-profiler run: warning: nothing was instrumented: $work/script/s.h5 was not written" log ||
  fail "a script that runs mpirun: $(cat log)"
"$cli" run --mpi "$sp_mpi_family" -o t.h5 -- sh -c 'mpirun -n 2 "$0" 3; exit $?' "$prog" > log 2>&1 ||
  { cat log; fail "a script that runs mpirun, --mpi"; }
[ "$(ls t*.h5)" = t.h5 ] || fail "--mpi: $(ls | tr '\n' ' ')"
check t.h5 2 3
! grep -q "library without MPI" log || fail "--mpi: $(cat log)"
cd ..

# diff: same command line, 1 rank against 2: one warning, on the ranks.
SCOPE_PROFILER_QUIET=1 SCOPE_PROFILER_OUTPUT=one.h5 mpirun -n 1 -x SCOPE_PROFILER_OUTPUT \
  -x SCOPE_PROFILER_QUIET -x LD_PRELOAD="$lib" "$prog" 5 > log1 2>&1 || { cat log1; fail "mpirun -n 1"; }
"$cli" diff one.h5 m.h5 > /dev/null 2> diff.err
grep -qx "scope-profiler diff: warning: the runs have different rank counts: one.h5: 1, m.h5: 2" diff.err ||
  fail "diff: $(cat diff.err)"
grep -q "command lines" diff.err && fail "diff warned on equal command lines: $(cat diff.err)"
"$cli" diff m.1.h5 m.h5 > /dev/null 2> diff2.err
grep -q "different command lines" diff2.err || fail "diff 4 vs 5: $(cat diff2.err)"
# A program without MPI under mpirun: rank 0 writes the plain name, every
# other rank its own .rank<R> (not over rank 0's file); a second run keeps
# each previous file aside. A template with %r names them already.
app="$build/tests/paths/paths-app"
calls_of() {  # FILE: the calls of region "work" (one rank, mpi_size 1)
  $py - "$1" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][()]]
idx = f["rank_region_index"]
assert int(f["metadata"].attrs["mpi_size"]) == 1
print(sum(int(c) for i, c in zip(idx["region_ids"][()], idx["event_counts"][()])
          if names[i] == "work"))
PY
}
mkdir serial; cd serial
for n in 6 7; do
  mpirun -n 3 "$cli" run -o s.h5 -- "$app" --calls $n > "log$n" 2>&1 || { cat "log$n"; fail "serial"; }
done
[ "$(ls *.h5 | tr '\n' ' ')" = "s.1.h5 s.h5 s.rank1.1.h5 s.rank1.h5 s.rank2.1.h5 s.rank2.h5 " ] ||
  fail "serial ranks' files: $(ls | tr '\n' ' ')"
for f in s.1.h5 s.rank1.1.h5 s.rank2.1.h5; do [ "$(calls_of $f)" = 6 ] || fail "$f"; done
for f in s.h5 s.rank1.h5 s.rank2.h5; do [ "$(calls_of $f)" = 7 ] || fail "$f"; done
grep -q "exists: kept it as $work/serial/s.rank2.1.h5" log7 || fail "rank 2's line: $(cat log7)"
[ "$(grep -c "world rank 0 of 3 writes without MPI's merge .* each rank writes its own file, $work/serial/s.h5 here, $work/serial/s.rank1.h5 to $work/serial/s.rank2.h5 for the others" log7)" = 1 ] ||
  fail "rank 0's line: $(cat log7)"
mpirun -n 2 "$cli" run -q -o 'r-%r.h5' -- "$app" --calls 3 > log 2>&1 || { cat log; fail "%r"; }
[ "$(ls r-*)" = "$(printf 'r-0.h5\nr-1.h5')" ] || fail "%r files: $(ls | tr '\n' ' ')"
[ "$(calls_of r-1.h5)" = 3 ] || fail "r-1.h5"

# run before the launcher: refused (exit 2), one line with the right order,
# and nothing moved.
before=$(ls | tr '\n' ' ')
for l in mpirun mpiexec "$(command -v mpiexec.mpich || echo mpiexec.hydra)"; do
  set +e; "$cli" run -o s.h5 -- "$l" -n 2 "$app" > log 2>&1; rc=$?; set -e
  [ $rc = 2 ] || fail "run -- $l: exit $rc: $(cat log)"
  grep -qx "scope-profiler run: $l is an MPI launcher: put scope-profiler run after it, so that every rank is profiled and the ranks' data merged into one file: $l -n 4 scope-profiler run \[options\] -- ./app" log ||
    fail "run -- $l: $(cat log)"
done
[ "$(ls | tr '\n' ' ')" = "$before" ] || fail "a refused run moved files: $(ls | tr '\n' ' ')"
# switched off (SCOPE_PROFILER_ENABLE=0), run only runs the program: not refused
SCOPE_PROFILER_ENABLE=0 "$cli" run -o s.h5 -- mpirun -n 2 "$app" > log 2>&1 || { cat log; fail "ENABLE=0"; }
[ "$(ls | tr '\n' ' ')" = "$before log " ] || [ "$(ls | tr '\n' ' ')" = "$before" ] ||
  fail "ENABLE=0 wrote files: $(ls | tr '\n' ' ')"
cd ..
echo "mpi: one merged file per job, rotation by rank 0, rank-count warning; a serial" \
  "program's ranks each write their own file; run before mpirun refused"
