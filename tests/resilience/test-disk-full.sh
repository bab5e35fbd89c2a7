#!/bin/bash
# A disk that fills during the run (docs/RESILIENCE.md, "A full disk"): the
# first failed spill write stops the spill for good with one warning line,
# later calls past the memory cap are dropped and counted exactly, no write
# is retried (strace -c), the exit status is the program's, and what was
# spilled before stays readable by `recover`. EFBIG through RLIMIT_FSIZE
# (any user), then ENOSPC on a 2 MiB tmpfs (root: skipped otherwise).
set -euo pipefail
py=${SP_PYTHON:?}
build=${SP_BUILD_DIR:?}; src=${SP_SOURCE_DIR:?}
prog="$build/tests/resilience/resil-disk"; cli="$build/tools/scope-profiler"
check="$src/tests/resilience/check_counts.py"
work=$(mktemp -d); disk="$work/disk"; mkdir "$disk"; mounted=
cleanup() { [ -z "$mounted" ] || umount "$disk" || umount -l "$disk"; rm -rf "$work"; }
trap cleanup EXIT
cd "$work"
K=1000000  # "iter" calls; MAX_MEMORY=1M spills every 4096 events (98 KB)
tail="; later calls past the memory cap (SCOPE_PROFILER_MAX_MEMORY) are dropped and counted"
have_strace=; command -v strace > /dev/null && have_strace=1
[ -n "$have_strace" ] || echo "strace missing: the number of writes is not checked"

fail() { echo "FAIL: $*"; exit 1; }

# run NAME OUTPUT WRAPPER... -- ARGS: run the program (bounded time, under
# strace -c when there is one) with a 1 MiB cap; it must exit with $want
# (0, or the status it is given in RESIL_EXIT).
want=0
run() {
  local name=$1 out=$2; shift 2
  local wrap=(); while [ "$1" != -- ]; do wrap+=("$1"); shift; done; shift
  local st=(); [ -z "$have_strace" ] || st=(strace -f -c -e trace=pwrite64,write -o "$name.strace")
  set +e
  SCOPE_PROFILER_OUTPUT="$out" SCOPE_PROFILER_MAX_MEMORY=${cap:-1M} RESIL_EXIT=$want \
    timeout 60 "${st[@]}" "${wrap[@]}" "$@" > "$name.out" 2> "$name.err"
  local rc=$?
  set -e
  [ $rc = $want ] || { cat "$name.err"; fail "$name exited $rc, want $want (124: did not finish in 60 s; 139: a crash)"; }
}

# one_warning NAME REASON: exactly one "spill stopped" line, this one.
one_warning() {
  local n; n=$(grep -c ": spill stopped: " "$1.err" || true)
  [ "$n" = 1 ] || { cat "$1.err"; fail "$1: $n 'spill stopped' lines, want 1"; }
  grep -qx "scope-profiler: .*\.spill\.pid[0-9]*: spill stopped: $2$tail" "$1.err" ||
    { cat "$1.err"; fail "$1: warning text"; }
}

# bounded_writes NAME MAX_ERRORS: no retry storm. A spill is a handful of
# pwrites; retrying would be one failing pwrite per dropped call (~950 000).
bounded_writes() {
  [ -n "$have_strace" ] || return 0
  $py - "$1.strace" "$2" << 'EOF'
import sys
calls = errors = 0
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[-1] == 'pwrite64':
        calls, errors = int(f[3]), int(f[4]) if len(f) == 6 else 0
print(f'{sys.argv[1]}: {calls} pwrite64, {errors} failed')
assert 1 <= errors <= int(sys.argv[2]), f'{errors} failed pwrites, want 1..{sys.argv[2]}'
assert calls <= 2000, f'{calls} pwrites: the spill is retried'
EOF
}

# exact_drops FILE CALLS: for each region, recorded + dropped_counts == the
# calls the program made (CALLS, a dict); dropped_events is their sum and
# > 0; the recorded events are consistent (check_counts.py).
exact_drops() {
  local got
  got=$($py - "$1" "$2" << 'EOF'
import ast, sys, h5py
f, want = h5py.File(sys.argv[1], 'r'), ast.literal_eval(sys.argv[2])
names = [n.decode() if isinstance(n, bytes) else n for n in f['region_table/names'][()]]
idx = f['rank_region_index']
counts = {names[g]: int(c) for g, c in zip(idx['region_ids'][()], idx['event_counts'][()])}
drops = {names[g]: int(c) for g, c in zip(idx['region_ids'][()], idx['dropped_counts'][()])}
d = int(f['metadata'].attrs['dropped_events'])
assert d > 0, 'nothing dropped: the disk did not fill'
assert d == sum(drops.values()), f'dropped_events {d} != dropped_counts {drops}'
calls = {n: counts.get(n, 0) + drops.get(n, 0) for n in set(counts) | set(drops)}
assert calls == want, f'recorded + dropped {calls} != calls {want} (recorded {counts})'
print({n: c for n, c in counts.items() if c})
EOF
  )
  $py "$check" "$1" "$got"
}

# kept_only NAME OUTPUT CALLS: the final write failed too, with the real
# reason; the message says how many of the events recorded (the CALLS less
# those dropped and counted) the spill file keeps, and `recover` reads
# exactly those.
kept_only() {
  local name=$1 out=$2 total=$3 why=${4:-No space left on device} n spill dropped
  dropped=$(sed -n 's/^scope-profiler: \([0-9]*\) calls were dropped (memory cap .*/\1/p' $name.err)
  total=$((total - ${dropped:-0}))
  grep -qx "scope-profiler: could not write $out: $why" $name.err ||
    { cat $name.err; fail "$name: no write error, or not its reason"; }
  ! grep -q "counts are in the file" $name.err || fail "$name: claims counts are in the file"
  ! grep -q "all [0-9]* events are kept" $name.err || fail "$name: claims the events are kept"
  n=$(sed -n "s|^scope-profiler: only \([0-9]*\) of the $total events are kept, in $out\.spill\.pid[0-9]* (scope-profiler recover FILE -o $out)\$|\1|p" $name.err)
  [ -n "$n" ] && [ "$n" -gt 0 ] && [ "$n" -lt "$total" ] || { cat $name.err; fail "$name: what is kept"; }
  [ ! -e "$out" ] || fail "$name: $out exists"
  spill=$(ls "$out".spill.pid*)
  "$cli" recover --json "$spill" -o $name-rec.h5 > $name-rec.json
  $py -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['events']+j['unclosed']==$n, (j, $n)" \
    $name-rec.json
}

# EFBIG: RLIMIT_FSIZE 1 MiB with SIGXFSZ ignored; the profile itself is
# smaller than 1 MiB, so it is written with every count.
run fsize "$work/fsize.h5" bash -c 'ulimit -S -f 1024; trap "" XFSZ; exec "$@"' _ -- "$prog" $K 0
grep -qx "done $K" fsize.out || fail "fsize: program output"
one_warning fsize "File too large"
bounded_writes fsize 1
exact_drops fsize.h5 "{'outer': 1, 'iter': $K}"
[ -z "$(ls | grep spill)" ] || fail "fsize: spill file left after a good write"
# The limit is reached only by the final write (no spill before it; a
# program that keeps its limit, exits 7): the write fails with EFBIG, the program's status 7 stays (HDF5 1.10 crashed
# at exit after the failed close), the message counts what the spill keeps.
want=7 cap=1G run fsize-final "$work/fsize-final.h5" \
  bash -c 'ulimit -S -f 1024; trap "" XFSZ; exec "$@"' _ -- "$build/tests/resilience/resil-final" $K 7
kept_only fsize-final "$work/fsize-final.h5" $((K + 1)) "File too large"
# 16 threads (two waves of 8) at a 4 MiB limit: several threads reach it
# together, and the second wave starts after the spill stopped. The
# program lifts the limit before it exits: the profile holds every call,
# recorded or counted as dropped.
N=100000
run fsize-threads "$work/fsize-threads.h5" bash -c 'ulimit -S -f 4096; trap "" XFSZ; exec "$@"' _ \
  -- "$prog" $N 16
one_warning fsize-threads "File too large"
bounded_writes fsize-threads 32
exact_drops fsize-threads.h5 "{'outer': 1, 'body': 16, 'iter': $((16 * N))}"

if ! mount -t tmpfs -o size=2m tmpfs "$disk" 2> mount.err; then
  echo "FAIL: the EFBIG case passed; the tmpfs cases need mount -t tmpfs, as root ($(cat mount.err))"
  exit 1
fi
mounted=1

# ENOSPC, space back before the profile is written: a 1 MiB ballast file
# fills half the disk; the spill fills the rest and stops; the program
# removes the ballast before it exits, so the profile fits.
mountpoint -q "$disk" || fail "$disk is not the tmpfs"
dd if=/dev/zero of="$disk/ballast" bs=1M count=1 status=none
run back "$disk/back.h5" -- "$prog" $K 0 "$disk/ballast"
one_warning back "No space left on device"
bounded_writes back 1
exact_drops "$disk/back.h5" "{'outer': 1, 'iter': $K}"
[ -z "$(ls "$disk" | grep spill)" ] || fail "back: spill file left after a good write"
rm -f "$disk"/*

# ENOSPC, the disk stays full: the profile cannot be written either. The
# exit status is still the program's (7: HDF5 1.10 crashed at exit after a
# failed close); the spill file keeps what was spilled before.
want=7 run full "$disk/full.h5" -- "$prog" $K 0
one_warning full "No space left on device"
bounded_writes full 20
kept_only full "$disk/full.h5" $((K + 1))
ev=$($py -c "import json,sys; print(json.load(open(sys.argv[1]))['events'])" full-rec.json)
$py "$check" full-rec.h5 "{'iter': $ev}" partial=1 signal=-1
# Threads that fill the disk together leave holes (ranges reserved by a
# failed write, records of others after them). On a full tmpfs a mapped
# hole faults with SIGBUS; the reader must read it as zeros. Half of that
# spill, once as it is and once with a 300 KiB hole after its first record
# on the disk filled by a ballast file: recover reads the same from both.
mv "$disk"/full.h5.spill.pid* full.spill
$py - full.spill plain.spill.pid1 "$disk/holes.spill.pid1" << 'EOF'
import struct, sys
b = open(sys.argv[1], 'rb').read()
pos, ends = (struct.unpack_from('<I', b, 12)[0] + 7) & ~7, []
while pos < len(b) // 2:
    magic, typ, n, th = struct.unpack_from('<IIII', b, pos)
    assert magic == 0x52505353, f'no record at {pos}'
    pos += (16 + n + 7) & ~7
    ends.append(pos)
open(sys.argv[2], 'wb').write(b[:pos])
with open(sys.argv[3], 'wb') as f:
    f.write(b[:ends[0]]); f.seek(300 << 10, 1); f.write(b[ends[0]:pos])
EOF
mountpoint -q "$disk" || fail "$disk is not the tmpfs"
dd if=/dev/zero of="$disk/ballast" bs=4k count=512 status=none 2> /dev/null || true
"$cli" recover --json plain.spill.pid1 -o plain-rec.h5 > plain-rec.json
"$cli" recover --json "$disk"/holes.spill.pid1 -o holes-rec.h5 > holes-rec.json 2> holes.err ||
  { cat holes.err; fail "recover of a spill with a hole on a full disk"; }
counts() { $py -c "import json,sys; j=json.load(open(sys.argv[1])); print(j['events'], j['unclosed'])" "$1"; }
[ "$(counts plain-rec.json)" = "$(counts holes-rec.json)" ] || fail "a hole changed what recover reads"
[ "$(counts plain-rec.json)" != "0 0" ] || fail "no events in half the spill"
rm -f "$disk"/*

# 16 threads filling the disk at once: still one warning for the process.
want=7 run threads "$disk/threads.h5" -- "$prog" 20000 16
one_warning threads "No space left on device"
bounded_writes threads 32
kept_only threads "$disk/threads.h5" $((16 * 20000 + 16 + 1))
rm -f "$disk"/*

# The disk fills only at the final write (no spill before it: the default
# cap): the HDF5 write fails, the dump after it is cut at the disk's end.
# The status stays 7, and the message counts what the spill file holds.
want=7 cap=1G run final "$disk/final.h5" -- "$prog" $K 0
bounded_writes final 20
kept_only final "$disk/final.h5" $((K + 1))
ev=$($py -c "import json,sys; print(json.load(open(sys.argv[1]))['events'])" final-rec.json)
$py "$check" final-rec.h5 "{'outer': 1, 'iter': $((ev - 1))}" partial=1 signal=-1
echo "disk full: OK"
