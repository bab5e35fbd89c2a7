#!/bin/bash
# The signal handler runs on another thread while the main thread records
# and spills (a 1 MiB cap: a spill every 4096 events). The process still
# ends with SIGTERM, and the spill file holds every call that ended before
# the dump: at least the L the killer saw, at most K, in order, well formed,
# with the signal in its trailer. Five runs: the dump lands at a different
# moment of main's spilling each time.
set -euo pipefail
py=${SP_PYTHON:?}
build=${SP_BUILD_DIR:?}
prog="$build/tests/resilience/resil-offthread"; cli="$build/tools/scope-profiler"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; cd "$work"
K=3000000
for i in 1 2 3 4 5; do
  mkdir r$i; set +e
  SCOPE_PROFILER_OUTPUT="$work/r$i/out.h5" SCOPE_PROFILER_MAX_MEMORY=1M "$prog" $K \
    > r$i/stdout 2> r$i/stderr
  rc=$?; set -e
  [ $rc = 143 ] || { cat r$i/stderr; echo "FAIL: run $i exited $rc, want 143"; exit 1; }
  l=$(sed -n 's/^sent after //p' r$i/stdout)
  "$cli" recover r$i/out.h5.spill.pid* -o r$i/rec.h5 > /dev/null
  $py - r$i/rec.h5 "$l" $K <<'PY'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], 'r'); lo, hi = int(sys.argv[2]), int(sys.argv[3])
names = [n.decode() if isinstance(n, bytes) else n for n in f['region_table/names'][()]]
idx = f['rank_region_index']
st, en = f['events/start_times'][()], f['events/end_times'][()]
got = {}
for g, o, c in zip(idx['region_ids'][()], idx['event_offsets'][()], idx['event_counts'][()]):
    got[names[g]] = int(c)
    s, e = st[o:o + c], en[o:o + c]
    assert np.all(e >= s) and np.all(np.diff(s) >= 0), f'{names[g]}: malformed events'
got = {k: v for k, v in got.items() if v}
assert set(got) == {'outer', 'iter'}, got
assert got['outer'] == 1 and lo <= got['iter'] <= hi, (got, lo, hi)
m = f['metadata'].attrs
assert int(m['partial']) == 1 and int(m['partial_signal']) == 15, dict(m)
print(f"{sys.argv[1]}: {got['iter']} iter calls (killer saw {lo})")
PY
done
echo "off-thread signal: OK"
