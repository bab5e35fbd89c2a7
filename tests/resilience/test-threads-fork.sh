#!/bin/bash
# 16 threads (pthreads and OpenMP) that start and exit during the run, with
# spilling under way on every thread at once: exact counts after a normal
# exit and after SIGTERM + recover. fork (FORK=none|child) and exec.
set -euo pipefail
py=${SP_PYTHON:?}
build=${SP_BUILD_DIR:?}; src=${SP_SOURCE_DIR:?}
cli="$build/tools/scope-profiler"; check="$src/tests/resilience/check_counts.py"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; cd "$work"
N=20000  # per thread: 20001 events, several spills each at MAX_MEMORY=1M
want="{'main': 1, 'thread_body': 16, 'work': $((16 * N))}"
for kind in pthread openmp; do
  prog="$build/tests/resilience/resil-threads-$kind"
  SCOPE_PROFILER_OUTPUT="$work/$kind.h5" SCOPE_PROFILER_MAX_MEMORY=1M "$prog" $kind $N > /dev/null 2>&1
  $py "$check" $kind.h5 "$want"
  [ -z "$(ls | grep spill)" ] || { echo "FAIL: spill file left"; exit 1; }
  set +e
  SCOPE_PROFILER_OUTPUT="$work/$kind-term.h5" SCOPE_PROFILER_MAX_MEMORY=1M "$prog" $kind $N 15 > /dev/null 2>&1
  rc=$?; set -e
  [ $rc = 143 ] || { echo "FAIL: exit status $rc after SIGTERM"; exit 1; }
  "$cli" recover $kind-term.h5.spill.pid* -o $kind-rec.h5 > /dev/null
  $py "$check" $kind-rec.h5 "$want" partial=1 signal=15
  rm -f $kind-term.h5.spill.pid*
done

prog="$build/tests/resilience/resil-fork"
# FORK=none (default): the child writes nothing, the parent's file is its own.
SCOPE_PROFILER_OUTPUT="$work/none.h5" "$prog" fork > none.out 2>&1
$py "$check" none.h5 "{'before': 1, 'after': 1}"
[ "$(ls | grep -c '^none.h5')" = 1 ] || { ls; echo "FAIL: the child wrote a file"; exit 1; }
# FORK=child: the child starts empty and writes <output>.pid<N>.
SCOPE_PROFILER_OUTPUT="$work/child.h5" SCOPE_PROFILER_FORK=child "$prog" fork > child.out 2> child.err
pid=$(sed -n 's/^child //p' child.out)
$py "$check" child.h5 "{'before': 1, 'after': 1}"
$py "$check" "child.h5.pid$pid" "{'in_child': 3}"
[ -z "$(ls | grep spill)" ] || { ls; echo "FAIL: spill file left"; exit 1; }
# FORK=child: the child's counted and dropped calls are its own, not the
# parent's too: the parent's hot() calls counted by the throttle (defaults),
# or, with everything recorded, dropped at a 1 MiB cap without spill.
for mode in throttled dropped; do
  thr=; [ $mode = dropped ] && thr=0
  SCOPE_PROFILER_OUTPUT="$work/$mode.h5" SCOPE_PROFILER_FORK=child SCOPE_PROFILER_MAX_MEMORY=1M \
    SCOPE_PROFILER_SPILL=0 SCOPE_PROFILER_THROTTLE_CALLS=$thr \
    LD_PRELOAD="$build/preload/libscope-profiler.so" \
    "$build/tests/resilience/resil-fork-hot" 300000 > $mode.out 2> $mode.err
  pid=$(sed -n 's/^child //p' $mode.out)
  $py - $mode $mode.h5 "$mode.h5.pid$pid" <<'PY'
import sys, h5py
def calls(path):
    f = h5py.File(path)
    names = [n.decode() for n in f['region_table/names'][()]]
    ix = f['rank_region_index']
    k = [names[r] for r in ix['region_ids'][()]].index('hot')
    got = {c: int(ix[c][k]) for c in ('event_counts', 'throttled_counts', 'dropped_counts')
           if c in ix}
    return got, int(f['metadata'].attrs['dropped_events'])
mode = sys.argv[1]
(parent, pdrop), (child, cdrop) = calls(sys.argv[2]), calls(sys.argv[3])
assert sum(parent.values()) == 300001, ('parent', parent)
what = 'throttled_counts' if mode == 'throttled' else 'dropped_counts'
assert parent.get(what, 0) > 0, (f'the parent has no {what}', parent)
assert sum(child.values()) == 10 and child['event_counts'] <= 10, ('child', child)
assert cdrop == child.get('dropped_counts', 0), ('child dropped_events', cdrop, child)
print(f'fork ({mode}): parent hot {parent}, child hot {child}')
PY
done
# exec: the new program starts fresh, in its own file.
SCOPE_PROFILER_OUTPUT="$work/exec.h5" "$prog" exec > exec.out 2>&1
$py "$check" exec.h5 "{'before': 1, 'after': 1}"
$py "$check" exec.h5.exec.h5 "{'in_exec': 2}"
echo "threads, fork, exec: OK"
