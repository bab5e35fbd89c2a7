"""Checks the merged file of mpi-clock (test-clock.sh) with h5py.

usage: check_clock.py FILE NP STEPS skew OFFSET_NS DRIFT_PPM | FILE NP STEPS plain

skew: SCOPE_PROFILER_TEST_CLOCK_SKEW=OFFSET_NS,DRIFT_PPM was set, so rank r's
clock read t + r*OFFSET_NS + r*DRIFT_PPM*1e-6*(t - origin) (origin: rank 0's
clock at MPI_Init, attribute test_skew_origin_ns). On one host the true
offset of rank r at rank 0's time T is that skew, computed here: the file's
/clock_sync must hold it within its own error bounds, and every rank must be
marked as mapped. plain: one host, no skew: every rank reads rank 0's
CLOCK_MONOTONIC, so none is measured (errors -1, offsets 0) and none is
mapped.

Both: the timeline of the file is one timeline. At barrier k no rank leaves
before every rank entered, so for all ranks r, q:
  end(barrier k on r) >= start(barrier k on q) - bound(r) - bound(q) - SLACK
and after_barrier() on r starts after the latest barrier entry, within the
same bounds. SLACK covers the recorder's tick-to-ns fit (recorder/clock.h,
the TSC against CLOCK_MONOTONIC over the run), which the clock alignment
does not see. The rows' summaries agree with their (mapped) events, and
every thread's lifetime holds its rank's events.
"""
import sys

import h5py
import numpy as np

SLACK = 2000  # ns


def fail(msg):
    sys.exit(f'FAIL: {msg}')


def clock_rows(f, np_):
    if 'clock_sync' not in f:
        fail('no /clock_sync group')
    g = f['clock_sync']
    cols = {k: g[k][:] for k in g}
    ranks = cols['ranks']
    if list(ranks) != list(range(np_)):
        fail(f'/clock_sync ranks {list(ranks)}, want 0..{np_ - 1}')
    n = {len(v) for v in cols.values()}
    if n != {np_}:
        fail(f'/clock_sync columns of lengths {n}')
    if g.attrs['pingpongs'] < 1:
        fail('pingpongs attribute')
    return g, cols


def check_rank0(c):
    for k in ('init_offsets', 'final_offsets', 'init_errors', 'final_errors', 'errors',
              'applied'):
        if c[k][0] != 0:
            fail(f'rank 0 {k} = {c[k][0]}, want 0')


def check_skew(g, c, np_, off, ppm):
    if g.attrs['test_skew'] != 1 or g.attrs['test_skew_offset_ns'] != off:
        fail('test_skew attributes')
    origin = int(g.attrs['test_skew_origin_ns'])
    for r in range(1, np_):
        for when in ('init', 'final'):
            t = int(c[when + '_times'][r])
            want = r * off + r * ppm * 1e-6 * (t - origin)
            got, err = int(c[when + '_offsets'][r]), int(c[when + '_errors'][r])
            print(f'rank {r} {when}: offset {got} ns, injected {want:.0f}, '
                  f'diff {got - want:.0f}, bound {err}')
            if err < 0 or abs(got - want) > err:
                fail(f'rank {r} {when} offset {got} not within {err} of {want:.0f}')
            if err > abs(off) / 100:
                fail(f'rank {r} {when} bound {err} ns says nothing against {off} ns')
        d, de = c['drifts_ppm'][r], c['drift_errors_ppm'][r]
        print(f'rank {r}: drift {d:.3f} ppm, injected {r * ppm}, bound {de:.3f}')
        if de < 0 or abs(d - r * ppm) > de:
            fail(f'rank {r} drift {d} ppm not within {de} of {r * ppm}')
        if c['applied'][r] != 1:
            fail(f'rank {r} not mapped under the test skew')
        if c['errors'][r] != max(c['init_errors'][r], c['final_errors'][r]):
            fail(f'rank {r} errors')


def check_plain(g, c, np_):
    if g.attrs['test_skew'] != 0:
        fail('test_skew set')
    for r in range(1, np_):
        if c['same_boot'][r] != 1 or c['applied'][r] != 0:
            fail(f'rank {r}: same host, yet same_boot {c["same_boot"][r]} '
                 f'applied {c["applied"][r]}')
        # rank 0's very clock: nothing to measure (docs/MPI.md)
        for k in ('init_errors', 'final_errors', 'errors', 'drift_errors_ppm'):
            if c[k][r] != -1:
                fail(f'rank {r}: same clock as rank 0, yet {k} = {c[k][r]} (measured)')
        for k in ('init_offsets', 'final_offsets', 'init_times', 'final_times', 'drifts_ppm'):
            if c[k][r] != 0:
                fail(f'rank {r}: not measured, yet {k} = {c[k][r]}')
    print(f'ranks 1..{np_ - 1}: same clock as rank 0, not measured, not mapped')


def calls(f, np_, name):
    """Per rank: (starts, ends) of region `name`, in start order."""
    names = [n.decode() if isinstance(n, bytes) else n for n in f['region_table/names'][:]]
    rid = names.index(name)
    idx = f['rank_region_index']
    st, en = f['events/start_times'], f['events/end_times']
    out = {}
    for reg, rank, o, n in zip(idx['region_ids'][:], idx['ranks'][:], idx['event_offsets'][:],
                               idx['event_counts'][:]):
        if reg == rid:
            s, e = st[o:o + n], en[o:o + n]
            order = np.argsort(s, kind='stable')
            out[int(rank)] = (s[order], e[order])
    if sorted(out) != list(range(np_)):
        fail(f'{name} on ranks {sorted(out)}')
    return out


def check_order(f, c, np_, steps):
    bound = [int(b) if a else 0 for a, b in zip(c['applied'], c['errors'])]
    bar = calls(f, np_, 'MPI_Barrier')
    after = calls(f, np_, 'after_barrier')
    for r in range(np_):
        if len(bar[r][0]) != steps or len(after[r][0]) != steps:
            fail(f'rank {r}: {len(bar[r][0])} barriers, {len(after[r][0])} after_barrier, '
                 f'want {steps}')
    worst = None
    for k in range(steps):
        for r in range(np_):
            for q in range(np_):
                if q == r:
                    continue
                slack = bound[r] + bound[q] + SLACK
                for what, t in (('leaves', bar[r][1][k]), ('after_barrier starts',
                                                         after[r][0][k])):
                    margin = int(t) - int(bar[q][0][k])
                    worst = margin if worst is None else min(worst, margin)
                    if margin < -slack:
                        fail(f'barrier {k}: rank {r} {what} {-margin} ns before rank {q} '
                             f'enters (bounds {bound[r]} + {bound[q]} + {SLACK})')
    print(f'cross-rank order holds at {steps} barriers; tightest margin {worst} ns')


def check_rows(f, np_):
    idx = f['rank_region_index']
    st, en = f['events/start_times'][:], f['events/end_times'][:]
    summ = idx['summary_statistics'][:]
    for i, (o, n) in enumerate(zip(idx['event_offsets'][:], idx['event_counts'][:])):
        if n == 0:
            continue
        d = en[o:o + n] - st[o:o + n]
        s = summ[i]
        if (s['total'] != d.sum() or s['start_minimum'] != st[o:o + n].min() or
                s['end_maximum'] != en[o:o + n].max() or s['minimum'] != d.min()):
            fail(f'row {i}: summary does not match its events')
    if 'thread_table' not in f:
        fail('no thread table (mpi-clock runs two threads)')
    tt = f['thread_table']
    lo_all, hi_all = {}, {}
    for rank, o, n in zip(idx['ranks'][:], idx['event_offsets'][:], idx['event_counts'][:]):
        if n:
            lo_all[rank] = min(lo_all.get(rank, np.iinfo(np.int64).max), st[o:o + n].min())
            hi_all[rank] = max(hi_all.get(rank, np.iinfo(np.int64).min), en[o:o + n].max())
    for r in range(np_):
        t = tt['ranks'][:] == r
        if not t.any():
            fail(f'rank {r}: no threads in the thread table')
        lo, hi = lo_all[r], hi_all[r]
        if tt['start_ns'][t].min() > lo or tt['end_ns'][t].max() < hi:
            fail(f'rank {r}: its events lie outside its threads\' lifetimes')


def main():
    path, np_, steps, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    with h5py.File(path, 'r') as f:
        g, c = clock_rows(f, np_)
        check_rank0(c)
        if mode == 'skew':
            check_skew(g, c, np_, int(sys.argv[5]), float(sys.argv[6]))
        else:
            check_plain(g, c, np_)
        check_order(f, c, np_, steps)
        check_rows(f, np_)
    print(f'{path}: clock alignment OK')


main()
