# SPDX-License-Identifier: MIT
"""Multi-rank check: write random 3-rank profiles (schema 2 and 3, and a
schema-1 copy), compute every summary statistic with numpy, and
compare with `scope-profiler summary --json` (rel. 1e-12, integers exact).
Usage: multirank.py SCOPE_PROFILER_BINARY."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import profile_builder as B

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
    rows = [(rid, rank, *events[rank][name])
            for rank in range(RANKS) for rid, name in enumerate(NAMES)]
    B.columnar(path, NAMES, rows, schema=schema, metadata={"mpi_size": RANKS},
               index=B.row_columns(len(rows), tags='["t1", "t2"]', exclusive=-1))


def write_schema1(path, events):
    B.schema1(path, {rank: {name: events[rank][name] for name in NAMES}
                     for rank in range(RANKS)},
              attrs={(rank, name): {"tags": ["t1", "t2"]}
                     for rank in range(RANKS) for name in NAMES})


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
