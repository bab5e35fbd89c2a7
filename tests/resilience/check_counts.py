#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Assert exactly which events a profile holds.

usage: check_counts.py FILE 'EXPECTED' [partial=0|1] [ranks=N] [signal=S]
EXPECTED is a Python dict {(name, rank): count} (rank may be omitted: then
the keys are names and rank 0 is meant). Every row must be listed, with its
exact count; every event must end after it starts, and within a row events
are in start order. Reads the file with h5py, independently of our reader.
"""
import ast
import sys

import h5py
import numpy as np

path, want = sys.argv[1], ast.literal_eval(sys.argv[2])
opts = dict(a.split('=', 1) for a in sys.argv[3:])
want = {(k if isinstance(k, tuple) else (k, 0)): v for k, v in want.items()}
f = h5py.File(path, 'r')
names = [n.decode() if isinstance(n, bytes) else n for n in f['region_table/names'][()]]
idx = f['rank_region_index']
st, en = f['events/start_times'][()], f['events/end_times'][()]
got = {}
for g, r, o, c in zip(idx['region_ids'][()], idx['ranks'][()], idx['event_offsets'][()],
                      idx['event_counts'][()]):
    got[(names[g], int(r))] = int(c)
    s, e = st[o:o + c], en[o:o + c]
    assert np.all(e >= s), f'{names[g]} rank {r}: an event ends before it starts'
    assert np.all(np.diff(s) >= 0), f'{names[g]} rank {r}: events not in start order'
got = {k: v for k, v in got.items() if v or k in want}
assert got == want, f'{path}: rows differ\n got  {sorted(got.items())}\n want {sorted(want.items())}'
meta = dict(f['metadata'].attrs)
if 'partial' in opts:
    assert int(meta.get('partial', 0)) == int(opts['partial']), f'partial = {meta.get("partial")}'
if 'signal' in opts:
    assert int(meta.get('partial_signal', 0)) == int(opts['signal']), meta.get('partial_signal')
if 'ranks' in opts:
    assert int(meta['mpi_size']) == int(opts['ranks']), f'mpi_size = {meta["mpi_size"]}'
print(f'{path}: {sum(want.values())} events as expected')
