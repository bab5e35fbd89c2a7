#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End-to-end test of the accessor-heavy C++ proxy app (examples/proxy)
under real `mpirun -n 2 --oversubscribe` and `scope-profiler run`.

Runs the plain binary, the instrumented one without the profiler (glibc's
empty hooks), then the instrumented one under `scope-profiler run` with the
default settings and with `--throttle-calls 0` (everything recorded), and
checks (and once more with --throttle-calls 100, where throttling surely
engages):
  (a) every run prints the plain binary's output (checksum included);
  (b) per rank, for accessors, helpers, kernels, per-region templates and
      the step, the exact number of calls (event_counts + throttled_counts,
      from `summary --json` and independently from the file with h5py)
      equals the formula of examples/proxy/README.md;
  (c) MPI counts per rank (Isend, Irecv, Waitall, Allreduce, Reduce);
  (d) with the default settings, the self-measured costs in the file's
      metadata are the ranks' own (SCOPE_PROFILER_DEBUG=finalize prints
      each rank's) averaged: the counted and timed call costs weighted by
      each rank's calls of that kind, whose sums over the ranks are the
      file's counted (throttled - timed) and timed (events + timed) calls;
      start-up and memory as plain means.
Whether a function is throttled by default is not assumed: only the sum is
checked (and that --throttle-calls 0 throttles nothing). The formulas are
checked to fail when N, ITER or the rank are perturbed, so the comparison
cannot pass vacuously. Fails when mpirun is missing.

Once per MPI family (SP_MPI_FAMILY, SP_MPI_SUFFIX as tests/lib/mpi.sh; its
launcher through tests/lib/mpi-bin): a family other than the default runs
the default settings only, the throttle cases depending on no family.
"""
import json, os, re, shutil, subprocess, sys, tempfile

import h5py

BUILD = os.environ.get("SP_BUILD_DIR", "build")
FAMILY = os.environ.get("SP_MPI_FAMILY", "openmpi")
SFX = os.environ.get("SP_MPI_SUFFIX", "")
CLI = os.path.join(BUILD, "tools", "scope-profiler")
PLAIN = os.path.join(BUILD, "examples", "proxy", "proxy-plain" + SFX)
PROXY = os.path.join(BUILD, "examples", "proxy", "proxy" + SFX)
MPI_BIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib", "mpi-bin")
NP, N, ITER = 2, 6, 5
NREG = 16
FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


LAUNCHER = {"openmpi": "mpirun.openmpi", "mpich": "mpiexec.mpich"}.get(FAMILY)
if not LAUNCHER or not shutil.which(LAUNCHER):
    sys.exit("FAIL: %s not found (the %s launcher)" % (LAUNCHER, FAMILY))
for exe in (CLI, PLAIN, PROXY):
    if not os.access(exe, os.X_OK):
        print("FAIL: not built:", exe)
        sys.exit(1)

# ---------------------------------------------------------------- formulas
# Per rank r of P (ranks stacked along z), sub-domain edge N, ITER steps:
#   E = N^3 elements, Nn = (N+1)^3 nodes, Np = (N+1)^2 nodes per plane,
#   nb = (r > 0) + (r < P-1) neighbours, z0 = 1 on rank 0 (z symmetry plane),
#   cnt(R) = E // 16 + (R < E % 16) elements in region R,
#   rep(R) = 2 if R % 4 == 3 else 1 (EOS passes of region R),
#   W = sum over R of rep(R) * cnt(R).
# Mirrors the comments in examples/proxy/README.md.


def expected(n, it, p, r):
    E, Nn, Np = n ** 3, (n + 1) ** 3, (n + 1) ** 2
    nb = (r > 0) + (r < p - 1)
    z0 = 1 if r == 0 else 0
    cnt = [E // NREG + (R < E % NREG) for R in range(NREG)]
    rep = [2 if R % 4 == 3 else 1 for R in range(NREG)]
    W = sum(a * b for a, b in zip(rep, cnt))
    an = r"\(anonymous namespace\)::"
    return {
        # the step, kernels
        r"main$": 1,
        an + r"LagrangeLeapFrog\(Domain&\)$": it,
        r"TimeIncrement\(Domain&\)$": it,
        an + r"IntegrateStressForElems\(": it,
        an + r"CalcHourglassControlForElems\(": it,
        an + r"EvalEOSForRegion<3>\(": it,
        an + r"GatherEOSInputs<7>\(": rep[7] * it,
        an + r"CalcPressureForElems<0>\(": 2 * rep[0] * it,
        an + r"CalcPressureForElems<3>\(": 2 * rep[3] * it,
        an + r"PackPlane<F_fx>\(": nb * it,
        an + r"UnpackAddPlane<F_nodalMass>\(": nb,
        # helpers
        r"CollectDomainNodesToElemNodes\(": E * (1 + 2 * it),
        r"CollectDomainVelocitiesToElemNodes\(": 2 * it * E,
        r"ScatterElemForcesToNodes\(": 2 * it * E,
        r"CalcElemVolume\(": E * (1 + 3 * it),
        an + r"EdgeVector\(": 18 * E + 102 * it * E,
        an + r"GammaLawPressure\(": 2 * it * W,
        # accessors
        r"Domain::x\(int\)$": 2 * Nn + 8 * E + it * (16 * E + Nn),
        r"Domain::xd\(int\)$": Nn + it * (16 * E + 3 * Nn),
        r"Domain::fx\(int\)$": Nn + it * (2 * Nn + 16 * E + 2 * nb * Np),
        r"Domain::zdd\(int\)$": Nn + it * (2 * Nn + z0 * Np),
        r"Domain::e\(int\)$": z0 + 1 + E + it * (E + W),
        r"Domain::symmZ\(int\)$": z0 * Np * (1 + it),
        r"F_fx::get\(Domain&, int\)$": Nn + it * (Nn + 2 * nb * Np),
        # MPI
        r"MPI_Isend$": nb * (it + 1),
        r"MPI_Irecv$": nb * (it + 1),
        r"MPI_Waitall$": it + 1,
        r"MPI_Allreduce$": it,
        r"MPI_Reduce$": 1,
    }


# Accessors backed by std::vector<double>: every
# std::vector<double>::operator[] call is one of theirs.
DOUBLE_FIELDS = ("x y z xd yd zd xdd ydd zdd fx fy fz nodalMass e p q ql qq v volo vnew delv "
                 "vdov arealg ss elemMass dxx dyy dzz delv_xi delv_eta delv_zeta").split()
VEC_INDEX = "std::vector<double, std::allocator<double> >::operator[](unsigned long)"


def mismatches(want, got):
    """{pattern: (got, want)} for the patterns whose count differs; a
    pattern must match exactly one region name (or none when want is 0)."""
    bad = {}
    for pat, w in want.items():
        names = [n for n in got if re.match(pat, n)]
        if len(names) > 1:
            bad[pat] = ("ambiguous: %s" % names, w)
            continue
        g = got[names[0]] if names else 0
        if g != w:
            bad[pat] = (g, w)
    return bad


# ------------------------------------------------------------------ runs
ENV = {k: v for k, v in os.environ.items()
       if not k.startswith("SCOPE_PROFILER_") and k != "LD_PRELOAD"}
ENV.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_btl="self,vader",
           PATH=os.path.join(MPI_BIN, FAMILY) + os.pathsep + os.environ.get("PATH", ""))
MPIRUN = ["mpirun", "--oversubscribe", "-n", str(NP)]
ARGS = ["-s", str(N), "-i", str(ITER)]


def run(cmd):
    p = subprocess.run(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=300)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
        print("FAIL: %s exited with %d" % (" ".join(cmd), p.returncode))
        sys.exit(1)
    return p.stdout, p.stderr


def summary_counts(path, rank):
    """name -> exact calls on one rank, from the CLI (events + not on the timeline)."""
    out, _ = run([CLI, "summary", path, "--json", "--ranks", str(rank)])
    return {row["name"]: int(row["num_calls"]) + int(row.get("throttled_calls") or 0)
            for row in json.loads(out)}


def file_counts(path):
    """(rank -> name -> event_counts + throttled_counts, total throttled,
    total dropped), straight from the file."""
    f = h5py.File(path, "r")
    names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][:]]
    idx = f["rank_region_index"]
    n = len(idx["ranks"])
    col = lambda k: idx[k][:] if k in idx else [0] * n
    ev, thr, drop = col("event_counts"), col("throttled_counts"), col("dropped_counts")
    out = {}
    for i in range(n):
        out.setdefault(int(idx["ranks"][i]), {})[names[int(idx["region_ids"][i])]] = \
            int(ev[i]) + int(thr[i])
    return out, int(sum(int(t) for t in thr)), int(sum(int(d) for d in drop))


def check_profile(label, path, plain_out, out, err):
    check(out == plain_out, "%s: output (checksum) identical to the plain binary" % label)
    check(("scope-profiler: wrote %s (%d ranks" % (path, NP)) in err,
          "%s: one merged file for %d ranks reported" % (label, NP))
    per_file, throttled, dropped = file_counts(path)
    check(sorted(per_file) == list(range(NP)), "%s: ranks in the file %s" % (label, sorted(per_file)))
    check(dropped == 0, "%s: no dropped calls (%d)" % (label, dropped))
    for r in range(NP):
        want = expected(N, ITER, NP, r)
        cli = summary_counts(path, r)
        bad = mismatches(want, cli)
        check(not bad, "%s rank %d: %d counts (summary --json) match the formulas%s" % (
            label, r, len(want), "" if not bad else ": (got, want) %s" % bad))
        bad = mismatches(want, per_file.get(r, {}))
        check(not bad, "%s rank %d: event_counts + throttled_counts (h5py) match the formulas%s" % (
            label, r, "" if not bad else ": (got, want) %s" % bad))
        acc = sum(cli.get("Domain::%s(int)" % f, 0) for f in DOUBLE_FIELDS)
        check(cli.get(VEC_INDEX) == acc and acc > 0,
              "%s rank %d: std::vector<double>::operator[] calls %s == sum of the %d double "
              "accessors %d" % (label, r, cli.get(VEC_INDEX), len(DOUBLE_FIELDS), acc))
        # The formulas must catch a wrong N, ITER or rank layout.
        for pert, args in (("N+1", (N + 1, ITER, NP, r)), ("ITER+1", (N, ITER + 1, NP, r)),
                           ("P=3 middle rank", (N, ITER, 3, 1))):
            bad = mismatches(expected(*args), cli)
            check(len(bad) > 0, "%s rank %d: perturbed formula (%s) is detected (%d mismatches)" % (
                label, r, pert, len(bad)))
        other = expected(N, ITER, NP, 1 - r)
        bad = mismatches(other, cli)
        check(set(bad) >= {r"Domain::zdd\(int\)$", r"Domain::symmZ\(int\)$"},
              "%s rank %d: the other rank's formulas differ where rank 0 has the z plane" % (label, r))
    return throttled


COSTS = re.compile(r"^scope-profiler: debug: finalize: costs: rank (\d+): (\d+) counted x "
                   r"(-?[\d.]+) ns, (\d+) timed x (-?[\d.]+) ns, start-up (-?\d+) ns, "
                   r"memory (\d+) ns$", re.M)


def check_costs(path, err):
    """(d): the file's costs against the ranks' own, printed at finalize."""
    ranks = {int(m[1]): [float(x) for x in m.groups()[1:]] for m in COSTS.finditer(err)}
    check(sorted(ranks) == list(range(NP)),
          "costs: every rank printed its own (%s)" % sorted(ranks))
    if sorted(ranks) != list(range(NP)):
        return
    f = h5py.File(path, "r")
    meta = f["metadata"].attrs
    idx = f["rank_region_index"]
    thr, timed = idx["throttled_counts"][:], idx["throttled_timed_counts"][:]
    counted = int(sum(int(t) - min(int(k), int(t)) for t, k in zip(thr, timed)))
    ontime = int(sum(int(e) for e in idx["event_counts"][:])) + \
        int(sum(min(int(k), int(t)) for t, k in zip(thr, timed)))
    v = list(ranks.values())
    check(sum(r[0] for r in v) == counted and counted > 0,
          "costs: the ranks' counted calls sum to the file's (%d)" % counted)
    check(sum(r[2] for r in v) == ontime,
          "costs: the ranks' timed calls sum to the file's events + timed (%d)" % ontime)

    def wmean(c, n):
        w = [r for r in v if r[c] >= 0]
        tot = sum(r[n] for r in w)
        return sum(r[c] * r[n] for r in w) / tot if tot else sum(r[c] for r in w) / len(w)
    # the costs printed to 1e-6 ns; the times are whole ns (the mean truncated)
    for key, want, tol in (
            ("profiler_count_cost_ns", wmean(1, 0), 1e-5 * max(1.0, wmean(1, 0))),
            ("profiler_call_cost_ns", wmean(3, 2), 1e-5 * max(1.0, wmean(3, 2))),
            ("profiler_startup_ns", sum(r[4] for r in v) / NP, 1.0),
            ("profiler_alloc_ns", sum(r[5] for r in v) / NP, 1.0)):
        got = float(meta[key])
        check(abs(got - want) <= tol,
              "costs: %s %.6g is the ranks' mean %.6g" % (key, got, want))
    # rank 0's own start-up is not what the file says when the ranks differ
    if abs(ranks[0][4] - ranks[1][4]) > 1000:
        check(abs(float(meta["profiler_startup_ns"]) - ranks[0][4]) > 100,
              "costs: profiler_startup_ns is not rank 0's alone")


def main():
    tmp = tempfile.mkdtemp(prefix="sp-e2e-proxy-")
    try:
        plain_out, _ = run(MPIRUN + [PLAIN] + ARGS)
        check(re.search(r"^proxy: checksum=\S+$", plain_out, re.M) is not None,
              "plain binary prints a checksum")
        empty_out, _ = run(MPIRUN + [PROXY] + ARGS)
        check(empty_out == plain_out, "instrumented binary on glibc's empty hooks: same output")

        path = os.path.join(tmp, "defaults.h5")
        ENV["SCOPE_PROFILER_DEBUG"] = "finalize"
        out, err = run(MPIRUN + [CLI, "run", "-o", path, "--", PROXY] + ARGS)
        del ENV["SCOPE_PROFILER_DEBUG"]
        check_profile("defaults", path, plain_out, out, err)
        check_costs(path, err)
        if SFX:
            print("note: %s runs the default settings only (the throttle cases are the "
                  "default family's)" % FAMILY)
            return finish(tmp)

        path = os.path.join(tmp, "everything.h5")
        out, err = run(MPIRUN + [CLI, "run", "-o", path, "--throttle-calls", "0", "--", PROXY] + ARGS)
        throttled = check_profile("--throttle-calls 0", path, plain_out, out, err)
        check(throttled == 0, "--throttle-calls 0: every call is an event (%d throttled)" % throttled)

        # Auto-throttle surely engaged: the sum still holds, with calls off the timeline.
        path = os.path.join(tmp, "throttled.h5")
        out, err = run(MPIRUN + [CLI, "run", "-o", path, "--throttle-calls", "100",
                                 "--throttle-mean", "1ms", "--", PROXY] + ARGS)
        throttled = check_profile("--throttle-calls 100", path, plain_out, out, err)
        check(throttled > 0, "--throttle-calls 100: calls off the timeline (%d)" % throttled)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return finish(tmp)


def finish(tmp):
    shutil.rmtree(tmp, ignore_errors=True)
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        return 1
    print("proxy e2e (%s): OK" % FAMILY)
    return 0


if __name__ == "__main__":
    sys.exit(main())
