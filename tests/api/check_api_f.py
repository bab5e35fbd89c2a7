#!/usr/bin/env python3
"""Files of tests/api/api-f.f90: the .spt of the Fortran context (counts,
source, durations within 1 ms of the program's own) and the process file."""
import os
import sys

import numpy as np

from api_files import h5_calls, read_spt

os.chdir(sys.argv[1])
measured = np.sort(np.array([int(x) for x in open("measured-f.txt").read().split()]))
files = sorted(f for f in os.listdir(".") if "_rank" in f)
assert files == ["fort_rank00002.spt"], files
rank, regs = read_spt("fort_rank00002.spt")
assert rank == 2
got = {r[0]: len(r[3]) for r in regs}
# written at finalize after the reset: work once; resettable is open.
assert got == {"work": 1}, got
calls, src = h5_calls("proc.h5")
got = {k: len(v[0]) for k, v in calls.items() if len(v[0])}
assert got == {"work": 4, "located": 1, "named": 1, "resettable": 2}, got
assert src["located"] == ("solver.f90", 7), src["located"]
s, e = calls["work"]
d = np.sort(e - s)[1:]  # the 3 timed calls are the longest; one short call after reset
assert (d <= measured + 20_000).all() and (d >= measured - 1_000_000).all(), (d, measured)
print("api-f files: OK")
