#!/bin/bash
# An application's own SIGTERM handler, installed after the profiler's, and
# processes that end in _exit() without their file: a serial program (the
# handler _exits, re-raises, or returns; a plain _exit) and 3-rank mpirun
# jobs (a fatal MPI error under MPI_ERRORS_ARE_FATAL, whose abort _exits;
# every rank's handler _exits on mpirun's SIGTERM). Each asserts the exit
# status and exactly which events survived (docs/RESILIENCE.md).
set -euo pipefail
py=${SP_PYTHON:?}
build=${SP_BUILD_DIR:?}; src=${SP_SOURCE_DIR:?}
source "$src/tests/lib/mpi.sh"  # once per MPI family: the MPI cases
prog="$build/tests/resilience/resil-handler"; mpiprog="$build/tests/resilience/resil-mpi$sp_sfx"
cli="$build/tools/scope-profiler"; lib="$sp_mpi_lib"
check="$src/tests/resilience/check_counts.py"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; cd "$work"
K=10000  # MAX_MEMORY=1M spills every 4096 events: spilled and in-memory events both

# The serial cases do not depend on the MPI family: the default family's
# variant runs them (SP_MPI_SUFFIX empty), the others only the MPI cases.
if [ -z "$sp_sfx" ]; then
serial() {  # MODE EXPECTED_STATUS
  mkdir "$1"; set +e
  SCOPE_PROFILER_OUTPUT="$work/$1/out.h5" SCOPE_PROFILER_MAX_MEMORY=1M "$prog" $K "$1" \
    > "$1/stdout" 2> "$1/stderr"
  local rc=$?; set -e
  [ "$rc" = "$2" ] || { cat "$1/stderr"; echo "FAIL: $1 exited $rc, want $2"; exit 1; }
  grep -qx "done $K" "$1/stdout" || { echo "FAIL: $1: program output"; exit 1; }
}
# The handler _exits (status 3, its choice) or re-raises (143): the dump ran
# first, with the signal, and the spill file has every call.
serial exit 3
serial reraise 143
# The same through glibc's other installers (their sigaction is internal).
serial sigset 143
serial sysv 3
# A vfork child that _exits (exec failed) shares the parent's memory: it
# must not mark the parent's dump as done.
serial vfork 143
for m in exit reraise sigset sysv vfork; do
  [ ! -e $m/out.h5 ] || { echo "FAIL: $m: HDF5 written from a signal handler"; exit 1; }
  "$cli" recover $m/out.h5.spill.pid* -o $m/rec.h5 > /dev/null
  $py "$check" $m/rec.h5 "{'outer': 1, 'iter': $K}" partial=1 signal=15
done
# The handler returns: the program goes on (recording stopped at the dump)
# and its file is written at exit, complete up to the signal.
serial return 0
[ -z "$(ls return | grep spill)" ] || { echo "FAIL: spill file left after a normal exit"; exit 1; }
$py "$check" return/out.h5 "{'outer': 1, 'iter': $K}" partial=0
# _exit() without a signal: the destructor never runs; the dump at _exit
# keeps everything (trailer signal 0).
serial _exit 5
"$cli" recover _exit/out.h5.spill.pid* -o _exit/rec.h5 > /dev/null
$py "$check" _exit/rec.h5 "{'outer': 1, 'iter': $K}" partial=1 signal=0
fi

NP=3 N=50
mpi_job() {  # NAME MODE: run the job to its end (mpirun kills it)
  mkdir "$1"; set +e
  SCOPE_PROFILER_OUTPUT="$work/$1/out.h5" SCOPE_PROFILER_MAX_MEMORY=1M timeout 120 \
    setsid mpirun --oversubscribe -n $NP -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_OUTPUT \
    -x SCOPE_PROFILER_MAX_MEMORY "$mpiprog" $N "$work/$1" "$2" > "$1/log" 2>&1 &
  job=$!; set -e
}
wait_ready() {  # NAME N
  for _ in $(seq 300); do
    [ "$(ls "$1" | grep -c '^ready\.')" = "$2" ] && return 0; sleep 0.1
  done
  cat "$1/log"; echo "FAIL: $1: ranks never got ready"; exit 1
}
finish() {  # wait for the job; it must not hang
  set +e; wait $job; local rc=$?; set -e
  [ $rc != 124 ] || { echo "FAIL: job hung"; exit 1; }
}
expect() {  # per rank: N steps and barriers, init, comm_rank, then rank 0/2 and 1 extras
  local e="{" r
  for r in $(seq 0 $((NP - 1))); do
    e+="('step', $r): $N, ('MPI_Barrier', $r): $N, ('MPI_Init', $r): 1, ('MPI_Comm_rank', $r): 1, "
    if [ "$r" = 1 ]; then e+="$2"; else e+="${1//@/$r}"; fi
  done
  echo "$e}"
}
if [ "$sp_mpi_family" = mpich ]; then
  # MPICH's fatal error path goes to PMI_Abort, not through MPI_Abort, and
  # Hydra SIGKILLs every rank, rank 1 too: only what was spilled survives
  # (nothing in this short run). The job must end and its files recover.
  mpi_job fatal fatal; finish
  "$cli" recover fatal/out.h5.spill.rank0000{0,1,2} -o fatal/rec.h5 > /dev/null
else
# A fatal MPI error on rank 1: Open MPI's abort ends it with _exit(); the
# others get mpirun's SIGTERM. Every rank's events are in its spill file.
mpi_job fatal fatal; wait_ready fatal 2; finish
"$cli" recover fatal/out.h5.spill.rank0000{0,1,2} -o fatal/rec.h5 > /dev/null
$py "$check" fatal/rec.h5 "$(expect "('waiting', @): 1, " \
  "('MPI_Comm_size', 1): 1, ('MPI_Send', 1): 1, ")" partial=1 signal=15 ranks=$NP
$py - fatal/out.h5.spill.rank00001 <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
# the last record is the TRAILER (type 7): signal 0, ended without a file
magic, typ, n, _ = struct.unpack_from('<IIII', b, len(b) - 48)
assert (magic, typ) == (0x52505353, 7), (hex(magic), typ)
assert struct.unpack_from('<i', b, len(b) - 32)[0] == 0
PY
fi
# Every rank's own handler _exits on SIGTERM (sent to mpirun): the dump ran
# before it.
mpi_job handler handler; wait_ready handler $NP; kill -TERM $job; finish
"$cli" recover handler/out.h5.spill.rank0000{0,1,2} -o handler/rec.h5 > /dev/null
$py "$check" handler/rec.h5 "$(expect "('waiting', @): 1, " "('waiting', 1): 1, ")" \
  partial=1 signal=15 ranks=$NP
echo "handler and _exit resilience: OK"
