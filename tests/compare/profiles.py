# SPDX-License-Identifier: MIT
"""Helpers of the comparison tests: hand-built schema-1 profiles and
running the CLI. Durations are given in seconds and stored as int64 ns."""
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

import profile_builder as B

NS = 1_000_000_000


def write_profile(path, ranks, metadata=None):
    """ranks: {rank: {region: [(start_s, end_s), ...]}} -> schema-1 file."""
    B.schema1(path, {rank: {name: ([round(s * NS) for s, _ in calls],
                                   [round(e * NS) for _, e in calls])
                            for name, calls in regions.items()}
                     for rank, regions in ranks.items()}, metadata or {})


def workdir(prefix):
    """A temporary directory removed at exit."""
    path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


class Cli:
    def __init__(self):
        self.exe = os.path.join(os.environ["SP_BUILD_DIR"], "tools", "scope-profiler")
        self.failures = 0

    def run(self, *args, expect=None):
        """Run the CLI; returns (exit code, stdout, stderr)."""
        p = subprocess.run([self.exe, *map(str, args)], capture_output=True, text=True)
        if expect is not None and p.returncode != expect:
            self.fail(f"{' '.join(map(str, args))}: exit {p.returncode}, expected {expect}\n"
                      f"stdout: {p.stdout}\nstderr: {p.stderr}")
        return p.returncode, p.stdout, p.stderr

    def json(self, *args, expect=0):
        rc, out, err = self.run(*args, "--json", expect=expect)
        try:
            return json.loads(out)
        except ValueError:
            self.fail(f"{' '.join(map(str, args))}: not JSON: {out!r} {err!r}")
            return None

    def fail(self, message):
        print("FAIL:", message)
        self.failures += 1

    def check(self, cond, message):
        if not cond:
            self.fail(message)

    def equal(self, got, want, message):
        if got != want:
            self.fail(f"{message}: got {got!r}, want {want!r}")

    def close(self, got, want, message, tol=1e-9):
        if got is None or want is None:
            self.equal(got, want, message)
        elif abs(got - want) > tol * max(1.0, abs(want)):
            self.fail(f"{message}: got {got!r}, want {want!r}")

    def finish(self, name):
        if self.failures:
            print(f"{name}: {self.failures} failure(s)")
            sys.exit(1)
        print(f"{name}: OK")
