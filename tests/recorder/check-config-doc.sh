#!/bin/bash
# Every variable the library reads (as printed by PRINT_CONFIG) is
# documented in docs/CONFIG.md, and nothing documented is unknown.
set -euo pipefail
prog=${1:?usage: check-config-doc.sh PROGRAM DOC}
doc=${2:?}
printed=$(SCOPE_PROFILER_PRINT_CONFIG=1 SCOPE_PROFILER_ENABLE=0 "$prog" 2>&1 >/dev/null \
  | grep -o 'SCOPE_PROFILER_[A-Z_]*' | sort -u)
documented=$(grep -o '^| `SCOPE_PROFILER_[A-Z_]*`' "$doc" | grep -o 'SCOPE_PROFILER_[A-Z_]*' | sort -u)
[ -n "$printed" ] || { echo "PRINT_CONFIG printed nothing"; exit 1; }
if [ "$printed" != "$documented" ]; then
  echo "docs/CONFIG.md and the configuration table differ:"
  diff <(echo "$printed") <(echo "$documented") || true
  exit 1
fi
echo "config doc OK: $(echo "$printed" | wc -l) variables"
