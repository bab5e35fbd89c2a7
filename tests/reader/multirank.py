#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Multi-rank check: write random 3-rank profiles (schema 2 and 3, and a
schema-1 copy) with h5py, compute every summary statistic with numpy, and
compare with `scope-profiler summary --json` (rel. 1e-12, integers exact).
Usage: multirank.py SCOPE_PROFILER_BINARY. Exit 77 when h5py is missing."""
import json
import os
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
except ImportError as exc:  # pragma: no cover
    print(f"skip: {exc}")
    sys.exit(77)

RANKS = 3
NAMES = ["outer", "inner", "io"]


def generate(seed):
    """events[rank][name] = (starts, ends) int64 ns, properly nested."""
    rng = np.random.default_rng(seed)
    events = {}
    for rank in range(RANKS):
        t = int(rng.integers(1_000, 50_000))
        ev = {n: ([], []) for n in NAMES}
        for _ in range(int(rng.integers(20, 40)) + rank * 7):
            o_start = t
            t += int(rng.integers(1, 500))
            for _ in range(int(rng.integers(0, 4))):
                s = t
                t += int(rng.integers(1, 100_000))
                ev["inner"][0].append(s)
                ev["inner"][1].append(t)
                t += int(rng.integers(0, 300))
            t += int(rng.integers(1, 800))
            ev["outer"][0].append(o_start)
            ev["outer"][1].append(t)
            s = t + int(rng.integers(0, 50))
            t = s + int(rng.integers(0, 30_000))  # io may be zero-length
            ev["io"][0].append(s)
            ev["io"][1].append(t)
            t += int(rng.integers(1, 100))
        events[rank] = {n: (np.array(a, dtype=np.int64), np.array(b, dtype=np.int64))
                        for n, (a, b) in ev.items()}
    return events


def write_columnar(path, events, schema):
    with h5py.File(path, "w") as f:
        f.attrs["scope_profiler_schema"] = schema
        f.attrs["storage_layout"] = "columnar"
        f.create_group("metadata").attrs["mpi_size"] = RANKS
        str_t = h5py.string_dtype()
        f.create_dataset("region_table/names", data=NAMES, dtype=str_t)
        rows = {k: [] for k in ["region_ids", "ranks", "event_offsets", "event_counts"]}
        starts, ends = [], []
        off = 0
        for rank in range(RANKS):
            for rid, name in enumerate(NAMES):
                s, e = events[rank][name]
                rows["region_ids"].append(rid)
                rows["ranks"].append(rank)
                rows["event_offsets"].append(off)
                rows["event_counts"].append(len(s))
                off += len(s)
                if schema == 3:
                    starts.append(np.diff(s, prepend=0))
                    ends.append(e - s)
                else:
                    starts.append(s)
                    ends.append(e)
        idx = f.create_group("rank_region_index")
        idx["region_ids"] = np.array(rows["region_ids"], dtype=np.uint32)
        idx["ranks"] = np.array(rows["ranks"], dtype=np.uint32)
        idx["event_offsets"] = np.array(rows["event_offsets"], dtype=np.uint64)
        idx["event_counts"] = np.array(rows["event_counts"], dtype=np.uint64)
        n = len(rows["ranks"])
        idx["source_lines"] = np.full(n, -1, dtype=np.int64)
        idx.create_dataset("source_files", data=[""] * n, dtype=str_t)
        idx.create_dataset("source_texts", data=[""] * n, dtype=str_t)
        idx.create_dataset("tags", data=['["t1", "t2"]'] * n, dtype=str_t)
        idx["exclusive_totals"] = np.full(n, -1, dtype=np.int64)
        ev = f.create_group("events")
        if schema == 3:
            ev["start_deltas"] = np.concatenate(starts)
            ev["durations"] = np.concatenate(ends)
        else:
            ev["start_times"] = np.concatenate(starts)
            ev["end_times"] = np.concatenate(ends)


def write_schema1(path, events):
    with h5py.File(path, "w") as f:
        for rank in range(RANKS):
            for name in NAMES:
                s, e = events[rank][name]
                g = f.create_group(f"rank{rank}/regions/{name}")
                g["start_times"] = s
                g["end_times"] = e
                g.attrs["tags"] = np.array(["t1", "t2"], dtype=h5py.string_dtype())


def expected(events, ranks):
    out = {}
    order = []
    for name in NAMES:
        per = {r: events[r][name] for r in ranks}
        durs = [(e - s) for s, e in per.values()]
        pooled = np.concatenate(durs) / 1e9
        totals = {r: int((e - s).sum()) / 1e9 for r, (s, e) in per.items()}
        first_rank = min(ranks, key=lambda r: (per[r][0].min() / 1e9, r))
        last_rank = max(sorted(ranks, reverse=True), key=lambda r: per[r][1].max() / 1e9)
        pos = [t for t in totals.values() if t > 0]
        imb = max(pos) / np.mean(pos) if len(pos) >= 2 else 0.0
        out[name] = {
            "num_ranks": len(ranks),
            "num_calls": int(len(pooled)),
            "total_duration": int(sum(int(d.sum()) for d in durs)) / 1e9,
            "average_duration": float(np.mean(pooled)),
            "min_duration": float(pooled.min()),
            "max_duration": float(pooled.max()),
            "first_duration": float((per[first_rank][1] - per[first_rank][0])[0] / 1e9),
            "last_duration": float((per[last_rank][1] - per[last_rank][0])[-1] / 1e9),
            "std_duration": float(np.std(pooled)),
            "p50_duration": float(np.percentile(pooled, 50)),
            "p95_duration": float(np.percentile(pooled, 95)),
            "p99_duration": float(np.percentile(pooled, 99)),
            "rank_imbalance": float(imb),
            "rank_imbalance_pct": float((imb - 1) * 100 if imb else 0.0),
        }
        first_starts = [events[r][name][0].min() / 1e9 for r in range(RANKS)]
        order.append((min(first_starts), NAMES.index(name), name))
    inner = sum(int((events[r]["inner"][1] - events[r]["inner"][0]).sum()) for r in ranks)
    outer = sum(int((events[r]["outer"][1] - events[r]["outer"][0]).sum()) for r in ranks)
    out["outer"]["exclusive_duration"] = (outer - inner) / 1e9
    out["inner"]["exclusive_duration"] = out["inner"]["total_duration"]
    out["io"]["exclusive_duration"] = out["io"]["total_duration"]
    return out, [n for _, _, n in sorted(order)]


def compare(binary, path, events, ranks, extra):
    got = json.loads(subprocess.run([binary, "summary", "--json", path] + extra,
                                    check=True, capture_output=True, text=True).stdout)
    want, order = expected(events, ranks)
    errors = []
    if [g["name"] for g in got] != order:
        errors.append(f"order {[g['name'] for g in got]} != {order}")
    for g in got:
        w = want[g["name"]]
        if g["tags"] != ["t1", "t2"]:
            errors.append(f"{g['name']}: tags {g['tags']}")
        for key, value in w.items():
            v = g[key]
            if isinstance(value, int) and not isinstance(value, bool):
                ok = v == value
            else:
                ok = abs(v - value) <= 1e-12 * max(abs(value), 1e-300) or v == value
            if not ok:
                errors.append(f"{path} {extra} {g['name']}.{key}: got {v!r}, numpy {value!r}")
        for alias, key in [("p50", "p50_duration"), ("p95", "p95_duration"),
                           ("p99", "p99_duration"), ("imbalance", "rank_imbalance_pct")]:
            if g[alias] != g[key]:
                errors.append(f"{g['name']}: {alias} != {key}")
    return errors


def main():
    binary = sys.argv[1]
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in (1, 2, 3):
            events = generate(seed)
            files = []
            for schema in (2, 3):
                p = os.path.join(tmp, f"s{schema}-{seed}.h5")
                write_columnar(p, events, schema)
                files.append(p)
            p = os.path.join(tmp, f"s1-{seed}.h5")
            write_schema1(p, events)
            files.append(p)
            for p in files:
                errors += compare(binary, p, events, list(range(RANKS)), [])
                errors += compare(binary, p, events, [0, 2], ["--ranks", "0,2"])
    for e in errors:
        print(e)
    print(f"multirank: {len(errors)} mismatches")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
