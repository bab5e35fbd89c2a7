#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Reader speed: on a 10 M-event schema-2 file (4 ranks,
properly nested; make_bench_file.py), time `summary FILE` (the table,
which builds the call tree), `summary --json FILE` and
`tree FILE --rank 0 --max-depth 1` (the call-stack build, one line out)
and the full `tree FILE --rank 0 > /dev/null` (build + 2.5 M lines), against the
same statistics in h5py + numpy (numpy_stats.py). Median of RUNS (>= 5),
min-max, ratio vs numpy, one JSON line per metric, and the goals.
Usage: bench_reader.py SCOPE_PROFILER [EVENTS]
Env: SP_BENCH_FILE=path reuses (or creates) that file; SP_BENCH_RUNS=N."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable
GOALS = {"summary-table": 0.5, "summary-json": 0.5, "tree-build": 2.0}
# The case that computes what numpy_stats.py computes (the >= 5x goal):
# per-region statistics. The table builds the call-path tree on top (not in
# numpy_stats.py); its ratio is printed, without a goal.
VS_NUMPY = {"summary-json"}


def timed(argv, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t0)
    return times


def main():
    cli = sys.argv[1]
    events = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000_000
    runs = max(5, int(os.environ.get("SP_BENCH_RUNS", "5")))
    tmp = tempfile.mkdtemp(prefix="sp-bench-reader-")
    path = os.environ.get("SP_BENCH_FILE") or os.path.join(tmp, "bench.h5")
    if not os.path.exists(path):
        subprocess.run([PY, os.path.join(HERE, "make_bench_file.py"), path,
                        str(events)], check=True)
    subprocess.run(["cat", path], stdout=subprocess.DEVNULL)  # page cache
    cases = {
        "summary-table": [cli, "summary", path],
        "summary-json": [cli, "summary", "--json", path],
        "tree-build": [cli, "tree", path, "--rank", "0", "--max-depth", "1"],
        "tree-rank0": [cli, "tree", path, "--rank", "0"],
        "numpy": [PY, os.path.join(HERE, "numpy_stats.py"), path],
    }
    res = {k: timed(v, runs) for k, v in cases.items()}
    ref = statistics.median(res["numpy"])
    print(f"reader benchmark: {events} events, {runs} runs each, {path}")
    print(f"{'case':15} {'median [s]':>11} {'min-max [s]':>17} {'vs numpy':>9}  goal")
    missed = []
    for k, t in res.items():
        med = statistics.median(t)
        goal = GOALS.get(k)
        ok = goal is None or med <= goal
        if k in VS_NUMPY and ref / med < 5:
            ok = False
        if not ok:
            missed.append(k)
        gtxt = ""
        if goal is not None:
            gtxt = (f"<= {goal} s" + (", >= 5x numpy" if k in VS_NUMPY else "")
                    + f": {'met' if ok else 'MISSED'}")
        print(f"{k:15} {med:11.3f} {min(t):8.3f}-{max(t):<8.3f} "
              f"{ref / med:8.1f}x  {gtxt}")
    for k, t in res.items():
        print(json.dumps({"bench": "reader", "metric": k, "events": events,
                          "runs": runs, "median_s": round(statistics.median(t), 4),
                          "min_s": round(min(t), 4), "max_s": round(max(t), 4),
                          "speedup_vs_numpy": round(ref / statistics.median(t), 2),
                          "goal_s": GOALS.get(k)}))
    if not os.environ.get("SP_BENCH_FILE"):
        os.unlink(path)
    os.rmdir(tmp)
    print("goals met" if not missed else f"goals MISSED: {', '.join(missed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
