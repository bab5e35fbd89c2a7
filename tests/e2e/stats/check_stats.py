"""Check a profile against numpy computations in upstream's order.

argv: scope-profiler binary, the HDF5 file, the number of ranks.
1. region_table/names holds only regions with a row; the registered but
   never-called region is in region_table/uncalled_names.
2. exclusive_totals equals an independent numpy/stack computation from the
   events (per rank and thread, sorted start asc / end desc / region order),
   and equals what our reader computes when the column is absent (-1).
3. summary --json equals, with ==, the Python reader's arithmetic
   (reference §3.1-3.2): per-rank seconds, sum over ranks in rank order,
   numpy mean/std/percentile/min/max over the pooled seconds.
"""
import json
import shutil
import subprocess
import sys

import h5py
import numpy as np

cli, path, nranks = sys.argv[1], sys.argv[2], int(sys.argv[3])


def py_sum(values):
    """Python's sum() of floats as the Python 3.11 the reference ran (plain
    left-to-right adds from 0)."""
    total = 0
    for v in values:
        total = total + v
    return total


def load(p):
    with h5py.File(p, "r") as f:
        names = [n.decode() for n in f["region_table/names"][()]]
        uncalled = ([n.decode() for n in f["region_table/uncalled_names"][()]]
                    if "uncalled_names" in f["region_table"] else [])
        ix = {k: f["rank_region_index/" + k][()] for k in
              ("region_ids", "ranks", "event_offsets", "event_counts", "exclusive_totals")}
        s = f["events/start_times"][()]
        e = f["events/end_times"][()]
        t = f["events/thread_ids"][()] if "thread_ids" in f["events"] else np.zeros_like(s)
    return names, uncalled, ix, s, e, t


names, uncalled, ix, s, e, t = load(path)
rows = {}  # (name, rank) -> (start, end, thread)
for rid, rank, off, cnt in zip(ix["region_ids"], ix["ranks"], ix["event_offsets"], ix["event_counts"]):
    sl = slice(int(off), int(off + cnt))
    rows[(names[rid], int(rank))] = (s[sl], e[sl], t[sl])

# 1. no name without a row
assert set(names) == {n for n, _ in rows}, (names, sorted(rows))
assert "never_called" in uncalled and "never_called" not in names, (names, uncalled)
assert sorted({r for _, r in rows}) == list(range(nranks))
for name in ("outer", "inner", "many"):
    assert all((name, r) in rows for r in range(nranks)), name
# exact call counts of the program
for r in range(nranks):
    calls = sum(3 + r + lane for lane in range(3))
    assert len(rows[("outer", r)][0]) == calls and len(rows[("inner", r)][0]) == 2 * calls
    assert len(rows[("many", r)][0]) == (9000 if r == 0 else 37 * r)

# 2. exclusive time, independently: region order = first start (s), ties file order
first = {n: min(float(rows[(n, r)][0].min()) / 1e9 if len(rows[(n, r)][0]) else 0.0
                for r in range(nranks) if (n, r) in rows) for n in names}
pos = {n: i for i, n in enumerate(sorted(names, key=lambda n: (first[n], names.index(n))))}
expect_excl = {}
for r in range(nranks):
    calls = []
    for n in names:
        if (n, r) not in rows:
            continue
        rs, re_, rt = rows[(n, r)]
        for k in range(len(rs)):
            calls.append((int(rt[k]), int(rs[k]), -int(re_[k]), pos[n], k, n))
        expect_excl[(n, r)] = 0
    calls.sort()
    stack, lane = [], None
    for th, st, neg_end, _, _, n in calls:
        en = -neg_end
        if th != lane:
            stack, lane = [], th
        while stack and 2 * stack[-1][1] + (stack[-1][1] == stack[-1][0]) <= 2 * st:
            stack.pop()
        expect_excl[(n, r)] += en - st
        if stack:
            assert en <= stack[-1][1], "not nested"
            expect_excl[(stack[-1][2], r)] -= en - st
        stack.append((st, en, n))
for rid, rank, x in zip(ix["region_ids"], ix["ranks"], ix["exclusive_totals"]):
    assert int(x) == expect_excl[(names[rid], int(rank))], (names[rid], rank, x)


def summary(p):
    out = subprocess.run([cli, "summary", "--json", p], check=True, capture_output=True, text=True)
    return {d["name"]: d for d in json.loads(out.stdout)}


ours = summary(path)
# the reader's own reconstruction gives the same totals
bare = path + ".noexcl.h5"
shutil.copy(path, bare)
with h5py.File(bare, "r+") as f:
    f["rank_region_index/exclusive_totals"][...] = -1
recomputed = summary(bare)
for n in names:
    want = sum(expect_excl[(n, r)] for r in range(nranks) if (n, r) in rows)
    assert ours[n]["exclusive_duration_ns"] == want == recomputed[n]["exclusive_duration_ns"], n

# 3. upstream's arithmetic, compared with ==
checked = 0
for n in names:
    ranks = [r for r in range(nranks) if (n, r) in rows]
    d_ns = [(rows[(n, r)][1] - rows[(n, r)][0]).astype(np.int64) for r in ranks]
    secs = [d / 1e9 for d in d_ns if len(d)]
    pooled = np.concatenate(secs)
    totals = [float(np.sum(d)) / 1e9 if len(d) else 0.0 for d in d_ns]
    excl = [expect_excl[(n, r)] / 1e9 if len(d) else 0.0 for r, d in zip(ranks, d_ns)]
    pos_totals = [x for x in totals if x > 0]
    imb = float(max(pos_totals) / np.mean(pos_totals)) if len(pos_totals) >= 2 else 0.0
    want = {
        "num_ranks": len(ranks), "num_calls": int(sum(len(d) for d in d_ns)),
        "total_duration": py_sum(totals), "inclusive_duration": py_sum(totals),
        "exclusive_duration": py_sum(excl),
        "average_duration": float(np.mean(pooled)), "std_duration": float(np.std(pooled)),
        "min_duration": float(np.min(pooled)), "max_duration": float(np.max(pooled)),
        "p50_duration": float(np.percentile(pooled, 50)),
        "p95_duration": float(np.percentile(pooled, 95)),
        "p99_duration": float(np.percentile(pooled, 99)),
        "rank_imbalance": imb, "rank_imbalance_pct": (imb - 1.0) * 100.0 if imb else 0.0,
    }
    for k, v in want.items():
        assert ours[n][k] == v, (n, k, repr(ours[n][k]), repr(v))
        checked += 1
print(f"{nranks} rank(s): names, exclusive_totals and {checked} summary values exact")
