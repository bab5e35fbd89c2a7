#!/bin/bash
# Upstream's C++ layer (api-cxx.cpp, -std=c++11) and SP_DISABLE_PROFILING
# (api-cxx-disabled.cpp, linked without the library: no region string in it),
# and threads sharing the default context (api-threads.c).
set -euo pipefail
build=${SP_BUILD_DIR:?}
src=${SP_SOURCE_DIR:?}
py=${SP_PYTHON:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export SCOPE_PROFILER_QUIET=1
SCOPE_PROFILER_OUTPUT="$work/proc.h5" "$build/tests/api/api-cxx" || exit 1
PYTHONPATH="$src/tests/api${PYTHONPATH:+:$PYTHONPATH}" $py "$src/tests/api/check_api_cxx.py" "$work"

disabled="$build/tests/api/api-cxx-disabled"
rc=0
"$disabled" || rc=$?
[ $rc = 0 ] || { echo "disabled program failed: $rc"; exit 1; }
if grep -qa -e disabled_region_string -e "mpi:" "$disabled"; then
  echo "a region string is in the SP_DISABLE_PROFILING executable"; exit 1
fi
if nm -D "$disabled" | grep -q " sp_"; then echo "the disabled program references sp_*"; exit 1; fi

SCOPE_PROFILER_OUTPUT="$work/threads-proc.h5" "$build/tests/api/api-threads" > threads.txt
grep -qxF "calls=4000 completed=4000" threads.txt || { cat threads.txt; exit 1; }
$py - "$work" <<'PY'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1] + "/threads_rank00000.h5", "r")
names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][()]]
idx = f["rank_region_index"]
row = [i for i, r in enumerate(idx["region_ids"][()]) if names[r] == "work"]
assert len(row) == 1 and int(idx["event_counts"][row[0]]) == 4000, row
o = int(idx["event_offsets"][row[0]])
tids = f["events/thread_ids"][o:o + 4000]
assert sorted(np.unique(tids, return_counts=True)[1]) == [1000] * 4, np.unique(tids, return_counts=True)
print("api-threads: OK")
PY
echo "api-cxx: OK"
