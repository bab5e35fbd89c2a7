#!/bin/bash
# `mpirun -n 3 scope-profiler run -- ./app` finishes the job: after a SIGTERM
# to the job's process group each rank's launcher converts its rank's spill
# to a part and rank 0's launcher merges them into the one output (exact
# per-rank counts), also when orted SIGKILLs the launchers 1 s after the
# SIGTERM (Open MPI's default); a rank that left nothing is listed as
# missing, in the file and on stderr; exit() without MPI_Finalize is merged
# too; a normal MPI_Finalize is left alone; a program wrapped by a shell
# on every rank is finished from its own spill.
# Under MPICH (Hydra: SIGTERM to mpiexec is forwarded to every rank) cases
# 1, 2, 4 and 5 run; 3 and 3b do not: after a rank's death Hydra SIGKILLs
# the other ranks' launchers at once, with no SIGTERM to pass on, so their
# programs never dump (docs/MPI.md, "Hydra").
set -euo pipefail
py=${SP_PYTHON:?}
build=${SP_BUILD_DIR:?}; src=${SP_SOURCE_DIR:?}
source "$src/tests/lib/mpi.sh"  # once per MPI family
prog="$build/tests/launcher/launch-mpi$sp_sfx"; cli="$build/tools/scope-profiler"
check="$src/tests/resilience/check_counts.py"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; cd "$work"
NP=3 K=50
fail() { echo "FAIL: $*"; exit 1; }
counts() {  # NAME ARGS...: check_counts on NAME/out.h5, the job's files and log if not
  local name=$1; shift
  $py "$check" "$name/out.h5" "$@" || { ls -la "$name"; grep -v '^\[' "$name/log"; fail "$name: counts"; }
}

job_bg() {  # NAME "MPIRUN OPTS" RUN-OPTS...: the job in the background, pid in $job
  local name=$1 mpi=$2; shift 2
  rm -rf "$name"; mkdir "$name"
  # shellcheck disable=SC2086
  setsid mpirun -n $NP $mpi "$cli" run -o "$work/$name/out.h5" "$@" -- "$prog" $K "$work/$name" wait \
    > "$name/log" 2>&1 &
  job=$!
}
wait_ready() {  # NAME: every rank in its waiting loop
  for _ in $(seq 300); do
    [ "$(find "$1" -name 'ready.*' -size +0 | wc -l)" = $NP ] && return 0; sleep 0.1
  done
  cat "$1/log"; fail "$1: ranks never got ready"
}
wait_job() {  # NAME: the output and no part file (the finish may outlive mpirun), then mpirun's end
  for _ in $(seq 900); do
    [ -e "$1/out.h5" ] && [ -z "$(ls "$1" | grep '\.part')" ] && break; sleep 0.1
  done
  # After a rank is SIGKILLed, mpirun can hang in its abort: ended here.
  set +e; timeout 60 tail --pid=$job -f /dev/null || kill -KILL $job; wait $job; set -e
  [ -e "$1/out.h5" ] || { ls "$1"; cat "$1/log"; fail "$1: no out.h5 from the launchers"; }
}
expect() {  # per rank (those given, default all): K steps and barriers, init, comm_rank, then $1
  local extra=$1 e="{" r; shift
  for r in ${@:-$(seq 0 $((NP - 1)))}; do
    e+="('step', $r): $K, ('MPI_Barrier', $r): $K, ('MPI_Init', $r): 1, ('MPI_Comm_rank', $r): 1, "
    e+=$(eval "echo \"$extra\"")
  done
  echo "$e}"
}
meta() {  # FILE KEY: a metadata value, or "absent"
  $py -c "import h5py,sys; m=h5py.File(sys.argv[1],'r')['metadata'].attrs
v=m.get(sys.argv[2]); print('absent' if v is None else (v.decode() if isinstance(v,bytes) else v))" "$1" "$2"
}

# 1. The walltime kill with Open MPI's defaults: SIGTERM to the process
# group, orted SIGKILLs the launchers 1 s later; the detached finish still
# writes one merged file.
job_bg term ""; wait_ready term; kill -TERM -- -$job; wait_job term
counts term "$(expect "('waiting', \$r): 1, ")" partial=1 signal=15 ranks=$NP
[ "$(meta term/out.h5 missing_ranks)" = absent ] || fail "term: missing_ranks"
[ -z "$(ls term | grep spill)" ] || { ls term; fail "term: spill files left"; }
[ "$(grep -c 'SIGTERM: passed on to' term/log)" = 1 ] || { cat term/log; fail "term: one notice (rank 0)"; }
grep -q "^scope-profiler run: rank 0: SIGTERM: passed on to .* rank 0 merges the $NP ranks into $work/term/out.h5" term/log ||
  { cat term/log; fail "term: notice text"; }

# 2. orted waits 30 s before SIGKILL (the launchers live to the end, as under
# Slurm's grace): rank 0 says what it wrote; --verbose: every rank speaks.
job_bg verbose "--mca odls_base_sigkill_timeout 30" --verbose; wait_ready verbose
kill -TERM -- -$job; wait_job verbose
counts verbose "$(expect "('waiting', \$r): 1, ")" partial=1 signal=15 ranks=$NP
[ "$(grep -c 'SIGTERM: passed on to' verbose/log)" = $NP ] || { cat verbose/log; fail "verbose: a notice per rank"; }
grep -q "wrote $work/verbose/out.h5 ($NP of $NP ranks, $(( NP * (2 * K + 3) )) events, partial=1: stopped by SIGTERM)" verbose/log ||
  { cat verbose/log; fail "verbose: wrote line"; }

# 6. The walltime kill of a wrapped program (a job script's shell runs the
# MPI program on every rank): each launcher passes the SIGTERM to its
# program's process group, so the program, not only the shell, saves its
# events, and each launcher's finish takes the program's spill (found by
# the process tree's id) instead of the shell's empty one: one merged file
# with the exact counts, nothing left beside it.
rm -rf wrapped; mkdir wrapped
setsid mpirun -n $NP "$cli" run -o "$work/wrapped/out.h5" -- \
  bash -c "\"$prog\" $K \"$work/wrapped\" wait; true" > wrapped/log 2>&1 &
job=$!; wait_ready wrapped; kill -TERM -- -$job; wait_job wrapped
counts wrapped "$(expect "('waiting', \$r): 1, ")" partial=1 signal=15 ranks=$NP
[ -z "$(ls wrapped | grep -v '^out.h5$\|^log$\|^ready\.')" ] || { ls wrapped; fail "wrapped: files left"; }
pgrep -f "$work/wrapped" > /dev/null && { pgrep -af "$work/wrapped"; fail "wrapped: programs still run"; }

if [ "$sp_mpi_family" = mpich ]; then
  echo "note: a lost rank (3, 3b) not checked under MPICH (Hydra SIGKILLs the other launchers)"
else
# 3. Rank 1's launcher and program are SIGKILLed (a lost node); mpirun then
# stops the others itself: rank 0 waits --merge-wait, writes ranks 0 and 2
# and lists rank 1 as missing. (mpirun's own output ends with its abort, so
# stderr is checked in 3b.)
job_bg killed "" --merge-wait 3s; wait_ready killed
p1=$(cat killed/ready.1); l1=$(awk '{print $4}' /proc/$p1/stat)
kill -KILL $l1 $p1; wait_job killed
counts killed "$(expect "('waiting', \$r): 1, " 0 2)" partial=1 signal=15 ranks=$NP
[ "$(meta killed/out.h5 missing_ranks)" = 1 ] || fail "killed: missing_ranks = $(meta killed/out.h5 missing_ranks)"

# 3b. Rank 1 keeps nothing (no spill file: SPILL=0 SIGNALS=0) and the job is
# stopped; orted gives the launchers 30 s: rank 0 says which rank is missing.
rm -rf missing; mkdir missing
setsid mpirun --mca odls_base_sigkill_timeout 30 \
  -n 1 "$cli" run -o "$work/missing/out.h5" --merge-wait 3s -- "$prog" $K "$work/missing" wait : \
  -n 1 env SCOPE_PROFILER_SPILL=0 SCOPE_PROFILER_SIGNALS=0 "$cli" run -o "$work/missing/out.h5" -- "$prog" $K "$work/missing" wait : \
  -n 1 "$cli" run -o "$work/missing/out.h5" -- "$prog" $K "$work/missing" wait > missing/log 2>&1 &
job=$!; wait_ready missing; kill -TERM -- -$job; wait_job missing
counts missing "$(expect "('waiting', \$r): 1, " 0 2)" partial=1 signal=15 ranks=$NP
[ "$(meta missing/out.h5 missing_ranks)" = 1 ] || fail "missing: missing_ranks = $(meta missing/out.h5 missing_ranks)"
grep -q "out.h5: ranks 1 sent no data (none came for 3 s)" missing/log || { cat missing/log; fail "missing: stderr"; }
grep -q "wrote $work/missing/out.h5 (2 of $NP ranks" missing/log || { cat missing/log; fail "missing: wrote line"; }
fi

# 4. exit() without MPI_Finalize: each rank writes its own file at exit,
# rank 0's launcher merges them (complete) before mpirun returns (which
# reports the missing MPI_Finalize as an error itself). Under Hydra too:
# it SIGKILLs the other launchers, but each program, in its own process
# group, writes its file and each finisher survives.
rm -rf exit; mkdir exit
set +e; timeout 120 mpirun -n $NP "$cli" run -o "$work/exit/out.h5" -- "$prog" $K "$work/exit" exit > exit/log 2>&1
rc=$?; set -e
[ $rc != 124 ] || fail "exit: mpirun hung"
grep -q "wrote $work/exit/out.h5 ($NP of $NP ranks, $(( NP * (2 * K + 2) )) events, complete)" exit/log ||
  { cat exit/log; fail "exit: wrote line"; }
counts exit "$(expect "")" partial=0 ranks=$NP
[ "$(ls exit | grep -c '^out.h5.rank0000[0-2]$')" = $NP ] || fail "exit: the ranks' own files"

# 5. A normal MPI_Finalize: the library's file, untouched by the launchers.
rm -rf fin; mkdir fin
timeout 120 mpirun -n $NP "$cli" run -o "$work/fin/out.h5" -- "$prog" $K "$work/fin" finalize > fin/log 2>&1 ||
  { cat fin/log; fail "finalize: status"; }
counts fin "$(expect "")" ranks=$NP
[ "$(meta fin/out.h5 partial)" = absent ] || fail "finalize: rewritten by the launcher"
[ "$(ls fin | grep -c 'part\|spill\|rank0')" = 0 ] || { ls fin; fail "finalize: files left"; }
! grep -q "scope-profiler run:" fin/log || { cat fin/log; fail "finalize: launcher lines"; }
echo "launcher mpi: OK"
