#!/bin/bash
# SPDX-License-Identifier: MIT
# The fallback of the parallel finalize to the rank-0 stream, forced, at
# NP ranks (scale-ranks, check_scale.py):
#   - SCOPE_PROFILER_TEST_MPIIO_FAIL=1 (test only) with FINALIZE=parallel
#     (a file this small is otherwise written without MPI-IO): rank 1
#     refuses the MPI-IO open, so every rank takes the stream: the file is complete
#     (exact calls), says path "serial", has the shape of a normal run's
#     file (compare_h5.py --shape), rank 0 says "MPI-IO could not open"
#     exactly once and no temporary is left;
#   - SCOPE_PROFILER_COMPRESSION=1: the stream with compressed columns,
#     path "serial", one warning line;
#   - SCOPE_PROFILER_TEST_GATHER_PAST=2 (test only): a gathered block past
#     the file is refused; nothing published, spill files kept, recovered.
# The normal run must say "parallel". test-fallback.sh NP
set -euo pipefail
np=${1:?NP}
build=${SP_BUILD_DIR:?}
src=${SP_SOURCE_DIR:?}
py=${SP_PYTHON:?}
source "$src/tests/lib/mpi.sh"
export SCOPE_PROFILER_THROTTLE_CALLS=0 OMPI_MCA_btl=self,vader SCOPE_PROFILER_FINALIZE=auto
lib="${SP_SANITIZER_PRELOAD:+$SP_SANITIZER_PRELOAD:}$sp_mpi_lib"
cli="$build/tools/scope-profiler"
bin="$build/tests/e2e/scale/scale-ranks$sp_sfx"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# prof NAME PATH: a profiled run of scale-ranks (MULT 2, no thread: the order in which
# regions are first seen, so the file, is then the same in every run) into out/NAME.h5.
mkdir out
prof() {
  SCOPE_PROFILER_OUTPUT="$work/out/$1.h5" timeout 300 mpirun --oversubscribe -n "$np" \
    -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_OUTPUT -x SCOPE_PROFILER_THROTTLE_CALLS \
    -x SCOPE_PROFILER_TEST_MPIIO_FAIL -x SCOPE_PROFILER_COMPRESSION -x SCOPE_PROFILER_FINALIZE \
    "$bin" 2 0 > "$1.out" 2> "$1.err" ||
    { tail -20 "$1.err"; echo "FAIL: $1: mpirun exited $?"; exit 1; }
  grep -q "scope-profiler: wrote $work/out/$1.h5 ($np ranks" "$1.err" ||
    { tail -20 "$1.err"; echo "FAIL: $1: no merged file reported"; exit 1; }
  [ "$(ls -A out)" = "$(cd out && ls -A -- *.h5)" ] || { ls -A out; echo "FAIL: $1: stray files"; exit 1; }
  $py "$src/tests/e2e/scale/check_scale.py" "out/$1.h5" "$np" 2 0 "$cli" "$2"
}
# count NAME TEXT: how many stderr lines of NAME hold TEXT.
count() { grep -cF -- "$2" "$1.err" || true; }

SCOPE_PROFILER_TEST_MPIIO_FAIL= SCOPE_PROFILER_COMPRESSION=0 prof normal parallel
[ "$(count normal 'MPI-IO could not open')" = 0 ] || { cat normal.err; echo "FAIL: a warning without a failure"; exit 1; }

SCOPE_PROFILER_FINALIZE=parallel SCOPE_PROFILER_TEST_MPIIO_FAIL=1 SCOPE_PROFILER_COMPRESSION=0 \
  prof mpiio serial
n=$(count mpiio 'MPI-IO could not open')
[ "$n" = 1 ] || { cat mpiio.err; echo "FAIL: $n 'MPI-IO could not open' lines, expected 1"; exit 1; }
$py "$src/tests/e2e/equiv/compare_h5.py" --shape out/normal.h5 out/mpiio.h5 "$np"

SCOPE_PROFILER_TEST_MPIIO_FAIL= SCOPE_PROFILER_COMPRESSION=1 prof zlib serial
n=$(count zlib 'SCOPE_PROFILER_COMPRESSION=1: rank 0 writes')
[ "$n" = 1 ] || { cat zlib.err; echo "FAIL: $n compression warning lines, expected 1"; exit 1; }
[ "$(count zlib 'MPI-IO could not open')" = 0 ] || { cat zlib.err; echo "FAIL: MPI-IO warning"; exit 1; }
$py -c "import h5py, sys; d = h5py.File('out/zlib.h5')['events/start_times']; sys.exit(0 if d.compression == 'gzip' else 'start_times not compressed')"
# A gathered block that lies past the file (SCOPE_PROFILER_TEST_GATHER_PAST=2,
# test only: rank 2 shifts its offsets by the file's size): rank 0 refuses
# it, nothing is published, the job's exit status is kept, every rank keeps
# its spill file, and recover writes the file from them with every event.
mkdir past
SCOPE_PROFILER_OUTPUT="$work/past/out.h5" SCOPE_PROFILER_TEST_GATHER_PAST=2 timeout 300 \
  mpirun --oversubscribe -n "$np" -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_OUTPUT \
  -x SCOPE_PROFILER_THROTTLE_CALLS -x SCOPE_PROFILER_FINALIZE -x SCOPE_PROFILER_TEST_GATHER_PAST \
  "$bin" 2 0 > past.out 2> past.err || { tail -20 past.err; echo "FAIL: past: mpirun exited $?"; exit 1; }
[ "$(count past "could not write $work/past/out.h5")" = 1 ] ||
  { cat past.err; echo "FAIL: past: no single 'could not write' line"; exit 1; }
[ ! -e past/out.h5 ] || { echo "FAIL: past: a file with a refused block was published"; exit 1; }
spills=$(ls past/out.h5.spill.rank* 2> /dev/null | wc -l)
[ "$spills" = "$np" ] || { ls past; echo "FAIL: past: $spills spill files, expected $np"; exit 1; }
kept=$(sed -n 's/.*all \([0-9]*\) events are kept in.*/\1/p' past.err | awk '{ s += $1 } END { print s + 0 }')
"$cli" recover past/out.h5.spill.rank* -o past/out.h5 > recover.out 2> recover.err ||
  { cat recover.err; echo "FAIL: past: recover"; exit 1; }
grep -q "wrote past/out.h5 ($np ranks, $kept events)" recover.out ||
  { cat recover.out recover.err; echo "FAIL: past: recover did not write the $kept kept events"; exit 1; }
echo "fallback $np ranks ($sp_mpi_family): OK"
