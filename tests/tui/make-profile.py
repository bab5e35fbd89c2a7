# Write schema-2 columnar scope-profiler files for the TUI tests.
#   make-profile.py known OUT   small 2-rank file with known contents
#   make-profile.py threads OUT one rank, two thread lanes (thread_ids)
#   make-profile.py big OUT N   N events on 4 ranks (speed measurement)
import sys

import numpy as np

import profile_builder as B

S = 1_000_000_000  # ns per second


def write(path, names, rows, meta, lanes=None, threads=None):
    """rows: list of (region_id, rank, starts, ends) in rank, region order;
    lanes: per row, the thread id of its events; threads: thread_table rows
    (rank, index, name)."""
    events = None
    if lanes is not None:
        events = {"thread_ids": np.concatenate(
            [np.full(len(r[2]), ln, dtype=np.int64) for r, ln in zip(rows, lanes)])}
    table = None
    if threads:
        table = {"ranks": [t[0] for t in threads], "index": [t[1] for t in threads],
                 "name": [t[2] for t in threads]}
    B.columnar(path, names, rows, metadata=meta, events=events, threads=table,
               index=B.row_columns(len(rows), exclusive=-1))


def meta_common(ranks):
    return {
        "timestamp": "2024-05-01T12:00:00+00:00",
        "start_time_ns": 0,
        "finalize_time_ns": 12 * S,
        "hostname": "node042",
        "user": "tester",
        "platform": "Linux-6.1-x86_64",
        "scope_profiler_version": "0.1.0",
        "mpi_size": ranks,
        "omp_num_threads": 1,
        "total_cores": ranks,
        "SLURM_JOB_ID": "4711",
        "PATH": "/usr/bin:/bin",
        "modules": ["gcc/13", "openmpi/4.1"],
        "source": "native",
    }


def known(path):
    # Regions: session > setup (1 s), timestep x4 (assemble, solve), output.
    # rank 1 also has "checkpoint" (only there) and a slower solve.
    names = ["scope_profiler.session", "setup", "timestep", "assemble",
             "solve", "output", "checkpoint"]
    rows = []
    for rank in (0, 1):
        solve_len = (0.9 if rank == 0 else 1.1) * S
        ts_len = 1.5 * S if rank == 0 else 1.7 * S
        t0 = 1 * S
        ts = [(t0 + i * ts_len, t0 + (i + 1) * ts_len) for i in range(4)]
        asm = [(a, a + 0.5 * S) for a, _ in ts]
        sol = [(a + 0.5 * S, a + 0.5 * S + solve_len) for a, _ in ts]
        end_ts = ts[-1][1]
        out = [(end_ts, end_ts + 2 * S)]
        sess_end = out[0][1] + (0.5 * S if rank == 1 else 0)
        per = {0: [(0, sess_end)], 1: [(0, 1 * S)], 2: ts, 3: asm, 4: sol,
               5: out}
        if rank == 1:
            per[6] = [(out[0][1], out[0][1] + 0.3 * S)]
        for rid in sorted(per):
            iv = per[rid]
            rows.append((rid, rank, [int(a) for a, _ in iv],
                         [int(b) for _, b in iv]))
    write(path, names, rows, meta_common(2))


def threads(path):
    # rank 0: main thread (0) runs "main_loop" [0, 10 s]; thread 1 runs
    # "worker" twice, each with a nested "compute".
    names = ["main_loop", "worker", "compute"]
    rows = [(0, 0, [0], [10 * S]),
            (1, 0, [1 * S, 4 * S], [3 * S, 6 * S]),
            (2, 0, [int(1.5 * S), int(4.5 * S)], [int(2.5 * S), int(5.5 * S)])]
    write(path, names, rows, meta_common(1), lanes=[0, 1, 1],
          threads=[(0, 0, "main-0"), (0, 1, "thread-1")])


def big(path, total):
    # 4 ranks; per rank a session, then steps of (compute > kernel x8, comm).
    ranks = 4
    per_rank = total // ranks
    per_step = 1 + 8 + 1  # step + kernels + comm
    steps = max(1, (per_rank - 1) // per_step)
    names = ["scope_profiler.session", "step", "kernel", "comm"]
    rows = []
    rng = np.random.default_rng(1)
    for rank in range(ranks):
        step_len = 10_000 + rank * 100
        st = np.arange(steps, dtype=np.int64) * step_len + 1000
        k_off = (np.arange(8, dtype=np.int64) * 1000)[None, :] + 10
        ks = (st[:, None] + k_off).ravel()
        ke = ks + 900 - rng.integers(0, 50, ks.size)
        cs = st + 8100
        ce = cs + 1500 + rank * 50
        se = st + 9800
        rows.append((0, rank, [0], [int(st[-1] + step_len + 1000)]))
        rows.append((1, rank, st, se))
        rows.append((2, rank, ks, ke))
        rows.append((3, rank, cs, ce))
    meta = meta_common(ranks)
    meta["finalize_time_ns"] = int(steps * 10_500 + 5000)
    write(path, names, rows, meta)


if __name__ == "__main__":
    if sys.argv[1] == "known":
        known(sys.argv[2])
    elif sys.argv[1] == "threads":
        threads(sys.argv[2])
    elif sys.argv[1] == "big":
        big(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit("usage: make-profile.py known OUT | threads OUT | big OUT N")
