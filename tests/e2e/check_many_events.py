#!/usr/bin/env python3
"""Independent check of a file written by tests/e2e/many-events: per row the
exact counts, rows back to back, entry order, every summary_statistics field
against numpy (mean and m2 to 1e-9 relative), nesting of inner/tail in
outer, and the thread column (worker rows on their own thread).
Usage: check_many_events.py FILE CALLS MODE ('' / threads / shared)."""
import sys

import h5py
import numpy as np

path, calls, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else ""
f = h5py.File(path, "r")
names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][()]]
idx = f["rank_region_index"]
starts, ends = f["events/start_times"][()], f["events/end_times"][()]
expected = {"outer": calls, "inner": calls, "tail": calls}
if mode:
    expected.update({"worker0": calls // 2, "worker1": calls // 2})
if mode == "shared":
    expected["both"] = 2 * (calls // 2)
rows = {names[r]: k for k, r in enumerate(idx["region_ids"][()])}
assert set(rows) == set(expected), (sorted(rows), sorted(expected))
offsets = idx["event_offsets"][()].astype(np.int64)
counts = idx["event_counts"][()].astype(np.int64)
assert int(counts.sum()) == len(starts) == len(ends)
summ = idx["summary_statistics"][()]
pos = 0
for k in range(len(counts)):
    assert offsets[k] == pos, "rows back to back"
    pos += counts[k]
for name, k in rows.items():
    n = int(counts[k])
    assert n == expected[name], (name, n)
    s = starts[offsets[k]:offsets[k] + n]
    e = ends[offsets[k]:offsets[k] + n]
    d = e - s
    assert (d >= 0).all(), name
    assert (np.diff(s) >= 0).all(), f"{name}: start order"
    st = summ[k]
    assert st["total"] == d.sum() and st["minimum"] == d.min() and st["maximum"] == d.max(), name
    assert st["first"] == d[0] and st["last"] == d[-1], name
    assert st["start_minimum"] == s.min() and st["end_maximum"] == e.max(), name
    mean = d.mean()
    m2 = ((d - mean) ** 2).sum()
    assert abs(st["mean"] - mean) <= 1e-9 * max(1.0, mean), (name, st["mean"], mean)
    assert abs(st["m2"] - m2) <= 1e-9 * max(1.0, m2), (name, st["m2"], m2)


def ev(name):
    k = rows[name]
    return starts[offsets[k]:offsets[k] + counts[k]], ends[offsets[k]:offsets[k] + counts[k]]


os_, oe = ev("outer")
for child in ("inner", "tail"):
    cs, ce = ev(child)
    assert (cs >= os_).all() and (ce <= oe).all(), f"{child} inside outer, call by call"
is_, ie = ev("inner")
ts, te = ev("tail")
assert (ie <= ts).all(), "tail after inner"
if mode:
    tids = f["events/thread_ids"][()]
    t_main = set(tids[offsets[rows["outer"]]:offsets[rows["outer"]] + calls])
    assert len(t_main) == 1, t_main
    seen = set()
    for w in ("worker0", "worker1"):
        k = rows[w]
        t = set(tids[offsets[k]:offsets[k] + counts[k]])
        assert len(t) == 1 and not t & t_main and not t & seen, (w, t)
        seen |= t
    if mode == "shared":
        k = rows["both"]
        assert set(tids[offsets[k]:offsets[k] + counts[k]]) == seen, "both: the two workers"
else:
    assert "thread_ids" not in f["events"], "one thread: no thread column"
print(f"{path}: {len(starts)} events, {len(rows)} rows: OK")
