"""The optional groups of a written file against the files it came from.

check_groups.py same ORIG OUT      OUT's /callsites, /mpi_communicators and
                                   events/callsite_ids equal ORIG's (values,
                                   dtypes, attributes); partial unchanged.
check_groups.py ranks OUT FILE...  OUT merges per-rank FILEs: communicator
                                   rows are theirs in rank order, and every
                                   event of every (region, rank) row has the
                                   same call site (its frames) as there.
check_groups.py runs A B           A and B are two runs of one program: the
                                   same communicator rows and the same call
                                   site per event of every row both have.
"""
import sys

import h5py
import numpy as np

GROUPS = ('callsites', 'mpi_communicators')
failures = []


def check(ok, msg):
    if not ok:
        failures.append(msg)


def sites(f):
    """Call-site id -> tuple of (function, file, line) frames."""
    cs = f['callsites']
    fn = [x.decode() for x in cs['frame_functions'][:]]
    fl = [x.decode() for x in cs['frame_files'][:]]
    ln = cs['frame_lines'][:].tolist()
    return [tuple((fn[o + k], fl[o + k], ln[o + k]) for k in range(c))
            for o, c in zip(cs['frame_offsets'][:].tolist(), cs['frame_counts'][:].tolist())]


def row_sites(f):
    """{(region name, rank): [call site frames or None per event]} of the MPI rows."""
    idx, ev = f['rank_region_index'], f['events']
    names = [x.decode() for x in f['region_table/names'][:]]
    table = sites(f)
    ids = ev['callsite_ids'][:].tolist()
    out = {}
    for reg, rank, cnt, mo in zip(idx['region_ids'][:].tolist(), idx['ranks'][:].tolist(),
                                  idx['event_counts'][:].tolist(), idx['mpi_offsets'][:].tolist()):
        if mo >= 0:
            out[(names[reg], rank)] = [table[i] if i >= 0 else None for i in ids[mo:mo + cnt]]
    return out


def comm_rows(f):
    g = f['mpi_communicators']
    cols = ('ranks', 'ids', 'sizes', 'remote_sizes', 'leaders')
    return list(zip(*[g[c][:].tolist() for c in cols]))


def partial(f):
    return int(f['metadata'].attrs.get('partial', 0))


def same(orig, out):
    with h5py.File(orig, 'r') as a, h5py.File(out, 'r') as b:
        for g in GROUPS:
            check(g in a and g in b, f'{out}: /{g} missing')
            if g not in a or g not in b:
                continue
            check(sorted(a[g].keys()) == sorted(b[g].keys()), f'{out}: /{g} datasets differ')
            check(dict(a[g].attrs) == dict(b[g].attrs), f'{out}: /{g} attributes differ')
            for k in a[g].keys():
                x, y = a[g][k], b[g][k]
                check(x.dtype == y.dtype, f'{out}: /{g}/{k} dtype {y.dtype}, want {x.dtype}')
                check(np.array_equal(x[:], y[:]), f'{out}: /{g}/{k} values differ')
        ids = 'events/callsite_ids'
        check(ids in b and np.array_equal(a[ids][:], b[ids][:]), f'{out}: {ids} differ')
        check(partial(a) == partial(b), f'{out}: partial {partial(b)}, want {partial(a)}')
        check(all(g in a for g in GROUPS) and len(a['callsites/functions']) > 0
              and len(a['mpi_communicators/ids']) > 0, f'{orig}: empty groups, nothing compared')


def ranks(out, files):
    with h5py.File(out, 'r') as b:
        if not all(g in b for g in GROUPS):
            check(False, f'{out}: a group is missing')
            return
        want_comms, want_sites = [], {}
        for p in files:
            with h5py.File(p, 'r') as a:
                want_comms += comm_rows(a)
                want_sites.update(row_sites(a))
        check(comm_rows(b) == want_comms, f'{out}: communicator rows differ from the rank files')
        got = row_sites(b)
        check(got == want_sites, f'{out}: call sites per event differ from the rank files')
        check(len(set(sites(b))) == len(sites(b)), f'{out}: a call site is in /callsites twice')
        check(partial(b) == 0, f'{out}: complete rank files merged as partial')
        check(len(want_comms) > 0 and any(v for r in got.values() for v in r),
              f'{out}: empty groups, nothing was compared')


def runs(x, y):
    with h5py.File(x, 'r') as a, h5py.File(y, 'r') as b:
        check(comm_rows(a) == comm_rows(b), f'{x} / {y}: communicator rows differ')
        sa, sb = row_sites(a), row_sites(b)
        common = [k for k in sa if k in sb and len(sa[k]) == len(sb[k])]
        check(len(common) >= 3, f'{x} / {y}: only {len(common)} MPI rows in common')
        for k in common:
            check(sa[k] == sb[k], f'{x} / {y}: call sites of {k} differ')


mode = sys.argv[1]
if mode == 'same':
    same(sys.argv[2], sys.argv[3])
elif mode == 'ranks':
    ranks(sys.argv[2], sys.argv[3:])
else:
    runs(sys.argv[2], sys.argv[3])
if failures:
    print('\n'.join('FAIL: ' + m for m in failures[:20]))
    sys.exit(1)
print(f'check_groups {mode}: OK')
