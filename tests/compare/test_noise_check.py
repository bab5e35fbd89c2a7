# SPDX-License-Identifier: MIT
"""The statistical contract of the noise-aware check, on real runs of a
small program (busy-work): 11 runs of the same program on each side must
pass, 11 runs with 20 % more work in "solve" must fail on "solve" only.
Base and candidate runs are interleaved, as docs/COMPARE.md recommends, so
slow drifts of the machine's load hit both sides alike, and the per-run
sample is the fastest of 160 calls of about 1 ms (--metric min): on a loaded
machine most calls are preempted at some point, the fastest one rarely is.
(7 runs of 40 calls failed once in a CI run on this shared VM: one slow base
run left the exact Mann-Whitney test at p = 0.08 for a +22.8 % change; 11
runs of 80 calls failed once too, under the CI's two parallel tests: a
+18.4 % change with a 95 % interval from -0.3 %, the unchanged region's
from -21 % to +25 %: whole 80 ms runs were slowed.)
Usage: test_noise_check.py BUSY_WORK_EXECUTABLE"""
import os
import subprocess
import sys

from profiles import Cli, workdir

RUNS = 11
CALLS = "160"
BUDGET = "5"
METRIC = "min"

cli = Cli()
work = workdir("sp-noise-")
program = sys.argv[1]


def record(name, slowdown):
    env = dict(os.environ, SCOPE_PROFILER_OUTPUT=os.path.join(work, name),
               SCOPE_PROFILER_QUIET="1")
    subprocess.run([program, str(slowdown), CALLS], env=env, check=True)


for i in range(RUNS):
    record(f"base-{i}.h5", 0.0)
    record(f"same-{i}.h5", 0.0)
    record(f"slow-{i}.h5", 0.2)


def files(prefix):
    return [os.path.join(work, f"{prefix}-{i}.h5") for i in range(RUNS)]


# Same program on both sides: must pass.
doc = cli.json("check", "--base", *files("base"), "--cand", *files("same"),
               "--max-regression", BUDGET, "--metric", METRIC, expect=0)
if doc:
    cli.equal(doc["violations"], [], "same program: violations")
    cli.equal(sorted(r["name"] for r in doc["regions"]), ["solve", "steady"], "regions")
    print("same program:", [(r["name"], round(r["estimate_pct"], 2),
                             round(r["ci_low_pct"], 2), round(r["ci_high_pct"], 2))
                            for r in doc["regions"]])

# 20 % more work in solve: must fail, on solve only.
doc = cli.json("check", "--base", *files("base"), "--cand", *files("slow"),
               "--max-regression", BUDGET, "--metric", METRIC, expect=1)
if doc:
    cli.equal(doc["violations"], ["solve"], "20% slowdown: violations")
    print("20% slower solve:", [(r["name"], round(r["estimate_pct"], 2),
                                 round(r["ci_low_pct"], 2), round(r["ci_high_pct"], 2))
                                for r in doc["regions"]])

# The text report names the violation and prints the estimate with its interval.
rc, out, err = cli.run("check", "--base", os.path.join(work, "base-*.h5"),
                       "--cand", os.path.join(work, "slow-*.h5"),
                       "--max-regression", BUDGET, "--metric", METRIC, expect=1)
cli.check("Regression check: FAIL" in out and "Budget violations: solve" in out,
          f"text report:\n{out}")

cli.finish("noise-aware check on repeated runs")
