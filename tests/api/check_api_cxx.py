#!/usr/bin/env python3
"""Files of tests/api/api-cxx.cpp: exact counts, names and call sites."""
import os
import sys

from api_files import h5_calls, read_spt

os.chdir(sys.argv[1])
calls, src = h5_calls("cxx_rank00000.h5")
got = {k: len(v[0]) for k, v in calls.items() if len(v[0])}
assert got == {"scoped": 5, "void solve()": 4, "block": 1,
               "void in_context(sp_profiler*)": 2, "ctx_block": 2}, got
assert src["void solve()"][0].endswith("api-cxx.cpp") and src["void solve()"][1] == 23, src
rank, regs = read_spt("cxxctx_rank00001.spt")
assert rank == 1
assert [(r[0], len(r[3])) for r in regs] == [("void in_context(sp_profiler*)", 2), ("ctx_block", 2)]
assert regs[1][1].endswith("api-cxx.cpp") and regs[1][2] == 30, regs[1][1:3]
print("api-cxx files: OK")
