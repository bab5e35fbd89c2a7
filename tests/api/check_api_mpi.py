#!/usr/bin/env python3
"""Files of tests/api/api-mpi.cpp under mpirun -n 2. MODE "wrapped": our
PMPI layer records MPI_Send/MPI_Recv and the helpers add no region; MODE
"plain" (SCOPE_PROFILER_MPI=0): the helpers record upstream's names."""
import os
import sys

import h5py

from api_files import h5_calls

work, mode = sys.argv[1], sys.argv[2]
os.chdir(work)
files = sorted(f for f in os.listdir(".") if "_rank" in f and not f.endswith(".txt"))
# Names follow the argument; only rank 0 called sp_finalize.
# Rank 1's file is the snapshot of its flush.
assert files == ["mpiapi_rank00000.h5", "mpiapi_rank00001.h5", "ranked_rank00010.h5",
                 "ranked_rank00011.h5"], files
for name, want in (("ranked_rank00010.h5", 0), ("ranked_rank00011.h5", 1)):
    with h5py.File(name, "r") as f:
        ranks = set(int(x) for x in f["rank_region_index/ranks"][()])
        assert ranks == {want}, (name, ranks)  # contents: the MPI rank
calls, _ = h5_calls("proc.h5")  # the merged file of both ranks
got = {k: len(v[0]) for k, v in calls.items() if len(v[0])}
assert got["step"] == 6 and got["other"] == 6, got
mpi_names = sorted(k for k in got if k.startswith("mpi:"))
if mode == "wrapped":
    assert got["MPI_Send"] == 3 and got["MPI_Recv"] == 3 and got["MPI_Barrier"] == 2, got
    assert mpi_names == [], mpi_names  # nothing counted twice
else:
    assert "MPI_Send" not in got, got
    assert [n.split(" comm=")[0] for n in mpi_names] == [
        "mpi:barrier kind=collective bytes=0 peer=-1 root=-1 tag=-1",
        "mpi:recv kind=point-to-point bytes=32 peer=0 root=-1 tag=9",
        "mpi:send kind=point-to-point bytes=32 peer=1 root=-1 tag=9"], mpi_names
    assert got[mpi_names[1]] == 3 and got[mpi_names[2]] == 3 and got[mpi_names[0]] == 2
print("api-mpi files (%s): OK" % mode)
