#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cost in the region count (issue: every command O(n log n) in regions):
summary, inspect and report on files with 10 k, 100 k and 1 M regions, each
called once on one rank in a flat run under one parent. Prints a table and
one JSON line per (command, regions): CPU seconds and peak RSS, and the
ratio of time per region against the 10 k file (1.0 = linear).

Usage: bench_regions.py SCOPE_PROFILER [MAX_REGIONS]   (default 1000000)
"""
import json
import os
import resource
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
import profile_builder as B  # noqa: E402


def make(path, n):
    names = ["main"] + [f"region_{i}" for i in range(n - 1)]
    rows = [(0, 0, [0], [20 * n + 10])]
    rows += [(i + 1, 0, [10 + 20 * i], [20 + 20 * i]) for i in range(n - 1)]
    B.columnar(path, names, rows, metadata={"mpi_size": 1})


def measure(argv):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"{argv}: exit {r.returncode}: {r.stderr[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, int(r.stderr.strip().splitlines()[-1])


def main():
    cli = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    sizes = [n for n in (10_000, 100_000, 1_000_000) if n <= top]
    base = {}
    print(f"{'command':10} {'regions':>9} {'cpu [s]':>9} {'rss [MB]':>9} {'per region vs 10k':>18}")
    with tempfile.TemporaryDirectory() as d:
        for n in sizes:
            path = os.path.join(d, f"r{n}.h5")
            make(path, n)
            for name, argv in (("summary", [cli, "summary", path]),
                               ("inspect", [cli, "inspect", path]),
                               ("report", [cli, "report", path, "-o", os.path.join(d, "r.html")])):
                cpu, rss = measure(argv)
                base.setdefault(name, cpu / n)
                ratio = (cpu / n) / base[name] if base[name] > 0 else float("nan")
                print(f"{name:10} {n:>9} {cpu:>9.2f} {rss / 1024:>9.1f} {ratio:>18.2f}")
                print(json.dumps({"bench": "regions", "command": name, "regions": n,
                                  "cpu_s": round(cpu, 3), "rss_kb": rss,
                                  "per_region_vs_10k": round(ratio, 2)}))


if __name__ == "__main__":
    main()
