# SPDX-License-Identifier: MIT
"""Profiles with known contents for the export tests, written with h5py as
schema-2 files (the layout of docs/FORMAT.md), plus a reference call-stack
reconstruction (containment, start asc / end desc) to compute expectations."""
import numpy as np

import profile_builder as B

BASE = 1_000_000_000  # absolute CLOCK_MONOTONIC-like offset, ns

# rank -> region -> list of (start, end, extra) relative to BASE.
NESTED = {
    0: {
        "main": [(0, 10_000)],
        "solve": [(1_000, 6_000), (6_500, 8_000)],
        "assemble": [(1_500, 2_500), (3_000, 4_500), (6_600, 6_700)],
        "io": [(8_100, 9_000)],
        "mpi:send": [(9_100, 9_600, {"bytes": 64, "peer": 1, "tag": 7, "comm": 0})],
        "odd;name": [(9_700, 9_700)],
    },
    1: {
        "main": [(10, 20_010)],
        "solve": [(100, 11_100)],
        "assemble": [(200, 300)],
        "mpi:send": [(12_000, 13_000, {"bytes": 128, "peer": 0, "tag": 7, "comm": 0})],
    },
}
NAMES = ["main", "solve", "assemble", "io", "mpi:send", "odd;name"]


def write_nested(path, mpi_size=2, data=NESTED, names=NAMES, lanes=None,
                 thread_names=None):
    """Write `data` as a schema-2 file. lanes: rank -> region -> thread ids."""
    rows, per_row = [], {"source_lines": [], "source_files": [], "source_texts": [],
                         "tags": []}
    mpi = {k: [] for k in ("mpi_bytes", "mpi_peers", "mpi_roots", "mpi_tags", "mpi_comms")}
    tids = []
    for rank in sorted(data):
        for rid, name in enumerate(names):
            calls = data[rank].get(name)
            if not calls:
                continue
            rows.append((rid, rank, [BASE + c[0] for c in calls], [BASE + c[1] for c in calls]))
            per_row["source_lines"].append(10 + rid if name == "solve" else -1)
            per_row["source_files"].append("solver.c" if name == "solve" else "")
            per_row["source_texts"].append("")
            per_row["tags"].append('["mpi.p2p"]' if name.startswith("mpi:") else "[]")
            for k, call in enumerate(calls):
                extra = call[2] if len(call) > 2 else {}
                mpi["mpi_bytes"].append(extra.get("bytes", -1))
                mpi["mpi_peers"].append(extra.get("peer", -1))
                mpi["mpi_roots"].append(-1)
                mpi["mpi_tags"].append(extra.get("tag", -1))
                mpi["mpi_comms"].append(extra.get("comm", -1))
                tids.append(lanes[rank][name][k] if lanes else -1)
    threads = None
    if lanes:
        mpi["thread_ids"] = tids
        lane_ids = sorted({(r, t) for r in lanes for ts in lanes[r].values() for t in ts})
        zeros = np.zeros(len(lane_ids), dtype=np.int64)
        threads = {"ranks": [r for r, _ in lane_ids], "index": [t for _, t in lane_ids],
                   "ident": zeros, "native_id": zeros, "start_ns": zeros, "end_ns": zeros,
                   "cpu_ns": zeros, "daemon": zeros,
                   "name": [thread_names[t] for _, t in lane_ids]}
    B.columnar(path, names, rows, index=per_row, events=mpi, threads=threads,
               metadata={"mpi_size": mpi_size, "label": "export-test", "omp_num_threads": 1})


def calls_of(data, names=NAMES, rank=0, lanes=None):
    """Reference call stack of one rank: list of dicts in pre-order."""
    calls = []
    for rid, name in enumerate(names):
        for k, c in enumerate(data[rank].get(name, [])):
            lane = lanes[rank][name][k] if lanes else -1
            calls.append({"name": name, "rid": rid, "k": k, "start": c[0],
                          "end": c[1], "lane": lane})
    calls.sort(key=lambda c: (c["lane"], c["start"], -c["end"], c["rid"], c["k"]))
    stack = []
    for c in calls:
        while stack and (stack[-1]["lane"] != c["lane"] or stack[-1]["end"] <= c["start"]
                         and not (stack[-1]["end"] == stack[-1]["start"] == c["start"])):
            stack.pop()
        c["parent"] = stack[-1] if stack else None
        c["path"] = (c["parent"]["path"] if stack else []) + [c["name"]]
        stack.append(c)
    return calls


def folded_expected(data, names=NAMES, ranks=None, prefix=True, lo=None, hi=None,
                    min_dur=0):
    """{path string: exclusive ns} as export folded should print it."""
    out = {}
    for rank in ranks if ranks is not None else sorted(data):
        calls = calls_of(data, names, rank)
        kept = set()
        for c in calls:
            s, e = c["start"], c["end"]
            ok = e - s >= min_dur and (lo is None or e > lo or s == e) and \
                (hi is None or s < hi or s == e)
            if ok and (c["parent"] is None or id(c["parent"]) in kept):
                kept.add(id(c))
                s = max(s, lo) if lo is not None else s
                e = min(e, hi) if hi is not None else e
                c["clipped"] = e - s
        for c in calls:
            if id(c) not in kept:
                continue
            key = ";".join(([f"rank {rank}"] if prefix else []) +
                           [p.replace(";", ":") for p in c["path"]])
            out[key] = out.get(key, 0) + c["clipped"]
            if c["parent"] is not None:
                pk = ";".join(([f"rank {rank}"] if prefix else []) +
                              [p.replace(";", ":") for p in c["parent"]["path"]])
                out[pk] = out.get(pk, 0) - c["clipped"]
    return {k: v for k, v in out.items() if v > 0}
