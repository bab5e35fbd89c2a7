#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write a large schema-2 profile for the reader benchmark.
Usage: make_bench_file.py OUT.h5 [EVENTS] (default 10,000,000).
RANKS ranks; per rank one scope_profiler.session call holding steps; each
step holds compute (with two kernel calls) and comm: 5 events per step,
properly nested, durations jittered (fixed seed) so percentiles matter."""
import sys

import numpy as np

import profile_builder as B

RANKS = 4
NAMES = ["scope_profiler.session", "step", "compute", "kernel", "comm"]


def main():
    out = sys.argv[1]
    total = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000_000
    steps = (total // RANKS - 1) // 5
    rng = np.random.default_rng(42)
    starts = {k: [] for k in range(5)}
    ends = {k: [] for k in range(5)}
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
    rows = [(k, rank, starts[k][rank], ends[k][rank])
            for rank in range(RANKS) for k in range(5)]
    B.columnar(out, NAMES, rows, metadata={"mpi_size": RANKS, "start_time_ns": 999_000_000})
    off = sum(len(r[2]) for r in rows)
    print(f"{out}: {off} events, {RANKS} ranks")


if __name__ == "__main__":
    main()
