#!/bin/bash
# One timeline across hosts (docs/MPI.md): 4 ranks of mpi-clock under real
# mpirun, once with SCOPE_PROFILER_TEST_CLOCK_SKEW (rank r's clock off by
# r x OFFSET and drifting by r x DRIFT) and once without. check_clock.py:
# /clock_sync recovers the injected offsets and drifts within its stated
# bounds, the file's barriers are ordered across ranks within them, the
# summaries match the mapped events. `merge` keeps /clock_sync as it is.
# Once per MPI family (SP_MPI_FAMILY, tests/lib/mpi.sh).
set -euo pipefail
build=${SP_BUILD_DIR:?}
src=${SP_SOURCE_DIR:?}
py=${SP_PYTHON:?}
source "$src/tests/lib/mpi.sh"
cli="$build/tools/scope-profiler"
lib="${SP_SANITIZER_PRELOAD:+$SP_SANITIZER_PRELOAD:}$sp_mpi_lib"
prog="$build/tests/e2e/mpi/mpi-clock$sp_sfx"
[ -x "$prog" ] || { echo "FAIL: $prog not built"; exit 1; }
export OMPI_MCA_btl=self,vader
np=4 steps=48
# 1.5 s per rank, and 250 ppm per rank: rank 3 is 4.5 s ahead, gaining
# 0.75 ms per s. Positive offsets are ahead of rank 0.
offset=1500000000 drift=250
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

run() {
  local name=$1
  SCOPE_PROFILER_OUTPUT="$work/$name.h5" timeout 120 mpirun --oversubscribe -n "$np" \
    -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_OUTPUT -x SCOPE_PROFILER_TEST_CLOCK_SKEW \
    "$prog" "$steps" > "$name.out" 2> "$name.err" ||
    { cat "$name.err"; echo "FAIL: $name run"; exit 1; }
  grep -q "^mpi-clock: $steps steps on $np ranks" "$name.out" ||
    { cat "$name.out" "$name.err"; echo "FAIL: $name output"; exit 1; }
}

export SCOPE_PROFILER_TEST_CLOCK_SKEW="$offset,$drift"
run skew
$py "$src/tests/e2e/mpi/check_clock.py" skew.h5 "$np" "$steps" skew "$offset" "$drift"
export SCOPE_PROFILER_TEST_CLOCK_SKEW=
run plain
$py "$src/tests/e2e/mpi/check_clock.py" plain.h5 "$np" "$steps" plain

# merge keeps the group, value for value.
"$cli" merge skew.h5 -o merged.h5 || { echo "FAIL: merge"; exit 1; }
$py - skew.h5 merged.h5 <<'PY'
import sys, h5py, numpy as np
a, b = (h5py.File(p, 'r')['clock_sync'] for p in sys.argv[1:])
assert sorted(a) == sorted(b), (sorted(a), sorted(b))
for k in a:
    assert a[k].dtype == b[k].dtype and np.array_equal(a[k][:], b[k][:]), k
assert dict(a.attrs) == dict(b.attrs), (dict(a.attrs), dict(b.attrs))
PY
# A /clock_sync that does not hold together is refused, not read.
$py - "$cli" skew.h5 <<'PY'
import shutil, subprocess, sys, h5py, numpy as np
cli, good = sys.argv[1:]
def replace(g, k, data):
    del g[k]
    g.create_dataset(k, data=data)
cases = {
    'short': lambda g: replace(g, 'errors', np.zeros(1, 'i8')),
    'rank': lambda g: g['ranks'].__setitem__(1, 2**30),
    'strings': lambda g: replace(g, 'drifts_ppm', np.array([b'x'] * len(g['ranks']))),
    '2d': lambda g: replace(g, 'applied', np.zeros((2, 2), 'i4')),
    'attr': lambda g: g.attrs.__setitem__('pingpongs', 'ten'),
}
for name, edit in cases.items():
    bad = f'bad-{name}.h5'
    shutil.copy(good, bad)
    with h5py.File(bad, 'r+') as f:
        edit(f['clock_sync'])
    r = subprocess.run([cli, 'merge', bad, '-o', bad + '.out.h5'], capture_output=True, text=True)
    assert r.returncode == 2 and '/clock_sync does not hold together' in r.stderr, (name, r)
PY
echo "clock alignment OK ($sp_mpi_family)"
