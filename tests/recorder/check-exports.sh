#!/bin/bash
# Symbol-leak test: libscope-profiler.so exports only the public API, the
# -finstrument-functions hooks and the MPI wrappers, all in the anonymous
# version node (a named node would lose to glibc's no-op __cyg hooks).
set -euo pipefail
lib=${1:?usage: check-exports.sh LIB}
syms=$(nm -D --defined-only "$lib" | awk '{print $3}')
bad=$(printf '%s\n' "$syms" | grep -Ev '^(sp_[a-z_]+|__cyg_profile_func_(enter|exit)|MPI_[A-Za-z0-9_]+|mpi_[a-z0-9_]+|_init|_fini)$' || true)
if [ -n "$bad" ]; then
  echo "unexpected exported symbols:"; printf '%s\n' "$bad"; exit 1
fi
for s in sp_init sp_region sp_begin sp_end sp_begin_name sp_end_name sp_flush sp_finalize sp_version; do
  # A here-string, not a pipe: grep -q stops at the first match, and the
  # writer's SIGPIPE would fail the pipeline under pipefail.
  grep -qx "$s" <<< "$syms" || { echo "missing export: $s"; exit 1; }
done
if objdump -T "$lib" | grep -E ' sp_init$' | grep -vq 'Base'; then
  echo "exports must be unversioned (anonymous version node)"; exit 1
fi
echo "exports OK: $(printf '%s\n' "$syms" | wc -l) symbols"
