#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The row layout of the MPI columns (docs/FORMAT.md, "MPI additions").

usage: check_layout.py CLI WORKDIR FILE...

For each FILE (merged at MPI_Finalize, in the row layout):
- the MPI columns hold one value per event of the rows with mpi_offsets >= 0
  (not per event), back to back in row order;
- old layout: the same file rewritten with h5py in the old, full-length
  layout (no mpi_offsets, no attribute) gives byte-identical output in
  `comm --json`, `export json`, `export chrome-trace`, `summary --json` and,
  with call sites, `line-profile --json`;
- `merge` and `recover` of the file, and `merge` of the old-layout copy,
  write the row layout with the same values per event (round trip);
- corrupt mpi_offsets / columns / attribute are refused with a clear error.
"""
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

cli, work = sys.argv[1], sys.argv[2]
MPI = ('mpi_bytes', 'mpi_peers', 'mpi_roots', 'mpi_tags', 'mpi_comms', 'callsite_ids')
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)


def run(*args, rc=0):
    p = subprocess.run([cli, *args], capture_output=True, text=True)
    check(p.returncode == rc, f'{args}: exit {p.returncode}, expected {rc}: {p.stderr[-300:]}')
    return p


def rows_of(f):
    idx = f['rank_region_index']
    names = [s.decode() for s in f['region_table/names'][:]]
    return [(names[g], int(r), int(o), int(c)) for g, r, o, c in zip(
        idx['region_ids'][:], idx['ranks'][:], idx['event_offsets'][:], idx['event_counts'][:])]


def expanded(path):
    """{column: full-length values} of either layout, and the per-row view."""
    f = h5py.File(path, 'r')
    ev, idx = f['events'], f['rank_region_index']
    n = ev['start_times'].shape[0]
    out = {}
    rows = (idx['mpi_offsets'][:].tolist() if 'mpi_offsets' in idx else None)
    for k in MPI:
        if k not in ev:
            continue
        v = ev[k][:]
        if rows is None:
            check(v.shape == (n,), f'{path}: old-layout {k} has {v.shape}')
            out[k] = v.astype(np.int64)
            continue
        full = np.full(n, -1, dtype=np.int64)
        for (name, rank, o, c), s0 in zip(rows_of(f), rows):
            if s0 >= 0:
                full[o:o + c] = v[s0:s0 + c]
        out[k] = full
    per_row = {}
    st, en = ev['start_times'][:], ev['end_times'][:]
    for name, rank, o, c in rows_of(f):
        per_row[(name, rank)] = (st[o:o + c].tolist(), en[o:o + c].tolist(),
                                 {k: out[k][o:o + c].tolist() for k in out})
    return out, per_row


def check_row_layout(path, what):
    f = h5py.File(path, 'r')
    ev, idx = f['events'], f['rank_region_index']
    layout = ev.attrs.get('mpi_layout')
    check(layout in ('rows', b'rows'), f'{what}: mpi_layout {layout!r}')
    if 'mpi_offsets' not in idx:
        check(False, f'{what}: no rank_region_index/mpi_offsets')
        return
    mo, counts = idx['mpi_offsets'][:], idx['event_counts'][:]
    check(mo.dtype == np.int64 and mo.shape == counts.shape, f'{what}: mpi_offsets {mo.dtype}')
    m = int(counts[mo >= 0].sum())
    for k in MPI:
        if k in ev:
            check(ev[k].shape == (m,), f'{what}: {k} has {ev[k].shape[0]} values, the MPI rows '
                  f'{m} events ({ev["start_times"].shape[0]} events in all)')
    at = 0
    for i in np.flatnonzero(mo >= 0):
        check(int(mo[i]) == at, f'{what}: row {i} mpi_offsets {mo[i]} != {at}')
        at += int(counts[i])
    for i, (name, rank, o, c) in enumerate(rows_of(f)):
        if not name.startswith('MPI_'):
            check(mo[i] == -1, f'{what}: function row {name} rank {rank} has MPI values')


def to_old(src, dst):
    """The file as the writer wrote it before the row layout."""
    shutil.copy(src, dst)
    full, _ = expanded(src)
    with h5py.File(dst, 'r+') as f:
        ev = f['events']
        for k, v in full.items():
            dtype = ev[k].dtype
            del ev[k]
            ev.create_dataset(k, data=v.astype(dtype))
        del ev.attrs['mpi_layout']
        del f['rank_region_index/mpi_offsets']


def same_output(a, b, args, what):
    outs = []
    for p in (a, b):
        r = run(*[x.replace('FILE', p) for x in args])
        outs.append(r.stdout.replace(p, 'FILE'))
    check(outs[0] == outs[1] and outs[0], f'{what}: {args} differs between the layouts')


def corrupt_cases(src):
    """(name, h5py edit, message fragment) for files the reader must refuse."""
    def offsets(edit):
        def go(f):
            mo = f['rank_region_index/mpi_offsets'][:]
            edit(mo, f['rank_region_index/event_counts'][:], f['events/mpi_bytes'].shape[0])
            f['rank_region_index/mpi_offsets'][:] = mo
        return go

    def first_two(mo, c):
        return [i for i in np.flatnonzero(mo >= 0) if c[i] > 0][:2]

    def past_end(mo, c, m):
        i = first_two(mo, c)[0]
        mo[i] = m - c[i] + 1

    def overlap(mo, c, m):
        i, j = first_two(mo, c)
        mo[j] = mo[i]

    def negative(mo, c, m):
        mo[first_two(mo, c)[0]] = -5

    def gap(mo, c, m):  # a row's values dropped: the others no longer cover all
        mo[first_two(mo, c)[0]] = -1

    def shorter(f):
        v = f['events/mpi_tags'][:-1]
        del f['events/mpi_tags']
        f['events/mpi_tags'] = v

    def rows_len(f):
        v = f['rank_region_index/mpi_offsets'][:-1]
        del f['rank_region_index/mpi_offsets']
        f['rank_region_index/mpi_offsets'] = v

    def missing(f):
        del f['rank_region_index/mpi_offsets']

    def unknown(f):
        f['events'].attrs['mpi_layout'] = 'blocks'

    def not_str(f):
        f['events'].attrs['mpi_layout'] = np.int64(1)

    return [('past-end', offsets(past_end), 'outside the'),
            ('overlap', offsets(overlap), 'overlap in the MPI columns'),
            ('negative', offsets(negative), 'outside the'),
            ('gap', offsets(gap), 'but the rows of'),
            ('short-column', shorter, "MPI column 'events/mpi_tags' has"),
            ('offsets-length', rows_len, "'rank_region_index/mpi_offsets' has"),
            ('offsets-missing', missing, 'mpi_offsets\' is missing'),
            ('unknown-layout', unknown, "unsupported MPI column layout 'blocks'"),
            ('not-a-string', not_str, 'is not a string')]


for path in sys.argv[3:]:
    base = os.path.join(work, os.path.basename(path)[:-3])
    check_row_layout(path, path)
    full, rows = expanded(path)
    has_sites = 'callsite_ids' in full
    old = base + '.old.h5'
    to_old(path, old)
    cmds = [['comm', 'FILE', '--json'], ['export', 'json', 'FILE', '-o', '-'],
            ['export', 'chrome-trace', 'FILE', '-o', '-'], ['summary', 'FILE', '--json']]
    if has_sites:
        cmds.append(['line-profile', 'FILE', '--json'])
    for args in cmds:
        same_output(path, old, args, path)
    # merge / recover: row layout again, the same values per (region, rank) row
    for what, args in (('merge', ['merge', path]), ('recover', ['recover', path]),
                       ('merge-old', ['merge', old])):
        out = f'{base}.{what}.h5'
        run(*args, '-o', out)
        check_row_layout(out, f'{what} of {path}')
        _, got = expanded(out)
        check(got == rows, f'{what} of {path}: events or MPI values per row differ')
        # same rows get values: the same columns exactly, call-site ids too
        with h5py.File(path, 'r') as x, h5py.File(out, 'r') as y:
            cols = MPI if has_sites else MPI[:5]
            for k in ['events/' + c for c in cols] + ['rank_region_index/mpi_offsets']:
                a_, b_ = x[k][:], y[k][:]
                check(np.array_equal(a_, b_), f'{what} of {path}: {k} differs')
        run('merge', out, '-o', out + '.2.h5')
        _, again = expanded(out + '.2.h5')
        check(again == got, f'{what} of {path}: a second merge changes the values')
    for name, edit, msg in corrupt_cases(path):
        bad = f'{base}.bad-{name}.h5'
        shutil.copy(path, bad)
        with h5py.File(bad, 'r+') as f:
            edit(f)
        r = subprocess.run([cli, 'summary', bad], capture_output=True, text=True)
        check(r.returncode > 0 and msg in r.stderr,
              f'{name}: exit {r.returncode}, stderr {r.stderr.strip()[-200:]!r}, want {msg!r}')

if failures:
    print('\n'.join('FAIL: ' + m for m in failures[:40]))
    sys.exit(1)
print(f'row layout of {len(sys.argv) - 3} files OK')
