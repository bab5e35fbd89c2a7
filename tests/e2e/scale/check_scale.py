#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check a merged file of scale-ranks (scale-ranks.c) against the calls every
rank is known to make, independently with h5py, then through the CLI.

usage: check_scale.py FILE NRANKS MULT THREAD CLI [PATH]

PATH is the finalize path the file must say it was written by
(/metadata mpi_finalize_path: parallel or serial); "any" (the default)
accepts a file without the key (written before the key existed).
Checks: schema 2, mpi_size, every rank present, one region per function
name across ranks (the unified name table, no other names), exact calls of
every (rank, region) row and no row where a rank made no call, rows back to
back in rank then region order, MPI bytes, peers and tags of every ring
MPI_Sendrecv and MPI_Allreduce, rank 1's second thread, and the CLI's
summary --json totals. Prints one line; exit 1 with the first failures.
"""
import json
import subprocess
import sys

import h5py
import numpy as np

path, n, mult, thread, cli = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
want_path = sys.argv[6] if len(sys.argv) > 6 else 'any'
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
    return cond


def expected(r):
    """{name: calls} of rank r: the same arithmetic as scale-ranks.c."""
    e = {f'work_{j}': ((r + j) % 7 + 1) * 100 * mult for j in range(7)}
    e.update({'main': 1, 'MPI_Init_thread': 1, 'MPI_Comm_rank': 1, 'MPI_Comm_size': 1,
              'MPI_Allreduce': 10, 'MPI_Sendrecv': 5, 'MPI_Barrier': 1})
    if r > 0:
        e['rank_tail'] = 10 * r
    if r % 2:
        e['odd_only'] = 1
    if thread and r == 1:
        e['thread_main'] = 1
        e['thread_work'] = 250
    return e


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


f = h5py.File(path, 'r')
check(int(f.attrs['scope_profiler_schema']) == 2, 'schema is not 2')
meta = f['metadata'].attrs
check(int(meta['mpi_size']) == n, f"mpi_size {meta['mpi_size']} != {n}")
fin = text(meta['mpi_finalize_path']) if 'mpi_finalize_path' in meta else 'n/a'
if want_path != 'any':
    check(fin == want_path, f'mpi_finalize_path {fin!r}, expected {want_path!r}')

names = [text(s) for s in f['region_table/names'][:]]
all_names = set().union(*(expected(r) for r in range(n)))
check(len(set(names)) == len(names), f'a name twice in region_table/names: {names}')
check(set(names) == all_names, f'names: extra {sorted(set(names) - all_names)}, '
      f'missing {sorted(all_names - set(names))}')

idx = f['rank_region_index']
rid, rk = idx['region_ids'][:], idx['ranks'][:]
off, cnt = idx['event_offsets'][:].astype(np.int64), idx['event_counts'][:].astype(np.int64)
st, en = f['events/start_times'][:], f['events/end_times'][:]
check(len(rid) == len(set(zip(rid.tolist(), rk.tolist()))), 'a (rank, region) row twice')
check(np.all(np.diff(rk.astype(np.int64)) >= 0), 'rows not in rank order')
check(len(off) > 0 and off[0] == 0 and np.array_equal(off[1:], (off + cnt)[:-1])
      and int((off + cnt)[-1]) == len(st), 'rows not back to back over all events')
check(np.all(st <= en), 'an event ends before it starts')
for k in ('dropped_counts', 'throttled_counts'):
    if k in idx:
        check(not idx[k][:].any(), f'{k} not all zero')
rows = {(names[int(g)], int(r)): (int(o), int(c)) for g, r, o, c in zip(rid, rk, off, cnt)}
check(sorted({r for _, r in rows}) == list(range(n)), 'not every rank has rows')
for r in range(n):
    e = expected(r)
    got = {name: c for (name, rr), (o, c) in rows.items() if rr == r}
    if not check(got == e, f'rank {r}: calls differ: ' + str(
            {k: (got.get(k), e.get(k)) for k in set(got) | set(e) if got.get(k) != e.get(k)})):
        continue
    for name in e:
        o, c = rows[(name, r)]
        check(np.all(np.diff(st[o:o + c]) >= 0), f'rank {r} {name}: not in entry order')

# MPI columns, row layout: each MPI row's values at mpi_offsets.
ev = f['events']
mo = idx['mpi_offsets'][:]
cols = {k: ev[k][:] for k in ('mpi_bytes', 'mpi_peers', 'mpi_tags', 'mpi_comms')}
for r in range(n):
    for name, want in (('MPI_Sendrecv', (8 * (r + 1), (r + 1) % n, 7, 0)),
                       ('MPI_Allreduce', (8, -1, -1, 0))):
        i = next((i for i in range(len(rid)) if names[rid[i]] == name and rk[i] == r), None)
        if not check(i is not None and mo[i] >= 0, f'rank {r} {name}: no MPI values'):
            continue
        o, c = int(mo[i]), int(cnt[i])
        got = {tuple(int(cols[k][o + j]) for k in cols) for j in range(c)}
        check(got == {want}, f'rank {r} {name}: (bytes, peer, tag, comm) {got}, expected {want}')

# Rank 1's second thread: its own thread index, thread_work only on it.
if thread and n > 1:
    tt = f['thread_table']
    lanes = sorted(int(i) for i, r in zip(tt['index'][:], tt['ranks'][:]) if r == 1)
    check(lanes == [0, 1], f'rank 1 threads {lanes}, expected [0, 1]')
    o, c = rows.get(('thread_work', 1), (0, 0))
    tid = ev['thread_ids'][o:o + c]
    check(c == 250 and set(tid.tolist()) == {1}, 'thread_work not on thread 1 of rank 1')
    o, c = rows.get(('work_0', 1), (0, 0))
    check(set(ev['thread_ids'][o:o + c].tolist()) == {0}, 'work_0 not on thread 0 of rank 1')
else:
    check('thread_ids' not in ev, 'thread_ids without a second thread')

# The CLI: summary --json totals over all ranks.
out = subprocess.run([cli, 'summary', path, '--json'], capture_output=True, text=True)
if check(out.returncode == 0, f'summary --json failed: {out.stderr.strip()}'):
    tot = {}
    for row in json.loads(out.stdout):
        tot[row['name']] = tot.get(row['name'], 0) + row['num_calls']
    want = {}
    for r in range(n):
        for k, v in expected(r).items():
            want[k] = want.get(k, 0) + v
    check(tot == want, 'summary --json totals differ: ' + str(
        {k: (tot.get(k), want.get(k)) for k in set(tot) | set(want) if tot.get(k) != want.get(k)}))

if failures:
    print(f'FAIL: {path} ({n} ranks):', *failures[:10], sep='\n  ')
    sys.exit(1)
print(f'scale: {n} ranks, {len(st)} events, {len(names)} names, path {fin}: OK')
