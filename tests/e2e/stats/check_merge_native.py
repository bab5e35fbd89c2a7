"""merge takes upstream's native per-rank files: <prefix>_rank<NNNNN>.h5 as
its C backend writes them (upstream-native-api.md §1.5, built here with
h5py), .spt v1 (written here byte by byte, §4.4) and the upstream .spt v2
fixture (tests/fixtures/native-v2.spt, rank 0). One merged file comes out
with exact counts and timestamps; two files of one rank are refused.

argv: scope-profiler binary, fixtures directory.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import h5py
import numpy as np

cli, fixtures = sys.argv[1], sys.argv[2]
work = tempfile.mkdtemp()


def native_h5(path, rank, regions):
    """One rank's file as upstream's scope_profiler_hdf5.h writes it."""
    names = list(regions)
    with h5py.File(path, "w") as f:
        f.attrs["scope_profiler_schema"] = np.int64(2)
        f.attrs["storage_layout"] = "columnar"
        m = f.create_group("metadata")
        m.attrs["source"] = "native"
        m.attrs["source_language"] = "c"
        m.attrs["trace_format_version"] = np.int64(2)
        m.attrs["mpi_rank"] = np.int64(rank)
        m.attrs["hostname"] = "node1"
        m.attrs["timestamp"] = "2026-01-01T00:00:00+00:00"
        m.attrs["label"] = "run"
        m.attrs["start_time_ns"] = np.int64(min(min(s) for s, _ in regions.values()))
        f.create_dataset("region_table/names", data=names, dtype=h5py.string_dtype())
        counts = np.array([len(regions[n][0]) for n in names], np.uint64)
        ix = f.create_group("rank_region_index")
        ix["region_ids"] = np.arange(len(names), dtype=np.uint32)
        ix["ranks"] = np.full(len(names), rank, np.uint32)
        ix["event_offsets"] = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.uint64)
        ix["event_counts"] = counts
        ix["source_lines"] = np.full(len(names), -1, np.int64)
        ix["exclusive_totals"] = np.full(len(names), -1, np.int64)
        for col, val in (("source_files", ""), ("source_texts", ""), ("tags", "[]")):
            ix.create_dataset(col, data=[val] * len(names), dtype=h5py.string_dtype())
        dt = np.dtype([(k, np.int64) for k in ("total", "minimum", "maximum", "first", "last",
                                                 "start_minimum", "end_maximum")] +
                      [("gpu_count", np.uint64), ("gpu_total", np.int64),
                       ("mean", np.float64), ("m2", np.float64)])
        stats = np.zeros(len(names), dt)
        for i, n in enumerate(names):
            s, e = np.array(regions[n][0]), np.array(regions[n][1])
            d = e - s
            mean = d.mean()
            stats[i] = (d.sum(), d.min(), d.max(), d[0], d[-1], s.min(), e.max(), 0, 0,
                        mean, ((d - mean) ** 2).sum())
        ix["summary_statistics"] = stats
        f["events/start_times"] = np.concatenate([regions[n][0] for n in names]).astype(np.int64)
        f["events/end_times"] = np.concatenate([regions[n][1] for n in names]).astype(np.int64)


def spt_v1(path, rank, regions):
    with open(path, "wb") as f:
        f.write(b"SCOPEPRF" + struct.pack("<iiq", 1, rank, len(regions)))
        for name, (s, e) in regions.items():
            b = name.encode()
            f.write(struct.pack("<i", len(b)) + b + struct.pack("<q", len(s)))
            f.write(struct.pack(f"<{len(s)}q", *s) + struct.pack(f"<{len(e)}q", *e))


rank1 = {"solve": ([100, 200], [150, 260]), "io": ([110], [120])}
rank2 = {"solve": ([300, 400, 500], [310, 430, 560])}
native_h5(os.path.join(work, "run_rank00001.h5"), 1, rank1)
spt_v1(os.path.join(work, "run_rank00002.spt"), 2, rank2)
shutil.copy(os.path.join(fixtures, "native-v2.spt"), os.path.join(work, "run_rank00000.spt"))
rank0 = {"solve": ([10, 20, 40], [15, 33, 55])}  # the fixture's content (§4.4)
inputs = [os.path.join(work, n) for n in ("run_rank00000.spt", "run_rank00001.h5",
                                          "run_rank00002.spt")]
out = os.path.join(work, "merged.h5")
subprocess.run([cli, "merge", *inputs, "-o", out], check=True, capture_output=True)

want = {(n, r): v for r, regs in enumerate((rank0, rank1, rank2)) for n, v in regs.items()}
with h5py.File(out, "r") as f:
    names = [n.decode() for n in f["region_table/names"][()]]
    ix = f["rank_region_index"]
    s, e = f["events/start_times"][()], f["events/end_times"][()]
    got = {}
    for rid, rank, off, cnt in zip(ix["region_ids"], ix["ranks"], ix["event_offsets"],
                                   ix["event_counts"]):
        got[(names[rid], int(rank))] = (s[off:off + cnt].tolist(), e[off:off + cnt].tolist())
    assert f["metadata"].attrs["mpi_size"] == 3, dict(f["metadata"].attrs)
    excl = dict(zip(((names[i], int(r)) for i, r in zip(ix["region_ids"], ix["ranks"])),
                    ix["exclusive_totals"][()].tolist()))
assert sorted(names) == ["io", "solve"], names
assert got == {k: (list(v[0]), list(v[1])) for k, v in want.items()}, got
# rank 1: io [110, 120] lies inside solve [100, 150]
assert excl == {("solve", 0): 5 + 13 + 15, ("solve", 1): 50 - 10 + 60, ("io", 1): 10,
                ("solve", 2): 10 + 30 + 60}, excl
summary = {d["name"]: d for d in json.loads(subprocess.run(
    [cli, "summary", "--json", out], check=True, capture_output=True, text=True).stdout)}
assert summary["solve"]["num_calls"] == 8 and summary["solve"]["num_ranks"] == 3, summary
assert summary["io"]["num_calls"] == 1 and summary["io"]["num_ranks"] == 1, summary

# two files of one rank (the v1 and v2 fixtures are both rank 0): refused
bad = subprocess.run([cli, "merge", os.path.join(fixtures, "native-v1.spt"),
                      os.path.join(fixtures, "native-v2.spt"), "-o",
                      os.path.join(work, "bad.h5")], capture_output=True, text=True)
assert bad.returncode == 2 and "rank 0 is in both" in bad.stderr, (bad.returncode, bad.stderr)
assert not os.path.exists(os.path.join(work, "bad.h5"))
shutil.rmtree(work)
print("merge of native per-rank files (.h5, .spt v1, .spt v2): exact")
