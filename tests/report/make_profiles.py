"""Write profiles with known contents for the chart and report tests.

usage: make_profiles.py DIR [--big N]

known.h5     schema 1, 3 ranks: main (1 call), step (4), compute (4, rank 2
             is 40 % slower), io (2 calls, rank 0 only)  -> 11/9/9 events
threads.h5   schema 2 with thread_ids: 1 rank, 2 threads (lanes)
scale_N.h5   N = 1, 2, 4 (omp_num_threads): solve 0.4/N s, setup 0.1 s
many.h5      schema 1, 3 ranks, 1 s: main, 45 functions and 15 MPI functions
             (every 4th region; rank r spends 2+r ms in each), a region
             20 % imbalanced (80 ms), one 50 % imbalanced but under 1 % of
             the run, and a 140-character C++ name
depths.h5    schema 1, 5 ranks nested 2, 2, 3, 1, 1 deep (the one-walk
             binning of the aggregated Gantt trusts the previous rank's depth)
big.h5       schema 2, 4 ranks, N events in total (only with --big N)
"""
import sys
from pathlib import Path

import numpy as np

import profile_builder as B

MS = 1_000_000
BASE = 1_000_000_000


def known(path):
    regions = {}
    for r in range(3):
        s = [BASE + (10 + 20 * k) * MS for k in range(4)]
        d = 14 * MS if r == 2 else 10 * MS
        regions[r] = {"main": ([BASE], [BASE + 100 * MS]),
                      "step": (s, [x + 15 * MS for x in s]),
                      "compute": ([x + MS for x in s], [x + MS + d for x in s])}
        if r == 0:
            regions[r]["io"] = ([BASE + 2 * MS, BASE + 92 * MS],
                                [BASE + 5 * MS, BASE + 95 * MS])
    B.schema1(path, regions, {"mpi_size": 3, "omp_num_threads": 1, "total_cores": 3,
                              "label": "known", "hostname": "testhost"})


def columnar(path, rows, names, metadata, thread_ids=None):
    """rows: list of (region_id, rank, starts, ends) in file order."""
    B.columnar(path, names, rows, metadata=metadata, index=B.row_columns(len(rows)),
               events=None if thread_ids is None else {"thread_ids": thread_ids})


def threads(path):
    # rank 0, thread 0: work [0,50] with 2 inner calls; thread 1: work [10,40], 1 inner
    a = np.array
    rows = [(0, 0, a([BASE, BASE + 10 * MS]), a([BASE + 50 * MS, BASE + 40 * MS])),
            (1, 0, a([BASE + 5 * MS, BASE + 20 * MS, BASE + 15 * MS]),
             a([BASE + 10 * MS, BASE + 30 * MS, BASE + 25 * MS]))]
    tids = [0, 1, 0, 0, 1]
    columnar(path, rows, ["work", "inner"], {"mpi_size": 1}, tids)


def scale(path, n):
    B.schema1(path, {0: {"setup": ([BASE], [BASE + 100 * MS]),
                         "solve": ([BASE + 100 * MS], [BASE + 100 * MS + 400 * MS // n])}},
              {"omp_num_threads": n, "mpi_size": 1, "total_cores": n})


def big(path, total):
    ranks = 4
    per = (total - ranks) // (2 * ranks)  # outer 1 + step per + kernel per
    rows = []
    for r in range(ranks):
        s = BASE + np.arange(per, dtype=np.int64) * 1000
        rows.append((0, r, np.array([BASE - 10]), np.array([BASE + per * 1000 + 10])))
        rows.append((1, r, s, s + 900))
        rows.append((2, r, s + 100, s + 100 + 500 + 100 * r))
    columnar(path, rows, ["outer", "step", "kernel"], {"mpi_size": ranks})
    return ranks * (1 + 2 * per)


DEPTHS = [2, 2, 3, 1, 1]


def depths(path):
    """Rank r nested DEPTHS[r] deep: a (1 call, or 4 side by side when 1
    deep) > b (4 calls) > c (4 calls)."""
    regions = {}
    for r, depth in enumerate(DEPTHS):
        s = [BASE + (5 + 20 * k) * MS for k in range(4)]
        if depth == 1:
            regions[r] = {"a": (s, [x + 10 * MS for x in s])}
            continue
        regions[r] = {"a": ([BASE], [BASE + 100 * MS]), "b": (s, [x + 10 * MS for x in s])}
        if depth == 3:
            regions[r]["c"] = ([x + MS for x in s], [x + 5 * MS for x in s])
    B.schema1(path, regions, {"mpi_size": len(DEPTHS)})


MANY_MPI = ["MPI_Send", "MPI_Recv", "MPI_Allreduce", "MPI_Bcast", "MPI_Barrier", "MPI_Isend",
            "MPI_Irecv", "MPI_Wait", "MPI_Waitall", "MPI_Reduce", "MPI_Gather", "MPI_Scatter",
            "MPI_Alltoall", "MPI_Allgather", "MPI_Sendrecv"]
LONG_NAME = ("std::vector<std::pair<unsigned long, double>, std::allocator<std::pair<unsigned long, "
             "double> > >::_M_realloc_insert<std::pair<unsigned long, double> const&>(int)")


def many_names():
    """Region names in file order and which of them are MPI functions."""
    names, mpi, funcs = ["main"], [], iter(f"func_{k:02d}" for k in range(45))
    it = iter(MANY_MPI)
    for k in range(60):
        names.append(next(it) if k % 4 == 3 else next(funcs))
    return names + ["imbalanced", "tiny", LONG_NAME]


def many(path):
    regions = {}
    for r in range(3):
        reg = {"main": ([BASE], [BASE + 1000 * MS])}
        for k, name in enumerate(many_names()[1:61]):
            if name in MANY_MPI:  # right after the function before it
                s = BASE + (k - 1) * 14 * MS + 6 * MS
                reg[name] = ([s], [s + (2 + r) * MS])
            else:
                reg[name] = ([BASE + k * 14 * MS], [BASE + k * 14 * MS + 5 * MS])
        reg["imbalanced"] = ([BASE + 905 * MS], [BASE + (905 + (80 if r == 2 else 60)) * MS])
        reg["tiny"] = ([BASE + 986 * MS], [BASE + 986 * MS + (200_000 if r == 2 else 100_000)])
        reg[LONG_NAME] = ([BASE + 990 * MS], [BASE + 991 * MS])
        regions[r] = reg
    B.schema1(path, regions, {"mpi_size": 3, "label": "many"})


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    known(out / "known.h5")
    threads(out / "threads.h5")
    for n in (1, 2, 4):
        scale(out / f"scale_{n}.h5", n)
    many(out / "many.h5")
    depths(out / "depths.h5")
    if "--big" in sys.argv:
        n = big(out / "big.h5", int(sys.argv[sys.argv.index("--big") + 1]))
        print(f"big.h5: {n} events")


if __name__ == "__main__":
    main()
