#!/bin/bash
# How long `scope-profiler run` takes to finish a killed MPI job: R ranks
# (oversubscribed) each record E calls, then SIGTERM goes to mpirun (the
# walltime kill; orted SIGKILLs the launchers 1 s later, the detached
# finishers go on). Measured from the kill: all parts written (each rank's
# spill converted) and the merged output in place (rank 0's merge). The
# target: under 30 s (Slurm's default grace) for 64 ranks x 1M events.
# usage: launcher-finish.sh [RANKS_LIST [EVENTS_LIST]]   (default "8 32 64" "100000 1000000")
# MPIRUN_ARGS adds mpirun options, e.g. "--mca odls_base_sigkill_timeout 30"
# (launchers and mpirun live 30 s, as under Slurm: with the default 1 s,
# mpirun exits while slow dumps still run, and Open MPI then ends those
# ranks, which shows as NO with their counts).
set -euo pipefail
build=${SP_BUILD_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)/build}
cli="$build/tools/scope-profiler"; prog="$build/tests/bench/launcher/bench-finish"
py=${SP_PYTHON:-python3}
command -v mpirun >/dev/null || { echo "FAIL: mpirun not found"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_rmaps_base_oversubscribe=1
ranks_list=${1:-"8 32 64"}; events_list=${2:-"100000 1000000"}
work=$(mktemp -d "${TMPDIR:-/tmp}/launcher-finish.XXXXXX"); trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }

printf '%6s %9s %10s %10s %8s\n' ranks events parts_s output_s verified
for R in $ranks_list; do
  for E in $events_list; do
    d="$work/r$R-e$E"; mkdir -p "$d"
    # shellcheck disable=SC2086
    setsid mpirun -n "$R" ${MPIRUN_ARGS:-} "$cli" run -q -o "$d/out.h5" --merge-wait 60s -- "$prog" "$E" "$d" \
      > "$d/log" 2>&1 &
    job=$!
    for _ in $(seq 3000); do
      [ "$(find "$d" -name 'ready.*' -size +0 | wc -l)" = "$R" ] && break; sleep 0.1
    done
    t0=$(now); kill -TERM $job
    tparts=""; tout=""
    for _ in $(seq 3000); do
      np=$(find "$d" -name 'out.h5.part*' | wc -l)
      [ -z "$tparts" ] && [ "$np" = "$R" ] && tparts=$(now)
      if [ -e "$d/out.h5" ] && [ "$np" = 0 ]; then tout=$(now); break; fi
      sleep 0.05
    done
    set +e; timeout 30 tail --pid=$job -f /dev/null || kill -KILL $job; wait $job 2>/dev/null; set -e
    [ -n "$tout" ] || { ls "$d"; tail "$d/log"; echo "FAIL: no output for $R x $E"; exit 1; }
    ok=$($py - "$d/out.h5" "$R" "$E" <<'PY' 2>/dev/null || echo n/a
import sys, h5py
f = h5py.File(sys.argv[1], 'r'); R, E = int(sys.argv[2]), int(sys.argv[3])
names = [n.decode() if isinstance(n, bytes) else n for n in f['region_table/names'][()]]
i = f['rank_region_index']
got = {int(r): int(c) for g, r, c in zip(i['region_ids'][()], i['ranks'][()], i['event_counts'][()])
       if names[g] == 'e'}
m = f['metadata'].attrs
bad = {r: got.get(r) for r in range(R) if got.get(r) != E}
print('yes' if not bad else 'NO(%s;missing=%s)' % (','.join(f'{r}:{c}' for r, c in bad.items()),
                                                   m.get('missing_ranks', '')))
PY
)
    parts_s=$([ -n "$tparts" ] && echo "$tparts - $t0" | bc || echo "-")
    out_s=$(echo "$tout - $t0" | bc)
    printf '%6s %9s %10s %10s %8s\n' "$R" "$E" "$parts_s" "$out_s" "$ok"
    case $ok in yes) ;; *) grep -v '^\[' "$d/log" | head -5 ;; esac
    echo "{\"bench\": \"launcher-finish\", \"ranks\": $R, \"events_per_rank\": $E, \"parts_s\": \"$parts_s\", \"output_s\": $out_s, \"verified\": \"$ok\"}"
    rm -rf "$d"
  done
done
