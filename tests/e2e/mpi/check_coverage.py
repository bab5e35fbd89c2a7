#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The wrapper list covers mpi.h, and the preload exports every wrapper.

usage: check_coverage.py mpi-functions.def libscope-profiler-FAMILY.so FAMILY INCLUDEDIR

FAMILY is openmpi or mpich, INCLUDEDIR the directory of its mpi.h.
1. Open MPI: every function mpi.h declares (MPI-1 removed ones and handle
   conversions excepted) is in mpi-functions.def, and nothing else is.
   MPICH: every function of the list (but only=openmpi) is declared by its
   mpi.h, and each one it declares beyond the list is in a named group of
   MPI-4.0 additions or removed MPI-1 functions (printed).
2. The .so exports, for each, the C symbol and, for Open MPI unless C-only,
   the Fortran entry points in all four manglings (MPICH: none, its Fortran
   bindings call the C entry points); it exports no PMPI_/pmpi_ symbol.
"""
import os
import re
import subprocess
import sys

deffile, lib, family, incdir = sys.argv[1:5]
have, conly, only = set(), set(), {}
for line in open(deffile):
    m = re.match(r'^(?:hand\s+)?(?:int|double|MPI_\w+)\s+(MPI_\w+)\(.*\);\s*(.*)$', line.strip())
    if m:
        have.add(m.group(1))
        ann = m.group(2).split()
        if 'c' in ann:
            conly.add(m.group(1))
        for a in ann:
            if a.startswith('only='):
                only[m.group(1)] = a[5:]
fail = []
if family == 'openmpi':
    hdr = open(os.path.join(incdir, 'mpi.h')).read()
    decl = re.findall(r'OMPI_DECLSPEC\s+(?:int|double|MPI_\w+)\s+(MPI_\w+)\s*\(([^;]*?)\)\s*([^;]*);', hdr, re.S)
    want = {n for n, _, tail in decl if '__mpi_interface_removed__' not in tail
            and not n.endswith(('_f2c', '_c2f'))}
    mine = {n for n in have if only.get(n, family) == family}
    if want - mine:
        fail.append(f'in mpi.h but not wrapped: {sorted(want - mine)}')
    if mine - want:
        fail.append(f'wrapped but not in mpi.h: {sorted(mine - want)}')
else:
    hdr = ''.join(open(os.path.join(incdir, h)).read() for h in ('mpi.h', 'mpi_proto.h', 'mpio.h')
                  if os.path.exists(os.path.join(incdir, h)))
    want = {n for n in re.findall(r'^(?:int|double|MPI_\w+)\s+(MPI_\w+)\s*\(', hdr, re.M)
            if not n.endswith(('_f2c', '_c2f'))}
    mine = {n for n in have if only.get(n, family) == family}
    if mine - want:
        fail.append(f'wrapped but not in {family} mpi.h: {sorted(mine - want)}')
    groups = [
        ('MPI-4.0 large-count (_c)', lambda n: n.endswith('_c')),
        ('MPI-4.0 sessions', lambda n: n.startswith(('MPI_Session_', 'MPI_Group_from_session'))),
        ('MPI-4.0 persistent collectives', lambda n: n.endswith('_init') and n not in have),
        ('MPI-4.0 partitioned', lambda n: n in ('MPI_Pready', 'MPI_Pready_list', 'MPI_Pready_range',
                                                 'MPI_Parrived')),
        ('MPI-4.0 tool events', lambda n: re.match(r'MPI_T_(event|source|category_get_(events|num_events))', n)),
        ('MPI-4.0 other', lambda n: n in ('MPI_Isendrecv', 'MPI_Isendrecv_replace',
            'MPI_Comm_create_from_group', 'MPI_Comm_idup_with_info', 'MPI_Info_create_env',
            'MPI_Info_get_string', 'MPI_Intercomm_create_from_groups', 'MPI_Status_c2f08',
            'MPI_Status_f082c', 'MPI_Status_f082f', 'MPI_Status_f2f08')),
        ('MPI-3.1 address arithmetic (no MPI call)', lambda n: n in ('MPI_Aint_add', 'MPI_Aint_diff')),
        ('removed in MPI-3.0', lambda n: n in ('MPI_Address', 'MPI_Errhandler_create',
            'MPI_Errhandler_get', 'MPI_Errhandler_set', 'MPI_Type_extent', 'MPI_Type_hindexed',
            'MPI_Type_hvector', 'MPI_Type_lb', 'MPI_Type_struct', 'MPI_Type_ub', 'MPI_DUP_FN')),
    ]
    extra = sorted(want - have)
    for title, test in groups:
        g = [n for n in extra if test(n)]
        extra = [n for n in extra if n not in g]
        if g:
            print(f'not wrapped under {family}: {len(g)} {title}')
    if extra:
        fail.append(f'in {family} mpi.h, not wrapped, in no group: {extra}')
syms = set(subprocess.run(['nm', '-D', '--defined-only', lib], capture_output=True,
                          text=True, check=True).stdout.split())
fortran = family == 'openmpi'
if not fortran:
    fsyms = sorted(s for s in syms if re.match(r'(mpi_\w+|MPI_[A-Z0-9_]+)$', s) and not s.startswith('MPI_T_') and s not in have)
    if fsyms:
        fail.append(f'Fortran entry points exported (they would hide libmpichfort\'s): {fsyms[:5]}')
for n in sorted(n for n in have if only.get(n, family) == family):
    need = [n] + ([] if n in conly or not fortran else [n.lower() + '_', n.lower(), n.lower() + '__', n.upper()])
    missing = [s for s in need if s not in syms]
    if missing:
        fail.append(f'{n}: not exported: {missing}')
leaks = sorted(s for s in syms if s.lower().startswith('pmpi_'))
if leaks:
    fail.append(f'PMPI symbols exported: {leaks[:5]}')
if fail:
    print('\n'.join('FAIL: ' + f for f in fail[:20]))
    sys.exit(1)
print(f'{family}: {len(have)} MPI functions wrapped'
      + (f' ({len(have) - len(conly)} with Fortran entry points)' if fortran else
         ' (Fortran calls reach the C wrappers)'))
