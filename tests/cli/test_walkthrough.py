# SPDX-License-Identifier: MIT
"""The seeds' walkthrough (02/05) on a file our profiler writes:
examples/manual-regions 5 (session 1, setup 1, timestep 5, assemble 5,
solve 5; assemble and solve nested in timestep), checked through the
--json output of inspect, events, tree and export region-statistics."""

import collections
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import CliTestCase, h5py, run, run_json  # noqa: E402

SESSION = "scope_profiler.session"
COUNTS = {SESSION: 1, "setup": 1, "timestep": 5, "assemble": 5, "solve": 5}
EXAMPLE = os.path.join(os.environ.get("SP_BUILD_DIR", "."), "examples", "manual-regions")


class Walkthrough(CliTestCase):
    def setUp(self):
        super().setUp()
        if not os.access(EXAMPLE, os.X_OK):
            self.fail(f"{EXAMPLE} not built")
        self.file = self.path("profiling_data.h5")
        env = dict(os.environ, SCOPE_PROFILER_OUTPUT=self.file)
        subprocess.run([EXAMPLE, "5"], env=env, check=True, capture_output=True)

    def test_regions_and_counts(self):
        doc = run_json("inspect", self.file)
        self.assertEqual(doc["num_ranks"], 1)
        self.assertEqual({r["name"]: r["num_calls"] for r in doc["regions"]}, COUNTS)
        self.assertEqual([r["name"] for r in doc["regions"]][:2], [SESSION, "setup"])
        self.assertIn("start_time_ns", doc["metadata"])

    def test_events(self):
        events = run_json("events", self.file)
        self.assertEqual(collections.Counter(e["name"] for e in events), COUNTS)
        names = [e["name"] for e in events]
        # get_regions order (first start), then call order.
        self.assertEqual(list(dict.fromkeys(names)),
                         [SESSION, "setup", "timestep", "assemble", "solve"])
        self.assertEqual([e["call_index"] for e in events if e["name"] == "solve"],
                         list(range(5)))
        with h5py.File(self.file) as f:
            origin = int(f["metadata"].attrs["start_time_ns"]) / 1e9
        self.assertTrue(all(e["start"] >= 0 for e in events))
        absolute = run_json("events", self.file, "--origin", "absolute", "--include", "setup")
        self.assertEqual(absolute[0]["start"] - origin, events[1]["start"])

    def test_tree_shape(self):
        calls = run_json("tree", self.file)
        self.assertEqual(len(calls), sum(COUNTS.values()))
        self.assertEqual((calls[0]["name"], calls[0]["depth"], calls[0]["parent"]),
                         (SESSION, 0, None))
        by_name = collections.defaultdict(list)
        for call in calls:
            by_name[call["name"]].append(call)
        for name in ("setup", "timestep"):
            self.assertTrue(all(c["depth"] == 1 and c["parent"] == 0 for c in by_name[name]))
        for name in ("assemble", "solve"):
            for call in by_name[name]:
                self.assertEqual(call["depth"], 2)
                self.assertEqual(calls[call["parent"]]["name"], "timestep")
                self.assertEqual(call["call_path"], f"{SESSION} > timestep > {name}")
        children = collections.Counter(calls[c["parent"]]["call_index"]
                                       for c in calls if c["depth"] == 2)
        self.assertEqual(children, {i: 2 for i in range(5)})
        # Without the session, the timesteps become roots (re-nesting).
        calls = run_json("tree", self.file, "--exclude", "scope_profiler")
        self.assertEqual({c["name"] for c in calls if c["depth"] == 0}, {"setup", "timestep"})
        self.assertEqual(run("tree", self.file)[1].count("\n    assemble"), 5)

    def test_region_statistics(self):
        out = self.path("stats.json")
        run("export", "region-statistics", self.file, "-o", out, "--include", "solve")
        with open(out) as f:
            doc = json.load(f)
        solve = doc["files"][0]["region_statistics"]["solve"]
        self.assertEqual(solve["count"], 5)
        self.assertEqual(list(solve["per_rank"]), ["0"])
        self.assertEqual(doc["files"][0]["num_ranks"], 1)
        self.assertEqual(doc["common_regions"], ["solve"])


if __name__ == "__main__":
    unittest.main()
