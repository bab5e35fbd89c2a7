# SPDX-License-Identifier: MIT
"""scope-profiler inspect: headline, metadata grouping and clipping, Regions
table, --metadata-only/--regions-only, --json, --export-metadata (§4.2)."""

import json
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import NS, CliTestCase, h5py, np, run, run_json, write_schema1  # noqa: E402

LONG_PATH = "/usr/bin:" + "/opt/very/long/path" * 10
METADATA = {
    "timestamp": "2026-01-01T00:00:00+00:00",
    "start_time_ns": np.int64(80 * NS),
    "finalize_time_ns": np.int64(200 * NS),
    "hostname": "node01",
    "user": "alice",
    "mpi_size": np.int64(2),
    "omp_num_threads": np.int64(4),
    "platform": "Linux-x86_64",
    "SLURM_JOB_ID": "1234",
    "PATH": LONG_PATH,
    "custom_float": 1.5,
    "modules": ["gcc/12.3.0", "likwid/5.3"],
}


class Inspect(CliTestCase):
    def profile(self):
        return write_schema1(self.path("meta.h5"), {
            0: {"setup": ([100 * NS], [101 * NS]), "solve": ([102 * NS], [110 * NS])},
            1: {"setup": ([100 * NS], [103 * NS]), "solve": ([104 * NS], [140 * NS])},
        }, metadata=METADATA)

    def test_layout(self):
        path = self.profile()
        out = run("inspect", path)[1]
        lines = out.splitlines()
        self.assertEqual(lines[0], "=" * 78)
        self.assertEqual(lines[1], path)
        size = os.path.getsize(path) / 1024**2
        self.assertEqual(lines[2], f"2 ranks, 2 regions, {size:.2f} MiB, 40 s wall clock, "
                                   "120 s total (setup to finalize)")
        self.assertEqual(lines[3], "=" * 78)
        sections = [l.strip() for l in lines if re.match(r"^  \S", l) and "│" not in l
                    and "─" not in l]
        self.assertEqual(sections, ["Run", "System", "Parallelism", "Slurm", "Environment",
                                    "Other", "Modules (2)"])
        run_keys = [l.split()[0] for l in lines[lines.index("  Run") + 1:
                                                 lines.index("  System")]]
        self.assertEqual(run_keys, ["timestamp", "start_time_ns", "finalize_time_ns",
                                    "user", "hostname"])
        path_line = next(l for l in lines if l.strip().startswith("PATH"))
        value = path_line.split(" : ", 1)[1]
        self.assertEqual(len(value), 96)
        self.assertTrue(value.endswith(" […]"))
        self.assertTrue(LONG_PATH.startswith(value[:-4]))
        # Keys are padded to the longest key.
        self.assertEqual(len(set(l.index(" : ") for l in lines if " : " in l)), 1)
        self.assertIn("    gcc/12.3.0", lines)
        self.assertIn("Regions (2)", lines)
        # The region table (tools/cli/table.c): a rule under its header,
        # solve as a row of the call tree.
        table = lines[lines.index("Regions (2)") + 1:]
        self.assertTrue(table[1].startswith("─"))
        self.assertTrue(any(re.match(r"^(\S+ )?(├─ |└─ )?solve ", l) for l in table))
        self.assertNotIn("Recording limits", out)

    def test_full_and_sections(self):
        path = self.profile()
        self.assertIn(LONG_PATH, run("inspect", path, "--full")[1])
        meta_only = run("inspect", path, "--metadata-only")[1]
        self.assertIn("Metadata", meta_only)
        self.assertNotIn("Regions", meta_only)
        regions_only = run("inspect", path, "--regions-only", "--include", "so")[1]
        self.assertNotIn("Metadata", regions_only)
        self.assertIn("Regions (1)", regions_only)
        self.assertUsageError(["inspect", path, "--metadata-only", "--regions-only"],
                              "exclude each other")

    def test_json(self):
        path = self.profile()
        doc = run_json("inspect", path)
        self.assertEqual(doc["num_ranks"], 2)
        self.assertEqual(doc["num_regions"], 2)
        self.assertEqual(doc["time_span"], 40.0)
        self.assertEqual(doc["total_time"], 120.0)
        self.assertEqual(doc["metadata"]["modules"], ["gcc/12.3.0", "likwid/5.3"])
        self.assertEqual(doc["metadata"]["PATH"], LONG_PATH)
        self.assertEqual([r["name"] for r in doc["regions"]], ["setup", "solve"])
        self.assertEqual(doc["regions"][1]["num_calls"], 2)
        self.assertEqual(doc["regions"][1]["total_duration"], 44.0)
        docs = run_json("inspect", path, path, "--metadata-only")
        self.assertEqual(len(docs), 2)
        self.assertNotIn("regions", docs[0])

    def test_export_metadata(self):
        path = self.profile()
        out = self.path("meta.json")
        rc, stdout, _ = run("inspect", path, "-q", "--export-metadata", out)
        self.assertEqual(stdout, f"Metadata written to {out}\n")
        with open(out) as f:
            text = f.read()
        self.assertTrue(text.endswith("}\n"))
        doc = json.loads(text)
        self.assertEqual(list(doc), ["files"])
        entry = doc["files"][0]
        self.assertEqual(entry["file_path"], os.path.realpath(path))
        self.assertEqual(entry["num_ranks"], 2)
        with h5py.File(path) as f:
            want = {}
            for key, value in f["metadata"].attrs.items():
                if isinstance(value, np.ndarray):
                    value = [v.decode() if isinstance(v, bytes) else v for v in value]
                elif isinstance(value, np.generic):
                    value = value.item()
                want[key] = value
        self.assertEqual(entry["metadata"], want)

    def test_no_metadata_and_errors(self):
        path = write_schema1(self.path("bare.h5"), {0: {"a": ([0], [NS])}})
        out = run("inspect", path)[1]
        self.assertIn("Metadata\n  (none recorded)\n", out)
        self.assertIn("1 rank, 1 region,", out)
        self.assertUsageError(["inspect", self.path("nope.h5")], "nope.h5")
        self.assertUsageError(["inspect", path, "--sort", "bogus"], "bogus")


if __name__ == "__main__":
    unittest.main()
