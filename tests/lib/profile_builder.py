# SPDX-License-Identifier: MIT
"""The tests' one writer of profile files by hand (h5py), and the on-disk
names they read back. docs/FORMAT.md describes the layout; the C side
declares the same names in the format header (sp-format.h).

    columnar(path, names, rows, ...)   schema 2 or 3, rows of known events
    schema1(path, regions, ...)        schema 1: /rank<r>/regions/<name>
    write_file(path, ...)              exactly the columns given (hostile
                                       files: wrong dtypes, missing columns)
"""
import os

import h5py
import numpy as np

STR = h5py.string_dtype()

# Root attributes and groups.
ATTR_SCHEMA = "scope_profiler_schema"
ATTR_LAYOUT = "storage_layout"
METADATA = "metadata"
REGION_TABLE = "region_table"
REGION_NAMES = "names"
INDEX = "rank_region_index"
EVENTS = "events"
THREAD_TABLE = "thread_table"
CALLSITES = "callsites"
MPI_COMMS = "mpi_communicators"
EVENTS_ATTR_MPI_LAYOUT = "mpi_layout"
SESSION_REGION = "scope_profiler.session"

# Column dtypes; a column not listed here is int64 unless the caller says.
INDEX_DTYPES = {
    "region_ids": np.uint32, "ranks": np.uint32, "event_offsets": np.uint64,
    "event_counts": np.uint64, "source_lines": np.int64, "source_files": STR,
    "source_texts": STR, "tags": STR, "exclusive_totals": np.int64,
    "dropped_counts": np.uint64, "throttled_counts": np.uint64,
    "throttled_timed_counts": np.uint64, "aggregate_counts": np.uint64,
}
EVENT_DTYPES = {
    "mpi_peers": np.int32, "mpi_roots": np.int32, "mpi_tags": np.int32,
    "mpi_comms": np.int32, "callsite_ids": np.int32,
}
THREAD_DTYPES = {"ranks": np.uint32, "daemon": np.int8, "name": STR}


def set_attrs(obj, attrs):
    """Attributes as the writer stores them: str and lists of str as vlen
    UTF-8, Python ints as int64, anything else as h5py stores it."""
    for key, value in (attrs or {}).items():
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            obj.attrs.create(key, list(value), dtype=STR)
        elif isinstance(value, str):
            obj.attrs.create(key, value, dtype=STR)
        else:
            obj.attrs[key] = value


def _column(group, name, values, dtype):
    if dtype is STR or dtype == STR:
        group.create_dataset(name, data=list(values), dtype=STR)
    else:
        group.create_dataset(name, data=np.asarray(values, dtype=dtype))


def _columns(group, columns, table, dtypes):
    for name, values in columns.items():
        _column(group, name, values, dtypes.get(name, table.get(name, np.int64)))


def write_file(path, *, schema=2, layout="columnar", names=None, index=None,
               events=None, threads=None, metadata=None, root_attrs=None,
               events_attrs=None, dtypes=None):
    """Write exactly what is given. schema/layout None: no such attribute;
    names None: an empty /region_table; index/events/threads: {column:
    values} in the order to write them (thread_table only when given);
    metadata None: no /metadata group. dtypes overrides any column's dtype."""
    dtypes = dtypes or {}
    with h5py.File(path, "w") as f:
        if schema is not None:
            f.attrs[ATTR_SCHEMA] = schema
        if layout is not None:
            f.attrs.create(ATTR_LAYOUT, layout, dtype=STR)
        set_attrs(f, root_attrs)
        if metadata is not None:
            set_attrs(f.create_group(METADATA), metadata)
        table = f.create_group(REGION_TABLE)
        if names is not None:
            table.create_dataset(REGION_NAMES, data=list(names), dtype=STR)
        _columns(f.create_group(INDEX), index or {}, INDEX_DTYPES, dtypes)
        ev = f.create_group(EVENTS)
        _columns(ev, events or {}, EVENT_DTYPES, dtypes)
        set_attrs(ev, events_attrs)
        if threads is not None:
            _columns(f.create_group(THREAD_TABLE), threads, THREAD_DTYPES, dtypes)
    return path


def row_columns(n, *, lines=-1, files="", texts="", tags="[]", exclusive=None):
    """The optional per-row columns, one value for every row (exclusive
    None: no exclusive_totals column)."""
    cols = {"source_lines": np.full(n, lines, dtype=np.int64),
            "source_files": [files] * n, "source_texts": [texts] * n, "tags": [tags] * n}
    if exclusive is not None:
        cols["exclusive_totals"] = np.full(n, exclusive, dtype=np.int64)
    return cols


def columnar(path, names, rows, *, schema=2, metadata=None, index=None, events=None,
             threads=None, events_attrs=None, layout="columnar"):
    """rows: (region_id, rank, starts, ends) in file order, times in ns.
    Writes the four index columns, then `index` (extra per-row columns, e.g.
    row_columns(len(rows))), the event times (schema 3: per-row start deltas
    and durations), then `events` (extra per-event columns)."""
    starts = [np.asarray(r[2], dtype=np.int64) for r in rows]
    ends = [np.asarray(r[3], dtype=np.int64) for r in rows]
    counts = np.array([len(s) for s in starts], dtype=np.uint64)
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.uint64)
    cols = {"region_ids": [r[0] for r in rows], "ranks": [r[1] for r in rows],
            "event_offsets": offsets[:len(rows)], "event_counts": counts}
    cols.update(index or {})
    s = np.concatenate(starts) if starts else np.zeros(0, dtype=np.int64)
    e = np.concatenate(ends) if ends else np.zeros(0, dtype=np.int64)
    if schema == 3:
        ev = {"start_deltas": np.concatenate([np.diff(x, prepend=0) for x in starts])
              if starts else s, "durations": e - s}
    else:
        ev = {"start_times": s, "end_times": e}
    ev.update(events or {})
    return write_file(path, schema=schema, layout=layout, names=names, index=cols,
                      events=ev, threads=threads, metadata=metadata,
                      events_attrs=events_attrs)


def schema1(path, regions, metadata=None, *, attrs=None, datasets=None):
    """regions: {rank: {name: (starts, ends)}} in ns. metadata None: no
    /metadata group. attrs / datasets: {(rank, name): {key: value}} extra
    attributes and int64 datasets of a region group."""
    with h5py.File(path, "w") as f:
        if metadata is not None:
            set_attrs(f.create_group(METADATA), metadata)
        for rank, per in regions.items():
            for name, (starts, ends) in per.items():
                g = f.create_group(f"rank{rank}/regions/{name}")
                g["start_times"] = np.asarray(starts, dtype=np.int64)
                g["end_times"] = np.asarray(ends, dtype=np.int64)
                for key, values in (datasets or {}).get((rank, name), {}).items():
                    g[key] = np.asarray(values, dtype=np.int64)
                set_attrs(g, (attrs or {}).get((rank, name)))
    return path


def fixture_paths(directory):
    """The profiles in tests/fixtures (not its README), sorted; an error
    when there are none, so a missing folder cannot pass as a check."""
    paths = [os.path.join(directory, f) for f in sorted(os.listdir(directory))
             if not f.endswith(".md")]
    if not paths:
        raise FileNotFoundError(f"no fixtures in {directory}")
    return paths
