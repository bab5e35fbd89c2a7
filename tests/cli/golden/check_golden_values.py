#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The numbers of the golden texts, computed here from the raw events of
the same files with h5py/numpy (own nesting, own unit rule), so that the
golden files are not only "what the code printed": the tree and top-10
rows of tree-default.txt and mpi-default.txt, and the MPI block of
mpi-default.txt (MPI time per rank, top MPI functions with bytes)."""
import math
import os
import sys
import tempfile

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import golden_profiles  # noqa: E402

FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)


def dur(v):
    """docs/SUMMARY.md's unit rule, written again here."""
    a = abs(v)
    if a >= 0.9995:
        return "%.3f s" % v
    if a >= 0.9995e-3:
        return "%.3f ms" % (v * 1e3)
    if a >= 0.9995e-6:
        return "%.3f µs" % (v * 1e6)
    return "%.0f ns" % (v * 1e9)


def load(path):
    """Per (name, rank): start and end arrays, throttled count and ns;
    MPI bytes per name and rank; the wall time from the metadata."""
    f = h5py.File(path, "r")
    names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][()]]
    idx = f["rank_region_index"]
    s, e = f["events/start_times"][()], f["events/end_times"][()]
    b = f["events/mpi_bytes"][()] if "mpi_bytes" in f["events"] else None
    thr = idx["throttled_counts"][()] if "throttled_counts" in idx else None
    thr_ns = idx["throttled_totals"][()] if "throttled_totals" in idx else None
    rows = {}
    for i, (rid, rank, off, cnt) in enumerate(zip(idx["region_ids"][()], idx["ranks"][()],
                                                   idx["event_offsets"][()],
                                                   idx["event_counts"][()])):
        sl = slice(int(off), int(off + cnt))
        rows[(names[rid], int(rank))] = {
            "s": s[sl], "e": e[sl], "bytes": b[sl] if b is not None else None,
            "thr": int(thr[i]) if thr is not None else 0,
            "thr_ns": int(thr_ns[i]) if thr_ns is not None else 0}
    meta = f["metadata"].attrs
    wall = (int(meta["finalize_time_ns"]) - int(meta["start_time_ns"])) / 1e9
    return rows, wall


def exclusive(rows):
    """Exclusive ns per (name, rank) by containment: each call minus its
    direct children, per rank."""
    out = {}
    for rank in sorted({r for _, r in rows}):
        calls = sorted(((int(a), -int(z), n) for (n, r), v in rows.items() if r == rank
                        for a, z in zip(v["s"], v["e"])))
        stack = []
        for a, negz, n in calls:
            z = -negz
            while stack and stack[-1][1] <= a:
                stack.pop()
            out[(n, rank)] = out.get((n, rank), 0) + (z - a)
            if stack:
                p = stack[-1][2]
                out[(p, rank)] = out.get((p, rank), 0) - (z - a)
            stack.append((a, z, n))
    return out


def parse_rows(text, first_header):
    """{name: tokens after the name} of the table whose header starts with
    first_header (glyphs and the mark stripped)."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(first_header)) + 2
    out = {}
    for l in lines[start:]:
        if not l.strip() or l.startswith(("* ", "~ ", "  ")):
            break
        name = l.lstrip("│├└─ ").split("  ")[0].strip()
        rest = l.lstrip("│├└─ ")[len(name):].split()
        out[name] = [t for t in rest if t not in ("*", "~")]
    return out


def check_tree(path, text):
    rows, wall = load(path)
    excl = exclusive(rows)
    ranks = sorted({r for _, r in rows})
    nr = len(ranks)
    table = parse_rows(text, "call path")
    top = parse_rows(text, "region")
    for name in {n for n, _ in rows}:
        mine = {r: v for (n, r), v in rows.items() if n == name}
        tl = {r: int((v["e"] - v["s"]).sum()) for r, v in mine.items()}
        total = sum(tl.values()) + sum(v["thr_ns"] for v in mine.values())
        calls = sum(len(v["s"]) + v["thr"] for v in mine.values())
        ex = sum(excl[(name, r)] for r in mine)
        vals = list(tl.values())
        imb = max(vals) / np.mean(vals) if len(vals) > 1 else 1.0
        slow = max(mine, key=lambda r: (tl[r] + mine[r]["thr_ns"], -r))
        want = [str(calls), "%.1f" % (100 * (total / 1e9) / (wall * nr))] + \
            dur(total / 1e9 / nr).split() + dur(ex / 1e9 / nr).split() + \
            ["%.2f" % imb, "r%d" % slow]
        key = next((k for k in table if k == name or ("…" in k and name.startswith(k.split("…")[0]))), None)
        check(key is not None and table[key] == want,
              "%s: tree row %s, computed %s" % (os.path.basename(path), table.get(key), want))
        want_top = [str(calls)] + dur(ex / 1e9 / nr).split() + \
            ["%.1f" % (100 * (ex / 1e9) / (wall * nr))] + dur(total / 1e9 / nr).split()
        tkey = next((k for k in top if k == name), None)
        check(tkey is None or top[tkey] == want_top,
              "%s: top-10 row %s, computed %s" % (os.path.basename(path), top.get(tkey), want_top))
    return rows, wall, nr


def check_mpi(path, text):
    rows, wall, nr = check_tree(path, text)
    per_rank = {}
    fns = {}
    for (n, r), v in rows.items():
        if not n.startswith("MPI_"):
            continue
        t = int((v["e"] - v["s"]).sum())
        per_rank[r] = per_rank.get(r, 0) + t
        fn = fns.setdefault(n, [0, 0, None])
        fn[0] += len(v["s"])
        fn[1] += t
        b = v["bytes"][v["bytes"] >= 0]
        if len(b):
            fn[2] = (fn[2] or 0) + int(b.sum())
    lines = text.splitlines()
    block = lines[lines.index("MPI time per rank (% of the run)") + 3:][:3]
    lo, hi = min(per_rank, key=lambda r: (per_rank[r], r)), max(per_rank, key=lambda r: (per_rank[r], -r))
    mean = np.mean(list(per_rank.values()))
    for line, (label, v, rank) in zip(block, (("min", per_rank[lo], lo), ("mean", mean, None),
                                              ("max (slowest)", per_rank[hi], hi))):
        want = [label] + dur(v / 1e9).split() + ["%.1f" % (100 * (v / 1e9) / wall)] + \
            (["r%d" % rank] if rank is not None else [])
        got = line.split()
        got = [" ".join(got[:-len(want) + 1])] + got[-len(want) + 1:] if label != "mean" else \
            [got[0]] + got[1:]
        check(got == want, "MPI per rank: %s, computed %s" % (got, want))
    allt = sum(f[1] for f in fns.values())
    fn_rows = parse_rows(text, "function")
    for n, (calls, t, b) in fns.items():
        if b is None:
            bcell = ["-"]
        else:
            v = b / nr
            bcell = ["%d" % round(v), "B"] if v < 1024 else ["%.1f" % (v / 1024), "KiB"]
        want = [str(calls)] + dur(t / 1e9 / nr).split() + ["%.1f" % (100 * t / allt)] + bcell
        check(fn_rows.get(n) == want, "MPI function %s: %s, computed %s" % (n, fn_rows.get(n), want))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        golden_profiles.build_all(tmp)
        for name, fn in (("tree", check_tree), ("mpi", check_mpi)):
            with open(os.path.join(HERE, name + "-default.txt"), encoding="utf-8") as f:
                fn(os.path.join(tmp, name + ".h5"), f.read())
    for m in FAILS:
        print("FAIL", m)
    if FAILS:
        return 1
    print("golden numbers match h5py/numpy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
