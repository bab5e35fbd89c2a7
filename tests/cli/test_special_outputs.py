# SPDX-License-Identifier: MIT
"""Outputs that exist and are not regular files (/dev/null, a FIFO) are
written in place or refused, never replaced: every output is written beside
its path and renamed over it, and a rename over /dev/null as root turns the
machine's /dev/null into a plain file. Checked on a FIFO: `export`,
`report`, `inspect --export`-style outputs and `export region-statistics`
stream into it and leave it a FIFO; `scope-profiler run -o FIFO` records
nothing, says so in one line, keeps the program's exit status and leaves
the FIFO as it was."""

import os
import stat
import subprocess
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import CLI, CliTestCase, run  # noqa: E402

EXAMPLE = os.path.join(os.environ.get("SP_BUILD_DIR", "."), "examples", "manual-regions")


def drain(path, sink):
    with open(path, "rb") as f:
        sink.append(f.read())


class SpecialOutputs(CliTestCase):
    def setUp(self):
        super().setUp()
        if not os.access(EXAMPLE, os.X_OK):
            self.fail(f"{EXAMPLE} not built")
        self.file = self.path("profile.h5")
        env = dict(os.environ, SCOPE_PROFILER_OUTPUT=self.file)
        subprocess.run([EXAMPLE, "3"], env=env, check=True, capture_output=True)
        self.fifo = self.path("out.fifo")
        os.mkfifo(self.fifo)

    def assertFifo(self):
        self.assertTrue(stat.S_ISFIFO(os.lstat(self.fifo).st_mode), "the FIFO was replaced")
        self.assertEqual([n for n in os.listdir(self.dir) if ".tmp" in n], [], "temp file left")

    def through_fifo(self, *args):
        sink = []
        reader = threading.Thread(target=drain, args=(self.fifo, sink))
        reader.start()
        code, out, err = run(*args, check=False)
        reader.join(30)
        self.assertEqual(code, 0, err)
        self.assertFifo()
        return b"".join(sink)

    def test_export_streams_into_a_fifo(self):
        data = self.through_fifo("export", "chrome-trace", self.file, "-o", self.fifo)
        self.assertIn(b"traceEvents", data)

    def test_report_streams_into_a_fifo(self):
        data = self.through_fifo("report", self.file, "-o", self.fifo)
        self.assertIn(b"<html", data.lower())

    def test_region_statistics_stream_into_a_fifo(self):
        data = self.through_fifo("export", "region-statistics", self.file, "-o", self.fifo)
        self.assertIn(b"timestep", data)

    def test_run_refuses_a_fifo_output(self):
        proc = subprocess.run([CLI, "run", "-o", self.fifo, "--", EXAMPLE, "2"],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stderr.count("is not a regular file: nothing is recorded"), 1, proc.stderr)
        self.assertFifo()
        self.assertEqual([n for n in os.listdir(self.dir) if "spill" in n], [])


if __name__ == "__main__":
    unittest.main()
