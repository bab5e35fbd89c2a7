#!/bin/bash
# A program written for upstream (upstream-example.c), built unchanged
# against our header and library: its output, its file through our CLI.
set -euo pipefail
build=${SP_BUILD_DIR:?}
py=${SP_PYTHON:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
SCOPE_PROFILER_QUIET=1 SCOPE_PROFILER_OUTPUT="$work/proc.h5" "$build/tests/api/upstream-example" > out.txt
grep -qxF "fib calls: 177, solve calls: 10" out.txt || { cat out.txt; exit 1; }
grep -qxF "writing profile_rank00000.h5" out.txt || { cat out.txt; exit 1; }
"$build/tools/scope-profiler" summary --json profile_rank00000.h5 > summary.json
$py - summary.json <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
text = json.dumps(doc)
assert '"fib"' in text and '"solve"' in text, text[:400]
def find(o):
    if isinstance(o, dict):
        if o.get("name") in ("fib", "solve"):
            yield o["name"], o
        for v in o.values():
            yield from find(v)
    elif isinstance(o, list):
        for v in o:
            yield from find(v)
rows = dict(find(doc))
calls = {k: next(v[c] for c in ("calls", "count", "num_calls") if c in v) for k, v in rows.items()}
assert calls == {"fib": 177, "solve": 10}, calls
print("upstream example: OK")
PY
