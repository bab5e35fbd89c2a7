# SPDX-License-Identifier: MIT
"""scope-profiler events: keys, order, origins (§3.3, §6.3 cases 3 and 4),
filters, CSV/JSON values against h5py + numpy, errors."""

import csv
import io
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import NS, CliTestCase, h5py, np, run, run_json, write_schema1  # noqa: E402

KEYS = ["name", "rank", "call_index", "start", "end", "duration", "thread"]


class Events(CliTestCase):
    def test_two_ranks_order_and_values(self):
        events = run_json("events", self.two_ranks())
        self.assertEqual(len(events), 6)
        self.assertEqual([list(e) for e in events], [KEYS] * 6)
        self.assertEqual([(e["name"], e["rank"], e["call_index"]) for e in events],
                         [("setup", 0, 0), ("setup", 1, 0), ("solve", 0, 0),
                          ("solve", 0, 1), ("solve", 1, 0), ("solve", 1, 1)])
        solve0 = [e for e in events if e["name"] == "solve" and e["rank"] == 0]
        self.assertEqual([(e["start"], e["end"], e["duration"]) for e in solve0],
                         [(2.0, 4.0, 2.0), (5.0, 8.0, 3.0)])

    def test_explicit_origin(self):
        events = run_json("events", self.two_ranks(), "--origin", "2",
                          "--include", "solve", "--ranks", "0")
        self.assertEqual([e["start"] for e in events], [0.0, 3.0])

    def test_origins(self):
        plain = write_schema1(self.path("plain.h5"), {0: {"solve": (
            [100 * NS, 130 * NS], [110 * NS, 140 * NS])}})
        started = write_schema1(self.path("started.h5"), {0: {"solve": (
            [100 * NS, 130 * NS], [110 * NS, 140 * NS])}},
            metadata={"start_time_ns": np.int64(80 * NS)})
        starts = lambda *a: [e["start"] for e in run_json("events", *a)]  # noqa: E731
        self.assertEqual(starts(plain), [0.0, 30.0])
        self.assertEqual(starts(started), [20.0, 50.0])
        self.assertEqual(starts(started, "--origin", "run"), [20.0, 50.0])
        self.assertEqual(starts(started, "--origin", "first"), [0.0, 30.0])
        self.assertEqual(starts(started, "--origin", "absolute"), [100.0, 130.0])
        self.assertEqual(starts(started, "--origin", "100"), [0.0, 30.0])

    def test_filters(self):
        path = self.two_ranks()
        self.assertEqual({e["name"] for e in run_json("events", path, "--exclude", "se")},
                         {"solve"})
        self.assertEqual({e["rank"] for e in run_json("events", path, "--ranks", "1")}, {1})
        # re.match semantics: anchored at the start, not a full match.
        self.assertEqual(run_json("events", path, "--include", "olve"), [])

    def random_file(self, gpu=False):
        rng = np.random.default_rng(7)
        ranks, data = {}, {}
        for rank in range(3):
            ranks[rank] = {}
            for name in ("alpha", "beta,comma", "gamma"):
                n = int(rng.integers(1, 40))
                starts = np.sort(rng.integers(10**9, 10**13, n))
                ends = starts + rng.integers(0, 10**10, n)
                ranks[rank][name] = (starts, ends)
        extra = {(0, "alpha"): {"gpu_durations": np.arange(len(ranks[0]["alpha"][0])) * 7}} \
            if gpu else None
        path = write_schema1(self.path("random.h5"), ranks, extra=extra)
        with h5py.File(path) as f:
            origin = min(int(f[f"rank{r}/regions/{n}/start_times"][:].min())
                         for r in ranks for n in ranks[r]) / 1e9
            for r in ranks:
                for n in ranks[r]:
                    data[(n, r)] = (f[f"rank{r}/regions/{n}/start_times"][:],
                                    f[f"rank{r}/regions/{n}/end_times"][:])
        return path, data, origin

    def expected(self, data, origin, name, rank, index):
        s = data[(name, rank)][0] / 1e9 - origin
        e = data[(name, rank)][1] / 1e9 - origin
        return float(s[index]), float(e[index]), float(e[index] - s[index])

    def test_csv_and_json_match_h5py(self):
        path, data, origin = self.random_file()
        text = run("events", path, "--format", "csv")[1]
        rows = list(csv.reader(io.StringIO(text)))
        self.assertEqual(rows[0], KEYS)
        self.assertEqual(len(rows) - 1, sum(len(v[0]) for v in data.values()))
        for name, rank, index, start, end, dur, thread in rows[1:]:
            self.assertEqual(thread, "")  # no thread_ids column
            want = self.expected(data, origin, name, int(rank), int(index))
            self.assertEqual((float(start), float(end), float(dur)), want)
        events = run_json("events", path)
        self.assertEqual([(e["name"], e["rank"], e["call_index"]) for e in events],
                         [(r[0], int(r[1]), int(r[2])) for r in rows[1:]])
        for e in events:
            self.assertEqual((e["start"], e["end"], e["duration"]),
                             self.expected(data, origin, e["name"], e["rank"], e["call_index"]))
        table = run("events", path)[1].splitlines()
        self.assertEqual(table[0].split()[:3], KEYS[:3])
        self.assertEqual(len(table) - 1, len(events))

    def test_gpu_duration_column(self):
        path, _, _ = self.random_file(gpu=True)
        rows = list(csv.reader(io.StringIO(run("events", path, "--format", "csv")[1])))
        self.assertEqual(rows[0], KEYS + ["gpu_duration"])
        alpha0 = [r for r in rows[1:] if r[0] == "alpha" and r[1] == "0"]
        self.assertEqual([float(r[7]) for r in alpha0],
                         [i * 7 / 1e9 for i in range(len(alpha0))])

    def test_thread_key(self):
        """thread = the event's thread_ids value (upstream's events()), null
        (CSV: empty, table: -) without the column."""
        path = self.path("threads.h5")
        with h5py.File(path, "w") as f:
            f.attrs["scope_profiler_schema"] = np.int64(2)
            f.attrs["storage_layout"] = "columnar"
            f.create_dataset("region_table/names", data=["work"], dtype=h5py.string_dtype())
            ix = f.create_group("rank_region_index")
            ix["region_ids"] = np.array([0], np.uint32)
            ix["ranks"] = np.array([0], np.uint32)
            ix["event_offsets"] = np.array([0], np.uint64)
            ix["event_counts"] = np.array([3], np.uint64)
            f["events/start_times"] = np.array([10, 11, 30], np.int64) * NS
            f["events/end_times"] = np.array([20, 15, 40], np.int64) * NS
            f["events/thread_ids"] = np.array([0, 2, 1], np.int64)
        self.assertEqual([e["thread"] for e in run_json("events", path)], [0, 2, 1])
        rows = list(csv.reader(io.StringIO(run("events", path, "--format", "csv")[1])))
        self.assertEqual([r[6] for r in rows[1:]], ["0", "2", "1"])
        table = run("events", path)[1].splitlines()
        self.assertEqual([line.split()[-1] for line in table], ["thread", "0", "2", "1"])
        self.assertEqual({e["thread"] for e in run_json("events", self.two_ranks())}, {None})

    def test_errors(self):
        path = self.two_ranks()
        self.assertUsageError(["events", path, "--format", "xml"], "xml", "table, csv, json")
        self.assertUsageError(["events", path, "--origin", "soon"], "soon")
        self.assertUsageError(["events", self.path("missing.h5")], "missing.h5")
        self.assertUsageError(["events", path, "--include", "("], "events")


if __name__ == "__main__":
    unittest.main()
