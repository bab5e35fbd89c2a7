#!/bin/bash
# A program that closes every descriptor mid-run (a close() loop up to the
# limit, or close_range) and then creates its own file app.dat, which gets
# the lowest free number: the profiler never writes into it
# (docs/RESILIENCE.md, "Our descriptors"). app.dat is byte-identical to a
# run without the profiler, with spills after the close, with a SIGTERM
# dump while app.dat is open, and when the program replaced the spill file
# (then nothing is written into the replacement, and what the spill held is
# counted as dropped, exactly).
set -euo pipefail
py=${SP_PYTHON:?}
build=${SP_BUILD_DIR:?}; src=${SP_SOURCE_DIR:?}
prog="$build/tests/resilience/resil-fds"; cli="$build/tools/scope-profiler"
check="$src/tests/resilience/check_counts.py"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; cd "$work"
K=200000  # 2 x K "iter" calls; MAX_MEMORY=1M spills every 4096 events

fail() { echo "FAIL: $*"; exit 1; }

# run NAME STATUS ENV... -- ARGS: in directory NAME, output NAME/out.h5.
run() {
  local name=$1 want=$2; shift 2
  local envs=(); while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  rm -rf "$name"; mkdir "$name"
  set +e
  (cd "$name" && env SCOPE_PROFILER_OUTPUT="$work/$name/out.h5" "${envs[@]}" "$prog" "$@" \
    > stdout 2> stderr)
  local rc=$?
  set -e
  [ "$rc" = "$want" ] || { cat "$name/stderr"; fail "$name exited $rc, want $want"; }
  grep -qx "done $K" "$name/stdout" || fail "$name: program output"
}

# The application's file without the profiler.
run plain 0 SCOPE_PROFILER_ENABLE=0 -- $K loop app.dat
[ "$(wc -l < plain/app.dat)" = 1000 ] || fail "plain: app.dat"
run plain-term 143 SCOPE_PROFILER_ENABLE=0 -- $K loop app.dat term
cmp plain/app.dat plain-term/app.dat

for how in loop range; do
  run $how 0 SCOPE_PROFILER_MAX_MEMORY=1M -- $K $how app.dat
  cmp plain/app.dat $how/app.dat || fail "$how: the profiler wrote into app.dat"
  $py "$check" $how/out.h5 "{'outer': 1, 'iter': $((2 * K))}"
  $py -c "import h5py,sys; d=int(h5py.File(sys.argv[1])['metadata'].attrs['dropped_events']); assert d == 0, d" \
    $how/out.h5
  [ -z "$(ls $how | grep spill)" ] || fail "$how: spill file left after a good write"
  ! grep -q "spill stopped" $how/stderr || { cat $how/stderr; fail "$how: the spill stopped"; }
done

# 4 threads spill while main writes app.dat: each finds the number closed,
# one reopens the file, none writes into app.dat.
run threads 0 SCOPE_PROFILER_MAX_MEMORY=1M RESIL_THREADS=4 -- $K loop app.dat
cmp plain/app.dat threads/app.dat || fail "threads: the profiler wrote into app.dat"
$py "$check" threads/out.h5 "{'outer': 1, 'iter': $((2 * K)), 'titer': $((4 * K))}"

# SIGTERM with app.dat open: the dump goes to the spill file, with (1M)
# and without (default cap: the dump is the first write after the close)
# spills before it.
for cap in 1M 1G; do
  run term-$cap 143 SCOPE_PROFILER_MAX_MEMORY=$cap -- $K loop app.dat term
  cmp plain/app.dat term-$cap/app.dat || fail "term-$cap: the profiler wrote into app.dat"
  "$cli" recover term-$cap/out.h5.spill.pid* -o term-$cap/rec.h5 > /dev/null
  $py "$check" term-$cap/rec.h5 "{'outer': 1, 'iter': $((2 * K))}" partial=1 signal=15
done

# The program removes the spill file and puts its own file at that path:
# that file is left as it is (100 bytes 'x', never removed), one warning
# says the spilled events are lost, and the profile counts them as dropped:
# recorded + dropped == calls, per region.
mkdir replace-want; $py -c "open('replace-want/x', 'w').write('x' * 100)"
# The spill path is known before the run: the pid is the shell's exec.
rm -rf replace; mkdir replace
set +e
(cd replace && exec env SCOPE_PROFILER_OUTPUT="$work/replace/out.h5" SCOPE_PROFILER_MAX_MEMORY=1M \
  "$prog" $K loop app.dat replace "$work/replace/out.h5.spill.pid$BASHPID" > stdout 2> stderr)
rc=$?
set -e
[ $rc = 0 ] || { cat replace/stderr; fail "replace exited $rc, want 0"; }
cmp plain/app.dat replace/app.dat || fail "replace: the profiler wrote into app.dat"
cmp replace-want/x replace/out.h5.spill.pid* || fail "replace: the profiler wrote into the program's file"
n=$(grep -c "spill stopped" replace/stderr || true)
[ "$n" = 1 ] || { cat replace/stderr; fail "replace: $n 'spill stopped' lines, want 1"; }
lost=$(sed -n 's/^scope-profiler: .*\.spill\.pid[0-9]*: spill stopped: its descriptor was closed by the program and the path no longer names the file; the \([0-9]*\) events in it are lost and counted as dropped; later calls past the memory cap (SCOPE_PROFILER_MAX_MEMORY) are dropped and counted$/\1/p' replace/stderr)
[ -n "$lost" ] && [ "$lost" -gt 0 ] || { cat replace/stderr; fail "replace: warning text"; }
$py - replace/out.h5 $((2 * K)) "$lost" << 'EOF'
import sys, h5py
f, calls, lost = h5py.File(sys.argv[1], 'r'), int(sys.argv[2]), int(sys.argv[3])
names = [n.decode() if isinstance(n, bytes) else n for n in f['region_table/names'][()]]
idx = f['rank_region_index']
counts = {names[g]: int(c) for g, c in zip(idx['region_ids'][()], idx['event_counts'][()])}
drops = {names[g]: int(c) for g, c in zip(idx['region_ids'][()], idx['dropped_counts'][()])}
d = int(f['metadata'].attrs['dropped_events'])
assert d == sum(drops.values()), f'dropped_events {d} != dropped_counts {drops}'
got = {n: counts.get(n, 0) + drops.get(n, 0) for n in set(counts) | set(drops)}
assert got == {'outer': 1, 'iter': calls}, f'recorded + dropped {got} (recorded {counts})'
assert d >= lost, f'dropped_events {d} < the {lost} events lost with the spill file'
print(f'replace: {counts} recorded, {drops} dropped')
EOF
echo "fds: OK"
