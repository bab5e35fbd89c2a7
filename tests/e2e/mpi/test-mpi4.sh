#!/bin/bash
# SPDX-License-Identifier: MIT
# MPI-4.0 calls under MPICH (mpi4.c): the large-count MPI_Send_c/MPI_Recv_c
# and MPI_Bcast_c, MPI_Isendrecv, a persistent collective and partitioned
# communication are wrapped: their rows, counts, kinds, bytes and peers in
# the file are the program's, read with h5py.
set -euo pipefail
py=${SP_PYTHON:?}
build=${SP_BUILD_DIR:?}; src=${SP_SOURCE_DIR:?}
source "$src/tests/lib/mpi.sh"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export SCOPE_PROFILER_OUTPUT="$work/mpi4.h5"
mpirun -n 2 -x LD_PRELOAD="$sp_mpi_lib" -x SCOPE_PROFILER_OUTPUT \
  "$build/tests/e2e/mpi/mpi4$sp_sfx" > "$work/out" 2> "$work/err" ||
  { cat "$work/err"; echo "FAIL: mpi4 run"; exit 1; }
grep -q '^rank 1: big\[999\] 999 got\[9\] 10 out\[3\] 7 hundred\[99\] 99 part\[63\] 31.5$' "$work/out" ||
  { cat "$work/out"; echo "FAIL: mpi4 results"; exit 1; }
$py - "$work/mpi4.h5" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1])
names = [n.decode() for n in f['region_table/names'][()]]
kinds = f['region_table/kinds'][()]
ix, ev = f['rank_region_index'], f['events']
got = {}
for i in range(len(ix['region_ids'])):
    r, rank, c = int(ix['region_ids'][i]), int(ix['ranks'][i]), int(ix['event_counts'][i])
    mo = int(ix['mpi_offsets'][i])
    col = lambda k: ev[k][mo:mo + c].tolist() if mo >= 0 else None
    got[(rank, names[r])] = (c, int(kinds[r]), col('mpi_bytes'), col('mpi_peers'), col('mpi_tags'))
SEND, RECV, SENDRECV, COLL, REQ = 3, 4, 5, 6, 9  # SP_KIND_MPI_* (docs/FORMAT.md)
want = {
    (0, 'MPI_Send_c'): (3, SEND, [8000] * 3, [1] * 3, [7] * 3),
    (1, 'MPI_Recv_c'): (3, RECV, [8000] * 3, [0] * 3, [7] * 3),
    (0, 'MPI_Isendrecv'): (2, SENDRECV, [40] * 2, [1] * 2, [3] * 2),
    (1, 'MPI_Isendrecv'): (2, SENDRECV, [40] * 2, [0] * 2, [3] * 2),
    (0, 'MPI_Allreduce_init'): (1, REQ, [32], [-1], [-1]),
    (0, 'MPI_Bcast_c'): (2, COLL, [400] * 2, [-1] * 2, [-1] * 2),
    (1, 'MPI_Bcast_c'): (2, COLL, [400] * 2, [-1] * 2, [-1] * 2),
    (0, 'MPI_Psend_init'): (1, REQ, [-1], [1], [9]),
    (1, 'MPI_Precv_init'): (1, REQ, [-1], [0], [9]),
}
bad = [f'{k}: got {got.get(k)}, want {v}' for k, v in want.items() if got.get(k) != v]
# the persistent collective's 4 doubles follow each start (5, then the partitioned one)
for rank in (0, 1):
    s = got.get((rank, 'MPI_Start'))
    if not s or s[0] != 6 or s[2][:5] != [32] * 5:
        bad.append(f'rank {rank} MPI_Start: {s}')
p = got.get((0, 'MPI_Pready'))
if not p or p[0] != 4 or p[1] != REQ:
    bad.append(f'rank 0 MPI_Pready: {p}')
if bad:
    sys.exit('FAIL: ' + '\n  '.join(bad))
print(f'mpi4: {len(want) + 3} rows as the program made them')
PY
echo "mpi4 ($sp_mpi_family): OK"
