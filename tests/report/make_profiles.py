#!/usr/bin/python3
"""Write profiles with known contents for the chart and report tests.

usage: make_profiles.py DIR [--big N]

known.h5     schema 1, 3 ranks: main (1 call), step (4), compute (4, rank 2
             is 40 % slower), io (2 calls, rank 0 only)  -> 11/9/9 events
threads.h5   schema 2 with thread_ids: 1 rank, 2 threads (lanes)
scale_N.h5   N = 1, 2, 4 (omp_num_threads): solve 0.4/N s, setup 0.1 s
big.h5       schema 2, 4 ranks, N events in total (only with --big N)
"""
import sys
from pathlib import Path

import h5py
import numpy as np

MS = 1_000_000
BASE = 1_000_000_000


def meta(f, **attrs):
    g = f.create_group("metadata")
    for k, v in attrs.items():
        g.attrs[k] = v


def region(f, rank, name, starts, ends):
    g = f.create_group(f"rank{rank}/regions/{name}")
    g.create_dataset("start_times", data=np.asarray(starts, dtype=np.int64))
    g.create_dataset("end_times", data=np.asarray(ends, dtype=np.int64))


def known(path):
    with h5py.File(path, "w") as f:
        meta(f, mpi_size=3, omp_num_threads=1, total_cores=3, label="known",
             hostname="testhost")
        for r in range(3):
            region(f, r, "main", [BASE], [BASE + 100 * MS])
            s = [BASE + (10 + 20 * k) * MS for k in range(4)]
            region(f, r, "step", s, [x + 15 * MS for x in s])
            d = 14 * MS if r == 2 else 10 * MS
            region(f, r, "compute", [x + MS for x in s], [x + MS + d for x in s])
            if r == 0:
                region(f, r, "io", [BASE + 2 * MS, BASE + 92 * MS],
                       [BASE + 5 * MS, BASE + 95 * MS])


def columnar(path, rows, names, metadata, thread_ids=None):
    """rows: list of (region_id, rank, starts, ends[, threads]) in file order."""
    with h5py.File(path, "w") as f:
        f.attrs["scope_profiler_schema"] = 2
        f.attrs["storage_layout"] = "columnar"
        meta(f, **metadata)
        s = h5py.string_dtype()
        f.create_dataset("region_table/names", data=np.array(names, dtype=object), dtype=s)
        offs, counts, off = [], [], 0
        for row in rows:
            offs.append(off)
            counts.append(len(row[2]))
            off += len(row[2])
        n = len(rows)
        idx = f.create_group("rank_region_index")
        idx.create_dataset("region_ids", data=np.array([r[0] for r in rows], np.uint32))
        idx.create_dataset("ranks", data=np.array([r[1] for r in rows], np.uint32))
        idx.create_dataset("event_offsets", data=np.array(offs, np.uint64))
        idx.create_dataset("event_counts", data=np.array(counts, np.uint64))
        idx.create_dataset("source_lines", data=np.full(n, -1, np.int64))
        for col, val in (("source_files", ""), ("source_texts", ""), ("tags", "[]")):
            idx.create_dataset(col, data=np.array([val] * n, dtype=object), dtype=s)
        ev = f.create_group("events")
        ev.create_dataset("start_times", data=np.concatenate([r[2] for r in rows]).astype(np.int64))
        ev.create_dataset("end_times", data=np.concatenate([r[3] for r in rows]).astype(np.int64))
        if thread_ids is not None:
            ev.create_dataset("thread_ids", data=np.asarray(thread_ids, np.int64))


def threads(path):
    # rank 0, thread 0: work [0,50] with 2 inner calls; thread 1: work [10,40], 1 inner
    a = np.array
    rows = [(0, 0, a([BASE, BASE + 10 * MS]), a([BASE + 50 * MS, BASE + 40 * MS])),
            (1, 0, a([BASE + 5 * MS, BASE + 20 * MS, BASE + 15 * MS]),
             a([BASE + 10 * MS, BASE + 30 * MS, BASE + 25 * MS]))]
    tids = [0, 1, 0, 0, 1]
    columnar(path, rows, ["work", "inner"], {"mpi_size": 1}, tids)


def scale(path, n):
    with h5py.File(path, "w") as f:
        meta(f, omp_num_threads=n, mpi_size=1, total_cores=n)
        region(f, 0, "setup", [BASE], [BASE + 100 * MS])
        region(f, 0, "solve", [BASE + 100 * MS], [BASE + 100 * MS + 400 * MS // n])


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


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    known(out / "known.h5")
    threads(out / "threads.h5")
    for n in (1, 2, 4):
        scale(out / f"scale_{n}.h5", n)
    if "--big" in sys.argv:
        n = big(out / "big.h5", int(sys.argv[sys.argv.index("--big") + 1]))
        print(f"big.h5: {n} events")


if __name__ == "__main__":
    main()
