#!/usr/bin/env python3
"""Compare `scope-profiler summary --json` with statistics computed here by
h5py + numpy from the raw events (reference §3.1-3.3 definitions)."""
import json
import sys

import h5py
import numpy as np

path, summary_path = sys.argv[1], sys.argv[2]
f = h5py.File(path, "r")
names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][()]]
idx = f["rank_region_index"]
starts, ends = f["events/start_times"][()], f["events/end_times"][()]
per_name = {}
for rid, rank, off, cnt in zip(idx["region_ids"][()], idx["ranks"][()],
                               idx["event_offsets"][()], idx["event_counts"][()]):
    per_name.setdefault(names[rid], {})[int(rank)] = (starts[off:off + cnt], ends[off:off + cnt])

rows = json.load(open(summary_path))
assert isinstance(rows, list)
assert sorted(r["name"] for r in rows) == sorted(names), [r["name"] for r in rows]
for r in rows:
    ranks = per_name[r["name"]]
    d = np.concatenate([e - s for s, e in (ranks[k] for k in sorted(ranks))])
    exp = {
        "num_calls": len(d),
        "total_duration": int(d.sum()) / 1e9,
        "average_duration": d.mean() / 1e9,
        "min_duration": int(d.min()) / 1e9,
        "max_duration": int(d.max()) / 1e9,
        "std_duration": np.std(d / 1e9),
        "p50_duration": np.percentile(d / 1e9, 50),
        "p95_duration": np.percentile(d / 1e9, 95),
        "p99_duration": np.percentile(d / 1e9, 99),
    }
    for key, want in exp.items():
        got = r[key]
        if key == "num_calls":
            assert got == want, (r["name"], key, got, want)
        else:
            # To the nanosecond: values are seconds, so 1e-9 absolute.
            assert abs(got - want) <= 1e-9 * 0.5 + 1e-12 * abs(want), (r["name"], key, got, want)
    for key in ("name", "num_ranks", "inclusive_duration", "exclusive_duration",
                "first_duration", "last_duration", "tags", "rank_imbalance",
                "rank_imbalance_pct", "p50", "p95", "p99", "imbalance"):
        assert key in r, key
print("summary --json matches h5py/numpy:", len(rows), "regions")
