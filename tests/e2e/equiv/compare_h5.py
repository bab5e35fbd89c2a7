#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Two profiles of the same run must be the same file to a reader.

usage: compare_h5.py [--shape] A B [NRANKS]

Walks both files and compares, exactly: the set of groups and datasets;
each dataset's dtype (compound field names, order and types; string
kind, encoding and vlen-ness), shape, storage (contiguous or chunked,
chunk shape, filters) and every value; each object's attributes (names,
dtypes, values). Only the attributes in IGNORED may differ, and they must
be in both files or in neither: they are timings of the write or say which path
wrote the file. Then reads both the way upstream's read_h5() does (schema
2, docs/FORMAT.md) and checks that view: the dtypes upstream expects, rows
back to back over /events, and the summary compound equal to numbers
computed here from the events. Prints one line; exit 1 with the
differences.

--rows: A and B hold the same rows, each rank's in any order (a finalize
that streamed its events): the index and event datasets are compared by
type, shape and storage only, and the read_h5() views (every row's
events, threads, summary, exclusive time and MPI values) sorted by rank
and region.

--shape: A and B come from two runs of one program (the fallback against a
normal run): the same objects, dtypes, shapes, storage and attribute
names and types, and the same values where a run repeats exactly (SHAPE_VALUES:
names, rows, counts, offsets, MPI values), not times.
"""
import sys

import h5py
import numpy as np

# /metadata keys allowed to differ, with why (docs/MPI.md, "The merge at MPI_Finalize").
IGNORED = {
    'mpi_merge_ns': 'ns the finalize merge took',
    'profiler_finalize_ns': 'ns the profiler spent in its finalize',
    'mpi_finalize_path': 'which path wrote the file: parallel or serial',
    'mpi_finalize_rank0_recv_bytes': 'bytes rank 0 received during the finalize',
}

# Deterministic datasets, compared by value in --shape mode.
SHAPE_VALUES = {'/region_table/names', '/region_table/kinds', '/region_table/uncalled_names',
                '/rank_region_index/region_ids', '/rank_region_index/ranks',
                '/rank_region_index/event_offsets', '/rank_region_index/event_counts',
                '/rank_region_index/mpi_offsets', '/rank_region_index/source_files',
                '/rank_region_index/source_lines', '/rank_region_index/tags',
                '/events/thread_ids', '/events/mpi_bytes', '/events/mpi_peers',
                '/events/mpi_roots', '/events/mpi_tags', '/events/mpi_comms',
                '/thread_table/ranks', '/thread_table/index'}
shape_only = '--shape' in sys.argv
if shape_only:
    sys.argv.remove('--shape')
rows_any_order = '--rows' in sys.argv
if rows_any_order:
    sys.argv.remove('--rows')
ROW_DATA = ('/rank_region_index/', '/events/')
diffs = []


def objects(f):
    out = {'/': f}
    f.visititems(lambda name, obj: out.__setitem__('/' + name, obj))
    return out


def same_value(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype.kind == 'O':
            return all(same_value(x, y) for x, y in zip(a.ravel().tolist(), b.ravel().tolist()))
        if a.dtype.kind == 'f':  # bit for bit, NaN included
            return a.tobytes() == b.tobytes()
        return np.array_equal(a, b)
    return type(a) is type(b) and a == b


def dtype_key(dt):
    s = h5py.check_string_dtype(dt)
    v = h5py.check_vlen_dtype(dt)
    return (dt.str, dt.descr if dt.names else None, s and (s.encoding, s.length),
            v is not None and str(v))


def compare_attrs(where, a, b):
    for k in sorted(set(a) | set(b)):
        if where == '/metadata' and k in IGNORED:
            if (k in a) != (k in b):
                diffs.append(f'{where}: ignored attribute {k} in one file only '
                             f'(A {k in a}, B {k in b})')
            continue
        if k not in a or k not in b:
            diffs.append(f'{where}: attribute {k} only in {"A" if k in a else "B"}')
            continue
        ia, ib = a.get_id(k), b.get_id(k)
        if ia.dtype != ib.dtype or dtype_key(ia.dtype) != dtype_key(ib.dtype) or \
                (ia.shape != ib.shape and not shape_only):
            diffs.append(f'{where}: attribute {k}: type {ia.dtype}{ia.shape} vs {ib.dtype}{ib.shape}')
        elif not shape_only and not same_value(a[k], b[k]):
            diffs.append(f'{where}: attribute {k}: {a[k]!r} vs {b[k]!r}')


def compare(fa, fb):
    oa, ob = objects(fa), objects(fb)
    for name in sorted(set(oa) | set(ob)):
        if name not in oa or name not in ob:
            diffs.append(f'{name}: only in {"A" if name in oa else "B"}')
            continue
        a, b = oa[name], ob[name]
        if type(a) is not type(b):
            diffs.append(f'{name}: {type(a).__name__} vs {type(b).__name__}')
            continue
        compare_attrs(name, a.attrs, b.attrs)
        if not isinstance(a, h5py.Dataset):
            continue
        if dtype_key(a.dtype) != dtype_key(b.dtype) or a.shape != b.shape:
            diffs.append(f'{name}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}')
            continue
        store = lambda d: (d.chunks, d.compression, d.compression_opts, d.shuffle,
                           d.fletcher32, d.scaleoffset)
        if store(a) != store(b):
            diffs.append(f'{name}: storage {store(a)} vs {store(b)}')
        if shape_only and name not in SHAPE_VALUES:
            continue
        if rows_any_order and name.startswith(ROW_DATA):
            continue
        va, vb = a[()], b[()]
        if not same_value(va, vb):
            if va.dtype.kind == 'O' or va.ndim == 0:
                diffs.append(f'{name}: values differ')
            else:
                at = np.flatnonzero(va.ravel() != vb.ravel()) if not va.dtype.names else \
                    np.flatnonzero([x != y for x, y in zip(va.ravel(), vb.ravel())])
                i = int(at[0]) if len(at) else 0
                diffs.append(f'{name}: {len(at)} values differ, first at [{i}]: '
                             f'{va.ravel()[i]!r} vs {vb.ravel()[i]!r}')


UPSTREAM_INDEX = {'region_ids': 'u4', 'ranks': 'u4', 'event_offsets': 'u8', 'event_counts': 'u8',
                  'source_lines': 'i8', 'source_files': 'O', 'source_texts': 'O', 'tags': 'O',
                  'exclusive_totals': 'i8'}
SUMMARY = [('total', 'i8'), ('minimum', 'i8'), ('maximum', 'i8'), ('first', 'i8'), ('last', 'i8'),
           ('start_minimum', 'i8'), ('end_maximum', 'i8'), ('gpu_count', 'u8'),
           ('gpu_total', 'i8'), ('mean', 'f8'), ('m2', 'f8')]


def read_h5(path, tag):
    """The columns upstream's read_h5() reads, checked for its layout: one
    record per (rank, region) with its events, and its summary compound."""
    bad = lambda m: diffs.append(f'{tag} read_h5: {m}')
    f = h5py.File(path, 'r')
    if int(f.attrs.get('scope_profiler_schema', -1)) != 2:
        bad('scope_profiler_schema is not 2')
    sl = f.attrs.get('storage_layout')
    if (sl.decode() if isinstance(sl, bytes) else sl) != 'columnar':
        bad(f'storage_layout {sl!r}')
    names = f['region_table/names']
    if h5py.check_string_dtype(names.dtype) is None or names.dtype.kind != 'O':
        bad('region_table/names is not vlen strings')
    names = [n.decode() if isinstance(n, bytes) else n for n in names[()]]
    ix = f['rank_region_index']
    col = {}
    for k, kind in UPSTREAM_INDEX.items():
        if k not in ix:
            bad(f'rank_region_index/{k} missing')
            continue
        d = ix[k]
        if (kind == 'O') != (d.dtype.kind == 'O') or (kind != 'O' and d.dtype.str[1:] != kind):
            bad(f'rank_region_index/{k}: dtype {d.dtype}, expected {kind}')
        col[k] = d[()]
    ss = ix['summary_statistics']
    got = [(n, ss.dtype.fields[n][0].str[1:]) for n in (ss.dtype.names or ())]
    if got != SUMMARY:
        bad(f'summary_statistics fields {got}')
    ss = ss[()]
    st, en = f['events/start_times'][()], f['events/end_times'][()]
    if st.dtype != np.int64 or en.dtype != np.int64 or st.shape != en.shape:
        bad('events/start_times, end_times not int64 [E]')
    th = f['events/thread_ids'][()] if 'thread_ids' in f['events'] else None
    if th is not None and th.shape != st.shape:
        bad('events/thread_ids not [E]')
    ev = f['events']
    mpi = {k: ev[k][()] for k in ('mpi_bytes', 'mpi_peers', 'mpi_roots', 'mpi_tags', 'mpi_comms',
                                  'mpi_callsite_ids') if k in ev}
    mo = ix['mpi_offsets'][()] if 'mpi_offsets' in ix else None
    p = len(col.get('region_ids', []))
    if any(len(v) != p for v in col.values()) or len(ss) != p:
        bad('rank_region_index columns of different lengths')
        return None
    view, at = [], 0
    for i in range(p):
        o, c = int(col['event_offsets'][i]), int(col['event_counts'][i])
        if o != at:
            bad(f'row {i}: event_offsets {o}, expected {at}')
        at = o + c
        d = en[o:o + c] - st[o:o + c]
        want = (int(d.sum()), int(d.min()), int(d.max()), int(d[0]), int(d[-1]),
                int(st[o:o + c].min()), int(en[o:o + c].max())) if c else (0,) * 7
        if tuple(int(ss[i][k]) for k in range(7)) != want:
            bad(f'row {i}: summary {tuple(ss[i])[:7]} vs events {want}')
        if c and abs(float(ss[i]['mean']) - float(d.mean())) > 1e-9 * max(1, abs(d.mean())):
            bad(f'row {i}: mean {ss[i]["mean"]} vs {d.mean()}')
        m = int(mo[i]) if mo is not None else -1
        view.append((names[col['region_ids'][i]], int(col['ranks'][i]), st[o:o + c].tolist(),
                     en[o:o + c].tolist(), None if th is None else th[o:o + c].tolist(),
                     tuple(ss[i].tolist()), int(col['exclusive_totals'][i]),
                     m >= 0 and {k: v[m:m + c].tolist() for k, v in mpi.items()}))
    if at != len(st):
        bad(f'rows cover {at} of {len(st)} events')
    meta = {k: f['metadata'].attrs[k] for k in f['metadata'].attrs if k not in IGNORED}
    return view, {int(r) for r in col['ranks']}, meta


a, b = sys.argv[1], sys.argv[2]
with h5py.File(a, 'r') as fa, h5py.File(b, 'r') as fb:
    compare(fa, fb)
va, vb = read_h5(a, 'A'), read_h5(b, 'B')
if va and vb:
    if rows_any_order:
        va, vb = [(sorted(v[0], key=lambda r: (r[1], r[0])),) + v[1:] for v in (va, vb)]
    def same_row(x, y):
        # A streamed row's m2 combines blocks (Chan et al.): its last bits
        # differ from one pass over all the events.
        if not rows_any_order or x[:5] + x[6:] != y[:5] + y[6:] or x[5][:-1] != y[5][:-1]:
            return x == y
        return abs(x[5][-1] - y[5][-1]) <= 1e-9 * max(1.0, abs(x[5][-1]))

    if not shape_only and (len(va[0]) != len(vb[0]) or
                           not all(same_row(x, y) for x, y in zip(va[0], vb[0]))):
        bad = [i for i, (x, y) in enumerate(zip(va[0], vb[0])) if not same_row(x, y)]
        diffs.append(f'read_h5 views differ ({len(bad)} rows), first: '
                     f'{va[0][bad[0]][:2] if bad else "lengths"}')
    if len(sys.argv) > 3 and va[1] != set(range(int(sys.argv[3]))):
        diffs.append(f'read_h5: ranks {sorted(va[1])}, expected 0..{int(sys.argv[3]) - 1}')
if diffs:
    print(f'FAIL: {a} vs {b}: {len(diffs)} differences', *diffs[:20], sep='\n  ')
    sys.exit(1)
print(f'{"same shape" if shape_only else "equal"}: {a} and {b} ({len(va[0])} rows; ignored: {", ".join(sorted(IGNORED))})')
