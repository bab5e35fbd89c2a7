#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The numbers of the golden texts, computed here from the raw events of
the same files with h5py/numpy (own nesting, own unit rule), so that the
golden files are not only "what the code printed": the tree and top-10
rows of tree-default.txt, split-default.txt and mpi-default.txt (calls
counted but not on the timeline shared out over the call paths by the
rule of docs/SUMMARY.md, written again here), tree-flat.txt and
split-flat.txt, and the MPI block of mpi-default.txt (MPI time per rank,
top MPI functions with bytes)."""
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


def nodes_of(rows):
    """Per (rank, call path): timeline calls, inclusive and exclusive ns, by
    containment (these files have no recursion); dict order is the order of
    each path's first call, as the reader creates its nodes."""
    out = {}
    for rank in sorted({r for _, r in rows}):
        calls = sorted(((int(a), -int(z), n) for (n, r), v in rows.items() if r == rank
                        for a, z in zip(v["s"], v["e"])))
        stack = []
        for a, negz, n in calls:
            z = -negz
            while stack and stack[-1][1] <= a:
                stack.pop()
            path = (stack[-1][2] if stack else ()) + (n,)
            nd = out.setdefault((rank, path), dict(calls=0, incl=0, own=0, thr_calls=0, thr_ns=0,
                                                   moved=0, clamped=0, split=False))
            nd["calls"] += 1
            nd["incl"] += z - a
            nd["own"] += z - a
            if stack:
                out[(rank, stack[-1][2])]["own"] -= z - a
            stack.append((a, z, path))
    return out


def share_counted(rows, nodes):
    """docs/SUMMARY.md's rule, written again: per rank, a function's counted
    calls and their time go to its call paths in proportion to the paths'
    timeline calls (cumulative floor), and leave the parent path's own
    time, which never goes below 0 (the rest is clamped)."""
    for (rank, path), nd in nodes.items():
        v = rows[(path[-1], rank)]
        if not v["thr"]:
            continue
        mine = [k for k in nodes if k[0] == rank and k[1][-1] == path[-1]]
        timeline = sum(nodes[k]["calls"] for k in mine)
        seen = sum(nodes[k]["calls"] for k in mine[:mine.index((rank, path)) + 1])
        before = seen - nd["calls"]
        calls = v["thr"] * seen // timeline - v["thr"] * before // timeline
        ns = v["thr_ns"] * seen // timeline - v["thr_ns"] * before // timeline
        nd.update(thr_calls=calls, thr_ns=ns, split=len(mine) > 1)
        if len(path) > 1:
            p = nodes[(rank, path[:-1])]
            moved = min(ns, max(p["own"] - p["moved"], 0))
            p["moved"] += moved
            p["clamped"] += ns - moved


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


def parse_tree(text):
    """{call path: (mark, tokens after the name)} of the call-path table."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("call path")) + 2
    out, stack = {}, []
    for l in lines[start:]:
        if not l.strip() or l.startswith(("* ", "~ ", "  ")):
            break
        body = l.lstrip("│├└─ ")
        depth = (len(l) - len(body)) // 3
        name = body.split("  ")[0].strip()
        rest = body[len(name):].split()
        stack[depth:] = [name]
        mark = rest[0] if rest[0] in ("*", "~") else " "
        out[tuple(stack)] = (mark, [t for t in rest if t not in ("*", "~")])
    return out


def imbalance(vals):
    vals = [v for v in vals if v > 0]
    return max(vals) / np.mean(vals) if len(vals) > 1 else 1.0


def check_tree(path, text, flat_text=None):
    """The tree, the top 10 and (flat_text) the --flat table, with the
    counted calls shared out over the call paths."""
    rows, wall = load(path)
    nodes = nodes_of(rows)
    share_counted(rows, nodes)
    ranks = sorted({r for _, r in rows})
    nr = len(ranks)
    base = os.path.basename(path)
    tree = parse_tree(text)
    top = parse_rows(text, "region")
    flat = parse_rows(flat_text, "region") if flat_text else {}
    slow = {}
    for name in {n for n, _ in rows}:
        mine = {r: v for (n, r), v in rows.items() if n == name}
        slow[name] = max(mine, key=lambda r: (int((mine[r]["e"] - mine[r]["s"]).sum())
                                              + mine[r]["thr_ns"], -r))
    for p in {k[1] for k in nodes}:
        per = [nodes[(r, p)] for r in ranks if (r, p) in nodes]
        incl = sum(n["incl"] + n["thr_ns"] for n in per)
        leaf = not any(k[1][:-1] == p for k in nodes)
        excl = incl if leaf else sum(n["own"] + n["thr_ns"] - n["moved"] for n in per)
        counted = any(n["thr_calls"] or n["thr_ns"] for n in per)
        mark = ("~" if any(n["split"] for n in per) else "*") if counted else " "
        want = (mark, [str(sum(n["calls"] + n["thr_calls"] for n in per)),
                       "%.1f" % (100 * (incl / 1e9) / (wall * nr))] +
                dur(incl / 1e9 / nr).split() + dur(excl / 1e9 / nr).split() +
                ["%.2f" % imbalance([n["incl"] + n["thr_ns"] for n in per]),
                 "r%d" % slow[p[-1]]])
        check(tree.get(p) == want, "%s: tree row %s %s, computed %s" % (
            base, " > ".join(p), tree.get(p), want))
    for name in {n for n, _ in rows}:
        mine = {r: v for (n, r), v in rows.items() if n == name}
        per_rank = [int((v["e"] - v["s"]).sum()) + v["thr_ns"] for v in mine.values()]
        total = sum(per_rank)
        calls = sum(len(v["s"]) + v["thr"] for v in mine.values())
        ex = sum(n["own"] + n["thr_ns"] - n["moved"] for k, n in nodes.items() if k[1][-1] == name)
        want_top = [str(calls)] + dur(ex / 1e9 / nr).split() + \
            ["%.1f" % (100 * (ex / 1e9) / (wall * nr))] + dur(total / 1e9 / nr).split()
        tkey = next((k for k in top if k == name), None)
        check(tkey is None or top[tkey] == want_top,
              "%s: top-10 row %s, computed %s" % (base, top.get(tkey), want_top))
        want_flat = [str(calls)] + dur(total / 1e9 / nr).split() + dur(ex / 1e9 / nr).split() + \
            ["%.1f" % (100 * (total / 1e9) / (wall * nr)), "%.2f" % imbalance(per_rank),
             "r%d" % slow[name]]
        check(not flat or flat.get(name) == want_flat,
              "%s: --flat row %s, computed %s" % (base, flat.get(name), want_flat))
    clamped = sum(n["clamped"] for n in nodes.values())
    want_note = "note: %s of the counted calls' time" % dur(clamped / 1e9 / nr)
    check((want_note in text) == (clamped > 0),
          "%s: clamp note %r iff %d ns clamped" % (base, want_note, clamped))
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


def read(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        return f.read()


def main():
    with tempfile.TemporaryDirectory() as tmp:
        golden_profiles.build_all(tmp)
        for name, fn in (("tree", check_tree), ("mpi", check_mpi), ("split", check_tree)):
            texts = [read(name + "-default.txt")]
            if fn is check_tree:
                texts.append(read(name + "-flat.txt"))
            fn(os.path.join(tmp, name + ".h5"), *texts)
    for m in FAILS:
        print("FAIL", m)
    if FAILS:
        return 1
    print("golden numbers match h5py/numpy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
