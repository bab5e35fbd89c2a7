#!/bin/bash
# `scope-profiler run` finishes a serial job: a SIGTERM to the launcher or to
# its process group, a program that raises a signal, is SIGKILLed or
# _exit()s without writing: the launcher writes the output from the spill
# (exact counts, partial=1, the signal), removes the spill, and exits with
# the program's status. A normal exit and a forwarded SIGUSR1 leave the
# program's own output untouched.
set -euo pipefail
py=${SP_PYTHON:?}
build=${SP_BUILD_DIR:?}; src=${SP_SOURCE_DIR:?}
prog="$build/tests/launcher/launch-serial"; cli="$build/tools/scope-profiler"
check="$src/tests/resilience/check_counts.py"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; cd "$work"
K=10000  # iterations; --max-memory 1M spills every 4096 events
fail() { echo "FAIL: $*"; exit 1; }

start() {  # NAME [setsid] ARGS...: the launcher in the background, pid in $job
  local name=$1; shift
  local pre=(); [ "$1" = setsid ] && { pre=(setsid); shift; }
  rm -rf "$name"; mkdir "$name"
  # A background job of a script ignores SIGINT (bash): give it back.
  "${pre[@]}" env --default-signal=INT "$cli" run -o "$work/$name/out.h5" --max-memory 1M -- "$prog" $K "$work/$name" "$@" \
    > "$name/stdout" 2> "$name/stderr" &
  job=$!
}
wait_ready() {
  for _ in $(seq 300); do [ -s "$1/ready" ] && return 0; sleep 0.1; done
  cat "$1/stderr"; fail "$1: the program never got ready"
}
finish() {  # NAME WANT: wait for the launcher, check its status
  set +e; wait $job; local rc=$?; set -e
  [ "$rc" = "$2" ] || { cat "$1/stderr"; fail "$1: run exited $rc, want $2"; }
  [ -z "$(ls "$1" | grep spill)" ] || fail "$1: the spill file is left"
}
meta() {  # FILE KEY: a metadata value, or "absent"
  $py -c "import h5py,sys; m=h5py.File(sys.argv[1],'r')['metadata'].attrs
v=m.get(sys.argv[2]); print('absent' if v is None else (v.decode() if isinstance(v,bytes) else v))" "$1" "$2"
}

# 1. SIGTERM to the launcher alone: passed on, one line says what happens,
# the launcher writes out.h5 and ends by SIGTERM itself.
start term wait; wait_ready term; kill -TERM $job; finish term 143
$py "$check" term/out.h5 "{'outer': 1, 'iter': $K, 'waiting': 1}" partial=1 signal=15
[ "$(grep -c 'SIGTERM: passed on to' term/stderr)" = 1 ] || { cat term/stderr; fail "term: notice line"; }
grep -q "wrote $work/term/out.h5 from .*spill.pid.* ($((K + 2)) events, partial=1: stopped by SIGTERM)" term/stderr ||
  { cat term/stderr; fail "term: wrote line"; }

# 2. SIGTERM to the whole process group (a batch system's kill): the program
# gets it twice (directly and passed on); the same file.
start group setsid wait; wait_ready group; kill -TERM -- -$job; finish group 143
$py "$check" group/out.h5 "{'outer': 1, 'iter': $K, 'waiting': 1}" partial=1 signal=15

# 3. SIGINT and SIGHUP to the launcher: status 130 and 129, signal recorded.
for sig in INT HUP; do
  n=$(kill -l $sig)
  start $sig wait; wait_ready $sig; kill -$sig $job; finish $sig $((128 + n))
  $py "$check" $sig/out.h5 "{'outer': 1, 'iter': $K, 'waiting': 1}" partial=1 signal=$n
done

# 4. The program raises SIGXCPU itself (the launcher gets no signal).
start xcpu raise 24; finish xcpu 152
$py "$check" xcpu/out.h5 "{'outer': 1, 'iter': $K}" partial=1 signal=24
! grep -q "passed on" xcpu/stderr || fail "xcpu: a notice without a signal to the launcher"

# 5. The program alone is SIGKILLed (an OOM kill): only the spilled events
# (two spills of 4096; "outer" never closed), partial_signal -1, status 137.
start kill wait; wait_ready kill; kill -KILL "$(cat kill/ready)"; finish kill 137
$py "$check" kill/out.h5 "{'iter': 8191}" partial=1 signal=-1

# 6. _exit(5) without writing: the library's _exit dumps every event to the
# spill (trailer signal 0, docs/RESILIENCE.md), which becomes the file;
# status 5.
start noout _exit 5; finish noout 5
$py "$check" noout/out.h5 "{'outer': 1, 'iter': $K}" partial=1 signal=0

# 7. A normal exit with code 7: the program's own file, complete, nothing
# from the launcher.
start exit7 exit 7; finish exit7 7
$py "$check" exit7/out.h5 "{'outer': 1, 'iter': $K}"
[ "$(meta exit7/out.h5 partial)" = absent ] || fail "exit7: the launcher rewrote a complete file"
! grep -q "scope-profiler run:" exit7/stderr || { cat exit7/stderr; fail "exit7: launcher lines"; }

# 8. SIGUSR1 is passed on but starts no finish: the program handles it and
# writes its own complete file.
start usr1 usr1; wait_ready usr1; kill -USR1 $job; finish usr1 0
$py "$check" usr1/out.h5 "{'outer': 1, 'iter': $K, 'waiting': 1}"
[ "$(meta usr1/out.h5 partial)" = absent ] || fail "usr1: partial"

# 9. A program that cannot be run: 127, as a shell says.
set +e; "$cli" run -o "$work/none.h5" -- "$work/no-such-program" 2> none.err; rc=$?; set -e
[ $rc = 127 ] || fail "missing program: status $rc"
grep -q "cannot run" none.err || fail "missing program: message"

# 10. -q: no launcher lines, same file.
rm -rf quiet; mkdir quiet
"$cli" run -q -o "$work/quiet/out.h5" -- "$prog" $K "$work/quiet" raise 15 2> quiet/stderr && fail "quiet: status 0" || true
$py "$check" quiet/out.h5 "{'outer': 1, 'iter': $K}" partial=1 signal=15
[ ! -s quiet/stderr ] || { cat quiet/stderr; fail "quiet: lines on stderr"; }
# 11. A wrapper (a job script's shell) runs the program; SIGTERM to the
# whole group (a batch system's kill): the program saves its events, and
# the finish takes its spill (found by the process tree's id) instead of
# the shell's empty one. run ends as the shell did.
wrapped() {  # NAME [setsid]: the launcher over a shell in the background
  local name=$1; shift
  rm -rf "$name"; mkdir "$name"
  "$@" "$cli" run -o "$work/$name/out.h5" --max-memory 1M --merge-wait 2s -- \
    bash -c "\"$prog\" $K \"$work/$name\" wait; true" > "$name/stdout" 2> "$name/stderr" &
  job=$!
}
wrapped wgroup setsid; wait_ready wgroup; kill -TERM -- -$job; finish wgroup 143
$py "$check" wgroup/out.h5 "{'outer': 1, 'iter': $K, 'waiting': 1}" partial=1 signal=15
grep -q "wrote $work/wgroup/out.h5 from $work/wgroup/out.pid[0-9]*.h5.spill.pid[0-9]* ($((K + 2)) events, partial=1: stopped by SIGTERM)" \
  wgroup/stderr || { cat wgroup/stderr; fail "wgroup: wrote line"; }
[ "$(ls wgroup)" = "$(printf 'out.h5\nready\nstderr\nstdout')" ] || { ls wgroup; fail "wgroup: files left"; }

# 12. SIGTERM to the launcher alone, which passes it to the shell only (as
# a shell's kill of its own child would): the program still runs after
# --merge-wait, so nothing is written for it, and the line says so; its
# spill is left for `recover` should it be killed later.
wrapped walone; wait_ready walone; kill -TERM $job
set +e; wait $job; rc=$?; set -e
[ $rc = 143 ] || { cat walone/stderr; fail "walone: run exited $rc, want 143"; }
app_pid=$(cat walone/ready)
grep -q "bash recorded nothing; the program it started (pid $app_pid) still runs after 2 s: it writes its own profile when it ends" \
  walone/stderr || { cat walone/stderr; fail "walone: still-running line"; }
[ ! -e walone/out.h5 ] || fail "walone: an output was written"
kill -TERM "$app_pid"
for _ in $(seq 100); do kill -0 "$app_pid" 2> /dev/null || break; sleep 0.1; done
"$cli" recover walone/out.pid$app_pid.h5.spill.pid$app_pid -o walone/rec.h5 2> /dev/null
$py "$check" walone/rec.h5 "{'outer': 1, 'iter': $K, 'waiting': 1}" partial=1 signal=15
# 13. The wrapper started two programs, both killed with it: their spill
# files are listed (none is converted, no output), and kept for `recover`.
rm -rf wtwo; mkdir wtwo
setsid "$cli" run -o "$work/wtwo/out.h5" --max-memory 1M --merge-wait 2s -- \
  bash -c "\"$prog\" $K \"$work/wtwo\" wait & \"$prog\" $K \"$work/wtwo\" wait & wait" \
  > wtwo/stdout 2> wtwo/stderr &
job=$!
for _ in $(seq 300); do [ "$(ls wtwo | grep -c 'out\.pid.*\.spill\.pid')" = 2 ] && [ -s wtwo/ready ] && break; sleep 0.1; done
sleep 0.5  # both in their waiting loops
kill -TERM -- -$job
set +e; wait $job; rc=$?; set -e
[ $rc = 143 ] || { cat wtwo/stderr; fail "wtwo: run exited $rc, want 143"; }
grep -q "bash recorded nothing; the 2 programs it started left spill files: $work/wtwo/out.pid[0-9]*.h5.spill.pid[0-9]*, $work/wtwo/out.pid[0-9]*.h5.spill.pid[0-9]* (no $work/wtwo/out.h5 is written from them" \
  wtwo/stderr || { cat wtwo/stderr; fail "wtwo: the list"; }
[ ! -e wtwo/out.h5 ] && [ "$(ls wtwo | grep -c 'spill')" = 2 ] || { ls wtwo; fail "wtwo: files"; }
echo "launcher serial: OK"
