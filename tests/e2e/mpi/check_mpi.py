#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check a merged MPI profile against the calls the program is known to make.

usage: check_mpi.py FILE NRANKS known|usempi|mpifh CLI

Reads the file independently with h5py (layout, counts per rank, bytes, peers,
roots, tags, communicator ids and sizes), then checks the same facts through
the CLI's `summary --json --ranks R` and `comm --json`. The MPI columns must be
in the row layout (docs/FORMAT.md): values for the events of MPI rows only.
"""
import json
import subprocess
import sys
from collections import defaultdict

import h5py

path, n, kind, cli = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)


def expected_known(r):
    """{name: [(bytes, peer, root, tag, comm) or None per call, in order]}."""
    right, left = (r + 1) % n, (r + n - 1) % n
    srank = n - 1 - r
    e = defaultdict(list)
    a = lambda name, *calls: e[name].extend(calls)
    X = None  # a call whose data is not checked
    a('MPI_Init_thread', X)
    a('MPI_Comm_rank', (-1, -1, -1, -1, 0), (-1, -1, -1, -1, 2))
    a('MPI_Comm_size', (-1, -1, -1, -1, 0))
    a('MPI_Sendrecv', (40, right, -1, 11, 0), (16, right, -1, 21, 3))
    if r == 0:
        a('MPI_Send', (8000, n - 1, -1, 12, 0))
    if r == n - 1:
        a('MPI_Recv', (8000, 0, -1, 12, 0))
    for _ in range(3):
        a('MPI_Irecv', (256, left, -1, 13, 0))
        a('MPI_Isend', (256, right, -1, 13, 0))
        a('MPI_Waitall', (512, -1, -1, -1, -1))
    a('MPI_Irecv', (64, left, -1, 14, 0))
    a('MPI_Isend', (64, right, -1, 14, 0))
    a('MPI_Waitany', X, X)
    a('MPI_Recv_init', (128, left, -1, 15, 0))
    a('MPI_Send_init', (128, right, -1, 15, 0))
    for _ in range(4):
        a('MPI_Startall', (256, -1, -1, -1, -1))
        a('MPI_Waitall', (256, -1, -1, -1, -1))
    a('MPI_Request_free', X, X)
    a('MPI_Bcast', (400, -1, n - 1, -1, 0))
    a('MPI_Reduce', (8, -1, 0, -1, 0))
    for _ in range(5):
        a('MPI_Allreduce', (8, -1, -1, -1, 0))
    a('MPI_Gather', (8, -1, 0, -1, 0))
    a('MPI_Alltoall', (4, -1, -1, -1, 0))
    a('MPI_Alltoallv', (4 * n, -1, -1, -1, 0))
    a('MPI_Barrier', (-1, -1, -1, -1, 0))
    a('MPI_Ibarrier', (-1, -1, -1, -1, 0))
    a('MPI_Wait', (-1, -1, -1, -1, 0))  # the Ibarrier's request: its comm
    a('MPI_Comm_split', (-1, -1, -1, -1, 0))
    if srank == 0:
        a('MPI_Send', (24, n - 2, -1, 16, 2))
    if srank == 1:
        a('MPI_Recv', (24, n - 1, -1, 16, 2))
    for k in range(2):
        a('MPI_Type_contiguous', X)
        a('MPI_Type_commit', X)
        a('MPI_Irecv', ((2 << k) * 16, left, -1, 17, 0))
        a('MPI_Isend', ((2 << k) * 16, right, -1, 17, 0))
        a('MPI_Test', (((2 << k) * 16, left, -1, 17, 0)))  # the one that completed
        a('MPI_Wait', ((2 << k) * 16, right, -1, 17, 0))
        a('MPI_Type_free', X)
    a('MPI_Iprobe', (-1, -1, -1, 99, 0))  # nothing matched: no peer from the stale status
    a('MPI_Comm_rank', (-1, -1, -1, -1, 0))
    a('MPI_Comm_dup', (-1, -1, -1, -1, 0))
    a('MPI_Pcontrol', X)
    a('MPI_Comm_free', (-1, -1, -1, -1, 3), (-1, -1, -1, -1, 2))
    a('MPI_Allreduce', (4, -1, -1, -1, 0))
    return e


def expected_usempi(r):
    right, left = (r + 1) % n, (r + n - 1) % n
    e = defaultdict(list)
    e['MPI_Init'] = [None]
    e['MPI_Comm_rank'] = [(-1, -1, -1, -1, 0)]
    e['MPI_Comm_size'] = [(-1, -1, -1, -1, 0)]
    e['MPI_Irecv'] = [(80, left, -1, 5, 0)]
    e['MPI_Isend'] = [(80, right, -1, 5, 0)]
    e['MPI_Waitall'] = [(160, -1, -1, -1, -1)]
    e['MPI_Send'] = [(4, right, -1, 6, 0)]
    e['MPI_Recv'] = [(4, left, -1, 6, 0)]  # rank 0: MPI_ANY_SOURCE, from the status
    e['MPI_Allreduce'] = [(8, -1, -1, -1, 0)]  # MPI_IN_PLACE
    for f in ('MPI_Get_address', 'MPI_Type_create_struct', 'MPI_Type_commit', 'MPI_Type_free'):
        e[f] = [None]
    e['MPI_Bcast'] = [(80, -1, 0, -1, 0)]  # MPI_BOTTOM
    e['MPI_Barrier'] = [(-1, -1, -1, -1, 0)]
    return e


def expected_mpifh(r):
    right, left = (r + 1) % n, (r + n - 1) % n
    e = defaultdict(list)
    e['MPI_Init'] = [None]
    e['MPI_Comm_rank'] = [(-1, -1, -1, -1, 0)]
    e['MPI_Comm_size'] = [(-1, -1, -1, -1, 0)]
    e['MPI_Irecv'] = [(16, left, -1, 9, 0)]
    e['MPI_Isend'] = [(16, right, -1, 9, 0)]
    e['MPI_Wait'] = [(16, left, -1, 9, 0), (16, right, -1, 9, 0)]
    e['MPI_Reduce'] = [(4, -1, 0, -1, 0)]
    return e


expected = {'known': expected_known, 'usempi': expected_usempi, 'mpifh': expected_mpifh}[kind]

f = h5py.File(path, 'r')
check(f.attrs['scope_profiler_schema'] == 2, 'schema is not 2')
meta = f['metadata'].attrs
check(int(meta['mpi_size']) == n, f"mpi_size {meta['mpi_size']} != {n}")
names = [s.decode() for s in f['region_table/names'][:]]
check(len(set(names)) == len(names), 'duplicate region names')
idx = f['rank_region_index']
ev = f['events']
MPI_COLS = ('mpi_bytes', 'mpi_peers', 'mpi_roots', 'mpi_tags', 'mpi_comms')
cols = {k: ev[k][:] for k in ('start_times', 'end_times')}
check(ev['mpi_bytes'].dtype == 'int64' and ev['mpi_peers'].dtype == 'int32', 'MPI column dtypes')
# Row layout: the MPI columns hold the events of the MPI rows only, each
# row's slice at rank_region_index/mpi_offsets (-1: none); expanded here to
# one value per event (-1 elsewhere) for the checks below.
layout = ev.attrs.get('mpi_layout')
check(layout in (b'rows', 'rows'), f'/events mpi_layout attribute is {layout!r}, not "rows"')
mo = idx['mpi_offsets'][:] if 'mpi_offsets' in idx else None
check(mo is not None and mo.dtype == 'int64', 'rank_region_index/mpi_offsets missing or not int64')
counts = idx['event_counts'][:]
offs = idx['event_offsets'][:]
mpi_rows = [i for i in range(len(counts)) if mo is not None and mo[i] >= 0]
m = sum(int(counts[i]) for i in mpi_rows)
for k in MPI_COLS:
    check(ev[k].shape == (m,), f'{k}: {ev[k].shape[0]} values, expected {m} (the events of '
          f'the MPI rows; {len(cols["start_times"])} events in all)')
fn_events = sum(int(counts[i]) for i in range(len(counts))
                if not names[int(idx['region_ids'][i])].startswith('MPI_'))
check(m <= len(cols['start_times']) - fn_events,
      f'{m} MPI values for {len(cols["start_times"])} events of which {fn_events} not MPI calls')
for i in range(len(counts)):  # function rows carry none (MPI rows: values checked below)
    if not names[int(idx['region_ids'][i])].startswith('MPI_'):
        check(mo is None or mo[i] == -1,
              f'row {i} ({names[int(idx["region_ids"][i])]}): mpi_offsets {mo[i]}, expected -1')
for i in mpi_rows:  # only rows with some value other than -1 get values
    o, c = int(mo[i]), int(counts[i])
    check(any((ev[k][o:o + c] != -1).any() for k in MPI_COLS),
          f'row {i} ({names[int(idx["region_ids"][i])]}): MPI values, all -1')
at = 0
for i in mpi_rows:  # row order, back to back
    check(int(mo[i]) == at, f'row {i}: mpi_offsets {mo[i]}, expected {at}')
    at += int(counts[i])
for k in MPI_COLS:
    full = [-1] * len(cols['start_times'])
    v = ev[k][:]
    for i in mpi_rows:
        o, c, s0 = int(offs[i]), int(counts[i]), int(mo[i])
        full[o:o + c] = [int(x) for x in v[s0:s0 + c]]
    cols[k] = full
rows = {}
pairs = set()
next_offset = 0
for i in range(len(idx['ranks'])):
    rank, rid = int(idx['ranks'][i]), int(idx['region_ids'][i])
    off, cnt = int(idx['event_offsets'][i]), int(idx['event_counts'][i])
    check((rid, rank) not in pairs, f'duplicate row {names[rid]} rank {rank}')
    pairs.add((rid, rank))
    check(off == next_offset, f'row {i} not back to back')
    next_offset = off + cnt
    rows[(names[rid], rank)] = (off, cnt)
check(next_offset == len(cols['start_times']), 'events not all covered by rows')
check(sorted({r for _, r in rows}) == list(range(n)), f'ranks in file {sorted({r for _, r in rows})}')

for r in range(n):
    exp = expected(r)
    got = {name for (name, rank) in rows if rank == r and name.startswith('MPI_')}
    check(got == set(exp), f'rank {r}: MPI regions differ: extra {sorted(got - set(exp))}, '
          f'missing {sorted(set(exp) - got)}')
    for name, calls in exp.items():
        off, cnt = rows.get((name, r), (0, 0))
        data = [tuple(int(cols[k][off + j]) for k in ('mpi_bytes', 'mpi_peers', 'mpi_roots',
                                                       'mpi_tags', 'mpi_comms'))
                for j in range(cnt)]
        if name == 'MPI_Test':  # polled: the calls that found nothing carry no data
            data = [d for d in data if d != (-1, -1, -1, -1, -1)]
            cnt = len(data)
        check(cnt == len(calls), f'rank {r} {name}: {cnt} calls, expected {len(calls)}')
        if cnt != len(calls):
            continue
        for j, want in enumerate(calls):
            if want is not None:
                check(data[j] == want, f'rank {r} {name}[{j}]: (bytes, peer, root, tag, comm) '
                      f'= {data[j]}, expected {want}')
        if name == 'MPI_Waitany':  # completion order is free; one recv, one send
            check(sorted(d[1] for d in data) == sorted([(r + n - 1) % n, (r + 1) % n]),
                  f'rank {r} MPI_Waitany peers {data}')
            check([d[0] for d in data] == [64, 64], f'rank {r} MPI_Waitany bytes {data}')

if kind == 'known':
    for r in range(n):  # the hook that fired before MPI_Init belongs to the rank
        b, m = rows.get(('before_init', r)), rows.get(('MPI_Init_thread', r))
        check(b is not None and b[1] == 1, f'rank {r}: before_init missing')
        if b and m:
            check(cols['start_times'][b[0]] < cols['start_times'][m[0]], 'before_init not first')
    c = f['mpi_communicators']
    table = sorted(zip(c['ranks'][:], c['ids'][:], c['sizes'][:]))
    want = sorted((r, i, s) for r in range(n) for i, s in enumerate([n, 1, n, n]))
    check([tuple(map(int, t)) for t in table] == want, f'communicator table {table}')
    check('thread_ids' in ev, 'thread_ids missing (a second thread called MPI)')
    if 'thread_ids' in ev:
        off, cnt = rows[('MPI_Sendrecv', 0)]
        check(sorted(ev['thread_ids'][off:off + cnt]) == [0, 1], 'Sendrecv threads')

# ---- the same through the CLI ---------------------------------------------
for r in range(n):
    out = subprocess.run([cli, 'summary', path, '--json', '--ranks', str(r)], check=True,
                         capture_output=True, text=True).stdout
    counts = defaultdict(int)
    for row in json.loads(out):
        counts[row['name']] += row['num_calls']
    for name, calls in expected(r).items():
        if name == 'MPI_Test':  # polled: at least the calls that completed
            check(counts.get(name, 0) >= len(calls), f'CLI summary rank {r} MPI_Test')
            continue
        check(counts.get(name) == len(calls),
              f'CLI summary rank {r} {name}: {counts.get(name)} != {len(calls)}')

comm = json.loads(subprocess.run([cli, 'comm', path, '--json'], check=True,
                                 capture_output=True, text=True).stdout)
check(comm['num_ranks'] == n, f"comm num_ranks {comm['num_ranks']}")
matrix = [[0] * n for _ in range(n)]
totals = defaultdict(int)
for r in range(n):
    for name, calls in expected(r).items():
        for call in calls:
            if call and call[0] >= 0:
                totals[name] += call[0]
            if call and name in ('MPI_Send', 'MPI_Isend', 'MPI_Sendrecv') and call[1] >= 0:
                matrix[r][call[1]] += call[0]
check(comm['matrix']['bytes'] == matrix, f"comm matrix {comm['matrix']['bytes']} != {matrix}")
by_name = {fn['name']: fn for fn in comm['functions']}
for name, total in totals.items():
    if name != 'MPI_Waitany':
        check(by_name.get(name, {}).get('total_bytes') == total,
              f"comm {name} total_bytes {by_name.get(name, {}).get('total_bytes')} != {total}")

if failures:
    print('\n'.join('FAIL: ' + m for m in failures[:40]))
    sys.exit(1)
print(f'{path}: {kind} with {n} ranks OK ({len(rows)} rows)')
