#!/bin/bash
# Serial program, real signals: SIGTERM, SIGINT, SIGXCPU, a segfault, SIGKILL
# and a normal exit, with and without spilling. Checks the exit status is the
# signal's, the spill file is left (or removed after a normal exit), and
# `scope-profiler recover` gives exactly the calls that had ended.
set -euo pipefail
py=${SP_PYTHON:?}
build=${SP_BUILD_DIR:?}; src=${SP_SOURCE_DIR:?}
prog="$build/tests/resilience/resil-serial"; cli="$build/tools/scope-profiler"
check="$src/tests/resilience/check_counts.py"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; cd "$work"
K=10000  # iterations; MAX_MEMORY=1M spills every 4096 events (the first chunk)

# run NAME EXPECTED_STATUS ENV... -- ARGS...
run() {
  local name=$1 want=$2; shift 2
  local envs=(); while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  rm -rf "$name"; mkdir "$name"
  set +e
  env SCOPE_PROFILER_OUTPUT="$work/$name/out.h5" "${envs[@]}" "$prog" "$@" > "$name/stdout" 2> "$name/stderr"
  local rc=$?
  set -e
  [ "$rc" = "$want" ] || { cat "$name/stderr"; echo "FAIL: $name exited $rc, want $want"; exit 1; }
  grep -qx "done $K" "$name/stdout" || { echo "FAIL: $name: program output"; exit 1; }
}

for sig in 15 2 24; do  # SIGTERM, SIGINT, SIGXCPU: killed by the same signal
  run sig$sig $((128 + sig)) SCOPE_PROFILER_MAX_MEMORY=1M -- $K signal $sig
  [ ! -e sig$sig/out.h5 ] || { echo "FAIL: HDF5 written from a signal handler"; exit 1; }
  "$cli" recover sig$sig/out.h5.spill.pid* -o sig$sig/rec.h5 > /dev/null
  $py "$check" sig$sig/rec.h5 "{'outer': 1, 'iter': $K}" partial=1 signal=$sig
done
# Without spilling at the cap the handler still dumps everything it holds.
run nospill 143 SCOPE_PROFILER_SPILL=0 -- $K signal 15
"$cli" recover nospill/out.h5.spill.pid* -o nospill/rec.h5 > /dev/null
$py "$check" nospill/rec.h5 "{'outer': 1, 'iter': $K}" partial=1 signal=15
# Segfault: same, the process still dies of SIGSEGV.
run segv 139 SCOPE_PROFILER_MAX_MEMORY=1M -- $K segv
"$cli" recover segv/out.h5.spill.pid* -o segv/rec.h5 > /dev/null
$py "$check" segv/rec.h5 "{'outer': 1, 'iter': $K}" partial=1 signal=11
# SIGKILL: only what was spilled survives: events 0..8191 (two spills of
# 4096); event 0 is "outer", never closed, so it is not in the file.
run kill 137 SCOPE_PROFILER_MAX_MEMORY=1M -- $K kill
"$cli" recover kill/out.h5.spill.pid* -o kill/rec.h5 > kill/recover.out
grep -q "calls open at the kill are not included" kill/recover.out
$py "$check" kill/rec.h5 "{'iter': 8191}" partial=1 signal=-1
# Signals off: no handler, no spill file at all with SPILL=0.
run off 143 SCOPE_PROFILER_SIGNALS=0 SCOPE_PROFILER_SPILL=0 -- $K signal 15
[ -z "$(ls off | grep spill)" ] || { echo "FAIL: spill file without SPILL/SIGNALS"; exit 1; }
# Normal exit with spilling: the same file as without, spill file removed.
run exit 0 SCOPE_PROFILER_MAX_MEMORY=1M -- $K exit
[ -z "$(ls exit | grep spill)" ] || { echo "FAIL: spill file left after a normal exit"; exit 1; }
$py "$check" exit/out.h5 "{'outer': 1, 'iter': $K}"
run big 0 -- $K exit
$py "$check" big/out.h5 "{'outer': 1, 'iter': $K}"
# Spilling off at the cap: drops are counted and reported.
run drop 0 SCOPE_PROFILER_MAX_MEMORY=1M SCOPE_PROFILER_SPILL=0 -- $K exit
grep -q "calls were dropped" drop/stderr
$py "$check" drop/out.h5 "{'outer': 1, 'iter': 4095}"
$py -c "import h5py,sys; m=h5py.File(sys.argv[1])['metadata'].attrs; assert m['dropped_events']==$K-4095, m['dropped_events']" drop/out.h5
echo "serial resilience: OK"
