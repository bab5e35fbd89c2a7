#!/bin/bash
# fork without exec: only the parent writes, with only its own calls.
set -euo pipefail
py=${SP_PYTHON:?}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
SCOPE_PROFILER_OUTPUT="$work/fork.h5" "${SP_BUILD_DIR:?}/tests/e2e/fork-child"
$py - "$work/fork.h5" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][()]]
counts = dict(zip((names[i] for i in f["rank_region_index/region_ids"][()]),
                  f["rank_region_index/event_counts"][()]))
assert counts == {"before_fork": 1, "after_fork": 1}, counts
print("fork: parent file intact", counts)
PY
