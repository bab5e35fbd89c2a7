# SPDX-License-Identifier: MIT
"""scope-profiler tree: call_stack() keys, depths, parents, call paths,
exclusive time, re-nesting under filters, errors (§3.5, §6.3 cases 5-7)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import NS, CliTestCase, h5py, np, run, run_json, write_schema1  # noqa: E402

KEYS = ["call_id", "name", "call_index", "start", "end", "duration",
        "inclusive_duration", "exclusive_duration", "depth", "parent",
        "call_path", "source_file", "source_lineno"]


class Tree(CliTestCase):
    def test_nested_stack(self):
        calls = run_json("tree", self.nested())
        self.assertEqual([list(c) for c in calls], [KEYS] * 4)
        self.assertEqual([(c["name"], c["depth"]) for c in calls],
                         [("outer", 0), ("inner", 1), ("leaf", 2), ("inner", 1)])
        self.assertEqual([c["parent"] for c in calls], [None, 0, 1, 0])
        self.assertEqual([c["call_id"] for c in calls], [0, 1, 2, 3])
        self.assertEqual([c["call_path"] for c in calls],
                         ["outer", "outer > inner", "outer > inner > leaf", "outer > inner"])
        self.assertEqual([c["call_index"] for c in calls], [0, 0, 0, 1])
        # Origin: first entry (no metadata); exclusive = own - direct children.
        self.assertEqual([c["start"] for c in calls], [0.0, 1e-08, 1.5e-08, 5e-08])
        self.assertEqual([round(c["exclusive_duration"] * 1e9) for c in calls],
                         [30, 25, 5, 40])
        self.assertEqual(calls[0]["duration"], 100 / 1e9)
        self.assertIsNone(calls[0]["source_file"])

    def test_exclude_renests(self):
        calls = run_json("tree", self.nested(), "--exclude", "inner")
        self.assertEqual([(c["name"], c["depth"], c["parent"]) for c in calls],
                         [("outer", 0, None), ("leaf", 1, 0)])
        self.assertEqual(calls[1]["call_path"], "outer > leaf")
        self.assertEqual(round(calls[0]["exclusive_duration"] * 1e9), 95)

    def test_max_depth_and_origin(self):
        calls = run_json("tree", self.nested(), "--max-depth", "2", "--origin", "absolute")
        self.assertEqual([c["depth"] for c in calls], [0, 1, 1])
        self.assertEqual(calls[0]["start"], 10 / 1e9)

    def test_text_tree(self):
        lines = run("tree", self.nested())[1].splitlines()
        self.assertIn("rank 0 (4 calls)", lines[0])
        body = lines[2:]
        self.assertEqual([len(l) - len(l.lstrip()) for l in body], [0, 2, 4, 2])
        self.assertEqual([l.split()[0] for l in body], ["outer", "inner", "leaf", "inner"])
        self.assertEqual(body[0].split()[1:], ["0.000000000", "0.000000100", "0.000000030"])

    def threaded(self):
        """Two threads whose calls interleave in time: thread 0 runs a > b,
        thread 1 runs c > d, starting in between."""
        path = self.path("threads.h5")
        calls = {"a": ([10, 50], [40, 90], [0, 0]), "b": ([20, 60], [30, 70], [0, 0]),
                 "c": ([15, 45], [44, 80], [1, 1]), "d": ([16, 46], [17, 47], [1, 1])}
        with h5py.File(path, "w") as f:
            f.attrs["scope_profiler_schema"] = np.int64(2)
            f.attrs["storage_layout"] = "columnar"
            f.create_dataset("region_table/names", data=list(calls), dtype=h5py.string_dtype())
            ix = f.create_group("rank_region_index")
            ix["region_ids"] = np.arange(4, dtype=np.uint32)
            ix["ranks"] = np.zeros(4, np.uint32)
            ix["event_offsets"] = np.arange(0, 8, 2, dtype=np.uint64)
            ix["event_counts"] = np.full(4, 2, np.uint64)
            f["events/start_times"] = np.concatenate([v[0] for v in calls.values()]) * NS
            f["events/end_times"] = np.concatenate([v[1] for v in calls.values()]) * NS
            f["events/thread_ids"] = np.concatenate([v[2] for v in calls.values()])
        return path, calls

    def test_threads_numbered_by_start(self):
        """Upstream's call_stack(): call_id = position among all threads' calls
        by start asc, end desc; parents found within each thread."""
        path, calls = self.threaded()
        flat = sorted(((s, -e, t, n, i) for n, (ss, es, ts) in calls.items()
                       for i, (s, e, t) in enumerate(zip(ss, es, ts))))
        want_ids = {(n, i): k for k, (_, _, _, n, i) in enumerate(flat)}
        parent_of = {"b": "a", "d": "c"}
        got = run_json("tree", path)
        self.assertEqual([c["call_id"] for c in got], list(range(8)))
        self.assertEqual([(c["name"], c["call_index"]) for c in got],
                         [(n, i) for _, _, _, n, i in flat])
        for c in got:
            self.assertEqual(c["call_id"], want_ids[(c["name"], c["call_index"])])
            p = parent_of.get(c["name"])
            self.assertEqual(c["parent"], want_ids[(p, c["call_index"])] if p else None)
        # --per-thread: thread 0's calls first, then thread 1's
        lanes = run_json("tree", path, "--per-thread")
        self.assertEqual([(c["name"], c["thread_id"]) for c in lanes],
                         [("a", 0), ("b", 0), ("a", 0), ("b", 0),
                          ("c", 1), ("d", 1), ("c", 1), ("d", 1)])
        self.assertEqual([c["call_id"] for c in lanes], list(range(8)))
        self.assertEqual([c["parent"] for c in lanes], [None, 0, None, 2, None, 4, None, 6])

    def test_rank_selection(self):
        path = write_schema1(self.path("r.h5"), {
            0: {"a": ([0], [NS])}, 3: {"b": ([0, 2 * NS], [NS, 3 * NS])}})
        calls = run_json("tree", path, "--rank", "3")
        self.assertEqual([c["name"] for c in calls], ["b", "b"])
        self.assertUsageError(["tree", path, "--rank", "2"],
                              "no rank 2", "available ranks: 0, 3")
        self.assertUsageError(["tree", path, "--thread", "1"], "thread")

    def test_partial_overlap(self):
        path = write_schema1(self.path("bad.h5"), {0: {
            "short": ([0], [50]), "long": ([10], [200])}})
        self.assertUsageError(["tree", path], "bad.h5", "not properly nested",
                              "'long' call 0 [10, 200] ns", "'short' call 0 [0, 50] ns")
        path = write_schema1(self.path("neg.h5"), {0: {"x": ([100], [10])}})
        self.assertUsageError(["tree", path], "ends before it starts")

    def test_edge_nesting(self):
        path = write_schema1(self.path("edge.h5"), {0: {
            "outer": ([0], [100]), "tick": ([0, 50], [0, 50])}})
        calls = run_json("tree", path)
        self.assertEqual([c["depth"] for c in calls], [0, 1, 1])
        self.assertEqual([round(c["exclusive_duration"] * 1e9) for c in calls], [100, 0, 0])


if __name__ == "__main__":
    unittest.main()
