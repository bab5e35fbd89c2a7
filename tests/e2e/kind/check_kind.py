#!/usr/bin/env python3
"""Region kinds of kind-known.c's file: region_table/kinds against
mpi-functions.def's class= (read here with its own parser), and the views
that read the kind (comm, line-profile, inspect) and merge's copy of it.

usage: check_kind.py scope-profiler mpi-functions.def kind.h5 NRANKS
"""
import json
import os
import re
import subprocess
import sys

import h5py
import numpy as np

cli, def_path, path, nranks = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
failed = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failed.append(what)


def run(*args):
    out = subprocess.run([cli, *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


# docs/FORMAT.md, region_table/kinds.
CODE = {'manual': 0, 'function': 1, 'other': 2, 'send': 3, 'recv': 4, 'sendrecv': 5,
        'collective': 6, 'one_sided': 7, 'io': 8, 'request': 9}
def_class, missing = {}, []
for line in open(def_path):
    if line.startswith('#') or not line.strip():
        continue
    m = re.search(r'\b(MPI_\w+)\(.*\);\s*class=(\w+)', line)
    if m and m.group(2) in CODE:
        def_class[m.group(1)] = m.group(2)
    else:
        missing.append(line[:60])
check(not missing and len(def_class) > 300, f'every def line has a known class= ({missing[:3]})')
# What the def is expected to say about the calls the program makes.
for name, cls in [('MPI_Send', 'send'), ('MPI_Isend', 'send'), ('MPI_Recv', 'recv'),
                  ('MPI_Irecv', 'recv'), ('MPI_Sendrecv', 'sendrecv'),
                  ('MPI_Allreduce', 'collective'), ('MPI_Put', 'one_sided'),
                  ('MPI_Win_fence', 'one_sided'), ('MPI_File_write_at', 'io'),
                  ('MPI_Waitall', 'request'), ('MPI_Comm_rank', 'other')]:
    check(def_class.get(name) == cls, f'def: {name} class={cls}')

FUNCTIONS = {'main', 'compute', 'point_to_point'}


def expected(name):
    if name == 'MPI_x':
        return CODE['manual']
    if name in FUNCTIONS:
        return CODE['function']
    return CODE[def_class[name]]


def file_kinds(p):
    with h5py.File(p, 'r') as f:
        d = f['region_table/kinds']
        names = [n.decode() if isinstance(n, bytes) else n for n in f['region_table/names'][:]]
        check(d.dtype == np.uint8 and d.shape == (len(names),), f'{p}: kinds uint8 [{len(names)}]')
        return dict(zip(names, (int(k) for k in d[:])))


kinds = file_kinds(path)
for name, k in kinds.items():
    check(k == expected(name), f'kind of {name} = {expected(name)} (file {k})')
check(FUNCTIONS <= set(kinds) and 'MPI_x' in kinds and 'MPI_File_write_at' in kinds,
      'file holds the function, manual and MPI regions')
mpi_names = {n for n, k in kinds.items() if k >= CODE['other']}

# Durations per region over all ranks, from the columns.
with h5py.File(path, 'r') as f:
    ix = f['rank_region_index']
    st, en = f['events/start_times'][:], f['events/end_times'][:]
    names = [n.decode() for n in f['region_table/names'][:]]
    total = {}
    for rid, off, cnt in zip(ix['region_ids'][:], ix['event_offsets'][:], ix['event_counts'][:]):
        total[names[rid]] = total.get(names[rid], 0) + int((en[off:off + cnt] - st[off:off + cnt]).sum())

# comm: the MPI regions only (not MPI_x), classes, and the send matrix
# (Send, Isend, Sendrecv to the next rank: 3x10 + 2x20 + 30 bytes, 6
# messages; the Put's 8 bytes are one-sided and stay out).
c = run('comm', '--json', path)
got = {f['name']: f['mpi_class'] for f in c['functions']}
check(set(got) == mpi_names, f'comm functions = MPI-kind regions ({sorted(set(got) ^ mpi_names)})')
check('MPI_x' not in got, 'comm does not count the manual MPI_x')
check(all(def_class[n] == cls for n, cls in got.items()), 'comm mpi_class = def class')
want = [[100 if d == (s + 1) % nranks else 0 for d in range(nranks)] for s in range(nranks)]
check(c['matrix']['bytes'] == want, f'comm matrix bytes {c["matrix"]["bytes"]}')
msgs = [[6 if d == (s + 1) % nranks else 0 for d in range(nranks)] for s in range(nranks)]
check(c['matrix']['messages'] == msgs, f'comm matrix messages {c["matrix"]["messages"]}')
check(c['matrix']['sent_by'] == ['send', 'sendrecv'], 'matrix sent by the send classes')

# line-profile: MPI time is the MPI-kind regions' time, not MPI_x's.
lp = run('line-profile', '--json', path)
want_ns = sum(total[n] for n in mpi_names)
check(abs(lp['mpi_total'] - want_ns * 1e-9) < 1e-9 * max(1, len(mpi_names)),
      f'line-profile mpi_total {lp["mpi_total"]} = MPI regions {want_ns * 1e-9}')
check(total['MPI_x'] > 0, 'MPI_x took time (so counting it would change mpi_total)')
check(all(r['mpi_function'] in mpi_names for r in lp['callsites']),
      'line-profile call sites are MPI-kind regions')

# inspect: kind and class per region.
ins = {r['name']: (r['kind'], r['mpi_class']) for r in run('inspect', '--json', path)['regions']}
check(ins['MPI_x'] == ('manual', None), f'inspect MPI_x {ins["MPI_x"]}')
check(ins['compute'] == ('function', None), f'inspect compute {ins["compute"]}')
check(ins['MPI_Put'] == ('mpi', 'one_sided'), f'inspect MPI_Put {ins["MPI_Put"]}')

# merge writes the file again through the snapshot path: kinds kept.
merged = os.path.join(os.path.dirname(path), 'merged.h5')
subprocess.run([cli, 'merge', path, '-o', merged], check=True, capture_output=True)
check(file_kinds(merged) == kinds, 'merge keeps every region kind')

sys.exit(1 if failed else 0)
