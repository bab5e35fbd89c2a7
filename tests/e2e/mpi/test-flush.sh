#!/bin/bash
# sp_flush() under mpirun: per-rank checkpoints plus the merged final file.
set -euo pipefail
build=${SP_BUILD_DIR:?}
py=${SP_PYTHON:?}
source "${SP_SOURCE_DIR:?}/tests/lib/mpi.sh"  # once per MPI family
lib="$sp_mpi_lib"
lib="${SP_SANITIZER_PRELOAD:+$SP_SANITIZER_PRELOAD:}$lib"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
SCOPE_PROFILER_OUTPUT="$work/f.h5" SCOPE_PROFILER_QUIET=1 mpirun --oversubscribe -n 2 \
  -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_OUTPUT -x SCOPE_PROFILER_QUIET "$build/tests/e2e/mpi/mpi-flush$sp_sfx"
$py - "$work" <<'PY'
import sys, h5py
def counts(path):
    f = h5py.File(path, "r")
    names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][()]]
    out = {}
    for rid, rank, n in zip(f["rank_region_index/region_ids"][()], f["rank_region_index/ranks"][()],
                            f["rank_region_index/event_counts"][()]):
        out[(names[rid], int(rank))] = int(n)
    return out
w = sys.argv[1]
for r in (0, 1):
    c = counts(f"{w}/f.h5.rank{r:05d}")
    assert c.get(("before", r)) == 1 and ("after", r) not in c, c
final = counts(f"{w}/f.h5")
for r in (0, 1):
    assert final[("before", r)] == 1 and final[("after", r)] == 1, final
print("flush under MPI: per-rank checkpoints and merged final file OK")
PY
