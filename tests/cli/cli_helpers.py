# SPDX-License-Identifier: MIT
"""Shared helpers of the CLI tests: build schema-1 profiles, run
the scope-profiler binary, parse its --json output."""

import json
import os
import subprocess
import tempfile
import unittest

import h5py
import numpy as np

import profile_builder as B

NS = 1_000_000_000
CLI = os.environ.get("SP_CLI") or os.path.join(
    os.environ.get("SP_BUILD_DIR", "."), "tools", "scope-profiler")


def write_schema1(path, ranks, metadata=None, extra=None):
    """ranks: {rank: {region: (starts_ns, ends_ns)}}; extra: {(rank, region):
    {dataset: values}} for optional per-region datasets (gpu_durations...)."""
    return B.schema1(path, ranks, metadata or {}, datasets=extra)


def run(*args, check=True):
    """Run the CLI; returns (returncode, stdout, stderr)."""
    proc = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"{args} exited {proc.returncode}: {proc.stderr}")
    return proc.returncode, proc.stdout, proc.stderr


def run_json(*args):
    return json.loads(run(*args, "--json")[1])


class CliTestCase(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def assertUsageError(self, args, *needles):
        rc, out, err = run(*args, check=False)
        self.assertEqual(rc, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        for needle in needles:
            self.assertIn(needle, err)
        return err

    # Case 3 of §6.3: two ranks.
    def two_ranks(self):
        return write_schema1(self.path("two.h5"), {
            0: {"setup": ([0], [1 * NS]), "solve": ([2 * NS, 5 * NS], [4 * NS, 8 * NS])},
            1: {"setup": ([0], [3 * NS]), "solve": ([2 * NS, 5 * NS], [6 * NS, 9 * NS])},
        })

    # Case 5 of §6.3: a nested call stack (ns).
    def nested(self):
        return write_schema1(self.path("nested.h5"), {0: {
            "outer": ([10], [110]),
            "inner": ([20, 60], [50, 100]),
            "leaf": ([25], [30]),
        }})
