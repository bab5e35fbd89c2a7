#!/bin/bash
# Issue 17's signal matrix: SIGTERM, SIGINT, SIGHUP, SIGXCPU, SIGSEGV and SIGKILL hit a
# program under `scope-profiler run`, serial and under `mpirun -n 3 scope-profiler run`.
# Each case ends with OUT holding the exact counts of every rank, partial=1 and the signal,
# the status of `run` (mpirun) 128+S and no spill or part file left, written by the
# launcher alone; only when SIGKILL takes the launcher and its finisher too (a cgroup
# kill) do the spill files stay, and the command the launcher's notice names writes OUT.
# docs/RESILIENCE.md. Open MPI only: after a rank's death Hydra SIGKILLs the other
# launchers, so their programs never dump (test-mpi.sh).
set -euo pipefail
py=${SP_PYTHON:?}
build=${SP_BUILD_DIR:?}; src=${SP_SOURCE_DIR:?}
source "$src/tests/lib/mpi.sh"
[ "$sp_mpi_family" = openmpi ] || { echo "SKIP: Open MPI only (Hydra, see above)"; exit 77; }
cli="$build/tools/scope-profiler"; check="$src/tests/resilience/check_counts.py"
serial="$build/tests/launcher/launch-serial"; mpi="$build/tests/launcher/launch-mpi$sp_sfx"
export OMPI_MCA_btl=self,vader
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; cd "$work"
ulimit -c 0  # the SIGSEGV cases: no core files
# --max-memory 1M spills every 4096 events: OUT is a spilled prefix plus the dump, and a
# SIGKILL leaves exactly the spilled events less the calls open then (serial: 8191 "iter"
# of the first 2 x 4096 of K + 2, "outer" open; MPI: 2 x 4096 of 2 KM + 3 per rank, the
# first KM - 1 steps and barriers, none open).
K=10000 KM=4096 NP=3
fail() { echo "FAIL: $*"; exit 1; }

run_bg() {  # NAME serial|mpi HOW [ARG]: the run in the background, its pid in $job
  local name=$1 kind=$2; shift 2
  rm -rf "$name"; mkdir "$name"
  # A background job of a script ignores SIGINT (bash): give it back to the launcher.
  local run=(env --default-signal=INT "$cli" run -o "$work/$name/out.h5" --max-memory 1M --)
  if [ "$kind" = serial ]; then
    "${run[@]}" "$serial" $K "$work/$name" "$@" > "$name/log" 2>&1 &
  else
    mpirun -n $NP "${run[@]}" "$mpi" $KM "$work/$name" "$@" > "$name/log" 2>&1 &
  fi
  job=$!
}
ready() {  # NAME N: N programs in their waiting loop; their pids in $progs, their
  # launchers' in $launchers, the launchers' finishers' in $finishers
  local p l f n=0
  for _ in $(seq 300); do
    n=$(find "$1" -name 'ready*' -size +0 | wc -l); [ "$n" = "$2" ] && break; sleep 0.1
  done
  [ "$n" = "$2" ] || { cat "$1/log"; fail "$1: $n of $2 programs ready"; }
  progs=$(cat "$1"/ready*) launchers='' finishers=''
  for p in $progs; do
    l=$(awk '{print $4}' "/proc/$p/stat")
    f=$(tr ' ' '\n' < "/proc/$l/task/$l/children" | grep -vx "$p" || true)
    [ -n "$f" ] || fail "$1: no finisher beside program $p"
    launchers+=" $l" finishers+=" $f"
  done
}
wait_run() {  # NAME WANT: the run (mpirun) ends with status WANT
  if ! timeout 60 tail --pid=$job -f /dev/null; then
    kill -KILL $job; cat "$1/log"; fail "$1: the run did not end"
  fi
  local rc; set +e; wait $job; rc=$?; set -e
  [ "$rc" = "$2" ] || { cat "$1/log"; fail "$1: the run exited $rc, want $2"; }
}
wait_out() {  # NAME: OUT written, no part left (rank 0's finisher may outlive mpirun)
  for _ in $(seq 300); do
    [ -e "$1/out.h5" ] && [ -z "$(ls "$1" | grep '\.part')" ] && return 0; sleep 0.1
  done
  ls "$1"; cat "$1/log"; fail "$1: no out.h5"
}
written() {  # NAME EXPECTED CHECK-OPTS...: exact counts, nothing left beside OUT
  local name=$1; shift
  $py "$check" "$name/out.h5" "$@" ||
    { ls "$name"; grep -v '^\[' "$name/log"; fail "$name: counts"; }
  [ -z "$(ls "$name" | grep -e spill -e '\.part')" ] || { ls "$name"; fail "$name: files left"; }
}
notice() {  # NAME SIG|none FALLBACK: the launcher's one notice line, or none
  if [ "$2" = none ]; then
    ! grep -q 'passed on to' "$1/log" || { cat "$1/log"; fail "$1: a notice without a signal"; }
    return 0
  fi
  [ "$(grep -c "SIG$2: passed on to" "$1/log")" = 1 ] || { cat "$1/log"; fail "$1: one notice"; }
  grep -qF "$3" "$1/log" || { cat "$1/log"; fail "$1: the notice names no fallback '$3'"; }
}
kill_all() {  # PID...: SIGKILL to all as at once (a cgroup kill), mpirun stopped meanwhile:
  # else its SIGTERM after the first launcher's death can reach a launcher not killed yet,
  # which passes it on, and that program dumps. (Not the processes stopped: a launcher's
  # death orphans its program's process group, and the kernel SIGHUPs a stopped one.)
  kill -STOP $job; kill -KILL "$@"; kill -CONT $job
}
per_rank() {  # N [waiting]: each rank's N steps and barriers, MPI_Init, MPI_Comm_rank
  local e="{" r
  for r in $(seq 0 $((NP - 1))); do
    e+="('step', $r): $1, ('MPI_Barrier', $r): $1, ('MPI_Init', $r): 1, ('MPI_Comm_rank', $r): 1, "
    [ $# = 1 ] || e+="('$2', $r): 1, "
  done
  echo "$e}"
}
t0=$SECONDS

# Serial. The termination signals go to the launcher, which passes them on; the
# program dumps, the launcher writes OUT and ends by the same signal.
for sig in TERM INT HUP XCPU; do
  n=$(kill -l $sig) c=serial-$sig o="$work/serial-$sig/out.h5"
  run_bg $c serial wait; ready $c 1; kill -$sig $launchers; wait_run $c $((128 + n))
  written $c "{'outer': 1, 'iter': $K, 'waiting': 1}" partial=1 signal=$n
  notice $c $sig "(if it is not: scope-profiler recover $o.spill.* -o $o)"
  grep -qF "wrote $o from $o.spill.pid$progs ($((K + 2)) events, partial=1: stopped by SIG$sig)" \
    $c/log || { cat $c/log; fail "$c: wrote line"; }
done
# SIGSEGV raised by the program (a crash), and sent to it by kill: status 139.
run_bg serial-SEGV-raise serial raise 11; wait_run serial-SEGV-raise 139
written serial-SEGV-raise "{'outer': 1, 'iter': $K}" partial=1 signal=11
notice serial-SEGV-raise none
run_bg serial-SEGV serial wait; ready serial-SEGV 1; kill -SEGV $progs; wait_run serial-SEGV 139
written serial-SEGV "{'outer': 1, 'iter': $K, 'waiting': 1}" partial=1 signal=11
# SIGKILL to the program alone (an OOM kill): no dump, the launcher writes the spilled
# events (the calls still open, "outer" and "waiting", are left out): signal -1.
c=serial-KILL o="$work/serial-KILL/out.h5"
run_bg $c serial wait; ready $c 1; kill -KILL $progs; wait_run $c 137
written $c "{'iter': 8191}" partial=1 signal=-1
grep -qF "wrote $o from $o.spill.pid$progs (8191 events, partial=1: no dump" $c/log ||
  { cat $c/log; fail "$c: wrote line"; }
# SIGKILL to the program, its launcher and the finisher: the spill file stays, and the
# fallback of the notice (checked above) writes OUT.
c=serial-KILL-all o="$work/serial-KILL-all/out.h5"
run_bg $c serial wait; ready $c 1; kill -KILL $finishers $launchers $progs; wait_run $c 137
[ ! -e $o ] && [ -e $o.spill.pid$progs ] || { ls $c; fail "$c: want the spill file only"; }
! grep -q "scope-profiler run:" $c/log || { cat $c/log; fail "$c: a launcher line"; }
"$cli" recover $o.spill.* -o $o > $c/recover || fail "$c: recover failed"
grep -qF "wrote $o (1 rank, 8191 events; calls open at the kill are not included)" $c/recover ||
  { cat $c/recover; fail "$c: recover's line"; }
$py "$check" $o "{'iter': 8191}" partial=1 signal=-1

# 3 ranks under mpirun. The termination signals go to every rank's launcher (a batch
# system signals each process of the job); rank 0's launcher says what happens.
for sig in TERM INT HUP XCPU; do
  n=$(kill -l $sig) c=mpi-$sig o="$work/mpi-$sig/out.h5"
  run_bg $c mpi wait; ready $c $NP; kill -$sig $launchers; wait_out $c; wait_run $c $((128 + n))
  written $c "$(per_rank $KM waiting)" partial=1 signal=$n ranks=$NP
  notice $c $sig "(if $o is not written: scope-profiler merge $o.part* $o.spill.* -o $o)"
  grep -q "^scope-profiler run: rank 0: SIG$sig: passed on to" $c/log || fail "$c: rank 0 speaks"
done
# SIGSEGV sent to every rank's program (the launcher passes no SIGSEGV on).
run_bg mpi-SEGV mpi wait; ready mpi-SEGV $NP; kill -SEGV $progs; wait_out mpi-SEGV
wait_run mpi-SEGV 139
written mpi-SEGV "$(per_rank $KM waiting)" partial=1 signal=11 ranks=$NP
notice mpi-SEGV none
# SIGKILL to every rank's program: each launcher converts the spilled events.
run_bg mpi-KILL mpi wait; ready mpi-KILL $NP; kill_all $progs; wait_out mpi-KILL
wait_run mpi-KILL 137
written mpi-KILL "$(per_rank $((KM - 1)))" partial=1 signal=-1 ranks=$NP
# SIGKILL to every process of the job but mpirun: the rank spill files stay.
c=mpi-KILL-all o="$work/mpi-KILL-all/out.h5"
run_bg $c mpi wait; ready $c $NP; kill_all $finishers $launchers $progs; wait_run $c 137
[ ! -e $o ] && [ "$(ls $c | grep -c '^out.h5.spill.rank0000[0-2]$')" = $NP ] &&
  [ -z "$(ls $c | grep '\.part')" ] || { ls $c; fail "$c: want the $NP spill files only"; }
! grep -q "scope-profiler run:" $c/log || { cat $c/log; fail "$c: a launcher line"; }
"$cli" recover $o.spill.* -o $o > $c/recover || fail "$c: recover failed"
[ "$(cat $c/recover)" = "wrote $o ($NP ranks, $((NP * 2 * KM)) events)" ] ||
  { cat $c/recover; fail "$c: recover's line"; }
$py "$check" $o "$(per_rank $((KM - 1)))" partial=1 signal=-1 ranks=$NP
# The fallback the MPI notice names, as written there: no part is left, and merge says so.
"$cli" merge $o.part* $o.spill.* -o $c/merged.h5 > $c/merge 2> $c/merge.err ||
  fail "$c: the notice's fallback failed: $(cat $c/merge.err)"
[ "$(cat $c/merge.err)" = "scope-profiler merge: $o.part*: no file matches (left out)" ] ||
  { cat $c/merge.err; fail "$c: merge's line"; }
$py "$check" $c/merged.h5 "$(per_rank $((KM - 1)))" partial=1 signal=-1 ranks=$NP
echo "launcher matrix: OK ($((SECONDS - t0)) s)"
