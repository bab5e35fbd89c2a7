#!/bin/bash
# SPDX-License-Identifier: MIT
# The accessor-heavy C++ proxy app (examples/proxy, LULESH-like: ~900 hook
# calls per element per step, ~440 functions) on 1 rank and on 8 ranks
# (oversubscribed), the same total mesh, in one run:
#   plain       proxy-plain (no instrumentation)
#   empty       the instrumented binary on glibc's empty hooks (the reference)
#   defaults    under `scope-profiler run` with its default settings
#   patch       under `scope-profiler run --patch` (a row with a note when
#               `run --help` does not list --patch)
#   everything  under `scope-profiler run --throttle-calls 0` (every call recorded)
# For each: wall time of the whole mpirun (start-up, steps, MPI_Finalize and
# the profile write; median of RUNS interleaved rounds, each round in a
# rotated order, and the median of the ratios to the same round's empty
# run), rank 0's time of the step loop (printed by proxy), the output file
# size, peak RSS per rank (GNU time around each rank) and its excess over
# the empty-hooks run of the same rank, and the profiler's finalize time
# (metadata profiler_finalize_ns, h5py), and the footer's overhead estimate
# (the median over the rounds' files) against what the run paid (the median
# excess over the same round's empty run). Prints a table and one JSON line per
# variant; summarize-goals.py reads the goals from them. Never fails on a
# goal; exits non-zero only when a run fails.
# Three shapes: 1 rank and 8 ranks at -i ITER ("short": a job of half a
# second, where the per-rank start-up and finalize weigh most), and 8 ranks
# at -i ITER_LONG ("long", the cycle count of the LULESH runs the issue
# measured: -i 20-30), without the everything-recorded variant (GBs).
#   env: SP_BUILD_DIR, SP_BENCH_PROXY_RUNS (5), SP_BENCH_PROXY_RUNS_8SHORT and
#        SP_BENCH_PROXY_RUNS_1SHORT (9 each: the short shapes' rounds),
#        SP_BENCH_PROXY_ITER (4),
#        SP_BENCH_PROXY_ITER_LONG (30; 0: no long shape),
#        SP_BENCH_PROXY_S1 (20: -s on 1 rank), SP_BENCH_PROXY_S8 (10: -s on 8 ranks),
#        SP_BENCH_PROXY_PML (unset: Open MPI's own choice; e.g. ob1: OMPI_MCA_pml
#        for every run, and a "pml" key in the JSON lines).
# Why a PML: Debian's Open MPI 4.1 selects the cm PML when libpsm2 is
# installed (a dependency of the package), and libpsm2's constructor, run by
# dlopen inside MPI_Init, naps ~0.2 s on a machine without Omni-Path
# hardware, holding the dynamic loader's lock (perf: usleep under
# call_init < dl_open_worker < mca_base_component_repository_open). Every
# variant pays it, so the ratios of a short job are diluted by it; the
# `proxy-ob1` benchmark measures the same without it (docs/HOOKS.md).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${SP_BUILD_DIR:-$here/../../../build}
cli="$build/tools/scope-profiler"
plain="$build/examples/proxy/proxy-plain"
proxy="$build/examples/proxy/proxy"
py=${SP_PYTHON:?}
command -v mpirun >/dev/null || { echo "FAIL: mpirun not found (openmpi-bin)"; exit 1; }
[ -x /usr/bin/time ] || { echo "SKIP: GNU time (/usr/bin/time) not installed"; exit 77; }
for f in "$cli" "$plain" "$proxy"; do
  [ -x "$f" ] || { echo "FAIL: not built: $f"; exit 1; }
done
runs=${SP_BENCH_PROXY_RUNS:-5}
# The 8-rank short job moves by 10-15 % from run to run (its fixed costs
# are collective rounds on a crowded node): more rounds for its medians.
runs8=${SP_BENCH_PROXY_RUNS_8SHORT:-9}
# So does the 1-rank short job's excess, a small difference of two walls
# (0.05-0.10 s of ~0.5 s), which its overhead estimate is compared with.
runs1=${SP_BENCH_PROXY_RUNS_1SHORT:-9}
iter=${SP_BENCH_PROXY_ITER:-4}
iter_long=${SP_BENCH_PROXY_ITER_LONG:-30}
# The profiler's defaults are what is measured: nothing inherited.
unset LD_PRELOAD $(compgen -e | grep '^SCOPE_PROFILER_')
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
pml=${SP_BENCH_PROXY_PML:-}
if [ -n "$pml" ]; then export OMPI_MCA_pml=$pml; else unset OMPI_MCA_pml; fi
work=$(mktemp -d /tmp/sp-bench-proxy.XXXXXX)
trap 'rm -rf "$work"' EXIT

variants="plain empty defaults patch everything"
patch_note=""
if ! "$cli" run --help 2>&1 | grep -q -- '--patch'; then
  patch_note="scope-profiler run --help lists no --patch: not measured"
  variants="plain empty defaults everything"
fi

# one NP S VARIANT ROUND ITER: one mpirun; appends "variant round wall loop"
# to $work/times.NP and leaves rss.NP.VARIANT.ROUND.RANK (KiB) and VARIANT.h5.
one() {
  local np=$1 s=$2 v=$3 i=$4 it=$5 cmd
  case $v in
    plain) cmd=("$plain") ;;
    empty) cmd=("$proxy") ;;
    defaults) cmd=("$cli" run -q -o "$work/$v.h5" -- "$proxy") ;;
    patch) cmd=("$cli" run -q --patch -o "$work/$v.h5" -- "$proxy") ;;
    everything) cmd=("$cli" run -q --throttle-calls 0 -o "$work/$v.h5" -- "$proxy") ;;
  esac
  rm -f "$work/$v.h5"
  local t0 t1
  t0=$(date +%s.%N)
  # GNU time wraps each rank (exec: the launcher execs the program, so
  # %M is the rank's own peak RSS).
  mpirun --oversubscribe -n "$np" bash -c \
    'exec /usr/bin/time -f %M -o "$0.$OMPI_COMM_WORLD_RANK" "$@"' "$work/rss.$np.$v.$i" \
    "${cmd[@]}" -s "$s" -i "$it" -q > "$work/out.$v" 2> "$work/err.$v" ||
    { cat "$work/err.$v"; echo "FAIL: $v on $np rank(s)"; exit 1; }
  t1=$(date +%s.%N)
  local loop
  loop=$(awk '/^proxy: elapsed/ { print $3 }' "$work/err.$v")
  echo "$v $i $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }') ${loop:-nan}" >> "$work/times.$np"
  if [ "$v" = plain ]; then
    cp "$work/out.$v" "$work/out.ref"
  elif ! cmp -s "$work/out.$v" "$work/out.ref"; then
    echo "WARNING: $v printed another checksum than the plain binary:"; cat "$work/out.$v"
    echo "$v" >> "$work/bad.$np"
  fi
}

# facts NP VARIANT: file size, finalize time, calls (events + throttled) and
# events of VARIANT.h5, read with h5py (the columns' sums: no statistics).
facts() {
  local f="$work/$2.h5"
  [ -f "$f" ] || { echo "$2 - - - - -"; return; }
  # The profiler's own estimate of what it cost (summary footer, seconds).
  local est
  est=$("$cli" summary "$f" 2>/dev/null | sed -n 's/^profiler overhead estimate: .* = \([0-9.]*\) s.*/\1/p')
  $py - "$f" "$2" "${est:--}" <<'PY'
import os, sys, h5py
f = h5py.File(sys.argv[1], "r")
idx = f["rank_region_index"]
ev = int(idx["event_counts"][:].sum())
thr = int(idx["throttled_counts"][:].sum()) if "throttled_counts" in idx else 0
fin = f["metadata"].attrs.get("profiler_finalize_ns")
print(sys.argv[2], os.path.getsize(sys.argv[1]), "-" if fin is None else int(fin), ev + thr, ev,
      sys.argv[3])
PY
}

cfgs=("1 ${SP_BENCH_PROXY_S1:-20} $iter short" "8 ${SP_BENCH_PROXY_S8:-10} $iter short")
[ "$iter_long" -gt 0 ] && cfgs+=("8 ${SP_BENCH_PROXY_S8:-10} $iter_long long")
for cfg in "${cfgs[@]}"; do
  set -- $cfg
  np=$1 s=$2 it=$3 shape=$4
  r=$runs
  [ "$np" = 8 ] && [ "$shape" = short ] && r=$runs8
  [ "$np" = 1 ] && [ "$shape" = short ] && r=$runs1
  : > "$work/times.$np"
  : > "$work/facts.$np"
  rm -f "$work/bad.$np" "$work"/rss.*
  vs=($variants)
  [ "$shape" = long ] && vs=(${variants% everything})
  for i in $(seq "$r"); do
    k=$(( (i - 1) % ${#vs[@]} ))
    for v in "${vs[@]:$k}" "${vs[@]:0:$k}"; do
      one "$np" "$s" "$v" "$i" "$it"
      # The files of the last round give the size, finalize time and counts;
      # the overhead estimate is taken from every round's file (each process
      # measures its counted call at start, and that moves from run to run),
      # but everything's only from the last (its summary takes seconds).
      if [ "$v" != plain ] && [ "$v" != empty ] && { [ "$i" = "$r" ] || [ "$v" != everything ]; }; then
        facts "$np" "$v" >> "$work/facts.$np"
      fi
    done
  done
  $py - "$work" "$np" "$s" "$it" "$r" "$patch_note" "$shape" "${pml:-default}" <<'PY'
import glob, json, os, statistics as st, sys
work, np_, s, it, runs, patch_note = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
shape, pml = sys.argv[7], sys.argv[8]
order = ["plain", "empty", "defaults", "patch", "everything"]
wall, loop = {}, {}
for line in open(os.path.join(work, "times.%d" % np_)):
    v, i, w, l = line.split()
    wall.setdefault(v, {})[int(i)] = float(w)
    loop.setdefault(v, []).append(float(l))
facts, ests = {}, {}
for line in open(os.path.join(work, "facts.%d" % np_)):  # rounds in order: the last one stays
    v, size, fin, calls, ev, est = line.split()
    facts[v] = dict(size=None if size == "-" else int(size), fin=None if fin == "-" else int(fin),
                    calls=None if calls == "-" else int(calls), ev=None if ev == "-" else int(ev))
    if est != "-":
        ests.setdefault(v, []).append(float(est))
for v, e in ests.items():
    facts[v].update(est=st.median(e), nest=len(e))  # against the median excess below
bad = set(open(os.path.join(work, "bad.%d" % np_)).read().split()) if os.path.exists(
    os.path.join(work, "bad.%d" % np_)) else set()
rss = {}  # variant -> rank -> median KiB over the rounds
for v in wall:
    per = {}
    for path in glob.glob(os.path.join(work, "rss.%d.%s.*" % (np_, v))):
        rank = int(path.rsplit(".", 1)[1])
        try:
            per.setdefault(rank, []).append(int(open(path).read().split()[-1]))
        except (ValueError, IndexError):
            pass
    rss[v] = {r: st.median(k) for r, k in per.items()}
emp = wall["empty"]
every = facts.get("everything", {}).get("size")
print("proxy -s %d -i %d on %d rank(s) (%d elements in all; shape %s; PML %s): wall of mpirun "
      "[s], median of %d interleaved rounds; paired = median of the ratios to the same round's "
      "empty-hooks run" % (s, it, np_, np_ * s ** 3, shape, pml, runs))
print("%-11s %8s %8s %8s %7s %7s %8s %9s %8s %10s %9s %11s %11s" % (
    "variant", "median", "min", "max", "ratio", "paired", "loop_s", "file_MiB", "file_%",
    "rss_MiB", "over_app", "finalize_s", "calls"))
recs = []
for v in order:
    if v not in wall:
        if v == "patch":
            print("%-11s %s" % (v, patch_note))
            recs.append({"benchmark": "proxy", "metric": "proxy_wall_s", "variant": v,
                         "ranks": np_, "shape": shape, "pml": pml,
                         "args": "-s %d -i %d" % (s, it), "note": patch_note})
        continue
    w = list(wall[v].values())
    med = st.median(w)
    paired = st.median(wall[v][i] / emp[i] for i in wall[v] if i in emp)
    f = facts.get(v, {})
    r = rss.get(v, {})
    over = max((r[k] - rss["empty"].get(k, r[k])) for k in r) / 1024.0 if r else None
    rec = {"benchmark": "proxy", "metric": "proxy_wall_s", "variant": v, "ranks": np_,
           "shape": shape, "pml": pml, "args": "-s %d -i %d" % (s, it), "runs": runs,
           "median": round(med, 4),
           "min": round(min(w), 4), "max": round(max(w), 4),
           "ratio_to_empty_hooks": round(med / st.median(emp.values()), 4),
           "paired_ratio_to_empty_hooks": round(paired, 4),
           "loop_s_rank0": round(st.median(loop[v]), 4),
           "rss_max_mib": round(max(r.values()) / 1024.0, 1) if r else None,
           "rss_over_app_mib": round(over, 1) if over is not None else None,
           "rss_mib_per_rank": [round(r[k] / 1024.0, 1) for k in sorted(r)],
           "checksum_ok": v not in bad}
    if f.get("size") is not None:
        rec.update(file_bytes=f["size"], calls=f["calls"], events=f["ev"],
                   finalize_s=round(f["fin"] / 1e9, 4) if f.get("fin") is not None else None)
        if every:
            rec["file_pct_of_everything"] = round(100.0 * f["size"] / every, 3)
        # The footer's estimate against what the run paid: the excess wall
        # over the same round's empty-hooks run (the median over the rounds:
        # a slow minute of the VM slows both runs of a round), per rank (the
        # estimate sums over ranks; the ranks ran side by side on shared cores).
        if f.get("est") is not None:
            excess = st.median(wall[v][i] - emp[i] for i in wall[v] if i in emp)
            paid = excess * min(np_, os.cpu_count() or 1)
            rec.update(overhead_estimate_s=f["est"], overhead_estimate_files=f["nest"],
                       overhead_paid_s=round(paid, 4),
                       estimate_to_paid=round(f["est"] / paid, 3) if paid > 0 else None)
    recs.append(rec)
    fmt = lambda x, p: ("%%.%df" % p) % x if isinstance(x, (int, float)) else "-"
    print("%-11s %8.3f %8.3f %8.3f %7.3f %7.3f %8s %9s %8s %10s %9s %11s %11s" % (
        v, med, min(w), max(w), rec["ratio_to_empty_hooks"], paired, fmt(rec["loop_s_rank0"], 3),
        fmt(f["size"] / 1048576.0 if f.get("size") else None, 1),
        fmt(rec.get("file_pct_of_everything"), 2), fmt(rec["rss_max_mib"], 1),
        fmt(rec["rss_over_app_mib"], 1), fmt(rec.get("finalize_s"), 3),
        rec.get("calls", "-")))
for rec in recs:
    if rec.get("overhead_estimate_s") is not None:
        print("  %s: overhead estimate %.3f s (median of %d files), paid %.3f s (excess wall x "
              "min(ranks, cores)): %s x" % (
            rec["variant"], rec["overhead_estimate_s"], rec["overhead_estimate_files"],
            rec["overhead_paid_s"], rec.get("estimate_to_paid")))
print("ratio/paired: to the empty-hooks run; rss_MiB: worst rank's peak RSS; over_app: worst "
      "rank's excess over the same rank's empty-hooks run; calls: events + throttled (file)")
if bad:
    print("WARNING: another checksum than the plain binary: %s" % sorted(bad))
for rec in recs:
    print(json.dumps(rec))
PY
  echo
done
exit 0
