#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The per-region statistics of `scope-profiler summary` in h5py + numpy
(the comparison point of the reader benchmark): read the schema-2 columns,
then per region, pooled over ranks: calls, total, mean, min, max, population
std, p50/p95/p99 (numpy linear), first/last duration and rank imbalance.
Usage: numpy_stats.py FILE.h5 (prints one line per region)."""
import sys

import h5py
import numpy as np


def main():
    with h5py.File(sys.argv[1], "r") as f:
        names = [n.decode() if isinstance(n, bytes) else n
                 for n in f["region_table/names"][()]]
        idx = f["rank_region_index"]
        regions = idx["region_ids"][()]
        ranks = idx["ranks"][()]
        offsets = idx["event_offsets"][()]
        counts = idx["event_counts"][()]
        starts = f["events/start_times"][()]
        ends = f["events/end_times"][()]
    dur = ends - starts
    for g, name in enumerate(names):
        rows = np.nonzero(regions == g)[0]
        rows = rows[np.argsort(ranks[rows], kind="stable")]
        parts = [dur[offsets[i]:offsets[i] + counts[i]] for i in rows]
        d = np.concatenate(parts) if parts else np.zeros(0, np.int64)
        if d.size == 0:
            continue
        totals = np.array([p.sum() for p in parts], dtype=np.float64) / 1e9
        used = totals[totals > 0]
        imb = used.max() / used.mean() if used.size >= 2 else 0.0
        p50, p95, p99 = np.percentile(d / 1e9, [50, 95, 99])
        first = starts[offsets[rows]]
        print(name, d.size, d.sum() / 1e9, d.mean() / 1e9, d.min() / 1e9,
              d.max() / 1e9, d.std() / 1e9, p50, p95, p99,
              parts[int(np.argmin(first))][0] / 1e9, imb)


if __name__ == "__main__":
    main()
