#!/bin/bash
# One function is one region on every rank: a real 3-rank mpirun job of a
# PIE program built with -finstrument-functions -g (each rank loads it at
# its own address) is killed with SIGTERM; `recover` and `merge` of the
# ranks' spill files name each function once, with exact counts per rank,
# and its definition file and line.
set -euo pipefail
py=${SP_PYTHON:?}
build=${SP_BUILD_DIR:?}; src=${SP_SOURCE_DIR:?}
source "$src/tests/lib/mpi.sh"  # once per MPI family
prog="$build/tests/resilience/names-mpi$sp_sfx"; cli="$build/tools/scope-profiler"
lib="$sp_mpi_lib"; source="$src/tests/resilience/names-prog.c"
counts="$src/tests/resilience/check_counts.py"; names="$src/tests/resilience/check_names.py"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; cd "$work"
NP=3 K=40

mkdir job
SCOPE_PROFILER_OUTPUT="$work/job/out.h5" SCOPE_PROFILER_THROTTLE_CALLS=0 \
  mpirun --oversubscribe -n $NP -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_THROTTLE_CALLS \
  -x SCOPE_PROFILER_OUTPUT "$prog" $K "$work/job" wait > job/log 2>&1 &
job=$!
for _ in $(seq 600); do [ "$(ls job | grep -c '^ready\.')" = $NP ] && break; sleep 0.1; done
[ "$(ls job | grep -c '^ready\.')" = $NP ] || { cat job/log; echo "FAIL: ranks never got ready"; exit 1; }
sleep 0.2  # the ready files are written: their pids are complete
# SIGTERM to every rank at once (what the batch system's kill delivers to
# them), in one kill(1): mpirun's reaction to the first death cannot
# overtake the others' signals (that race is test-mpi.sh's subject).
pids=(); for r in $(seq 0 $((NP - 1))); do pids+=("$(cat job/ready.$r)"); done
kill -TERM "${pids[@]}"
wait "$job" || true
n=$(ls job | grep -c '^out.h5.spill.rank') || true
[ "$n" = $NP ] || { ls job; cat job/log; echo "FAIL: $n spill files, want $NP"; exit 1; }

fn="" all=""
for r in $(seq 0 $((NP - 1))); do
  f="('main', $r): 1, ('middle', $r): $K, ('leaf', $r): $((4 * K)), ('wait_here', $r): 1, "
  fn+=$f
  all+="$f('MPI_Init', $r): 1, ('MPI_Comm_rank', $r): 1, ('MPI_Barrier', $r): $K, "
done
for cmd in recover merge; do
  "$cli" $cmd job/out.h5.spill.rank* -o job/$cmd.h5 > /dev/null
  $py "$counts" job/$cmd.h5 "{$all}" partial=1 signal=15 ranks=$NP
  $py "$names" lines job/$cmd.h5 "$source" "{$fn}"
done
echo "names across ranks: OK"
