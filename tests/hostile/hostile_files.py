# SPDX-License-Identifier: MIT
"""Generators of hostile inputs for the reader and the CLI.

make_all(outdir, fixtures, extra_bases) writes every file and returns a list
of (path, strict) pairs: strict files are invalid by construction and every
command must reject them (exit 2); non-strict files (random bit flips) may
happen to stay readable, so for those only "no crash, and a failure is one
line naming the file" is required.

make_seeds(outdir) writes a few small valid profiles (fuzzing seed corpus).
"""
import json
import os
import random
import shutil
import struct

import h5py
import numpy as np

import profile_builder as B

STR = h5py.string_dtype()


# ---- valid base profiles -------------------------------------------------

def nested_events(ranks=2, depth=3, reps=4, t0=1_000_000, threads=False):
    """Properly nested calls: region d contains region d+1, per rank."""
    rows = []  # (region, rank, starts, ends, tids)
    for rank in range(ranks):
        per = {d: ([], [], []) for d in range(depth)}
        t = t0 + rank * 7
        for _ in range(reps):
            def call(d, start):
                if d == depth:
                    return start
                s = start
                inner = call(d + 1, s + 10)
                e = inner + 10 + d
                per[d][0].append(s)
                per[d][1].append(e)
                per[d][2].append(1000 + rank if threads else 0)
                return e
            t = call(0, t) + 5
        for d in range(depth):
            rows.append((d, rank, *per[d]))
    return rows


def write_columnar(path, schema=2, ranks=2, depth=3, reps=4, threads=False,
                   extras=True, names=None, layout="columnar", mpi_rows=False):
    """mpi_rows: the MPI columns in the row layout (values for the rows of
    region 1 only, rank_region_index/mpi_offsets), else full-length."""
    rows = nested_events(ranks, depth, reps, threads=threads)
    names = names or [f"region_{d}" for d in range(depth)]
    n_rows, n_events = len(rows), sum(len(r[2]) for r in rows)
    index, events, thread_table, events_attrs = {}, {}, None, None
    if extras:
        index = {"source_lines": np.arange(n_rows, dtype=np.int64),
                 "source_files": ["f.c"] * n_rows, "source_texts": ["x"] * n_rows,
                 "tags": ['["a", "b\\"c"]'] * n_rows}
    if threads:
        events["thread_ids"] = np.concatenate([r[4] for r in rows])
        thread_table = {"ranks": np.arange(ranks), "ident": np.arange(ranks) + 1000,
                        "name": ["MainThread"] * ranks}
    if extras and mpi_rows:
        mo, m = [], 0
        for region, _, s, _, _ in rows:
            mo.append(m if region == 1 else -1)
            m += len(s) if region == 1 else 0
        index["mpi_offsets"] = mo
        events_attrs = {B.EVENTS_ATTR_MPI_LAYOUT: "rows"}
        events["mpi_bytes"] = np.arange(m, dtype=np.int64) * 8
        events["mpi_peers"] = [i % ranks for i in range(m)]
    elif extras:
        events["mpi_bytes"] = np.full(n_events, 64, dtype=np.int64)
        events["mpi_peers"] = [i % ranks for i in range(n_events)]
    return B.columnar(path, names, [r[:4] for r in rows], schema=schema, layout=layout,
                      metadata={"mpi_size": ranks, "start_time_ns": 999_000,
                                "hostname": "fuzz", "argv": ["prog", "--x"]},
                      index=index, events=events, threads=thread_table,
                      events_attrs=events_attrs)


def write_schema1(path, ranks=2):
    regions, attrs = {}, {}
    for rank in range(ranks):
        regions[rank] = {"solve": (np.array([10, 20, 40]) + rank, np.array([15, 33, 55]) + rank),
                         "inner": (np.array([11, 21]) + rank, np.array([12, 30]) + rank)}
        attrs[(rank, "solve")] = {"source_file": "solver.py", "source_lineno": 7}
    return B.schema1(path, regions, {"mpi_size": ranks}, attrs=attrs)


def json_profile(regions=None):
    return {
        "format": "scope-profiler-profile", "format_version": 1,
        "num_ranks": 1, "metadata": {"mpi_size": 1, "start_time_ns": 5},
        "regions": regions if regions is not None else [
            {"name": "solve", "rank": 0, "start_times_ns": [10, 20, 40],
             "end_times_ns": [15, 33, 55], "thread_ids": [1, 1, 1]},
            {"name": "inner", "rank": 0, "start_times_ns": [11],
             "end_times_ns": [12]},
        ],
    }


def spt_bytes(version=2, regions=(("solve", [10, 20], [15, 33]),), rank=0,
              name_len=None, count=None, nregions=None):
    out = b"SCOPEPRF" + struct.pack("<iiq", version, rank,
                                     len(regions) if nregions is None else nregions)
    for name, s, e in regions:
        nb = name.encode()
        out += struct.pack("<I", len(nb) if name_len is None else name_len) + nb
        if version == 2:
            out += struct.pack("<I", 4) + b"a.py" + struct.pack("<I", 3)
        out += struct.pack("<q", len(s) if count is None else count)
        out += struct.pack(f"<{len(s)}q", *s) + struct.pack(f"<{len(e)}q", *e)
    return out


def make_seeds(outdir):
    os.makedirs(outdir, exist_ok=True)
    write_columnar(os.path.join(outdir, "s2.h5"), extras=True)
    write_columnar(os.path.join(outdir, "s3.h5"), schema=3, extras=False)
    write_columnar(os.path.join(outdir, "s2-threads.h5"), threads=True, extras=False)
    write_columnar(os.path.join(outdir, "s2-mpirows.h5"), mpi_rows=True)
    write_schema1(os.path.join(outdir, "s1.h5"))
    with open(os.path.join(outdir, "p.json"), "w") as fh:
        json.dump(json_profile(), fh)
    with open(os.path.join(outdir, "t.spt"), "wb") as fh:
        fh.write(spt_bytes())


# ---- hostile variants ------------------------------------------------------

def columnar_raw(path, *, schema=2, names=("a", "b"), region_ids=(0, 1),
                 ranks=(0, 0), offsets=(0, 2), counts=(2, 2),
                 starts=(1, 3, 5, 7), ends=(2, 4, 6, 8), dtypes=None,
                 drop=(), attrs=None):
    """A tiny schema-2 file with every column under the caller's control."""
    index = {"region_ids": region_ids, "ranks": ranks, "event_offsets": offsets,
             "event_counts": counts}
    events = {"start_times": starts, "end_times": ends}
    B.write_file(path, schema=schema, root_attrs=attrs,
                 names=None if "names" in drop else names,
                 index={k: v for k, v in index.items() if k not in drop},
                 events={k: v for k, v in events.items() if k not in drop},
                 dtypes=dtypes)


def hostile_h5(d):
    out = []

    def add(name, **kw):
        p = os.path.join(d, name)
        columnar_raw(p, **kw)
        out.append(p)

    add("schema4.h5", schema=4)
    add("schema-one.h5", schema="one")
    add("schema0.h5", schema=0)
    add("schema-neg.h5", schema=-7)
    add("schema-float.h5", schema=2.5)
    add("schema-array.h5", schema=np.array([2, 2]))
    add("schema-huge.h5", schema=2**62)
    add("past-end.h5", offsets=(0, 3))
    add("past-end-huge.h5", offsets=(0, 2**63 + 5))
    add("count-huge.h5", counts=(2, 2**62))
    add("count-max.h5", counts=(2, 2**64 - 1))
    add("count-negative.h5", counts=(2, -1), dtypes={"event_counts": np.int64})
    add("offset-negative.h5", offsets=(0, -2), dtypes={"event_offsets": np.int64})
    add("overlap.h5", offsets=(0, 1))
    add("duplicate-row.h5", region_ids=(0, 0))
    add("region-id-past.h5", region_ids=(0, 7))
    add("region-id-huge.h5", region_ids=(0, 2**32 - 1))
    add("rank-huge.h5", ranks=(0, 2**32 - 1))
    add("rank-negative.h5", ranks=(0, -1), dtypes={"ranks": np.int64})
    add("mismatch-index.h5", ranks=(0, 0, 0))
    add("mismatch-events.h5", ends=(2, 4, 6))
    add("missing-names.h5", drop=("names",))
    add("missing-region-ids.h5", drop=("region_ids",))
    add("missing-ranks.h5", drop=("ranks",))
    add("missing-offsets.h5", drop=("event_offsets",))
    add("missing-counts.h5", drop=("event_counts",))
    add("missing-start.h5", drop=("start_times",))
    add("missing-end.h5", drop=("end_times",))
    add("float-start.h5", starts=(1.5, 3.25, 5.0, 7.75),
        dtypes={"start_times": np.float64})
    add("float-nan.h5", starts=(np.nan, np.inf, -np.inf, 1e300),
        dtypes={"start_times": np.float64})
    add("string-ranks.h5", ranks=("zero", "one"), dtypes={"ranks": STR})
    add("times-limit.h5", starts=(0, 2**62, 4, 5), ends=(1, 2**62, 5, 6))
    add("times-extreme.h5", starts=(-2**63, 2**63 - 1, -2**63, 0),
        ends=(2**63 - 1, -2**63, 2**63 - 1, 2**63 - 1))
    # 2-D columns, scalar columns and a compound where a column belongs.
    p = os.path.join(d, "column-2d.h5")
    columnar_raw(p)
    with h5py.File(p, "a") as f:
        del f["events/start_times"]
        f["events/start_times"] = np.zeros((2, 2), dtype=np.int64)
    out.append(p)
    p = os.path.join(d, "column-scalar.h5")
    columnar_raw(p)
    with h5py.File(p, "a") as f:
        del f[f"{B.INDEX}/ranks"]
        f[f"{B.INDEX}/ranks"] = np.uint32(0)
    out.append(p)
    p = os.path.join(d, "column-compound.h5")
    columnar_raw(p)
    with h5py.File(p, "a") as f:
        del f["events/end_times"]
        f["events/end_times"] = np.zeros(4, dtype=[("a", "i8"), ("b", "f8")])
    out.append(p)
    p = os.path.join(d, "names-int.h5")
    columnar_raw(p, drop=("names",))
    with h5py.File(p, "a") as f:
        f["region_table/names"] = np.array([1, 2], dtype=np.int64)
    out.append(p)
    p = os.path.join(d, "names-is-group.h5")
    columnar_raw(p, drop=("names",))
    with h5py.File(p, "a") as f:
        f.create_group("region_table/names")
    out.append(p)
    p = os.path.join(d, "events-is-dataset.h5")
    columnar_raw(p, drop=("start_times", "end_times"))
    with h5py.File(p, "a") as f:
        del f["events"]
        f["events"] = np.zeros(3)
    out.append(p)
    p = os.path.join(d, "unallocated-huge.h5")
    columnar_raw(p)
    with h5py.File(p, "a") as f:   # claims 2^40 events, stores none
        del f["events/start_times"]
        del f["events/end_times"]
        f["events"].create_dataset("start_times", shape=(2**40,), dtype=np.int64)
        f["events"].create_dataset("end_times", shape=(2**40,), dtype=np.int64)
    out.append(p)
    p = os.path.join(d, "summary-bad.h5")
    columnar_raw(p)
    with h5py.File(p, "a") as f:
        f[f"{B.INDEX}/summary_statistics"] = np.zeros(5, dtype=[("x", "i8")])
    out.append(p)
    p = os.path.join(d, "strings-bad-len.h5")
    columnar_raw(p)
    with h5py.File(p, "a") as f:
        f.create_dataset(f"{B.INDEX}/source_files", data=["a"] * 5, dtype=STR)
    out.append(p)
    p = os.path.join(d, "thread-table-mismatch.h5")
    columnar_raw(p)
    with h5py.File(p, "a") as f:
        f["thread_table/ranks"] = np.zeros(3, dtype=np.uint32)
        f["thread_table/ident"] = np.zeros(5, dtype=np.int64)
    out.append(p)
    p = os.path.join(d, "thread-ids-mismatch.h5")
    columnar_raw(p)
    with h5py.File(p, "a") as f:
        f["events/thread_ids"] = np.zeros(7, dtype=np.int64)
    out.append(p)
    p = os.path.join(d, "schema1-empty.h5")
    with h5py.File(p, "w") as f:
        f.attrs["unrelated"] = 1
    out.append(p)
    p = os.path.join(d, "schema1-bad-region.h5")
    B.schema1(p, {0: {"solve": ([1, 2, 3], [2, 3])}}, {})
    out.append(p)
    p = os.path.join(d, "schema1-no-starts.h5")
    with h5py.File(p, "w") as f:
        f.create_group("metadata")
        f.create_group("rank0/regions/solve").attrs["count"] = 3
    out.append(p)
    p = os.path.join(d, "schema1-string-times.h5")
    with h5py.File(p, "w") as f:
        f.create_group("metadata")
        g = f.create_group("rank0/regions/solve")
        g.create_dataset("start_times", data=["1", "2"], dtype=STR)
        g["end_times"] = np.array([2, 3], dtype=np.int64)
    out.append(p)
    p = os.path.join(d, "plain-hdf5.h5")
    with h5py.File(p, "w") as f:
        f["data"] = np.arange(10)
    out.append(p)
    return out


def odd_h5(d):
    """Strange but readable files: every command must cope."""
    out = []
    p = os.path.join(d, "odd-end-before-start.h5")
    columnar_raw(p, ends=(0, 2, 4, 6))
    out.append(p)
    p = os.path.join(d, "odd-durations-2e62.h5")
    columnar_raw(p, starts=(0, 0, 0, 0), ends=(2**62 - 1,) * 4)
    out.append(p)
    p = os.path.join(d, "odd-negative-times.h5")
    columnar_raw(p, starts=(1 - 2**62, -10, -8, -6), ends=(-2**61, -9, -7, -5))
    out.append(p)
    # Calls nested inside each other, alternating two regions: a call tree
    # as deep as the calls (recursion in a tree walk overflows the stack).
    # Text outputs grow with depth^2 (indentation, folded stacks), so the
    # 100k-deep file runs only the commands in LINEAR_COMMANDS.
    for n, name in ((3_000, "odd-deep-nesting.h5"), (100_000, "odd-very-deep-nesting.h5")):
        k = np.arange(n, dtype=np.int64)
        a, b = k[0::2], k[1::2]
        p = os.path.join(d, name)
        columnar_raw(p, offsets=(0, len(a)), counts=(len(a), len(b)),
                     starts=np.concatenate([a, b]),
                     ends=np.concatenate([2 * n - a, 2 * n - b]))
        out.append(p)
    # Many rows, each its own region and rank: a dense region x rank table
    # would need rows^2 entries.
    m = 20_000
    p = os.path.join(d, "odd-sparse-ranks.h5")
    columnar_raw(p, names=[f"r{i}" for i in range(m)], region_ids=range(m),
                 ranks=range(m), offsets=range(m), counts=[1] * m,
                 starts=np.arange(m) * 10, ends=np.arange(m) * 10 + 5)
    out.append(p)
    return out


def hostile_text(d):
    out = []

    def raw(name, data):
        p = os.path.join(d, name)
        with open(p, "wb") as fh:
            fh.write(data)
        out.append(p)

    raw("empty.h5", b"")
    raw("random.h5", random.Random(1).randbytes(4096))
    raw("random-small.bin", random.Random(2).randbytes(7))
    raw("text.txt", b"hello, this is not a profile\n" * 20)
    raw("hdf5-magic-only.h5", b"\x89HDF\r\n\x1a\n")
    raw("hdf5-magic-garbage.h5", b"\x89HDF\r\n\x1a\n" + random.Random(3).randbytes(2000))
    raw("nul-bytes.h5", b"\0" * 1024)
    raw("spt-magic-only.spt", b"SCOPEPRF")
    full = json.dumps(json_profile()).encode()
    for cut in (1, len(full) // 3, len(full) // 2, len(full) - 1):
        raw(f"json-truncated-{cut}.json", full[:cut])
    raw("json-garbage.json", b'{"format": "scope-profiler-profile", ]]]')
    raw("json-not-object.json", b"[1, 2, 3]")
    raw("json-deep.json", b"{" + b'"a":[' * 100000 + b"]" * 100000 + b"}")
    raw("json-wrong-format.json", json.dumps({"format": "other"}).encode())
    raw("json-version-2.json", json.dumps(dict(json_profile(), format_version=2)).encode())
    raw("json-version-string.json", json.dumps(dict(json_profile(), format_version="1")).encode())
    bad_regions = [
        ("json-regions-not-list", {"a": 1}),
        ("json-region-no-name", [{"rank": 0, "start_times_ns": [1], "end_times_ns": [2]}]),
        ("json-rank-negative", [{"name": "x", "rank": -1, "start_times_ns": [1], "end_times_ns": [2]}]),
        ("json-rank-huge", [{"name": "x", "rank": 1e300, "start_times_ns": [1], "end_times_ns": [2]}]),
        ("json-rank-string", [{"name": "x", "rank": "0", "start_times_ns": [1], "end_times_ns": [2]}]),
        ("json-mismatch", [{"name": "x", "rank": 0, "start_times_ns": [1, 2], "end_times_ns": [2]}]),
        ("json-float-times", [{"name": "x", "rank": 0, "start_times_ns": [1.5, 1e308], "end_times_ns": [2, 3]}]),
        ("json-string-times", [{"name": "x", "rank": 0, "start_times_ns": ["1"], "end_times_ns": [2]}]),
        ("json-region-not-object", [1, "x", None]),
        ("json-dup-rows", [{"name": "x", "rank": 0, "start_times_ns": [1], "end_times_ns": [2]}] * 2),
        ("json-threads-mismatch", [{"name": "x", "rank": 0, "start_times_ns": [1], "end_times_ns": [2], "thread_ids": [1, 2]}]),
        ("json-huge-ints", [{"name": "x", "rank": 0, "start_times_ns": [-9223372036854775808, 99999999999999999999999], "end_times_ns": [9223372036854775807, 0]}]),
        ("json-aggregate-bad", [{"name": "x", "rank": 0, "aggregate": {"count": -5, "total": "x", "minimum": 1e300}}]),
    ]
    for name, regions in bad_regions:
        raw(name + ".json", json.dumps(json_profile(regions)).encode())
    for name, kw in (("spt-name-len-absurd", dict(name_len=0xFFFFFFF0)),
                     ("spt-name-len-neg", dict(name_len=0x80000000)),
                     ("spt-count-absurd", dict(count=2**62)),
                     ("spt-count-negative", dict(count=-1)),
                     ("spt-nregions-absurd", dict(nregions=2**62)),
                     ("spt-nregions-negative", dict(nregions=-3)),
                     ("spt-version-9", dict(version=9))):
        raw(name + ".spt", spt_bytes(**kw))
    raw("spt-trailing.spt", spt_bytes() + b"xyz")
    raw("spt-truncated.spt", spt_bytes()[:-5])
    return out


def truncations(src, d, tag):
    data = open(src, "rb").read()
    if src.endswith(".json"):
        data = data.rstrip()  # a cut must not just drop the final newline
    n = len(data)
    out = []
    cuts = sorted({1, 7, 8, 9, 64, 100, 512, 2048, n // 4, n // 2, 3 * n // 4,
                   n - 100, n - 9, n - 1})
    for cut in cuts:
        if 0 < cut < n:
            p = os.path.join(d, f"trunc-{tag}-{cut}{os.path.splitext(src)[1]}")
            with open(p, "wb") as fh:
                fh.write(data[:cut])
            out.append(p)
    return out


def bitflips(src, d, tag, count, seed):
    data = open(src, "rb").read()
    rng = random.Random(seed)
    out = []
    for i in range(count):
        buf = bytearray(data)
        for _ in range(rng.choice((1, 2, 4, 16))):
            k = rng.randrange(len(buf))
            buf[k] ^= 1 << rng.randrange(8)
        p = os.path.join(d, f"flip-{tag}-{i}{os.path.splitext(src)[1]}")
        with open(p, "wb") as fh:
            fh.write(buf)
        out.append(p)
    return out


def make_all(d, fixtures, extra_bases=(), flips_per_base=8):
    os.makedirs(d, exist_ok=True)
    strict = hostile_h5(d) + hostile_text(d)
    loose = []
    bases = []
    if fixtures:
        bases += B.fixture_paths(fixtures)
    rich = write_columnar(os.path.join(d, "base-rich.h5.src"), threads=True)
    bases.append(rich)
    bases += list(extra_bases)
    for i, b in enumerate(bases):
        tag = f"{i}-{os.path.basename(b).split('.')[0]}"
        ext = os.path.splitext(b)[1]
        if ext == ".src":
            tag += "-h5"
        strict += truncations(b, d, tag)
        loose += bitflips(b, d, tag, flips_per_base, seed=1000 + i)
    return ([(p, True) for p in strict] + [(p, "loads") for p in odd_h5(d)] +
            [(p, False) for p in loose])
