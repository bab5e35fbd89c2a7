# SPDX-License-Identifier: MIT
"""The fixed input files of the summary golden tests, built the same way
every run (tests/lib/profile_builder.py): known events, so the expected
text can be checked against numbers computed here (check_golden_values.py).

    tree.h5     2 ranks, a call tree with a long C++ name, a sub-us
                function and a throttled one, run 1.25 s (metadata)
    mpi.h5      4 ranks, MPI calls (kind from the name: no kinds dataset)
                with bytes, an imbalanced solve
    hostile.h5  names with ESC, an OSC title sequence, CR and a newline
"""
import numpy as np

import profile_builder as pb

MS = 1_000_000
LONG = ("std::vector<double, std::allocator<double> >::_M_realloc_insert<double const&>"
        "(__gnu_cxx::__normal_iterator<double*, std::vector<double, std::allocator<double> > >,"
        " double const&)")


def tree(path):
    names = ["main", "compute", "kernel", LONG, "io", "tiny"]
    # (region, rank, starts, ends) in ns.
    rows = [
        (0, 0, [0], [1000 * MS]),
        (1, 0, [100 * MS, 500 * MS], [400 * MS, 600 * MS]),
        (2, 0, [150 * MS], [350 * MS]),
        (3, 0, [520 * MS, 530 * MS], [521 * MS, 530 * MS + 750]),
        (4, 0, [700 * MS], [705 * MS]),
        (5, 0, [800 * MS, 801 * MS], [800 * MS + 250, 801 * MS + 350]),
        (0, 1, [0], [1200 * MS]),
        (1, 1, [100 * MS], [700 * MS]),
        (2, 1, [200 * MS], [600 * MS]),
        (4, 1, [800 * MS], [810 * MS]),
        (5, 1, [900 * MS], [900 * MS + 400]),
    ]
    n = len(rows)
    index = pb.row_columns(n)
    # tiny: 1000 more calls per rank counted, not on the timeline (300 ns each).
    index["throttled_counts"] = np.array([1000 if r[0] == 5 else 0 for r in rows], dtype=np.uint64)
    index["throttled_totals"] = np.array([300_000 if r[0] == 5 else 0 for r in rows], dtype=np.int64)
    meta = {"start_time_ns": 0, "finalize_time_ns": 1250 * MS}
    pb.columnar(path, names, rows, index=index, metadata=meta)


def mpi(path):
    names = ["main", "MPI_Init", "solve", "MPI_Send", "MPI_Recv", "MPI_Allreduce"]
    rows, byte_cols = [], []
    for rank in range(4):
        solve_end = 300 * MS + rank * 100 * MS       # rank 3 is the slowest
        rows += [
            (0, rank, [0], [1000 * MS]),
            (1, rank, [10 * MS], [60 * MS]),
            (2, rank, [100 * MS], [solve_end]),
            (3, rank, [110 * MS, 120 * MS], [112 * MS, 122 * MS]),
            (4, rank, [130 * MS], [130 * MS + 500_000 * (rank + 1)]),
            (5, rank, [solve_end + MS], [solve_end + MS + (4 - rank) * 20 * MS]),
        ]
        byte_cols += [[-1], [-1], [-1], [8000, 8000], [8000], [8]]
    events = {"mpi_bytes": np.concatenate([np.array(b, dtype=np.int64) for b in byte_cols])}
    meta = {"start_time_ns": 0, "finalize_time_ns": 1000 * MS}
    pb.columnar(path, names, rows, index=pb.row_columns(len(rows)), events=events, metadata=meta)


def hostile(path):
    names = ["main", "evil\x1b[31mred", "osc\x1b]0;pwned\x07", "cr\rreturn", "new\nline"]
    rows = [(0, 0, [0], [100 * MS])] + [
        (k, 0, [k * 10 * MS], [k * 10 * MS + k * MS]) for k in range(1, 5)]
    pb.columnar(path, names, rows, index=pb.row_columns(len(rows)),
                metadata={"start_time_ns": 0, "finalize_time_ns": 100 * MS})


def build_all(directory):
    import os
    for name, fn in (("tree.h5", tree), ("mpi.h5", mpi), ("hostile.h5", hostile)):
        fn(os.path.join(directory, name))
