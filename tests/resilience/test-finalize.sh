#!/bin/bash
# A signal during MPI_Finalize's write, followed by SIGKILL (mpirun's and
# the batch system's order): 2 ranks, the root stopped in the middle of
# writing the file (gzip level 9 makes the write last) so that the kill
# lands there. Neither rank's
# spill file is gone before the file is committed, and both hold every
# event (the handler dumps them while the write is deferred). A complete
# temporary output (a finalize killed between its write and its rename) is
# adopted by `recover`, found beside the spill files or given.
set -euo pipefail
py=${SP_PYTHON:?}
build=${SP_BUILD_DIR:?}; src=${SP_SOURCE_DIR:?}
source "$src/tests/lib/mpi.sh"  # once per MPI family
prog="$build/tests/resilience/resil-mpi$sp_sfx"; cli="$build/tools/scope-profiler"
lib="$sp_mpi_lib"; check="$src/tests/resilience/check_counts.py"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
p0= p1=
work=$(mktemp -d); trap 'kill -KILL $p0 $p1 2>/dev/null || true; rm -rf "$work"' EXIT; cd "$work"
NP=2 K=10 M=2000000

job() {  # NAME M: the job in the background (pid in $job)
  mkdir "$1"
  SCOPE_PROFILER_OUTPUT="$work/$1/out.h5" SCOPE_PROFILER_MAX_MEMORY=16M SCOPE_PROFILER_COMPRESSION=9 timeout 300 \
    mpirun --oversubscribe -n $NP -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_OUTPUT \
    -x SCOPE_PROFILER_MAX_MEMORY -x SCOPE_PROFILER_COMPRESSION "$prog" $K "$work/$1" big "$2" > "$1/log" 2>&1 &
  job=$!
}
pid_of() {  # SPILL: the pid in its header
  $py -c "import struct,sys; print(struct.unpack_from('<q', open(sys.argv[1],'rb').read(24), 16)[0])" "$1"
}
has_trailer() {  # SPILL: its last record is the TRAILER (the dump is complete)
  $py - "$1" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
sys.exit(0 if len(b) >= 48 and struct.unpack_from('<II', b, len(b) - 48) == (0x52505353, 7) else 1)
PY
}
wait_for() {  # WHAT CMD...: poll until CMD succeeds (60 s at most)
  local what=$1; shift
  for _ in $(seq 600); do "$@" && return 0; sleep 0.1; done
  cat */log; echo "FAIL: $what"; exit 1
}
expect() {  # per rank
  local e="{" r
  for r in $(seq 0 $((NP - 1))); do
    e+="('step', $r): $K, ('MPI_Barrier', $r): $K, ('MPI_Init', $r): 1, ('MPI_Comm_rank', $r): 1, "
    e+="('work', $r): $1, "
  done
  echo "$e}"
}
temp_in() { ls -a "$1" | grep -E '^\.out\.h5\.[0-9]+\.[0-9a-f]{8}\.tmp$'; }

# The kill during the write.
job kill $M
wait_for "the root never started writing" temp_in kill > /dev/null
p0=$(pid_of kill/out.h5.spill.rank00000); p1=$(pid_of kill/out.h5.spill.rank00001)
kill -STOP $p0                   # the root stays in the middle of its write
kill -TERM $p0 $p1
wait_for "rank 1 did not dump" has_trailer kill/out.h5.spill.rank00001
kill -CONT $p0
wait_for "rank 0 did not dump" has_trailer kill/out.h5.spill.rank00000
kill -KILL $p0 $p1
set +e; wait $job; set -e
[ ! -e kill/out.h5 ] || { echo "FAIL: the write finished (the test needs it killed)"; exit 1; }
tmp=kill/$(temp_in kill)
"$cli" recover kill/out.h5.spill.rank0000{0,1} -o kill/rec.h5 > kill/recover.out 2> kill/recover.err
grep -q "is incomplete" kill/recover.err || { cat kill/recover.err; echo "FAIL: incomplete temp not named"; exit 1; }
$py "$check" kill/rec.h5 "$(expect $M)" partial=1 signal=15 ranks=$NP

# A complete temporary output: a finished file of the same program under
# the writer's temporary name of the killed root (its pid) replaces the
# spill files, and the result is complete.
job done 1000
set +e; wait $job; rc=$?; set -e
[ $rc = 0 ] || { cat done/log; echo "FAIL: the plain run"; exit 1; }
mv done/out.h5 "$tmp"
"$cli" recover kill/out.h5.spill.rank0000{0,1} -o kill/adopted.h5 > /dev/null 2> kill/adopt.err
grep -q "adopting $tmp" kill/adopt.err || { cat kill/adopt.err; echo "FAIL: temp not adopted"; exit 1; }
$py "$check" kill/adopted.h5 "$(expect 1000)" partial=0 ranks=$NP
"$cli" recover "$tmp" -o kill/given.h5 > /dev/null 2> kill/given.err
grep -q "adopting" kill/given.err
$py "$check" kill/given.h5 "$(expect 1000)" partial=0 ranks=$NP
echo "finalize resilience: OK"
