#!/bin/bash
# Statistics upstream's reader sees as we do, on a real N-rank run: names
# only with rows, exclusive_totals, and summary --json bit for bit against
# numpy in upstream's order (check_stats.py).
set -euo pipefail
np=${1:?ranks}
check=${2:?check_stats.py}
build=${SP_BUILD_DIR:?}
py=${SP_PYTHON:?}
# stats-mpi is the first MPI family's: its own launcher (tests/lib/mpi.sh)
source "${SP_SOURCE_DIR:?}/tests/lib/mpi.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
lib="$build/preload/libscope-profiler.so"
lib="${SP_SANITIZER_PRELOAD:+$SP_SANITIZER_PRELOAD:}$lib"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
SCOPE_PROFILER_OUTPUT="$work/s.h5" SCOPE_PROFILER_QUIET=1 mpirun --oversubscribe -n "$np" \
  -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_OUTPUT -x SCOPE_PROFILER_QUIET "$build/tests/e2e/stats/stats-mpi"
exec "$py" "$check" "$build/tools/scope-profiler" "$work/s.h5" "$np"
