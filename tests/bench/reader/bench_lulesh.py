#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Reader speed on a LULESH-shaped file (gen-lulesh: RANKS ranks, 300
regions, calls nested 6-10 deep, mostly tiny calls, a few long outliers,
written by the recorder's own writer): times `summary`, `summary --json`,
`inspect`, `report` and `export chrome-trace` (median of RUNS), with the
CPU time, the peak RSS (/usr/bin/time's %M: mapped file pages included)
and the peak anonymous RSS (the file's mapped pages counted apart, sampled
from /proc), and each time per 100 M events (times scale linearly: no
sort of all events). One JSON line per case; goals: summary <= 2 s and
report <= 10 s per 100 M events (not failing when missed).
Usage: bench_lulesh.py SCOPE_PROFILER GEN_LULESH [RANKS [EVENTS_PER_RANK]]
(default 8 x 2.5 M = 20 M events).
Env: SP_BENCH_FILE=path reuses (or creates) that file; SP_BENCH_RUNS=N
(default 3); SP_BENCH_CASES=summary,report,... a subset."""
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

GOALS_PER_100M = {"summary": 2.0, "report": 10.0}


def run_once(argv):
    """Wall s, CPU s, peak RSS MiB (%M), peak anonymous RSS MiB."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    # /usr/bin/time's %M: this command's peak RSS (ru_maxrss of
    # RUSAGE_CHILDREN is the largest child's so far, not this one's).
    p = subprocess.Popen(["/usr/bin/time", "-f", "SP_PEAK_RSS_KB %M", *argv],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    child = None
    anon = 0
    while p.poll() is None:
        try:  # the command is the child of /usr/bin/time
            if child is None:
                with open(f"/proc/{p.pid}/task/{p.pid}/children") as f:
                    pids = f.read().split()
                child = pids[0] if pids else None
            if child is not None:
                with open(f"/proc/{child}/status") as f:
                    for line in f:
                        if line.startswith("RssAnon:"):
                            anon = max(anon, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.02)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    err = p.stderr.read().decode(errors="replace")
    if p.returncode != 0:
        raise SystemExit(f"{argv}: exit {p.returncode}: {err}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rss = [int(line.split()[1]) for line in err.splitlines()
           if line.startswith("SP_PEAK_RSS_KB ")]
    return wall, cpu, (rss[-1] if rss else 0) / 1024, anon / 1024, err


def main():
    cli, gen = sys.argv[1], sys.argv[2]
    ranks = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    per_rank = int(sys.argv[4]) if len(sys.argv) > 4 else 2_500_000
    runs = max(1, int(os.environ.get("SP_BENCH_RUNS", "3")))
    tmp = tempfile.mkdtemp(prefix="sp-bench-lulesh-")
    path = os.environ.get("SP_BENCH_FILE") or os.path.join(tmp, "lulesh.h5")
    if not os.path.exists(path):
        subprocess.run([gen, path, str(ranks), str(per_rank)], check=True,
                       stdout=subprocess.DEVNULL)
    doc = json.loads(subprocess.run([cli, "inspect", "--json", path], check=True,
                                    capture_output=True, text=True).stdout)
    events = sum(r.get("num_calls", 0) for r in doc["regions"])
    ranks = doc["num_ranks"]
    subprocess.run(["cat", path], stdout=subprocess.DEVNULL)  # page cache
    out = os.path.join(tmp, "out")
    cases = {
        "summary": [cli, "summary", path],
        "summary-json": [cli, "summary", "--json", path],
        "inspect": [cli, "inspect", path],
        "report": [cli, "report", path, "-o", out + ".html"],
        "export-chrome-trace": [cli, "export", "chrome-trace", path, "-o", out + ".json"],
    }
    only = os.environ.get("SP_BENCH_CASES")
    if only:
        cases = {k: v for k, v in cases.items() if k in only.split(",")}
    size = os.path.getsize(path)
    print(f"reader LULESH-shaped benchmark: {events} events, {ranks} ranks, "
          f"{size / 1e6:.0f} MB, {runs} run(s) each, {path}")
    print(f"{'case':20} {'median [s]':>10} {'min-max [s]':>15} {'cpu [s]':>8} "
          f"{'s/100M':>7} {'RSS MiB':>8} {'anon MiB':>8}  goal")
    recs = []
    for name, argv in cases.items():
        res = [run_once(argv) for _ in range(runs)]
        walls = [r[0] for r in res]
        med = statistics.median(walls)
        cpu = statistics.median(r[1] for r in res)
        scale = 1e8 / events if events else 0
        goal = GOALS_PER_100M.get(name)
        gtxt = ""
        if goal is not None:
            gtxt = f"<= {goal} s/100M: {'met' if med * scale <= goal else 'MISSED'}"
        rss = max(r[2] for r in res)
        anon = max(r[3] for r in res)
        print(f"{name:20} {med:10.3f} {min(walls):7.3f}-{max(walls):<7.3f} {cpu:8.2f} "
              f"{med * scale:7.2f} {rss:8.0f} {anon:8.0f}  {gtxt}")
        recs.append({"bench": "reader-lulesh", "metric": name, "events": events,
                     "ranks": ranks, "file_bytes": size, "runs": runs,
                     "median_s": round(med, 4), "min_s": round(min(walls), 4),
                     "max_s": round(max(walls), 4), "cpu_s": round(cpu, 3),
                     "per_100m_s": round(med * scale, 3),
                     "cpu_per_100m_s": round(cpu * scale, 3),
                     "peak_rss_mib": round(rss, 1), "peak_anon_mib": round(anon, 1),
                     "goal_per_100m_s": goal})
        for suffix in (".html", ".json"):
            if os.path.exists(out + suffix):
                if suffix == ".json":
                    recs[-1]["output_bytes"] = os.path.getsize(out + suffix)
                os.unlink(out + suffix)
    for r in recs:
        print(json.dumps(r))
    if not os.environ.get("SP_BENCH_FILE"):
        os.unlink(path)
    os.rmdir(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
