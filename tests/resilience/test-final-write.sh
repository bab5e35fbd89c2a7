#!/bin/bash
# The final write fails because the output path went bad: its directory
# was moved away during the run or the file system became read-only (a
# missing directory or a name too long is caught at start: fallback). Each time the message gives the real reason (not
# "Input/output error"), the program's exit status (7) is kept, and the
# line after it says truly what is kept: the spill file where it is now,
# with the number of events it holds (read back by `recover`), or that the
# events are lost. `recover -o` on those paths gives the same reasons.
# Root for the read-only tmpfs (as test-disk-full.sh: a FAIL otherwise).
set -euo pipefail
py=${SP_PYTHON:?}
build=${SP_BUILD_DIR:?}; src=${SP_SOURCE_DIR:?}
prog="$build/tests/resilience/resil-final"; cli="$build/tools/scope-profiler"
check="$src/tests/resilience/check_counts.py"
work=$(mktemp -d); mounted=
cleanup() { [ -z "$mounted" ] || umount "$work/ro" || umount -l "$work/ro"; rm -rf "$work"; }
trap cleanup EXIT
cd "$work"
K=100000

fail() { echo "FAIL: $*"; exit 1; }

# run NAME OUTPUT ENV... -- ARGS: the program must exit 7 and say done.
run() {
  local name=$1 out=$2; shift 2
  local envs=(); while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  set +e
  env SCOPE_PROFILER_OUTPUT="$out" "${envs[@]}" timeout 60 "$prog" $K 7 "$@" > $name.out 2> $name.err
  local rc=$?
  set -e
  [ $rc = 7 ] || { cat $name.err; fail "$name exited $rc, want 7"; }
  grep -qx "done $K" $name.out || fail "$name: program output"
}

# line NAME REGEX: stderr has this line.
line() { grep -qx -- "$2" $1.err || { cat $1.err; fail "$1: no line '$2'"; }; }

# The output's directory is moved away during the run (spilling at a 1 MiB
# cap). The spill file moved with it: the events are kept there, and the
# message names where it is now.
mkdir d
run moved "$work/d/out.h5" SCOPE_PROFILER_MAX_MEMORY=1M -- rename "$work/d" "$work/moved"
line moved "scope-profiler: could not write $work/d/out.h5: No such file or directory"
line moved "scope-profiler: all $((K + 1)) events are kept in $work/moved/out.h5.spill.pid[0-9]* (scope-profiler recover FILE -o $work/d/out.h5)"
"$cli" recover moved/out.h5.spill.pid* -o moved-rec.h5 > /dev/null
$py "$check" moved-rec.h5 "{'outer': 1, 'iter': $K}" partial=1

# A directory that does not exist, and a 5000-character name: caught when
# recording starts (docs/CONFIG.md, "The output path"), with the real
# reason; the profile goes to a fallback file in $TMPDIR, named on stderr,
# and holds every event. The exit status is still the program's.
mkdir tmp
run nodir "$work/nodir/out.h5" TMPDIR="$work/tmp" --
fb=$(sed -n "s|^scope-profiler: cannot write $work/nodir/out.h5: No such file or directory; the profile goes to \($work/tmp/scope-profiler-out\.[A-Za-z0-9]*\.h5\) instead\$|\1|p" nodir.err)
[ -n "$fb" ] && [ -f "$fb" ] || { cat nodir.err; fail "nodir: no fallback line or file"; }
$py "$check" "$fb" "{'outer': 1, 'iter': $K}"
! grep -q "could not write" nodir.err || fail "nodir: a failed write after the fallback"

long="$work/$(printf 'n%.0s' $(seq 5000)).h5"
rm -f tmp/*
run long "$long" TMPDIR="$work/tmp" --
grep -q "^scope-profiler: cannot write .*: File name too long; the profile goes to $work/tmp/scope-profiler-.*\.h5 instead\$" long.err ||
  { cat long.err; fail "long: no fallback line"; }
[ "$(ls tmp | wc -l)" = 1 ] || fail "long: want one fallback file, got $(ls tmp)"
$py "$check" tmp/* "{'outer': 1, 'iter': $K}"

# The file system becomes read-only during the run (no spill file: a file
# open for writing would keep the remount from happening).
mkdir ro
if ! mount -t tmpfs -o size=4m tmpfs ro 2> mount.err; then
  echo "FAIL: the read-only case needs mount -t tmpfs, as root ($(cat mount.err))"
  exit 1
fi
mounted=1
set +e
SCOPE_PROFILER_OUTPUT="$work/ro/out.h5" SCOPE_PROFILER_SPILL=0 SCOPE_PROFILER_SIGNALS=0 \
  timeout 60 "$prog" $K 7 wait "$work/go" > rofs.out 2> rofs.err &
pid=$!
set -e
for i in $(seq 600); do [ -e go.ready ] && break; sleep 0.1; done
[ -e go.ready ] || fail "rofs: the program did not get ready"
mount -o remount,ro "$work/ro"
touch go
set +e; wait $pid; rc=$?; set -e
[ $rc = 7 ] || { cat rofs.err; fail "rofs exited $rc, want 7"; }
line rofs "scope-profiler: could not write $work/ro/out.h5: Read-only file system"
line rofs "scope-profiler: the $((K + 1)) events of this run are lost (no spill file)"

# recover -o: the same writer, the same reasons.
recover_fails() {
  local out=$1 why=$2
  if "$cli" recover moved/out.h5.spill.pid* -o "$out" > rec.out 2> rec.err; then
    fail "recover -o $out succeeded"
  fi
  grep -q ": $why\$" rec.err || { cat rec.err; fail "recover -o $out: want '$why'"; }
}
recover_fails "$work/nodir/x.h5" "No such file or directory"
recover_fails "$work/ro/x.h5" "Read-only file system"
recover_fails "$long" "File name too long"
echo "final write: OK"
