#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The wrapper list covers mpi.h, and the preload exports every wrapper.

usage: check_coverage.py mpi-functions.def libscope-profiler.so

1. Every function mpi.h declares (MPI-1 removed ones and handle conversions
   excepted) is in mpi-functions.def, and nothing else is.
2. The .so exports, for each, the C symbol and, unless C-only, the Fortran
   entry points in all four manglings; it exports no PMPI_/pmpi_ symbol.
"""
import re
import subprocess
import sys

deffile, lib = sys.argv[1], sys.argv[2]
inc = subprocess.run(['mpicc', '-showme:incdirs'], capture_output=True, text=True).stdout.split()
hdr = next(open(f'{d}/mpi.h').read() for d in inc + ['/usr/include'] if __import__('os').path.exists(f'{d}/mpi.h'))
decl = re.findall(r'OMPI_DECLSPEC\s+(?:int|double|MPI_\w+)\s+(MPI_\w+)\s*\(([^;]*?)\)\s*([^;]*);', hdr, re.S)
want = {n for n, _, tail in decl if '__mpi_interface_removed__' not in tail
        and not n.endswith(('_f2c', '_c2f'))}
have, conly = set(), set()
for line in open(deffile):
    m = re.match(r'^(?:hand\s+)?(?:int|double)\s+(MPI_\w+)\(.*\);\s*(.*)$', line.strip())
    if m:
        have.add(m.group(1))
        if 'c' in m.group(2).split():
            conly.add(m.group(1))
fail = []
if want - have:
    fail.append(f'in mpi.h but not wrapped: {sorted(want - have)}')
if have - want:
    fail.append(f'wrapped but not in mpi.h: {sorted(have - want)}')
syms = set(subprocess.run(['nm', '-D', '--defined-only', lib], capture_output=True,
                          text=True, check=True).stdout.split())
for n in sorted(have):
    need = [n] + ([] if n in conly else [n.lower() + '_', n.lower(), n.lower() + '__', n.upper()])
    missing = [s for s in need if s not in syms]
    if missing:
        fail.append(f'{n}: not exported: {missing}')
leaks = sorted(s for s in syms if s.lower().startswith('pmpi_'))
if leaks:
    fail.append(f'PMPI symbols exported: {leaks[:5]}')
if fail:
    print('\n'.join('FAIL: ' + f for f in fail[:20]))
    sys.exit(1)
print(f'{len(have)} MPI functions wrapped ({len(have) - len(conly)} with Fortran entry points)')
