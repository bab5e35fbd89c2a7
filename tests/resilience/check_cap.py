#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run resil-cap under a memory cap and check the finalize kept within it.

Usage: check_cap.py PROG N THREADS CAP_MIB SLACK_MIB OUT
(the profiler library to preload into PROG in $SP_CAP_PRELOAD)

Runs PROG 1000 THREADS (the process without events: libraries, the
profiler's tables) and PROG N THREADS, each under SCOPE_PROFILER_MAX_MEMORY
= CAP_MIB with everything recorded, and takes each one's peak RSS from
wait4. The big run's peak must stay within the small run's plus CAP_MIB
plus SLACK_MIB (the stated constant of docs/RESILIENCE.md). Then OUT is
checked against the program's structure: exact counts per thread, nothing
dropped, no spill file left, and exclusive_totals equal to a computation
from the events (numpy, per thread: which leaf calls lie inside an inner
call), so the streamed nesting is checked independently.

With SP_CAP_MPIRUN (the launcher's command, e.g. "mpirun -n 2"): PROG is
the MPI build, run under it with THREADS threads a rank; each rank prints
its peak RSS after MPI_Finalize, and the largest is checked. OUT is checked
rank by rank.
"""
import os
import subprocess
import sys

import h5py
import numpy as np

prog, n, threads, cap, slack, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
nranks = 1
MIB = 1 << 20


mpirun = os.environ.get("SP_CAP_MPIRUN", "").split()
# test settings passed on to the ranks when set
EXPORT = ("SCOPE_PROFILER_TEST_FINALIZE_PLAN", "SCOPE_PROFILER_TEST_NO_TMPFILE")
if mpirun:
    nranks = int(mpirun[mpirun.index("-n") + 1])


finalize_line = None  # rank 0's debug line of the parallel finalize (the big MPI run)


def peak(calls, path, debug=False):
    global finalize_line
    sp = dict(SCOPE_PROFILER_OUTPUT=path, SCOPE_PROFILER_MAX_MEMORY=f"{cap}M",
              SCOPE_PROFILER_THROTTLE_CALLS="0", SCOPE_PROFILER_QUIET="1",
              LD_PRELOAD=os.environ["SP_CAP_PRELOAD"])
    if debug:
        sp["SCOPE_PROFILER_DEBUG"] = "1"
    if mpirun:
        # LD_PRELOAD for the ranks, not mpirun
        cmd = mpirun + [a for k in sp for a in ("-x", k if k != "LD_PRELOAD" else
                                                f"{k}={sp[k]}")] + \
            [a for k in EXPORT if k in os.environ for a in ("-x", k)] + [prog, str(calls), str(threads)]
        env = dict(os.environ, **sp)
        del env["LD_PRELOAD"]
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE if debug
                           else None, text=True, timeout=600)
        assert p.returncode == 0, (calls, p.returncode, p.stderr)
        if debug:
            finalize_line = [line for line in p.stderr.splitlines() if "path=parallel" in line]
        hwm = [int(line.split()[3]) for line in p.stdout.splitlines() if " hwm " in line]
        assert len(hwm) == nranks and min(hwm) > 0, p.stdout
        print(f"  {calls} calls a rank: VmHWM per rank {[h >> 10 for h in hwm]} MiB")
        return max(hwm) * 1024
    env = dict(os.environ, **sp)
    p = subprocess.Popen([prog, str(calls), str(threads)], env=env, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    assert p.returncode == 0, (calls, p.returncode)
    return ru.ru_maxrss * 1024  # KiB on Linux


for p in (out, out + ".small.h5"):
    if os.path.exists(p):
        os.unlink(p)
small = peak(1000, out + ".small.h5")
big = peak(n, out, debug=bool(mpirun))
bound = small + (cap + slack) * MIB
print(f"peak RSS: {big / MIB:.1f} MiB with {n} calls a thread, {small / MIB:.1f} MiB with "
      f"1000; bound {bound / MIB:.1f} MiB (cap {cap} MiB + {slack} MiB)")
assert big <= bound, "finalize went past the memory cap"

d = os.path.dirname(os.path.abspath(out))
left = [f for f in os.listdir(d) if ".spill." in f]
assert not left, left

f = h5py.File(out, "r")
names = [x.decode() if isinstance(x, bytes) else x for x in f["region_table/names"][()]]
ix = f["rank_region_index"]
ranks_col = ix["ranks"][()]
assert f["metadata"].attrs["dropped_events"] == 0
assert sorted(set(ranks_col.tolist())) == list(range(nranks)), ranks_col
ev = f["events"]
start, end = ev["start_times"][()], ev["end_times"][()]
lanes = ev["thread_ids"][()] if "thread_ids" in ev else None
total = 0
for rank in range(nranks):
    mine = ranks_col == rank
    rid, off = ix["region_ids"][()][mine], ix["event_offsets"][()][mine]
    cnt, excl = ix["event_counts"][()][mine], ix["exclusive_totals"][()][mine]
    total += int(cnt.sum())
    row = {names[r]: k for k, r in enumerate(rid)}
    per = {"outer": n, "inner": n, "leaf": n + (n + 2) // 3}
    for name, c in per.items():
        want = c * threads
        assert cnt[row[name]] == want, (rank, name, int(cnt[row[name]]), want)

    def col(name, what):
        k = row[name]
        return what[off[k]:off[k] + cnt[k]]

    # Rows in the fill's order: start, then thread.
    for name in row:
        s = col(name, start)
        ds = np.diff(s)
        assert (ds >= 0).all(), (rank, name, "start order")
        if lanes is not None:
            assert (np.diff(col(name, lanes))[ds == 0] >= 0).all(), (name, "thread order")
    tot = {k: 0 for k in per}
    want = {k: 0 for k in per}
    for name in per:
        tot[name] = int((col(name, end) - col(name, start)).sum())
    lane_ids = [0] if lanes is None else sorted(set(np.unique(col("outer", lanes)).tolist()))
    in_inner_total = 0
    for lane in lane_ids:
        def sel(name):
            s, e = col(name, start), col(name, end)
            if lanes is None:
                return s, e
            m = col(name, lanes) == lane
            return s[m], e[m]
        (ls, le), (is_, ie) = sel("leaf"), sel("inner")
        assert (np.diff(is_) >= 0).all() and (np.diff(ls) >= 0).all(), "start order per thread"
        k = np.searchsorted(is_, ls, side="right") - 1
        ok = k >= 0
        kk = np.where(ok, k, 0)
        inside = ok & (ls >= is_[kk]) & (le <= ie[kk]) & ((ls < ie[kk]) | (is_[kk] == ie[kk]))
        in_inner_total += int((le - ls)[inside].sum())
        assert int(inside.sum()) == (n + 2) // 3, ("leaf calls inside inner", int(inside.sum()))
    want["leaf"] = tot["leaf"]
    want["inner"] = tot["inner"] - in_inner_total
    want["outer"] = tot["outer"] - tot["inner"] - (tot["leaf"] - in_inner_total)
    for name in ("outer", "inner", "leaf"):
        assert excl[row[name]] == want[name], (rank, name, int(excl[row[name]]), want[name])
print(f"{out}: {total} events on {nranks} rank(s), counts and exclusive_totals exact")

# The parallel finalize writes the metadata with the layout, before the
# events: profiler_finalize_ns is set again after the write, so that the
# overhead estimate counts it. It must cover rank 0's phases, as its debug
# line gives them (the write, 1.3 GB here, is most of it).
if mpirun:
    assert finalize_line, "no debug line of the parallel finalize"
    ph = dict(kv.split("=") for kv in finalize_line[0].split() if "_ms=" in kv)
    phases_ms = sum(float(ph[k]) for k in ("names_ms", "scan_ms", "layout_ms", "write_ms"))
    fin_ms = int(f["metadata"].attrs["profiler_finalize_ns"]) / 1e6
    print(f"profiler_finalize_ns: {fin_ms:.1f} ms; rank 0's finalize phases {phases_ms:.1f} ms "
          f"(write {float(ph['write_ms']):.1f} ms)")
    assert fin_ms >= phases_ms, "profiler_finalize_ns leaves out the write of the events"
