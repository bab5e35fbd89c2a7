#!/usr/bin/env python3
"""Size and finalize benchmark: bytes per event on disk (uncompressed and
with SCOPE_PROFILER_COMPRESSION), finalize time for N events against a raw
write(2)+fsync of the same 16 bytes per event. Median of RUNS runs, min-max,
ratios measured in the same run; one JSON line per metric."""
import json
import os
import statistics
import subprocess
import sys
import tempfile

prog = sys.argv[1]
events = int(os.environ.get("SP_BENCH_EVENTS", "10000000"))
runs = int(os.environ.get("SP_BENCH_RUNS", "5"))
out = os.path.join(tempfile.mkdtemp(prefix="sp-bench-write-"), "w.h5")


def run(level):
    env = dict(os.environ, SCOPE_PROFILER_QUIET="1", SCOPE_PROFILER_COMPRESSION=str(level),
               SCOPE_PROFILER_MAX_MEMORY="4G")
    res = []
    for _ in range(runs):
        line = subprocess.run([prog, str(events), out], env=env, check=True,
                              capture_output=True, text=True).stdout
        res.append(json.loads(line))
    return res


def emit(metric, values, unit, ref=None, goal=None):
    med = statistics.median(values)
    rec = {"metric": metric, "unit": unit, "median": round(med, 4), "min": round(min(values), 4),
           "max": round(max(values), 4), "runs": len(values)}
    if ref is not None:
        rec["ratio_to_reference"] = round(med / ref, 3)
    if goal is not None:
        rec["goal"] = goal
    print(f"{metric:34s} {med:10.4f} {unit:14s} (min {min(values):.4f}, max {max(values):.4f})"
          + (f"  ratio {med / ref:.2f}" if ref else "") + (f"  goal {goal}" if goal else ""))
    print(json.dumps(rec))


print(f"write benchmark: {events} events, {runs} runs, median")
plain = run(0)
gz = run(4)
raw = statistics.median(r["raw_write_s"] for r in plain)
emit("raw_write_16B_per_event", [r["raw_write_s"] for r in plain], "s")
emit("finalize_uncompressed", [r["finalize_s"] for r in plain], "s", ref=raw, goal="<= 1.3x raw")
# Floor of a finalize that must read the recorded events twice (count,
# scatter) and write them: raw write + 2 read passes, as a ratio to raw.
reads = statistics.median(r["read_pass_s"] for r in plain)
emit("read_pass_24B_per_event", [r["read_pass_s"] for r in plain], "s")
emit("finalize_floor_ratio", [(raw + 2 * reads) / raw], "x")
emit("bytes_per_event_uncompressed", [r["bytes_per_event"] for r in plain], "B/event", goal="<= 16.5")
emit("finalize_gzip4_shuffle", [r["finalize_s"] for r in gz], "s", ref=raw)
emit("bytes_per_event_gzip4_shuffle", [r["bytes_per_event"] for r in gz], "B/event", goal="<= 5")
