# SPDX-License-Identifier: MIT
"""The CLI's errors and its one unit rule (docs/CLI.md): a kind that is not
a file is said to be one; --ranks that selects no rank of a file is exit 2
in every command; check refuses runs that can never fail; comm states its
counting rules, checked against h5py on a real 4-rank mpirun of the Jacobi
example; run warns when nothing was instrumented; singular plurals; and
every duration option and setting: a unit or a bare number of seconds."""

import os
import shutil
import subprocess
import sys
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import CLI, NS, CliTestCase, run, write_schema1  # noqa: E402

MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")


def four_ranks(path):
    return write_schema1(path, {r: {"main": ([0], [(10 + r) * NS]),
                                    "work": ([1 * NS, 3 * NS], [2 * NS, (4 + r) * NS])}
                                for r in range(4)}, metadata={"mpi_size": 4})


class Errors(CliTestCase):
    def test_kind_that_is_not_a_file(self):
        f = four_ranks(self.path("f.h5"))
        rc, _, err = run("plot", "nope", f, "-o", self.path("out"), check=False)
        self.assertEqual(rc, 2)
        self.assertIn("'nope' is not a chart kind nor a file; kinds: default, all, gantt", err)
        self.assertNotIn("No such file", err)
        rc, _, err = run("plot", "gant", f, "-o", self.path("out"), check=False)
        self.assertIn("(did you mean 'gantt'?)", err)
        self.assertFalse(os.path.exists(self.path("out")))
        rc, _, err = run("export", "chrome", f, "-o", self.path("x"), check=False)
        self.assertEqual(rc, 2)
        self.assertIn("'chrome' is not a format; did you mean 'chrome-trace'?", err)
        # A path is still a file: its error is the file's.
        rc, _, err = run("plot", self.path("missing.h5"), "-o", self.path("out"), check=False)
        self.assertEqual(rc, 2)
        self.assertIn("missing.h5", err)

    def test_ranks_out_of_range_in_every_command(self):
        f = four_ranks(self.path("f.h5"))
        g = four_ranks(self.path("g.h5"))
        out = self.path("out")
        for args in (["summary", f], ["events", f], ["inspect", f], ["diff", f, g],
                     ["check", f, g], ["scaling", f, g], ["export", "json", f, "-o", out],
                     ["export", "region-statistics", f, "-o", out], ["plot", f, "-o", out],
                     ["report", f, "-o", out + ".html"], ["comm", f], ["line-profile", f]):
            for ranks in ("7", "4-9", "5,6"):
                with self.subTest(args=args, ranks=ranks):
                    rc, o, err = run(*args, "--ranks", ranks, check=False)
                    self.assertEqual(rc, 2, (o, err))
                    self.assertIn(f"--ranks {ranks} selects no rank of {f} (its ranks: 0-3)", err)
                    self.assertEqual(o, "")
        # Some of the ranks: taken, as before.
        rc, o, err = run("summary", f, "--ranks", "3-9", "--json")
        self.assertEqual(rc, 0)
        # tree: its own --rank, and --ranks is refused.
        rc, _, err = run("tree", f, "--rank", "7", check=False)
        self.assertEqual(rc, 2)
        self.assertIn("no rank 7", err)

    def test_check_that_cannot_fail_is_refused(self):
        files = [four_ranks(self.path(f"r{i}.h5")) for i in range(8)]
        for nb, nc in ((2, 2), (3, 3), (2, 5), (3, 4)):
            with self.subTest(nb=nb, nc=nc):
                rc, out, err = run("check", "--base", *files[:nb], "--cand",
                                   *files[nb:nb + nc], check=False)
                self.assertEqual(rc, 2, out)
                self.assertIn(f"with {nb} baseline and {nc} candidate runs no region can ever "
                              "fail at 95% confidence", err)
                self.assertIn("use at least 4 runs per side", err)
                self.assertNotIn("PASS", out)
        # 4 per side can fail at 95 % (1/70 < 0.025): it runs (identical runs pass).
        rc, out, err = run("check", "--base", *files[:4], "--cand", *files[4:8])
        self.assertIn("Regression check: PASS", out)
        # A lower confidence makes 3 per side possible (1/20 < 0.1).
        rc, out, err = run("check", "--base", *files[:3], "--cand", *files[3:6],
                           "--confidence", "80")
        self.assertEqual(rc, 0, err)

    def test_run_warns_when_nothing_is_instrumented(self):
        out = self.path("true.h5")
        rc, o, err = run("run", "-o", out, "--", "/bin/true")
        self.assertEqual(rc, 0)
        # Said by the library at its write (run no longer reopens the file).
        self.assertIn("scope-profiler: warning: nothing was instrumented: " + out, err)
        self.assertIn("compile and link true with -finstrument-functions", err)
        # The exit status stays the program's.
        rc, o, err = run("run", "-o", out, "--", "/bin/false", check=False)
        self.assertEqual(rc, 1)
        self.assertIn("nothing was instrumented", err)
        rc, o, err = run("run", "-q", "-o", out, "--", "/bin/true")
        self.assertNotIn("nothing was instrumented", err)

    def test_run_warns_once_for_a_job(self):
        # Said by world rank 0 only: a serial program on 3 ranks (each
        # writes its own file), and an MPI program with nothing recorded
        # (functions and MPI off: the merged file has no row).
        mpirun = os.environ.get("SP_MPIEXEC") or shutil.which("mpirun") or shutil.which("mpiexec")
        if not mpirun:
            self.fail("mpirun not found")
        # The second turned both off: said so, without the advice to
        # compile with -finstrument-functions (jacobi was).
        off = ("warning: nothing was recorded: " + self.path("m.h5") + " has no function, "
               "manual or MPI region, and function regions (--no-functions, "
               "SCOPE_PROFILER_FUNCTIONS=0) and MPI regions (--no-mpi, SCOPE_PROFILER_MPI=0) "
               "were off")
        for env, args, said in ((MPI_ENV, ["-n", "3", CLI, "run", "-o", self.path("s.h5"), "--",
                                           "/bin/true"], "nothing was instrumented"),
                                (dict(MPI_ENV, SCOPE_PROFILER_FUNCTIONS="0"),
                                 ["-n", "2", CLI, "run", "--no-mpi", "-o", self.path("m.h5"),
                                  "--", os.environ["SP_JACOBI"], "64", "20", "10"], off)):
            p = subprocess.run([mpirun] + args, env=env, capture_output=True, text=True,
                               timeout=240)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stderr.count(said), 1, p.stderr)
        self.assertNotIn("nothing was instrumented", p.stderr)
        self.assertIn("(2 ranks, 0 regions, 0 events)", p.stderr)

    def test_singular(self):
        f = write_schema1(self.path("one.h5"), {0: {"main": ([0], [NS])}})
        _, out, _ = run("inspect", f)
        self.assertIn("\n1 rank, 1 region, ", out)
        self.assertNotIn("1 ranks", out)

    def test_durations(self):
        f = self.path("t.h5")
        write_schema1(f, {0: {"short": ([0, 100], [10_000, 100_000 + 100]),
                              "long": ([0], [5 * NS])}})

        def names(*opts):
            out = self.path("t.json")
            run("export", "chrome-trace", f, "-o", out, *opts)
            import json
            doc = json.load(open(out))
            events = doc["traceEvents"] if isinstance(doc, dict) else doc
            return sorted(e["name"] for e in events if e.get("ph") == "X")
        every = names()
        self.assertEqual(every, ["long", "short", "short"])
        # 50 us: bare seconds and every unit agree.
        for value in ("0.00005", "50us", "50\u00b5s", "0.05ms", "50000ns", "5e-5s"):
            with self.subTest(value=value):
                self.assertEqual(names("--min-duration", value), ["long", "short"])
        self.assertEqual(names("--min-duration", "1"), ["long"])        # 1 s
        self.assertEqual(names("--start", "1", "--end", "2s"), ["long"])
        for bad in ("10x", "-1s", "inf", "1e30", "", "10 us"):
            with self.subTest(bad=bad):
                rc, _, err = run("export", "chrome-trace", f, "-o", self.path("b.json"),
                                 "--min-duration", bad, check=False)
                self.assertEqual(rc, 2)
                self.assertIn(f"invalid duration '{bad}' for --min-duration", err)
        # run: per-call thresholds refuse an ambiguous bare number ...
        for opt in ("--min-duration", "--throttle-mean"):
            rc, _, err = run("run", opt, "1000", "--", "/bin/true", check=False)
            self.assertEqual(rc, 2)
            self.assertIn(f"{opt} 1000 is ambiguous: a bare number is seconds", err)
            rc, _, err = run("run", opt, "2 ms", "--", "/bin/true", check=False)
            self.assertEqual(rc, 2)
            self.assertIn(f"invalid duration '2 ms' for {opt}", err)
        # ... and the preload reads what run passes with the same parser.
        out = self.path("cfg.h5")
        _, _, err = run("run", "-o", out, "--print-config", "--min-duration", "0.000001",
                        "--throttle-mean", "2us", "--", "/bin/true")
        self.assertRegex(err, r"SCOPE_PROFILER_MIN_DURATION\s+= 1000ns ")
        self.assertRegex(err, r"SCOPE_PROFILER_THROTTLE_MEAN\s+= 2000ns ")
        env = dict(os.environ, SCOPE_PROFILER_MIN_DURATION="1000",
                   SCOPE_PROFILER_THROTTLE_MEAN="0.00002", SCOPE_PROFILER_PRINT_CONFIG="1",
                   SCOPE_PROFILER_OUTPUT=out)
        p = subprocess.run([CLI, "run", "--", "/bin/true"], env=env, capture_output=True,
                           text=True)
        self.assertIn("ignoring SCOPE_PROFILER_MIN_DURATION=1000: not a duration per call", p.stderr)
        self.assertRegex(p.stderr, r"SCOPE_PROFILER_MIN_DURATION\s+= 0ns ")
        self.assertRegex(p.stderr, r"SCOPE_PROFILER_THROTTLE_MEAN\s+= 20000ns ")
        rc, _, err = run("run", "--merge-wait", "soon", "--", "/bin/true", check=False)
        self.assertEqual(rc, 2)
        self.assertIn("invalid duration 'soon' for --merge-wait", err)
        # --origin: a duration too.
        import json
        a = json.loads(run("events", f, "--origin", "0.5", "--json")[1])
        b = json.loads(run("events", f, "--origin", "500ms", "--json")[1])
        self.assertEqual(a, b)


class Comm(CliTestCase):
    def test_counting_rules_on_jacobi(self):
        # the launcher of the MPI family jacobi was built with (meson)
        mpirun = os.environ.get("SP_MPIEXEC") or shutil.which("mpirun") or shutil.which("mpiexec")
        if not mpirun:
            self.fail("mpirun not found: the comm test needs a real MPI run")
        out = self.path("jacobi.h5")
        p = subprocess.run([mpirun, "-n", "4", CLI, "run", "-q", "-o", out, "--",
                            os.environ["SP_JACOBI"], "64", "20", "10"],
                           env=MPI_ENV, capture_output=True, text=True, timeout=240)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("nothing was instrumented", p.stderr)
        # Independently: send-class bytes without a peer rank, and to self.
        with h5py.File(out) as h:
            kinds = h["region_table/kinds"][...]
            idx = h["rank_region_index"]
            ranks, regions = idx["ranks"][...], idx["region_ids"][...]
            counts, offs = idx["event_counts"][...], idx["mpi_offsets"][...]
            nbytes, peers = h["events/mpi_bytes"][...], h["events/mpi_peers"][...]
        n = int(ranks.max()) + 1
        no_peer = [0, 0]
        self_ = [0, 0]
        matrix = np.zeros((n, n), dtype=np.int64)
        for i in range(len(ranks)):
            if kinds[regions[i]] not in (3, 5) or offs[i] < 0:
                continue
            lo, hi = int(offs[i]), int(offs[i]) + int(counts[i])
            b, pe = nbytes[lo:hi], peers[lo:hi]
            keep = b >= 0
            lost = keep & ((pe < 0) | (pe >= n))
            no_peer[0] += int(b[lost].sum())
            no_peer[1] += int(lost.sum())
            to_self = keep & (pe == ranks[i])
            self_[0] += int(b[to_self].sum())
            self_[1] += int(to_self.sum())
            for bb, pp in zip(b[keep & ~lost], pe[keep & ~lost]):
                matrix[ranks[i], pp] += bb
        self.assertGreater(no_peer[1], 0, "Jacobi sends to MPI_PROC_NULL at the plate edges")
        _, text, _ = run("comm", out)
        self.assertIn("Counting: calls are all calls; bytes are count x type size at post time,\n"
                      "  calls to MPI_PROC_NULL included (no data moves).", text)
        self.assertIn(f"self-messages are on its diagonal\n  ({self_[0]} bytes in {self_[1]} "
                      f"message{'' if self_[1] == 1 else 's'}).", text)
        self.assertIn(f"  {no_peer[0]} bytes in {no_peer[1]} sends without a peer rank "
                      "(MPI_PROC_NULL) are in the function\n  totals, not in the matrix.", text)
        import json
        doc = json.loads(run("comm", out, "--json")[1])
        m = doc["matrix"]
        self.assertEqual(m["sends_without_peer_bytes"], no_peer[0])
        self.assertEqual(m["sends_without_peer_messages"], no_peer[1])
        self.assertEqual(m["self_bytes"], self_[0])
        self.assertEqual(m["bytes"], matrix.tolist())
        # The function totals and the matrix agree up to the stated bytes.
        sends = sum(fn["total_bytes"] for fn in doc["functions"]
                    if fn["mpi_class"] in ("send", "sendrecv"))
        self.assertEqual(sends, int(matrix.sum()) + no_peer[0])
        self.assertIn("(4 ranks)", text)
        # --no-functions on the instrumented program: its MPI calls, counted
        # as above, and no function region (the hooks find no thread state
        # and return at once).
        nf = self.path("jacobi-nf.h5")
        p = subprocess.run([mpirun, "-n", "4", CLI, "run", "-q", "--no-functions", "-o", nf,
                            "--", os.environ["SP_JACOBI"], "64", "20", "10"],
                           env=MPI_ENV, capture_output=True, text=True, timeout=240)
        self.assertEqual(p.returncode, 0, p.stderr)

        def calls(path, want_functions):
            with h5py.File(path) as h:
                names = [x.decode() for x in h["region_table/names"][...]]
                kinds = h["region_table/kinds"][...]
                idx = h["rank_region_index"]
                got = {}
                for r, g, c in zip(idx["ranks"][...], idx["region_ids"][...],
                                   idx["event_counts"][...]):
                    if (kinds[g] == 1) == want_functions:
                        got[(int(r), names[g])] = int(c)
                return got
        self.assertTrue(calls(out, True), "jacobi has function regions")
        self.assertEqual(calls(nf, True), {})
        self.assertEqual(calls(nf, False), calls(out, False))


if __name__ == "__main__":
    unittest.main()
