# SPDX-License-Identifier: MIT
"""export region-statistics: the §3.4 document, values against numpy
(pooled over ranks and per rank), filters, common_regions, labels."""

import json
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import NS, CliTestCase, h5py, np, run, write_schema1  # noqa: E402

STAT_KEYS = ["count", "average_duration_seconds", "min_duration_seconds",
             "max_duration_seconds", "first_duration_seconds",
             "last_duration_seconds", "std_duration_seconds", "total_duration_seconds"]


def numpy_stats(rank_arrays):
    """rank_arrays: [(starts, ends)] of the selected ranks in rank order."""
    timed = [(s, e) for s, e in rank_arrays if len(s)]
    if not timed:
        return {k: (0 if k == "count" else None) for k in STAT_KEYS}
    values = np.concatenate([(e - s) / 1e9 for s, e in timed])
    first = min(timed, key=lambda a: a[0].min() / 1e9)
    last = max(timed, key=lambda a: a[1].max() / 1e9)
    return {
        "count": int(values.size),
        "average_duration_seconds": float(np.mean(values)),
        "min_duration_seconds": float(np.min(values)),
        "max_duration_seconds": float(np.max(values)),
        "first_duration_seconds": float(first[1][0] - first[0][0]) / 1e9,
        "last_duration_seconds": float(last[1][-1] - last[0][-1]) / 1e9,
        "std_duration_seconds": float(np.std(values)),
        "total_duration_seconds": float(np.sum(values)),
    }


class RegionStatistics(CliTestCase):
    def assertStats(self, got, want, where):
        self.assertEqual(list(got)[:len(STAT_KEYS)], STAT_KEYS, where)
        for key in STAT_KEYS:
            if want[key] is None or isinstance(want[key], int):
                self.assertEqual(got[key], want[key], f"{where} {key}")
            else:
                self.assertTrue(math.isclose(got[key], want[key], rel_tol=1e-12,
                                             abs_tol=1e-15),
                                f"{where} {key}: {got[key]} != {want[key]}")

    def random_file(self, name, regions, seed):
        rng = np.random.default_rng(seed)
        ranks = {}
        for rank in range(4):
            ranks[rank] = {}
            for region in regions:
                n = int(rng.integers(0, 300)) if rank != 2 else 5
                starts = np.sort(rng.integers(NS, 1000 * NS, n))
                ranks[rank][region] = (starts, starts + rng.integers(0, 5 * NS, n))
        meta = {"start_time_ns": np.int64(0), "finalize_time_ns": np.int64(2000 * NS)}
        return write_schema1(self.path(name), ranks, metadata=meta)

    def export(self, *args):
        out = self.path("out.json")
        rc, stdout, stderr = run("export", "region-statistics", *args, "-o", out)
        self.assertEqual(stdout, "")
        with open(out) as f:
            return json.load(f)

    def check_file(self, entry, path, ranks=None):
        with h5py.File(path) as f:
            for region, stats in entry["region_statistics"].items():
                per_rank = {}
                for rank in sorted(int(k[4:]) for k in f if k.startswith("rank")):
                    if ranks is not None and rank not in ranks:
                        continue
                    g = f[f"rank{rank}/regions/{region}"]
                    per_rank[rank] = (g["start_times"][:], g["end_times"][:])
                self.assertStats(stats, numpy_stats(list(per_rank.values())), region)
                self.assertEqual(list(stats["per_rank"]), [str(r) for r in per_rank])
                for rank, arrays in per_rank.items():
                    self.assertStats(stats["per_rank"][str(rank)], numpy_stats([arrays]),
                                     f"{region} rank {rank}")

    def test_values_against_numpy(self):
        path = self.random_file("run.h5", ["solve", "assemble", "io"], 3)
        doc = self.export(path)
        self.assertEqual(list(doc), ["format", "format_version", "plot", "units", "filters",
                                     "common_regions", "files"])
        self.assertEqual(doc["format"], "scope-profiler-plot-data")
        self.assertEqual(doc["plot"], "region_statistics")
        self.assertEqual(doc["units"], {"durations": "seconds"})
        self.assertEqual(doc["filters"], {"include": None, "exclude": None, "ranks": None})
        entry = doc["files"][0]
        self.assertEqual(list(entry), ["label", "file_path", "num_ranks",
                                       "total_time_seconds", "region_statistics"])
        self.assertEqual(entry["label"], "run")
        self.assertEqual(entry["file_path"], os.path.realpath(path))
        self.assertEqual(entry["num_ranks"], 4)
        self.assertEqual(entry["total_time_seconds"], 2000.0)
        self.assertEqual(doc["common_regions"], list(entry["region_statistics"]))
        self.check_file(entry, path)

    def test_case3_and_rank_filter(self):
        path = self.two_ranks()
        doc = self.export(path)
        solve = doc["files"][0]["region_statistics"]["solve"]
        self.assertEqual(solve["count"], 4)
        self.assertEqual(solve["total_duration_seconds"], 13.0)
        self.assertEqual(solve["average_duration_seconds"], 3.25)
        self.assertEqual((solve["first_duration_seconds"], solve["last_duration_seconds"]),
                         (2.0, 4.0))
        self.assertIsNone(doc["files"][0]["total_time_seconds"])
        doc = self.export(path, "--ranks", "1", "--include", "so")
        self.assertEqual(doc["filters"], {"include": ["so"], "exclude": None, "ranks": [1]})
        solve = doc["files"][0]["region_statistics"]["solve"]
        self.assertEqual(list(doc["files"][0]["region_statistics"]), ["solve"])
        self.assertEqual(list(solve["per_rank"]), ["1"])
        self.assertEqual(solve["total_duration_seconds"], 8.0)

    def test_several_files(self):
        a = self.random_file("run.h5", ["solve", "assemble", "io"], 4)
        os.mkdir(self.path("b"))
        b = write_schema1(self.path("b/run.h5"), {0: {
            "io": ([0], [NS]), "solve": ([2 * NS], [3 * NS]), "extra": ([4 * NS], [5 * NS])}})
        doc = self.export(a, b, "--ranks", "0-1,3", "--exclude", "extra")
        self.assertEqual([f["label"] for f in doc["files"]], ["run", "run (2)"])
        self.assertEqual(doc["filters"]["ranks"], [0, 1, 3])
        self.assertEqual(doc["filters"]["exclude"], ["extra"])
        names_a = list(doc["files"][0]["region_statistics"])
        self.assertEqual(doc["common_regions"], [n for n in names_a if n in ("io", "solve")])
        self.assertNotIn("extra", doc["files"][1]["region_statistics"])
        self.check_file(doc["files"][0], a, ranks=[0, 1, 3])

    def test_output_directory_and_errors(self):
        path = self.two_ranks()
        os.mkdir(self.path("outdir"))
        run("export", "region-statistics", path, "-o", self.path("outdir"))
        self.assertTrue(os.path.exists(self.path("outdir/region_statistics.json")))
        self.assertUsageError(["export", "region-statistics", path], "-o")
        self.assertUsageError(["export", "region-statistics", self.path("x.h5"), "-o",
                               self.path("y.json")], "x.h5")
        self.assertFalse(os.path.exists(self.path("y.json")))


if __name__ == "__main__":
    unittest.main()
