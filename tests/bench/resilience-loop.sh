#!/bin/bash
# SPDX-License-Identifier: MIT
# The SIGTERM loop (a benchmark script, not a test): a 3-rank mpirun job of
# tests/resilience/resil-mpi is killed while every rank waits, RUNS times,
# and each run's spills must recover to exactly the events recorded, with
# signal 15 (as in tests/resilience/test-mpi.sh). Prints the pass count per
# way of killing and keeps the failed runs' folders.
#   tests/bench/resilience-loop.sh [BUILD_DIR] [RUNS] [WAYS] [LOAD]
# WAYS: space-separated from group (SIGTERM to mpirun's process group:
# Open MPI gives each rank a group of its own, so this reaches mpirun
# alone), session (every process of the job, as slurmstepd signals them),
# mpirun (SIGTERM to mpirun's pid), abort (rank 1 calls MPI_Abort; mpirun
# kills the others). LOAD: busy loops run meanwhile (default 2, on 2 cores).
# Example: tests/bench/resilience-loop.sh build 100 "group session mpirun" 2
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-build}" && pwd); runs=${2:-100}; ways=${3:-group session mpirun}; load=${4:-2}
# The tests' Python (with h5py), as meson found it for this build.
py=${SP_PYTHON:-$(grep -o '"SP_PYTHON": "[^"]*"' "$build/meson-info/intro-tests.json" | head -1 | cut -d'"' -f4)}
prog="$build/tests/resilience/resil-mpi"; cli="$build/tools/scope-profiler"
lib="$build/preload/libscope-profiler.so"; check="$here/tests/resilience/check_counts.py"
command -v mpirun >/dev/null || { echo "mpirun not found"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_rmaps_base_oversubscribe=1
NP=3 K=50
work=$(mktemp -d /tmp/resilience-loop.XXXXXX)
busy=()
for _ in $(seq "$load"); do (while :; do :; done) & busy+=($!); done
trap 'kill "${busy[@]}" 2>/dev/null' EXIT

expect() {  # the events of every rank; $1: the last region of rank 1
  local e="{" r
  for r in $(seq 0 $((NP - 1))); do
    e+="('step', $r): $K, ('MPI_Barrier', $r): $K, ('MPI_Init', $r): 1, ('MPI_Comm_rank', $r): 1, "
    if [ "$r" = 1 ]; then e+="('$1', 1): 1, "; else e+="('waiting', $r): 1, "; fi
  done
  echo "$e}"
}

kill_session() {  # SID SIG: every process of session SID (no procps needed)
  local f line rest pid
  for f in /proc/[0-9]*/stat; do
    { read -r line < "$f"; } 2>/dev/null || continue
    rest=${line##*) }; read -r -a fields <<< "$rest"  # state ppid pgrp session ...
    pid=${f#/proc/}; pid=${pid%/stat}
    [ "${fields[3]}" = "$1" ] && kill -"$2" "$pid" 2>/dev/null
  done
  return 0
}

one() {  # WAY DIR: one job, killed the WAY way; 0 if its data is all there
  local way=$1 d=$2 job
  mkdir -p "$d"
  SCOPE_PROFILER_OUTPUT="$d/out.h5" SCOPE_PROFILER_MAX_MEMORY=1M \
    setsid mpirun -n $NP -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_OUTPUT \
    -x SCOPE_PROFILER_MAX_MEMORY "$prog" $K "$d" "$([ "$way" = abort ] && echo abort || echo wait)" \
    > "$d/log" 2>&1 &
  job=$!
  local want=$NP; [ "$way" = abort ] && want=$((NP - 1))
  for _ in $(seq 600); do
    [ "$(ls "$d" | grep -c '^ready\.')" -ge "$want" ] && break; sleep 0.1
  done
  case $way in
    group) kill -TERM -- -$job ;;
    session) kill_session $job TERM ;;
    mpirun) kill -TERM $job ;;
  esac
  timeout 60 tail --pid=$job -f /dev/null; wait $job 2>/dev/null
  local inputs=("$d"/out.h5.spill.rank*) last=waiting
  if [ "$way" = abort ]; then inputs=("$d/out.h5.rank00001" "$d/out.h5.spill.rank00000" \
    "$d/out.h5.spill.rank00002"); last=MPI_Abort; fi
  "$cli" recover "${inputs[@]}" -o "$d/rec.h5" > "$d/recover.log" 2>&1 &&
    $py "$check" "$d/rec.h5" "$(expect $last)" partial=1 signal=15 ranks=$NP > "$d/check.log" 2>&1
}

status=0
for way in $ways; do
  pass=0 t0=$(date +%s)
  for i in $(seq "$runs"); do
    if one "$way" "$work/$way.$i"; then pass=$((pass + 1)); rm -rf "$work/$way.$i"
    else echo "$way run $i failed: $work/$way.$i ($(tail -1 "$work/$way.$i/check.log" \
      "$work/$way.$i/recover.log" 2>/dev/null | tr '\n' ' ' | cut -c1-200))"; fi
  done
  echo "$way: $pass of $runs runs recovered every event with signal 15" \
    "(load $load busy loops, $(( $(date +%s) - t0 )) s)"
  echo "{\"metric\": \"resilience_loop_$way\", \"passed\": $pass, \"runs\": $runs, \"load\": $load}"
  [ "$pass" = "$runs" ] || status=1
done
[ $status = 0 ] && rm -rf "$work"
exit $status
