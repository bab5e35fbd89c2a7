# SPDX-License-Identifier: MIT
"""The profiler's own share (docs/FORMAT.md "Self-measurement"):
the `summary` footer and the per-region `profiler_overhead_estimate` of
`summary --json`, checked against the file's metadata and event counts, on
a profile with known nesting (h5py) and on a real recorded one; inspect
shows the self-measurement keys in a "Profiler" group."""
import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import NS, CliTestCase, h5py, run, run_json, write_schema1  # noqa: E402

COST = 25.0  # ns per recorded call
EXAMPLE = os.path.join(os.environ.get("SP_BUILD_DIR", "."), "examples", "manual-regions")
RUN_FOOTER = re.compile(r"^profiler overhead estimate: (\d+) timed calls x ([\d.]+) ns \+ (\d+) counted"
                        r" x ([\d.]+) ns \+ ([\d.]+) s start-up, memory and finalize = ([\d.]+) s")
FOOTER = re.compile(r"^profiler overhead estimate: (\d+) calls x ([\d.]+) ns = ([\d.]+) s"
                    r" \(([\d.]+) % of the run\)$")


class Overhead(CliTestCase):
    def nested(self, metadata):
        # rank 0: outer [0,10] holds mid [1,4] and [5,8]; mid holds leaf x2 each;
        # after [11,12] is top level. rank 1: one outer [0,10] with one leaf.
        return write_schema1(self.path("nested.h5"), {
            0: {"outer": ([0], [10 * NS]),
                "mid": ([1 * NS, 5 * NS], [4 * NS, 8 * NS]),
                "leaf": ([2 * NS, 3 * NS, 6 * NS, 7 * NS],
                         [2 * NS + 5, 3 * NS + 5, 6 * NS + 5, 7 * NS + 5]),
                "after": ([11 * NS], [12 * NS])},
            1: {"outer": ([0], [10 * NS]), "leaf": ([1 * NS], [2 * NS])},
        }, metadata=metadata)

    def test_per_region_estimate(self):
        path = self.nested({"profiler_event_cost_ns": COST, "start_time_ns": 0,
                            "finalize_time_ns": 20 * NS})
        got = {r["name"]: r["profiler_overhead_estimate"] for r in run_json("summary", path)}
        # calls of the region + calls nested inside them, x cost
        calls = {"outer": 1 + 2 + 4 + 1 + 1, "mid": 2 + 4, "leaf": 5, "after": 1}
        self.assertEqual(set(got), set(calls))
        for name, n in calls.items():
            self.assertAlmostEqual(got[name], n * COST / 1e9, delta=1e-15, msg=name)

    def test_footer_matches_metadata_and_events(self):
        path = self.nested({"profiler_event_cost_ns": COST, "start_time_ns": 0,
                            "finalize_time_ns": 20 * NS})
        footer = run("summary", path)[1].strip().splitlines()[-1]
        m = FOOTER.match(footer)
        self.assertIsNotNone(m, footer)
        with h5py.File(path) as f:
            events = sum(len(f[f"rank{r}/regions/{name}/start_times"])
                         for r in (0, 1) for name in f[f"rank{r}/regions"])
            cost = float(f["metadata"].attrs["profiler_event_cost_ns"])
        self.assertEqual(int(m[1]), events)
        self.assertAlmostEqual(float(m[2]), cost, places=1)
        self.assertAlmostEqual(float(m[3]), events * cost / 1e9, places=6)
        # 2 ranks x 20 s of run
        self.assertAlmostEqual(float(m[4]), 100 * events * cost / 1e9 / 40, places=3)
        # a selection narrows the count
        footer = run("summary", path, "--ranks", "1")[1].strip().splitlines()[-1]
        self.assertEqual(int(FOOTER.match(footer)[1]), 2)

    def test_absent_without_self_measurement(self):
        path = self.nested({"start_time_ns": 0})
        self.assertNotIn("profiler overhead", run("summary", path)[1])
        for r in run_json("summary", path):
            self.assertNotIn("profiler_overhead_estimate", r)

    def test_recorded_profile(self):
        if not os.access(EXAMPLE, os.X_OK):
            self.fail(f"{EXAMPLE} not built")
        path = self.path("run.h5")
        subprocess.run([EXAMPLE, "5"], env=dict(os.environ, SCOPE_PROFILER_OUTPUT=path),
                       check=True, capture_output=True)
        with h5py.File(path) as f:
            cost = float(f["metadata"].attrs["profiler_event_cost_ns"])
            alloc = int(f["metadata"].attrs["profiler_alloc_ns"])
            alloc += int(f["metadata"].attrs["profiler_startup_ns"])  # one rank: both per rank
            fin = int(f["metadata"].attrs["profiler_finalize_ns"])
            run_ns = int(f["metadata"].attrs["finalize_time_ns"]) - int(f["metadata"].attrs["start_time_ns"])
        self.assertGreater(cost, 0)
        rows = run_json("summary", path)
        events = sum(r["num_calls"] for r in rows)
        # This run's costs: manual regions only, so no call was probed or
        # counted: timed calls at the start-up cost, plus memory + finalize.
        footer = run("summary", path)[1].strip().splitlines()[-1]
        m = RUN_FOOTER.match(footer)
        self.assertIsNotNone(m)
        # The share: of the run and its finalize (the finalize is in the
        # estimate and after the run time), so never above 100 %.
        share = re.search(r" \(([\d.]+) % of the run and its finalize\)$", footer)
        self.assertIsNotNone(share, footer)
        # (X is printed to 1 us and the share to 0.001 %: both roundings)
        self.assertAlmostEqual(float(share[1]), 100 * float(m[6]) * 1e9 / (run_ns + fin),
                               delta=6e-4 + 100 * 0.5e3 / (run_ns + fin))
        self.assertLessEqual(float(share[1]), 100.0)
        self.assertEqual(int(m[1]), events)
        self.assertAlmostEqual(float(m[2]), cost, delta=0.05)
        self.assertEqual(int(m[3]), 0)
        self.assertAlmostEqual(float(m[5]), (alloc + fin) / 1e9, delta=5e-4)
        self.assertAlmostEqual(float(m[6]), events * cost / 1e9 + (alloc + fin) / 1e9, delta=1e-5)
        # the session region encloses every other call
        top = max(rows, key=lambda r: r["profiler_overhead_estimate"])
        self.assertEqual(top["name"], "scope_profiler.session")
        self.assertAlmostEqual(top["profiler_overhead_estimate"], events * cost / 1e9, places=12)
        text = run("inspect", path)[1].splitlines()
        group = text[text.index("  Profiler") + 1:]
        keys = [l.split()[0] for l in group[:4]]
        # manual regions only: no hook call was probed or counted
        self.assertEqual(keys, ["profiler_event_cost_ns", "profiler_alloc_ns", "profiler_startup_ns",
                                "profiler_finalize_ns"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
