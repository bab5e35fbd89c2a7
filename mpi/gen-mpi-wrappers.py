#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate the MPI wrappers from mpi-functions.def (stdlib only).

usage: gen-mpi-wrappers.py mpi-functions.def mpi-names.h mpi-wrappers.c mpi-fortran.c
       gen-mpi-wrappers.py --reader-kinds mpi-functions.def mpi-kinds.h

Every wrapper reads top to bottom: begin (collect post-time data), enter,
call the PMPI entry, leave, completion bookkeeping, end, return. The runtime
helpers (sp_mpi_*) live in mpi-record.h.
"""
import re
import sys

PROTO = re.compile(r'^(int|double)\s+(MPI_\w+)\((.*)\);\s*(.*)$')


def parse(path):
    fns = []
    for line in open(path):
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        hand = line.startswith('hand ')
        m = PROTO.match(line[5:] if hand else line)
        if not m:
            sys.exit(f'{path}: cannot parse: {line}')
        ret, name, params, ann = m.groups()
        plist = [] if params in ('', 'void') else [p.strip() for p in params.split(',')]
        names = []
        for p in plist:
            pm = re.search(r'(\w+)\s*((\[\w*\])*)$', p)
            names.append(pm.group(1) if pm else p)
        kv = dict(a.split('=', 1) if '=' in a else (a, '') for a in ann.split())
        fns.append(dict(ret=ret, name=name, params=plist, pnames=names, ann=kv, hand=hand,
                        ptype=dict(zip(names, plist))))
    return fns


# ---- value of a parameter in each language -------------------------------

def fval(fn, p, fortran):
    """C expression for parameter p: as is in C, converted in Fortran."""
    if not fortran:
        return p
    t = fn['ptype'][p]
    base = re.sub(r'\b(const)\b', '', t).replace(p, '').strip()
    f = f'(*(const MPI_Fint *){p})'
    conv = {'MPI_Datatype': 'PMPI_Type_f2c', 'MPI_Comm': 'PMPI_Comm_f2c', 'MPI_Win': 'PMPI_Win_f2c',
            'MPI_Comm *': 'PMPI_Comm_f2c', 'MPI_Win *': 'PMPI_Win_f2c',
            'MPI_Request *': 'PMPI_Request_f2c'}
    if base in conv:
        return f'{conv[base]}{f}'
    if base in ('int', 'int *'):
        return f
    if base.endswith('[]'):
        return f'(const void *){p}'
    return p


def deref(fn, p, fortran):
    """The handle a pointer parameter points to (MPI_Comm *, MPI_Request *)."""
    return fval(fn, p, True) if fortran else f'*{p}'


def bytes_expr(fn, spec, fortran):
    if spec == '-':
        return '-1'
    kind, _, rest = spec.rpartition(':')
    c, t = rest.split('*')
    comm = fval(fn, 'comm', fortran) if kind else ''
    if kind == 'sum':
        return f'sp_mpi_bytes_sum({fval(fn, c, fortran)}, {fval(fn, t, fortran)}, {comm})'
    if kind == 'sumw':
        return f'sp_mpi_bytes_sumw({fval(fn, c, fortran)}, (const void *){t}, {int(fortran)}, {comm})'
    return f'sp_mpi_bytes_fast({fval(fn, c, fortran)}, {fval(fn, t, fortran)})'


def inplace_test(buf, fortran):
    return f'sp_mpi_f_in_place({buf})' if fortran else f'{buf} == MPI_IN_PLACE'


def post_bytes(fn, fortran):
    """The bytes of a call at post time, the receive side's for MPI_IN_PLACE."""
    a = fn['ann']
    e = bytes_expr(fn, a['bytes'], fortran)
    if 'inplace' in a:
        buf, _, alt = a['inplace'].partition(':')
        e = f'{inplace_test(buf, fortran)} ? {bytes_expr(fn, alt, fortran)} : {e}'
    return e


# ---- what both paths record ---------------------------------------------
#
# One interpretation of the annotations for both paths of a wrapper: the
# call's data as passed (struct sp_mpi_args, var.a) and the status of a
# wildcard receive. The runtime builds the record from them with one builder
# (sp_mpi_rec_build, mpi-record.h), on the general and on the fast path.

def args_stmts(fn, fortran, var):
    """Statements filling var.a from the arguments."""
    a = fn['ann']
    out = []
    if 'bytes' in a:
        out.append(f'{var}.a.bytes = {post_bytes(fn, fortran)};')
    for key in ('peer', 'root', 'tag'):
        if key in a:
            out.append(f'{var}.a.{key} = {fval(fn, a[key], fortran)};')
    return out


def status_stmt(fn, fortran, var):
    """The statement taking a wildcard receive's peer and tag from its
    status, or None."""
    a = fn['ann']
    if 'status' not in a:
        return None
    st = f'sp_mpi_args_status(&{var}.a, {a["status"]}, {int(fortran)});'
    if 'flag' in fn['pnames'] and 'test' not in a:  # Iprobe: no status without a match
        flag = '(*(const MPI_Fint *)flag)' if fortran else '*flag'
        st = f'if ({flag})\n\t\t\t{st}'
    return st


# ---- the general path -----------------------------------------------------

def body(fn, fortran, call):
    a, F = fn['ann'], int(fortran)
    v = lambda p: fval(fn, p, fortran)
    pre, post, always = args_stmts(fn, fortran, 'c'), [], []
    if 'comm' in a:
        pre.append(f'c.comm = {v(a["comm"])};')
    if 'win' in a:
        pre.append(f'c.win = {v(a["win"])};')
    if 'freecomm' in a:
        always.append(f'sp_mpi_comm_forget(&c, {deref(fn, a["freecomm"], fortran)});')
    if 'freetype' in a:
        always.append('sp_mpi_type_forget();')
    if 'freewin' in a:
        always.append(f'sp_mpi_win_forget({deref(fn, a["freewin"], fortran)});')
    if 'wait' in a:
        pre.append(f'sp_mpi_reqs_save(&c, {a["wait"]}, 1, {F});')
    for key in ('waitall', 'waitany', 'waitsome', 'startall'):
        if key in a:
            n, arr = a[key].split(':')[:2]
            pre.append(f'sp_mpi_reqs_save(&c, {arr}, {v(n)}, {F});')
    if 'start' in a:
        pre.append(f'sp_mpi_reqs_save(&c, {a["start"]}, 1, {F});')
        pre.append('sp_mpi_reqs_done(&c, -1, NULL, 0);')
    if 'startall' in a:
        pre.append('sp_mpi_reqs_done(&c, -1, NULL, 0);')
    ival = lambda p: f'(*(const MPI_Fint *){p})' if fortran else f'*{p}'
    st = status_stmt(fn, fortran, 'c')
    if st:
        post.append(st)
    test = ival(a['test']) if 'test' in a else None
    cond = (lambda stmt: f'if ({test})\n\t\t\t{stmt}') if test else (lambda stmt: stmt)
    if 'wait' in a or 'waitall' in a:
        post.append(cond('sp_mpi_reqs_done(&c, -1, NULL, 0);'))
    if 'waitany' in a:
        idx = a['waitany'].split(':')[2]
        post.append(cond(f'sp_mpi_reqs_done(&c, 1, (const int *){idx}, {F});'))
    if 'waitsome' in a:
        _, _, outn, idx = a['waitsome'].split(':')
        post.append(f'sp_mpi_reqs_done(&c, {ival(outn)}, (const int *){idx}, {F});')
    ok = '*ierr == MPI_SUCCESS' if fortran else 'ret == MPI_SUCCESS'
    if 'req' in a or 'preq' in a:
        r = a.get('req') or a.get('preq')
        post.append(f'if ({ok})\n\t\t\tsp_mpi_req_put(&c, {deref(fn, r, fortran)});')
    if 'newcomm' in a:
        post.append(f'if ({ok})\n\t\t\tsp_mpi_comm_new({deref(fn, a["newcomm"], fortran)});')

    out = ['\tstruct sp_mpi_call c;']
    if pre:
        out.append(f'\tif (sp_mpi_begin(&c, SP_MPI_{fn["name"]})) {{')
        out += ['\t\t' + s for s in pre]
        out.append('\t}')
    else:
        out.append(f'\tsp_mpi_begin(&c, SP_MPI_{fn["name"]});')
    out += ['\t' + s for s in always]
    out.append('\tsp_mpi_enter(&c);')
    out.append('\t' + call)
    if post:
        out.append('\tif (sp_mpi_leave(&c)) {')
        out += ['\t\t' + s for s in post]
        out.append('\t}')
    else:
        out.append('\tsp_mpi_leave(&c);')
    out.append('\tsp_mpi_end(&c);')
    return out


# ---- the fast path ----------------------------------------------------------

# Annotations the fast path (sp_mpi_fast_*, mpi-record.h) can record.
FAST_KEYS = {'bytes', 'inplace', 'peer', 'root', 'tag', 'comm', 'status', 'req', 'preq',
             'wait', 'waitall', 'test'}


def fast_body(fn, call):
    """The fast path of a C wrapper, or [] when the function's data needs the
    general path (arrays of counts, windows, completions of an unknown subset,
    handles created or freed, a status that may be undefined)."""
    a = fn['ann']
    if fn['ret'] != 'int' or not set(a) <= FAST_KEYS:
        return []
    if 'flag' in fn['pnames'] and 'test' not in a:
        return []  # Iprobe: the status is undefined when nothing matched
    if ('peer' in a or 'root' in a) and 'comm' not in a:
        return []
    specs = [a.get('bytes', '-')]
    if 'inplace' in a:
        specs.append(a['inplace'].partition(':')[2])
    if any(':' in sp for sp in specs):
        return []
    fid = f'SP_MPI_{fn["name"]}'
    begin = f'sp_mpi_fast_begin_comm(&f, {fid}, {a["comm"]})' if 'comm' in a else \
        f'sp_mpi_fast_begin(&f, {fid})'
    out = ['\tstruct sp_mpi_fast f;']
    saved = None
    if 'wait' in a:  # the handles are copied: the call frees them
        out += ['\tMPI_Request sp_saved[1];', f'\tif ({begin}) {{',
                f'\t\tsp_saved[0] = {a["wait"]} ? *{a["wait"]} : MPI_REQUEST_NULL;']
        saved = '1'
    elif 'waitall' in a:
        n, arr = a['waitall'].split(':')
        out += ['\tMPI_Request sp_saved[SP_MPI_SAVED];',
                f'\tif ({n} >= 0 && {n} <= SP_MPI_SAVED && ({arr} || !{n}) && {begin}) {{',
                f'\t\tsp_mpi_copy_reqs(sp_saved, {arr}, {n});']
        saved = n
    else:
        out.append(f'\tif ({begin}) {{')
    out += ['\t\t' + s for s in args_stmts(fn, False, 'f')]
    out += ['\t\tsp_mpi_fast_enter(&f);', '\t\t' + call, '\t\tsp_mpi_fast_leave(&f);']
    st = status_stmt(fn, False, 'f')
    if st:
        out.append('\t\t' + st)
    # The record: the requests' for a completion, else the call's data.
    out.append('\t\tstruct sp_mpi_rec rec;')
    build = 'sp_mpi_fast_build(&f, &rec);'
    if saved:
        done = f'sp_mpi_reqs_rec(&rec, sp_saved, {saved}, -1, NULL, 0);'
        if 'test' in a:
            out += [f'\t\tif (*{a["test"]})', f'\t\t\t{done}', '\t\telse', f'\t\t\t{build}']
        else:
            out.append('\t\t' + done)
    else:
        out.append('\t\t' + build)
    r = a.get('req') or a.get('preq')
    if r:
        out.append(f'\t\tif (ret == MPI_SUCCESS)\n\t\t\tsp_mpi_req_put_fast(&rec, *{r});')
    out += ['\t\tsp_mpi_fast_end(&f, &rec);', '\t\treturn ret;', '\t}']
    return out


def c_wrapper(fn):
    args = ', '.join(fn['pnames'])
    params = ", ".join(fn["params"]) or "void"
    # Exported explicitly: Open MPI's mpi.h declares MPI_* with default
    # visibility, MPICH's does not (the library is -fvisibility=hidden).
    proto = f'SP_EXPORT {fn["ret"]} {fn["name"]}({params})'
    general = body(fn, False, f'{fn["ret"]} ret = P{fn["name"]}({args});') + ['\treturn ret;', '}', '']
    fast = fast_body(fn, f'int ret = P{fn["name"]}({args});')
    if not fast:
        return [proto, '{'] + general
    # The general path out of line: the fast one keeps a small frame.
    slow = f'sp_slow_{fn["name"]}'
    return ([f'static __attribute__((noinline)) {fn["ret"]} {slow}({params})', '{'] + general +
            [proto, '{'] + fast + [f'\treturn {slow}({args});', '}', ''])


def f_params(fn):
    """Fortran signature: every argument by reference, ierr, hidden lengths."""
    ps = [f'void *{p}' for p in fn['pnames']]
    lens = [f'size_t {p}_len' for p in fn['pnames'] if 'char' in fn['ptype'][p]]
    if fn['ret'] == 'int':
        ps.append('MPI_Fint *ierr')
    return ps + lens, [p for p in fn['pnames']] + (['ierr'] if fn['ret'] == 'int' else []) + \
        [p.split()[-1] for p in lens]


def f_wrapper(fn):
    low = fn['name'].lower()
    params, args = f_params(fn)
    sig = ', '.join(params) or 'void'
    ret = 'void' if fn['ret'] == 'int' else fn['ret']
    real = f'p{low}_'
    lines = [f'extern {ret} {real}({sig}) __attribute__((weak));',
             f'SP_EXPORT {ret} {low}_({sig});', f'SP_EXPORT {ret} {low}_({sig})', '{']
    if fn['ret'] == 'int':
        call = (f'if ({real})\n\t\t{real}({", ".join(args)});\n\telse\n\t\t*ierr = MPI_ERR_INTERN;')
        lines += body(fn, True, call)
    else:
        lines += body(fn, True, f'{ret} ret = {real} ? {real}() : 0;')
        lines.append('\treturn ret;')
    lines.append('}')
    for alias in (low, low + '__', fn['name'].upper()):
        lines.append(f'SP_EXPORT {ret} {alias}({sig}) __attribute__((alias("{low}_")));')
    return lines + ['']


HEAD = '''/* Generated by gen-mpi-wrappers.py from mpi-functions.def. Do not edit. */
'''


# ---- region kinds (class= annotation) ----------------------------------

KIND_OF_CLASS = {'other': 'SP_KIND_MPI_OTHER', 'send': 'SP_KIND_MPI_SEND',
                 'recv': 'SP_KIND_MPI_RECV', 'sendrecv': 'SP_KIND_MPI_SENDRECV',
                 'collective': 'SP_KIND_MPI_COLLECTIVE', 'one_sided': 'SP_KIND_MPI_ONE_SIDED',
                 'io': 'SP_KIND_MPI_IO', 'request': 'SP_KIND_MPI_REQUEST'}


def take_kinds(fns, path):
    """Move each function's class= annotation out of its data annotations
    into fn['kind'] (an SP_KIND_* name of sp-format.h); every line needs one."""
    for f in fns:
        c = f['ann'].pop('class', None)
        if c not in KIND_OF_CLASS:
            sys.exit(f'{path}: {f["name"]}: class= must be one of {", ".join(KIND_OF_CLASS)}')
        f['kind'] = KIND_OF_CLASS[c]
        f['only'] = f['ann'].pop('only', None)
        if f['only'] not in (None, *FAMILIES):
            sys.exit(f'{path}: {f["name"]}: only= must be one of {", ".join(FAMILIES)}')


# only=FAMILY: the function exists in one MPI family's mpi.h (mpi-record.h
# defines the SP_MPI_FAMILY_* of the mpi.h a wrapper is compiled against).
FAMILIES = {'openmpi': 'SP_MPI_FAMILY_OPENMPI', 'mpich': 'SP_MPI_FAMILY_MPICH'}


def guarded(fn, lines):
    """lines, compiled only against the family's mpi.h for only=FAMILY."""
    if not fn['only']:
        return lines
    return [f'#if {FAMILIES[fn["only"]]}'] + lines + ['#endif', '']


def kind_table(fns):
    """The region kind of each function, indexed like sp_mpi_fn_names."""
    return (['const unsigned char sp_mpi_fn_kinds[] = {'] +
            [f'\t{f["kind"]}, /* {f["name"]} */' for f in fns] + ['};', ''])


def write_reader_kinds(fns, path):
    """The reader's name -> kind table (sorted for bsearch), for files that
    have no region_table/kinds: static, included by one reader file."""
    with open(path, 'w') as o:
        o.write(HEAD + '/* Included by reader/region-kinds.c only. */\n\n'
                'static const struct mpi_kind { const char *name; unsigned char kind; } mpi_kinds[] = {\n')
        o.writelines(f'\t{{ "{f["name"]}", {f["kind"]} }},\n'
                     for f in sorted(fns, key=lambda f: f['name']))
        o.write('};\n')


def main():
    if sys.argv[1] == '--reader-kinds':
        fns = parse(sys.argv[2])
        take_kinds(fns, sys.argv[2])
        return write_reader_kinds(fns, sys.argv[3])
    src, out_h, out_c, out_f = sys.argv[1:5]
    fns = parse(src)
    take_kinds(fns, src)
    with open(out_h, 'w') as h:
        h.write(HEAD + '#ifndef SP_MPI_NAMES_H\n#define SP_MPI_NAMES_H\n\nenum sp_mpi_fn {\n')
        h.writelines(f'\tSP_MPI_{f["name"]},\n' for f in fns)
        h.write('\tSP_MPI_FN_COUNT\n};\n\n__attribute__((visibility("hidden"))) extern const char '
                '*const sp_mpi_fn_names[SP_MPI_FN_COUNT];\n'
                '/* SP_KIND_* of each function (class= in mpi-functions.def). */\n'
                '__attribute__((visibility("hidden"))) extern const unsigned char '
                'sp_mpi_fn_kinds[SP_MPI_FN_COUNT];\n\n#endif\n')
    with open(out_c, 'w') as c:
        c.write(HEAD + '#include "mpi-record.h"\n\n'
                '#pragma GCC diagnostic ignored "-Wdeprecated-declarations"\n\nconst char *const sp_mpi_fn_names[] = {\n')
        c.writelines(f'\t"{f["name"]}",\n' for f in fns)
        c.write('};\n\n' + '\n'.join(kind_table(fns)) + '\n')
        for f in fns:
            if not f['hand']:
                c.write('\n'.join(guarded(f, c_wrapper(f))) + '\n')
    with open(out_f, 'w') as o:
        o.write(HEAD + '#include <stddef.h>\n\n#include "mpi-record.h"\n\n'
                '#pragma GCC diagnostic ignored "-Wmissing-prototypes"\n'
                '#pragma GCC diagnostic ignored "-Wunused-parameter"\n\n'
                '/* Only where the Fortran bindings call PMPI_* (mpi-record.h). */\n'
                '#if SP_MPI_FORTRAN_WRAPPERS\n\n')
        for f in fns:
            if not f['hand'] and 'c' not in f['ann']:
                o.write('\n'.join(guarded(f, f_wrapper(f))) + '\n')
        o.write('#endif /* SP_MPI_FORTRAN_WRAPPERS */\n')


if __name__ == '__main__':
    main()
