#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks of the call-site e2e run (test-callsites.sh).

usage: check_callsites.py CLI SOURCE WORKDIR

WORKDIR holds cs3.h5 (4 ranks, depth 3), cs2.h5 (2 ranks, depth 2, via
`run --callsites 2`) and off.h5 (4 ranks, call sites off). Expected counts
and sizes are those of callsites-known.c; lines come from its CS: markers.
"""
import json
import os
import re
import subprocess
import sys

import h5py
import numpy as np

cli, source, work = sys.argv[1:4]
base = os.path.basename(source)
marks = {}
for no, text in enumerate(open(source), 1):
    m = re.search(r'CS:(\w+) \*/', text)
    if m:
        marks[m.group(1)] = no


def fail(msg):
    sys.exit(f'FAIL: {msg}')


def lp(path, *args):
    out = subprocess.run([cli, 'line-profile', path, '--json', *args], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def expected(p):
    """Per MPI call: (function, calls, bytes, ranks with calls)."""
    return {
        'allreduce_a': ('MPI_Allreduce', 'reduce_small', 5 * p, 8 * 5 * p, p),
        'allreduce_b': ('MPI_Allreduce', 'reduce_large', 3 * p, 400 * 3 * p, p),
        'send_a': ('MPI_Send', 'send_ring', 7 * p, 10 * 7 * p, p),
        'send_b': ('MPI_Send', 'main', p - 1, 2048 * (p - 1), 1),
    }


def row_at(doc, name, mpi_fn):
    line = marks[name]
    rows = [r for r in doc['callsites']
            if os.path.basename(r['file']) == base and r['line'] == line and
            r['mpi_function'] == mpi_fn]
    if len(rows) != 1:
        fail(f'{name}: {len(rows)} rows for {base}:{line} {mpi_fn}; rows: '
             + ', '.join(f"{os.path.basename(r['file'])}:{r['line']} {r['mpi_function']}"
                         for r in doc['callsites']))
    return rows[0]


def check_rows(doc, p, depth):
    if doc['callsite_depth'] != depth:
        fail(f"callsite_depth {doc['callsite_depth']} != {depth}")
    for name, (mpi_fn, fn, calls, nbytes, nranks) in expected(p).items():
        r = row_at(doc, name, mpi_fn)
        got = (r['function'], r['num_calls'], r['bytes'], r['num_ranks'])
        if got != (fn, calls, nbytes, nranks):
            fail(f'{name}: (function, calls, bytes, ranks) = {got}, want {(fn, calls, nbytes, nranks)}')
        if f'CS:{name} ' not in (r['source_text'] or ''):
            fail(f"{name}: source_text {r['source_text']!r}")
        if not (r['total'] > 0 and r['maximum'] <= r['total'] and r['rank_cov'] >= 0 and
                0 <= r['slowest_rank'] < p and 0 < r['percent_mpi'] < 100):
            fail(f'{name}: implausible statistics {r}')
        if sum(c['num_calls'] for c in r['call_paths']) != calls:
            fail(f"{name}: call paths do not add up: {r['call_paths']}")
    send_b = row_at(doc, 'send_b', 'MPI_Send')
    if send_b['slowest_rank'] != 0 or send_b['rank_cov'] != 0:
        fail(f'send_b runs on rank 0 only: {send_b}')
    # allreduce_a is reached through two callers: two call paths, the same
    # on every rank (unified), with the callers' lines.
    paths = row_at(doc, 'allreduce_a', 'MPI_Allreduce')['call_paths']
    want = [(3 * p, ['reduce_small', 'phase_one', 'main'],
             [marks['allreduce_a'], marks['call_one'], marks['call_phases']]),
            (2 * p, ['reduce_small', 'phase_two', 'main'],
             [marks['allreduce_a'], marks['call_two'], marks['call_phases']])]
    got = [(c['num_calls'], [f['function'] for f in c['frames']],
            [f['line'] for f in c['frames']]) for c in paths]
    want = [(n, fns[:depth], lines[:depth]) for n, fns, lines in want]
    if got != want:
        fail(f'allreduce_a call paths {got}, want {want}')
    total = sum(r['percent_mpi'] for r in doc['callsites'])
    if abs(total - 100) > 1e-6:  # every MPI call of the program has a site
        fail(f'percent_mpi sums to {total}')
    regions = {r['region']: r for r in doc['regions']}
    for fn, calls in (('reduce_small', 5 * p), ('send_ring', 7 * p)):
        if fn not in regions or regions[fn]['num_calls'] != calls or \
                os.path.basename(regions[fn]['file']) != base:
            fail(f'regions: {fn} missing or wrong: {regions.get(fn)}')


def check_h5(path, p, depth):
    f = h5py.File(path, 'r')
    cs = f['callsites']
    if cs.attrs['depth'] != depth:
        fail(f'{path}: depth attribute {cs.attrs["depth"]}')
    idx = f['rank_region_index']
    # Row layout (docs/FORMAT.md): callsite_ids holds the events of the MPI
    # rows only, like mpi_bytes; expanded to one id per event (-1 elsewhere).
    ids = f['events/callsite_ids']
    mo, counts, offs = idx['mpi_offsets'][:], idx['event_counts'][:], idx['event_offsets'][:]
    m = int(counts[mo >= 0].sum())
    if ids.dtype != np.int32 or ids.shape != (m,) or f['events/mpi_bytes'].shape != (m,):
        fail(f'{path}: callsite_ids {ids.dtype} {ids.shape}, {m} events in MPI rows')
    sparse, ids = ids[:], np.full(f['events/start_times'].shape, -1, dtype=np.int32)
    for o, c, s0 in zip(offs.tolist(), counts.tolist(), mo.tolist()):
        if s0 >= 0:
            ids[o:o + c] = sparse[s0:s0 + c]
    nsites = cs['functions'].shape[0]
    names = [s.decode() for s in f['region_table/names'][:]]
    fns = [s.decode() for s in cs['functions'][:]]
    lines = cs['lines'][:]
    seen = {}
    for g, r, o, c in zip(idx['region_ids'][:], idx['ranks'][:], idx['event_offsets'][:],
                          idx['event_counts'][:]):
        sl = ids[o:o + c]
        if names[g].startswith('MPI_'):
            if (sl < 0).any() or (sl >= nsites).any():
                fail(f'{path}: {names[g]} rank {r}: call-site ids {sl}')
            for s in sl:
                seen.setdefault((names[g], int(s)), set()).add(int(r))
        elif (sl != -1).any():
            fail(f'{path}: region {names[g]} has call-site ids')
    # Unified ids: the site of allreduce_a via phase_one is one id, on all ranks.
    site = [i for i in range(nsites) if fns[i] == 'reduce_small' and lines[i] == marks['allreduce_a']]
    if len(site) != 2 or any(seen.get(('MPI_Allreduce', s)) != set(range(p)) for s in site):
        fail(f'{path}: allreduce_a sites {site} not on every rank: {seen}')
    off = cs['frame_offsets'][:]
    cnt = cs['frame_counts'][:]
    if (cnt < 1).any() or (cnt > depth).any() or off[-1] + cnt[-1] != cs['frame_functions'].shape[0]:
        fail(f'{path}: frame table {off} {cnt}')


def check_off(path):
    f = h5py.File(path, 'r')
    if 'callsite_ids' in f['events'] or 'callsites' in f:
        fail(f'{path}: call sites recorded with SCOPE_PROFILER_CALLSITES=0')
    if 'mpi_bytes' not in f['events']:
        fail(f'{path}: MPI columns missing')
    doc = lp(path)
    if doc['callsites'] != [] or doc['callsite_depth'] is not None or not doc['regions']:
        fail(f'{path}: line-profile without call sites: {doc}')
    text = subprocess.run([cli, 'line-profile', path], check=True, capture_output=True,
                          text=True).stdout
    if 'not recorded' not in text:
        fail(f'{path}: text output does not say call sites were not recorded:\n{text}')


def check_options(path):
    r0 = lp(path, '--rank', '0')
    if row_at(r0, 'send_b', 'MPI_Send')['num_calls'] != 3 or \
            row_at(r0, 'allreduce_a', 'MPI_Allreduce')['num_calls'] != 5:
        fail('--rank 0 counts')
    r1 = lp(path, '--rank', '1', '--rank', '2')
    if any(r['line'] == marks['send_b'] for r in r1['callsites']):
        fail('--rank 1 --rank 2 shows the rank-0-only send')
    if row_at(r1, 'send_a', 'MPI_Send')['num_calls'] != 14:
        fail('--rank 1 --rank 2: send_a counts')
    sends = lp(path, '--region', 'Send')
    if {r['mpi_function'] for r in sends['callsites']} != {'MPI_Send'} or len(sends['callsites']) != 2:
        fail(f"--region Send: {[r['mpi_function'] for r in sends['callsites']]}")
    ring = lp(path, '--function', '^send_ring$')
    if sorted(r['mpi_function'] for r in ring['callsites']) != ['MPI_Recv', 'MPI_Send']:
        fail('--function ^send_ring$')
    full = lp(path)
    top = lp(path, '--top', '2')
    if [(r['line'], r['mpi_function']) for r in top['callsites']] != \
            [(r['line'], r['mpi_function']) for r in full['callsites'][:2]]:
        fail('--top 2 is not the first two rows')
    totals = [r['total'] for r in full['callsites']]
    if totals != sorted(totals, reverse=True):
        fail('rows are not sorted by total time')
    text = subprocess.run([cli, 'line-profile', path], check=True, capture_output=True,
                          text=True).stdout
    for name in ('allreduce_a', 'allreduce_b', 'send_a', 'send_b'):
        if f'{base}:{marks[name]}' not in text:
            fail(f'text output lacks {base}:{marks[name]}')
    bad = subprocess.run([cli, 'line-profile', path, '--top', 'x'], capture_output=True, text=True)
    if bad.returncode != 2 or bad.stderr.count('\n') != 1:
        fail(f'--top x: exit {bad.returncode}, stderr {bad.stderr!r}')


def check_chrome(path):
    out = os.path.join(work, 'trace.json')
    subprocess.run([cli, 'export', 'chrome-trace', path, '-o', out], check=True,
                   capture_output=True)
    want = f"{base}:{marks['allreduce_b']} reduce_large"
    events = json.load(open(out))['traceEvents']
    hits = [e for e in events if e.get('name') == 'MPI_Allreduce' and
            e['args'].get('callsite') == want]
    if len(hits) != 12:
        fail(f'chrome trace: {len(hits)} MPI_Allreduce events with callsite {want!r}')
    if any('callsite' in e.get('args', {}) for e in events if e.get('name') == 'reduce_large'):
        fail('chrome trace: a function region carries a call site')


def check_report(path):
    out = os.path.join(work, 'report.html')
    subprocess.run([cli, 'report', path, '-o', out, '--no-charts'], check=True,
                   capture_output=True)
    html = open(out).read()
    m = re.search(r'<div[^>]*id="callsites-0".*?</table>', html, re.S)
    if not m:
        fail('report: no call-site section')
    for name in ('allreduce_a', 'allreduce_b', 'send_a', 'send_b'):
        if f'{base}:{marks[name]}' not in m.group(0):
            fail(f'report: call-site table lacks {base}:{marks[name]}')


cs3 = os.path.join(work, 'cs3.h5')
check_rows(lp(cs3), 4, 3)
check_h5(cs3, 4, 3)
check_options(cs3)
check_chrome(cs3)
check_report(cs3)
cs2 = os.path.join(work, 'cs2.h5')
check_rows(lp(cs2), 2, 2)
check_h5(cs2, 2, 2)
check_off(os.path.join(work, 'off.h5'))
print('check_callsites: OK')
