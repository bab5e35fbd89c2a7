#!/bin/bash
# Function names survive a SIGTERM: a program built with
# -finstrument-functions -g, with a library it dlopens during the run, is
# killed while running; `recover` of its spill file names every function,
# file and line as a normal run does. Then the
# program file is replaced by another build (and then removed): recover
# names the functions <program>+0x<offset> of the build that ran, and
# stores why (stderr and the metadata key unresolved_modules).
set -euo pipefail
py=${SP_PYTHON:?}
build=${SP_BUILD_DIR:?}; src=${SP_SOURCE_DIR:?}
cli="$build/tools/scope-profiler"; lib="$build/preload/libscope-profiler.so"
check="$src/tests/resilience/check_names.py"
source="$src/tests/resilience/names-prog.c,$src/tests/resilience/names-plugin.c"
plugin="$build/tests/resilience/libnames-plugin.so"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; cd "$work"
K=300
cp "$build/tests/resilience/names-prog" app

# start NAME MODE: run ./app under the preload in the background, pid in $pid
start() {
  mkdir "$1"
  SCOPE_PROFILER_OUTPUT="$work/$1/out.h5" SCOPE_PROFILER_THROTTLE_CALLS=0 LD_PRELOAD="$lib" ./app $K "$work/$1" "$2" \
    "$plugin" \
    > "$1/stdout" 2> "$1/stderr" &
  pid=$!
}
killed() {  # NAME: wait until it is in wait_here, SIGTERM it, expect 143
  for _ in $(seq 300); do [ -s "$1/ready.0" ] && break; sleep 0.1; done
  [ -s "$1/ready.0" ] || { cat "$1/stderr"; echo "FAIL: $1 never got ready"; exit 1; }
  kill -TERM "$pid"
  local rc=0; wait "$pid" || rc=$?
  [ "$rc" = 143 ] || { cat "$1/stderr"; echo "FAIL: $1 exited $rc, want 143"; exit 1; }
  [ ! -e "$1/out.h5" ] || { echo "FAIL: $1: HDF5 written from a signal handler"; exit 1; }
}

start normal exit
wait "$pid" || { cat normal/stderr; echo "FAIL: normal run failed"; exit 1; }
start term wait
killed term
"$cli" recover term/out.h5.spill.pid* -o term/rec.h5 > /dev/null 2> term/recover.err
[ ! -s term/recover.err ] || { cat term/recover.err; echo "FAIL: recover warned"; exit 1; }
$py "$check" same normal/out.h5 term/rec.h5 "$source"
$py "$check" lines term/rec.h5 "$source" \
  "{('main', 0): 1, ('middle', 0): $K, ('leaf', 0): $((4 * K)), ('wait_here', 0): 1,
    ('plugin_step', 0): $K, ('plugin_leaf', 0): $K}"

# The build that ran is replaced by another one (one more function in front:
# every offset moves, the build-id differs).
cp app app.ran
start rebuilt wait
killed rebuilt
cp "$build/tests/resilience/names-prog-v2" app.new && mv -f app.new app
"$cli" recover rebuilt/out.h5.spill.pid* -o rebuilt/rec.h5 > /dev/null 2> rebuilt/recover.err
grep -q "/app: rebuilt since the run" rebuilt/recover.err ||
  { cat rebuilt/recover.err; echo "FAIL: no stderr line for the rebuilt program"; exit 1; }
want="{'main': 1, 'middle': $K, 'leaf': $((4 * K)), 'wait_here': 1, 'plugin_step': $K,
  'plugin_leaf': $K}"
$py "$check" offsets rebuilt/rec.h5 app.ran app "$want" "/app: rebuilt since the run"
# Removed: the same names, the reason "not found".
rm app
"$cli" recover rebuilt/out.h5.spill.pid* -o rebuilt/gone.h5 > /dev/null 2> rebuilt/gone.err
grep -q "/app: not found" rebuilt/gone.err || { cat rebuilt/gone.err; echo "FAIL: no stderr line"; exit 1; }
$py "$check" offsets rebuilt/gone.h5 app.ran app "$want" "/app: not found"
echo "names after SIGTERM: OK"
