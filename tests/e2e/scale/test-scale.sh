#!/bin/bash
# SPDX-License-Identifier: MIT
# Scale: scale-ranks under real `mpirun --oversubscribe -n NP` (2 cores,
# so 64 ranks share them), once per finalize path given (auto = every
# rank's slices, gathered to rank 0 for these small files; parallel = the
# same slices through MPI-IO; serial = the rank-0 stream). Each file is
# checked by check_scale.py: every rank present, unified names, exact calls
# per (rank, region) row, the MPI values, the CLI's totals. With TRAFFIC as
# the last argument, also: through MPI-IO the bytes rank 0 receives do not
# change when every rank records 10 times the events (same names, same
# rows), while gathered and on the serial path they grow with them.
#   test-scale.sh NP PATH... [traffic]     PATH: auto | parallel | serial
set -euo pipefail
np=${1:?NP}; shift
build=${SP_BUILD_DIR:?}
src=${SP_SOURCE_DIR:?}
py=${SP_PYTHON:?}
source "$src/tests/lib/mpi.sh"
cli="$build/tools/scope-profiler"
# Every call on the timeline: no auto-throttle (work_j is called up to 7000 times).
export SCOPE_PROFILER_THROTTLE_CALLS=0
lib="${SP_SANITIZER_PRELOAD:+$SP_SANITIZER_PRELOAD:}$sp_mpi_lib"
bin="$build/tests/e2e/scale/scale-ranks$sp_sfx"
export OMPI_MCA_btl=self,vader
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
# A library that knows the finalize path records it: then the key is required.
strict=0
grep -q mpi_finalize_path "$sp_mpi_lib" && strict=1

# prof NAME PATH MULT: one profiled run into NAME.h5; prints rank 0's debug line.
prof() {
  SCOPE_PROFILER_OUTPUT="$work/$1.h5" SCOPE_PROFILER_FINALIZE=$2 SCOPE_PROFILER_DEBUG=finalize \
    timeout 300 mpirun --oversubscribe -n "$np" -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_OUTPUT \
    -x SCOPE_PROFILER_FINALIZE -x SCOPE_PROFILER_DEBUG -x SCOPE_PROFILER_THROTTLE_CALLS "$bin" "$3" > "$1.out" 2> "$1.err" ||
    { tail -20 "$1.err"; echo "FAIL: $1: mpirun -n $np exited $?"; exit 1; }
  grep -qxF "scale-ranks: ranks=$np mult=$3 sum=$((np * (np - 1) / 2))" "$1.out" ||
    { cat "$1.out"; echo "FAIL: $1: program output"; exit 1; }
  grep -q "scope-profiler: wrote $work/$1.h5 ($np ranks" "$1.err" ||
    { tail -20 "$1.err"; echo "FAIL: $1: no merged file reported"; exit 1; }
  ! ls -A "$work" | grep -qE "\.rank[0-9]|\.tmp$" ||
    { ls "$work"; echo "FAIL: $1: stray files"; exit 1; }
}

# recv NAME: rank 0's received bytes from the debug line, n/a without one.
recv() {
  sed -n 's/.*scope-profiler: debug: finalize: .*rank0_recv_bytes=\([0-9]*\).*/\1/p' "$1.err" |
    head -1 | grep . || echo n/a
}

traffic=0
paths=()
for a in "$@"; do
  if [ "$a" = traffic ]; then traffic=1; else paths+=("$a"); fi
done
for p in "${paths[@]}"; do
  want=any write=
  if [ "$strict" = 1 ]; then
    want=serial; [ "$p" != serial ] && want=parallel
  fi
  # auto: every rank's slices (these files are small) through rank 0;
  # parallel: through MPI-IO. A library that says which in its debug line.
  if grep -q "write=%s" "$sp_mpi_lib"; then
    case $p in auto) write=gather ;; parallel) write=mpiio ;; esac
  fi
  prof "s-$p" "$p" 1
  $py "$src/tests/e2e/scale/check_scale.py" "s-$p.h5" "$np" 1 1 "$cli" "$want"
  echo "  $p: $(grep -o 'debug: finalize: .*' "s-$p.err" | head -1 || echo 'no debug line (n/a)')"
  if [ "$strict" = 1 ]; then
    # The debug line and the file's key tell the same bytes and path.
    k=$($py -c "import h5py; a = h5py.File('s-$p.h5')['metadata'].attrs; print(int(a['mpi_finalize_rank0_recv_bytes']))")
    [ "$(recv "s-$p")" = "$k" ] ||
      { echo "FAIL: $p: debug line says $(recv "s-$p") bytes, mpi_finalize_rank0_recv_bytes $k"; exit 1; }
    grep -q "debug: finalize: path=$want ranks=$np " "s-$p.err" ||
      { grep finalize "s-$p.err"; echo "FAIL: $p: no debug line for path=$want ranks=$np"; exit 1; }
    [ -z "$write" ] || grep -q "debug: finalize: path=$want .* write=$write " "s-$p.err" ||
      { grep finalize "s-$p.err"; echo "FAIL: $p: the slices not written by $write"; exit 1; }
  fi
  [ "$traffic" = 1 ] || continue
  prof "x-$p" "$p" 10
  $py "$src/tests/e2e/scale/check_scale.py" "x-$p.h5" "$np" 10 1 "$cli" "$want"
  a=$(recv "s-$p"); b=$(recv "x-$p")
  echo "  $p: rank 0 received $a bytes at 2800 events per rank, $b at 28000"
  if [ "$a" = n/a ] || [ "$b" = n/a ]; then
    [ "$strict" = 0 ] || { echo "FAIL: $p: no rank0_recv_bytes in the debug line"; exit 1; }
    continue
  fi
  if [ "$want" = parallel ] && [ "$write" != gather ]; then
    [ "$a" = "$b" ] ||
      { echo "FAIL: parallel path: rank 0 received $a then $b bytes: it depends on the events"; exit 1; }
  elif [ "$want" = parallel ] && [ "$np" -gt 1 ]; then
    # Gathered slices: every other rank's events, 16 B each (start, end).
    [ "$b" -ge $((a + (np - 1) * 25200 * 16)) ] ||
      { echo "FAIL: gathered slices: rank 0 received $a then $b bytes, expected the events' growth"; exit 1; }
  elif [ "$np" -gt 1 ]; then
    # The rank-0 stream carries every other rank's events: >= 20 B each.
    [ "$b" -ge $((a + (np - 1) * 25200 * 20)) ] ||
      { echo "FAIL: serial path: rank 0 received $a then $b bytes, expected the events' growth"; exit 1; }
  fi
done
echo "scale $np ranks ($sp_mpi_family): OK"
