# SPDX-License-Identifier: MIT
"""scope-profiler tree: call_stack() keys, depths, parents, call paths,
exclusive time, re-nesting under filters, errors (§3.5, §6.3 cases 5-7)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import NS, CliTestCase, run, run_json, write_schema1  # noqa: E402

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
