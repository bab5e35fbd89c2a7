#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check a profile against the calls a program counted itself.

usage: check_frames.py FILE PROG.json [depth]
PROG.json has "calls" {function: calls} and optionally "depth" {function:
0-based nesting depth, null: not checked}. Read with h5py, independently of our reader: the
rows are exactly the program's functions, events + throttled calls equal
its count for each, nothing was dropped. With `depth` (every call on the
timeline), the nesting rebuilt from the events' start and end times puts
every event of a function at its depth.
"""
import json
import sys

import h5py
import numpy as np

path, prog = sys.argv[1], json.load(open(sys.argv[2]))
want_depth = len(sys.argv) > 3 and sys.argv[3] == 'depth'
f = h5py.File(path, 'r')
names = [n.decode() if isinstance(n, bytes) else n for n in f['region_table/names'][()]]
idx = f['rank_region_index']
n = len(idx['region_ids'])
col = lambda k: idx[k][()] if k in idx else np.zeros(n, dtype=np.int64)
ev, thr, drop = col('event_counts'), col('throttled_counts'), col('dropped_counts')
fails = []
got = {}
for i, g in enumerate(idx['region_ids'][()]):
    got[names[g]] = got.get(names[g], 0) + int(ev[i]) + int(thr[i])
    if drop[i]:
        fails.append('%s: %d calls dropped' % (names[g], drop[i]))
got = {k: v for k, v in got.items() if v}
if got != prog['calls']:
    fails.append('calls differ:\n  file    %s\n  program %s' % (sorted(got.items()), sorted(prog['calls'].items())))
meta = dict(f['metadata'].attrs)
if int(meta.get('dropped_events', 0)):
    fails.append('metadata dropped_events = %s' % meta['dropped_events'])
if want_depth:
    if thr.any():
        fails.append('depth check needs every call on the timeline')
    starts, ends = f['events/start_times'][()], f['events/end_times'][()]
    region = np.empty(len(starts), dtype=np.int64)
    for g, o, c in zip(idx['region_ids'][()], idx['event_offsets'][()], ev):
        region[o:o + c] = g
    if np.any(ends < starts):
        fails.append('an event ends before it starts')
    order = np.lexsort((-ends, starts))
    stack, bad = [], {}
    for k in order:
        while stack and ends[stack[-1]] <= starts[k]:
            stack.pop()
        name = names[region[k]]
        if prog['depth'][name] is not None and len(stack) != prog['depth'][name]:
            bad.setdefault(name, []).append(len(stack))
        stack.append(k)
    for name, depths in sorted(bad.items()):
        fails.append('%s: %d events at the wrong depth (want %d, got up to %d)'
                     % (name, len(depths), prog['depth'][name], max(depths)))
for m in fails:
    print('FAIL ' + path + ': ' + m)
if fails:
    sys.exit(1)
print('ok   %s: %d calls exact%s' % (path, sum(got.values()), ', depths right' if want_depth else ''))
