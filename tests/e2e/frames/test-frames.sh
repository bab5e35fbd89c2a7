#!/bin/bash
# Frames left without their exits and plugins replaced at the same address
# (docs/HOOKS.md): longjmp out of nested instrumented frames in a loop, a
# C++ exception through uninstrumented code and a C frame without cleanups,
# and two plugins dlopen'ed/dlclose'd in turn at the same address. Each
# program counts its own calls; check_frames.py compares them with the file
# (default auto-throttle: events + throttled; --throttle-calls 0: every call
# an event, nesting depths checked too).
set -euo pipefail
py=${SP_PYTHON:?}
build=${SP_BUILD_DIR:?}; src=${SP_SOURCE_DIR:?}
bin="$build/tests/e2e/frames"; cli="$build/tools/scope-profiler"
check="$src/tests/e2e/frames/check_frames.py"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; cd "$work"

# profile NAME PROG ARGS...: a plain run, then one with the defaults and one
# with every call on the timeline; the program's counts must not change.
profile() {
  local name=$1 prog=$2; shift 2
  "$prog" "$name.plain.json" "$@"
  for mode in default all; do
    local opts=(); [ $mode = all ] && opts=(--throttle-calls 0)
    "$cli" run -q -o "$name.$mode.h5" "${opts[@]}" -- "$prog" "$name.$mode.json" "$@"
    cmp -s <(sed 's/"step_addrs".*//' "$name.plain.json") <(sed 's/"step_addrs".*//' "$name.$mode.json") ||
      { echo "FAIL: $name ($mode): the program's counts differ from a plain run"; exit 1; }
  done
}

profile longjmp "$bin/longjmp-prog"
$py "$check" longjmp.default.h5 longjmp.default.json
$py "$check" longjmp.all.h5 longjmp.all.json depth

profile exc "$bin/exc-prog"
$py - exc.plain.json <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert p['caught'] == 1000 and p['calls']['c_mid'] == 1500, p
PY
$py "$check" exc.default.h5 exc.default.json
$py "$check" exc.all.h5 exc.all.json depth

profile dl "$bin/dl-prog" "$bin/libframes-alpha.so" "$bin/libframes-beta.so"
$py - dl.all.json <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert p['reused'], 'FAIL: beta was not loaded where alpha had been %s: nothing tested' % p['step_addrs']
print('ok   the plugins took turns at the same address:', p['step_addrs'])
PY
$py "$check" dl.default.h5 dl.default.json
$py "$check" dl.all.h5 dl.all.json

# A counted-only function unloaded, a recorded one loaded at its address:
# beta_leaf's two calls (30 ms apart) are events of their own length.
profile reuse "$bin/reuse-prog" "$bin/libframes-alpha.so" "$bin/libframes-beta.so"
$py "$check" reuse.default.h5 reuse.default.json
$py - reuse.default.json reuse.default.h5 <<'PY'
import json, sys
import h5py
p = json.load(open(sys.argv[1]))
assert p['reused'], 'FAIL: beta was not loaded where alpha had been %s: nothing tested' % p['step_addrs']
f = h5py.File(sys.argv[2], 'r')
names = [n.decode() if isinstance(n, bytes) else n for n in f['region_table/names'][()]]
idx = f['rank_region_index']
thr = idx['throttled_counts'][()] if 'throttled_counts' in idx else None
for i, g in enumerate(idx['region_ids'][()]):
    o, c = int(idx['event_offsets'][i]), int(idx['event_counts'][i])
    if names[g] == 'alpha_leaf':
        assert thr is not None and thr[i] > 0, 'FAIL: alpha_leaf was not throttled: nothing tested'
    if names[g] == 'beta_leaf':
        d = f['events/end_times'][o:o + c] - f['events/start_times'][o:o + c]
        assert c == 2 and (d >= 0).all() and (d < 10000000).all(), \
            'FAIL: beta_leaf: %d events of %s ns (each call is well under 10 ms)' % (c, list(d))
        print('ok   beta_leaf at alpha_leaf\'s address: 2 events of %s ns' % list(d))
PY
echo "frames: all checks passed"
