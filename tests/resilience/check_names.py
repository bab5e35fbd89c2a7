#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Function names, files and lines of profiles, read with h5py.

usage: check_names.py same NORMAL RECOVERED SOURCES
         the function rows (not MPI_*) of both files are the same
         (name, rank, count, file, line), every line is the definition line
         of that function in SOURCES (comma-separated), and region names
         are unique
       check_names.py lines FILE SOURCES 'EXPECTED'
         EXPECTED {(name, rank): count} of the function rows; names unique,
         files and lines from SOURCES
       check_names.py offsets FILE ELF BASE 'EXPECTED' REASON
         every function of ELF (the build that ran) is named
         BASE+0x<its symbol value there>, with no file or line; other
         functions keep their names; counts EXPECTED {name: count}; the
         metadata key unresolved_modules holds REASON
Independent of the project's reader and symbolizer: lines come from a
regex over the source, symbol values from the ELF symbol table parsed here.
"""
import ast
import os
import re
import struct
import sys

import h5py


def rows(path):
    """{(name, rank): (count, file, line)} of the function rows, names."""
    f = h5py.File(path, 'r')
    names = [n.decode() if isinstance(n, bytes) else n for n in f['region_table/names'][()]]
    idx = f['rank_region_index']
    files = [x.decode() if isinstance(x, bytes) else x for x in idx['source_files'][()]]
    got = {}
    for g, r, c, fl, ln in zip(idx['region_ids'][()], idx['ranks'][()], idx['event_counts'][()],
                               files, idx['source_lines'][()]):
        if not names[g].startswith('MPI_'):
            got[(names[g], int(r))] = (int(c), fl, int(ln))
    assert len(names) == len(set(names)), f'{path}: a region name twice: {names}'
    return got, names, dict(f['metadata'].attrs)


def definition(sources, name):
    """(file, 1-based line) where function `name` is defined (not a
    prototype) in one of the comma-separated sources."""
    for source in sources.split(','):
        with open(source) as f:
            for i, line in enumerate(f, 1):
                if (re.match(r'^[a-z].*\b%s\(' % re.escape(name), line)
                        and not line.rstrip().endswith(';')):
                    return os.path.realpath(source), i
    raise LookupError(name)


def check_lines(path, got, sources):
    for (name, rank), (count, fl, ln) in got.items():
        want = definition(sources, name)
        assert (os.path.realpath(fl), ln) == want, f'{path}: {name}: {fl}:{ln}, want {want}'


def elf_symbols(path):
    """{name: st_value} of the functions in an ELF64 little-endian file's .symtab."""
    data = open(path, 'rb').read()
    assert data[:4] == b'\x7fELF' and data[4] == 2 and data[5] == 1, 'not ELF64 LE'
    shoff, = struct.unpack_from('<Q', data, 0x28)
    shentsize, shnum = struct.unpack_from('<HH', data, 0x3a)
    secs = [struct.unpack_from('<IIQQQQIIQQ', data, shoff + i * shentsize) for i in range(shnum)]
    out = {}
    for s in secs:
        if s[1] != 2:  # SHT_SYMTAB
            continue
        strtab = secs[s[6]]
        for off in range(s[4], s[4] + s[5], 24):
            st_name, st_info, _, _, st_value, _ = struct.unpack_from('<IBBHQQ', data, off)
            if st_info & 0xf == 2:  # STT_FUNC
                start = strtab[4] + st_name
                out[data[start:data.index(b'\0', start)].decode()] = st_value
    return out


mode = sys.argv[1]
if mode == 'same':
    a, _, _ = rows(sys.argv[2])
    b, _, _ = rows(sys.argv[3])
    assert a == b, f'function rows differ\n normal    {sorted(a.items())}\n recovered {sorted(b.items())}'
    check_lines(sys.argv[3], b, sys.argv[4])
    print(f'{sys.argv[3]}: {len(b)} functions named as in {sys.argv[2]}')
elif mode == 'lines':
    got, _, _ = rows(sys.argv[2])
    want = ast.literal_eval(sys.argv[4])
    counts = {k: v[0] for k, v in got.items()}
    assert counts == want, f'function rows differ\n got  {sorted(counts.items())}\n want {sorted(want.items())}'
    check_lines(sys.argv[2], got, sys.argv[3])
    print(f'{sys.argv[2]}: {len(got)} function rows, one region each, files and lines right')
elif mode == 'offsets':
    got, names, meta = rows(sys.argv[2])
    syms, base = elf_symbols(sys.argv[3]), sys.argv[4]
    want = {('%s+0x%x' % (base, syms[n]) if n in syms else n): c
            for n, c in ast.literal_eval(sys.argv[5]).items()}
    counts = {k[0]: v[0] for k, v in got.items()}
    assert counts == want, f'rows differ\n got  {sorted(counts.items())}\n want {sorted(want.items())}'
    for k, (c, fl, ln) in got.items():
        if k[0].startswith(base + '+0x'):
            assert fl == '' and ln == -1, f'{k}: a source {fl!r}:{ln} from another build'
    reasons = [x.decode() if isinstance(x, bytes) else str(x) for x in meta.get('unresolved_modules', [])]
    assert any(sys.argv[6] in r for r in reasons), f'unresolved_modules = {reasons}'
    print(f'{sys.argv[2]}: {len(got)} functions named {base}+0xoffset; reason stored')
else:
    sys.exit(f'unknown mode {mode}')
