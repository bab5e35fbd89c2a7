#!/usr/bin/env python3
"""Independent check of a file written by examples/manual-regions: the exact
schema-2 layout and dtypes of reference §1.4/§1.5/§1.9, the call counts the
example's source fixes, and consistency of every stored value."""
import json
import sys

import h5py
import numpy as np

path, steps = sys.argv[1], int(sys.argv[2])
f = h5py.File(path, "r")

assert f.attrs["scope_profiler_schema"] == 2
assert f.attrs["scope_profiler_schema"].dtype == np.int64
layout = f.attrs["storage_layout"]
assert (layout.decode() if isinstance(layout, bytes) else layout) == "columnar"
assert set(f.keys()) == {"metadata", "region_table", "rank_region_index", "events"}, set(f.keys())
assert len(f["metadata"].keys()) == 0, "metadata holds attributes only"

names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][()]]
expected = {"scope_profiler.session": 1, "solve": steps, "setup": 1,
            "timestep": steps, "assemble": steps}
assert sorted(names) == sorted(expected), names

idx = f["rank_region_index"]
dtypes = {"region_ids": "<u4", "ranks": "<u4", "event_offsets": "<u8",
          "event_counts": "<u8", "source_lines": "<i8", "exclusive_totals": "<i8"}
for col, dt in dtypes.items():
    assert idx[col].dtype == np.dtype(dt), (col, idx[col].dtype)
for col in ("source_files", "source_texts", "tags"):
    assert h5py.check_string_dtype(idx[col].dtype) is not None, col
ss = idx["summary_statistics"].dtype
assert ss.names == ("total", "minimum", "maximum", "first", "last", "start_minimum",
                    "end_maximum", "gpu_count", "gpu_total", "mean", "m2"), ss.names
assert [ss[n] for n in ss.names] == [np.dtype("<i8")] * 7 + [np.dtype("<u8"), np.dtype("<i8"),
                                     np.dtype("<f8"), np.dtype("<f8")]
assert set(f["events"].keys()) == {"start_times", "end_times"}
assert f["events/start_times"].dtype == np.int64 and f["events/end_times"].dtype == np.int64

starts = f["events/start_times"][()]
ends = f["events/end_times"][()]
offsets = idx["event_offsets"][()].astype(np.int64)
counts = idx["event_counts"][()].astype(np.int64)
assert (idx["ranks"][()] == 0).all()
assert int(counts.sum()) == len(starts) == len(ends)
pos = 0
summ = idx["summary_statistics"][()]
for row, rid in enumerate(idx["region_ids"][()]):
    name = names[rid]
    assert offsets[row] == pos, "rows are back to back"
    n = int(counts[row])
    pos += n
    assert n == expected[name], (name, n)
    s, e = starts[offsets[row]:offsets[row] + n], ends[offsets[row]:offsets[row] + n]
    d = e - s
    assert (d >= 0).all()
    assert (np.diff(s) >= 0).all(), "entry order"
    st = summ[row]
    assert st["total"] == d.sum() and st["minimum"] == d.min() and st["maximum"] == d.max()
    assert st["first"] == d[0] and st["last"] == d[-1]
    assert st["start_minimum"] == s.min() and st["end_maximum"] == e.max()
    assert st["gpu_count"] == 0 and st["gpu_total"] == 0
    assert abs(st["mean"] - d.mean()) <= 1e-6 * max(1.0, d.mean())
    assert abs(st["m2"] - ((d - d.mean()) ** 2).sum()) <= 1e-6 * max(1.0, st["m2"])
    tags = idx["tags"][row]
    assert json.loads(tags.decode() if isinstance(tags, bytes) else tags) == []
    if name == "assemble":
        # assemble sleeps 400 us * scale: at least that long.
        assert d.min() >= 400_000, d.min()

# exclusive_totals: own time minus the direct children's, from a stack over
# all calls (start asc, end desc; the example is single-threaded).
calls = sorted((int(starts[k]), -int(ends[k]), row) for row in range(len(counts))
               for k in range(offsets[row], offsets[row] + counts[row]))
want_excl, stack = [0] * len(counts), []
for st_, neg_e, row in calls:
    while stack and stack[-1][0] <= st_:
        stack.pop()
    want_excl[row] += -neg_e - st_
    if stack:
        want_excl[stack[-1][1]] -= -neg_e - st_
    stack.append((-neg_e, row))
assert idx["exclusive_totals"][()].tolist() == want_excl, (idx["exclusive_totals"][()], want_excl)

# Nesting: every assemble/solve call lies inside a timestep call.
def ev(name):
    row = list(idx["region_ids"][()]).index(names.index(name))
    o, n = offsets[row], counts[row]
    return starts[o:o + n], ends[o:o + n]
ts, te = ev("timestep")
for child in ("assemble", "solve"):
    cs, ce = ev(child)
    assert ((cs >= ts) & (ce <= te)).all(), child
ss_, se_ = ev("scope_profiler.session")
assert starts.min() == ss_[0] and ends.max() == se_[0]

md = f["metadata"].attrs
for key in ("timestamp", "start_time_ns", "finalize_time_ns", "hostname", "mpi_size",
            "omp_num_threads", "total_cores", "modules", "source", "source_language",
            "scope_profiler_version", "chip_information", "dropped_events"):
    assert key in md, key
assert md["mpi_size"] == 1 and md["dropped_events"] == 0
# Self-measurement: a positive per-call cost and the time spent finalizing.
assert 0 < md["profiler_event_cost_ns"] < 100_000, md["profiler_event_cost_ns"]
assert md["profiler_event_cost_ns"].dtype == np.float64
assert 0 <= md["profiler_finalize_ns"] < 60 * 10**9
assert md["start_time_ns"] <= starts.min() and md["finalize_time_ns"] >= ends.max()
src = md["source"]
assert (src.decode() if isinstance(src, bytes) else src) == "native"
ts_ = md["timestamp"]
assert (ts_.decode() if isinstance(ts_, bytes) else ts_).endswith("+00:00")
print("h5py layout check: OK", {n: int(c) for n, c in zip(names, counts)})
