#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Write a large schema-2 profile for the reader benchmark.
Usage: make_bench_file.py OUT.h5 [EVENTS] (default 10,000,000).
RANKS ranks; per rank one scope_profiler.session call holding steps; each
step holds compute (with two kernel calls) and comm: 5 events per step,
properly nested, durations jittered (fixed seed) so percentiles matter."""
import sys

import h5py
import numpy as np

RANKS = 4
NAMES = ["scope_profiler.session", "step", "compute", "kernel", "comm"]


def main():
    out = sys.argv[1]
    total = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000_000
    steps = (total // RANKS - 1) // 5
    rng = np.random.default_rng(42)
    starts = {k: [] for k in range(5)}
    ends = {k: [] for k in range(5)}
    idx = []
    for rank in range(RANKS):
        t = 1_000_000_000 + rank * 1_000 + np.arange(steps, dtype=np.int64) * 1_000
        j = rng.integers(0, 40, size=(5, steps), dtype=np.int64)
        ev = {
            1: (t, t + 900 - j[0]),
            2: (t + 10, t + 500 - j[1]),
            3: (np.stack([t + 20, t + 250], 1).ravel(),
                np.stack([t + 200 + j[2], t + 450 - j[3]], 1).ravel()),
            4: (t + 600, t + 850 - j[4]),
        }
        ev[0] = (np.array([t[0] - 100]), np.array([t[-1] + 2_000]))
        for k in range(5):
            starts[k].append(ev[k][0])
            ends[k].append(ev[k][1])
    s_all, e_all = [], []
    off = 0
    for rank in range(RANKS):
        for k in range(5):
            s, e = starts[k][rank], ends[k][rank]
            idx.append((k, rank, off, len(s)))
            s_all.append(s)
            e_all.append(e)
            off += len(s)
    with h5py.File(out, "w") as f:
        f.attrs["scope_profiler_schema"] = 2
        f.attrs["storage_layout"] = "columnar"
        md = f.create_group("metadata")
        md.attrs["mpi_size"] = RANKS
        md.attrs["start_time_ns"] = 999_000_000
        f.create_dataset("region_table/names", data=NAMES, dtype=h5py.string_dtype())
        g = f.create_group("rank_region_index")
        g["region_ids"] = np.array([i[0] for i in idx], dtype=np.uint32)
        g["ranks"] = np.array([i[1] for i in idx], dtype=np.uint32)
        g["event_offsets"] = np.array([i[2] for i in idx], dtype=np.uint64)
        g["event_counts"] = np.array([i[3] for i in idx], dtype=np.uint64)
        f["events/start_times"] = np.concatenate(s_all)
        f["events/end_times"] = np.concatenate(e_all)
    print(f"{out}: {off} events, {RANKS} ranks")


if __name__ == "__main__":
    main()
