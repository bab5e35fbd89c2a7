#!/bin/bash
# Function names resolved once per node at finalize (mpi/mpi-naming.c), on
# 4 ranks: every function row of every rank has the name and the source
# file and line the program's source gives (its "naming:" markers), those
# only other ranks ran included (a plugin the answering rank never loaded
# too); the node's last rank alone read the symbols of the shared files, the
# other ranks named only what they could not send (a plugin loaded by a
# relative path), as the debug log's count lines say. Once per MPI family.
set -euo pipefail
build=${SP_BUILD_DIR:?}
src=${SP_SOURCE_DIR:?}
py=${SP_PYTHON:?}
source "$src/tests/lib/mpi.sh"
lib="$sp_mpi_lib"
lib="${SP_SANITIZER_PRELOAD:+$SP_SANITIZER_PRELOAD:}$lib"
prog="$build/tests/e2e/mpi/mpi-naming$sp_sfx"
plugin="$build/tests/e2e/mpi/naming-plugin.so"
for f in "$prog" "$plugin"; do [ -e "$f" ] || { echo "FAIL: not built: $f"; exit 1; }; done
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
cp "$plugin" "$work/naming-plugin-copy.so"
# rank 1: the build's plugin by its absolute path; rank 2: a copy by a relative path
SCOPE_PROFILER_OUTPUT="$work/n.h5" SCOPE_PROFILER_DEBUG=1 timeout 120 mpirun --oversubscribe -n 4 \
  -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_OUTPUT -x SCOPE_PROFILER_DEBUG \
  "$prog" "$plugin" ./naming-plugin-copy.so > out.txt 2> err.txt ||
  { cat err.txt; echo "FAIL: mpi-naming under the profiler"; exit 1; }
[ "$(grep -c '^rank [0-3]: ' out.txt)" = 4 ] || { cat out.txt err.txt; echo "FAIL: program output"; exit 1; }
$py - "$work/n.h5" "$src/tests/e2e/mpi/mpi-naming.c" "$src/tests/e2e/mpi/naming-plugin.c" err.txt <<'PY'
import os, re, sys, h5py
path, main_src, plugin_src, log = sys.argv[1:5]
want = {}  # name -> (file, line), from the markers
for s in (main_src, plugin_src):
    for no, line in enumerate(open(s), 1):
        m = re.search(r'/\* naming: (\w+) \*/', line)
        if m:
            want[m.group(1)] = (os.path.realpath(s), no)
assert set(want) == {'everywhere', 'on_first_rank', 'on_last_rank', 'main', 'plugin_work'}, want
f = h5py.File(path, 'r')
names = [n.decode() for n in f['region_table/names'][()]]
idx = f['rank_region_index']
rows = {}
for rid, rank, file, line in zip(idx['region_ids'][()], idx['ranks'][()], idx['source_files'][()],
                                 idx['source_lines'][()]):
    rows[(names[rid], int(rank))] = (file.decode(), int(line))
expect_rows = [('main', r) for r in range(4)] + [('everywhere', r) for r in range(4)] + [
    ('on_first_rank', 0), ('on_last_rank', 3), ('plugin_work', 1), ('plugin_work', 2)]
bad = []
for key in expect_rows:
    got = rows.get(key)
    if got is None:
        bad.append('%s rank %d: no row' % key)
    elif (os.path.realpath(got[0]), got[1]) != want[key[0]]:
        bad.append('%s rank %d: %s:%d, expected %s:%d' % (key + got + want[key[0]]))
for key in rows:
    if key[0] in ('on_first_rank', 'on_last_rank', 'plugin_work') and key not in expect_rows:
        bad.append('%s rank %d: a row for a function it never ran' % key)
# The count lines: the node's last rank (3) named its own three (main,
# everywhere, on_last_rank) itself, 0 from the node; every other rank got
# its functions from it (2 or 3: rank 0's on_first_rank and rank 1's plugin
# too) and named only the relative-path plugin (rank 2: 1) or nothing.
counts = [tuple(map(int, m.groups())) for m in re.finditer(
    r'names and sources: (\d+) from the node, (\d+) resolved here', open(log).read())]
if len(counts) != 4:
    bad.append('%d count lines in the debug log, expected 4: %s' % (len(counts), counts))
else:
    leader = [c for c in counts if c[0] == 0]
    others = sorted((c for c in counts if c[0] > 0), key=lambda c: c[1])
    if leader != [(0, 3)]:
        bad.append('the answering rank: %s, expected (0, 3)' % leader)
    if [c[1] for c in others] != [0, 0, 1] or any(c[0] < 2 for c in others):
        bad.append('other ranks (from the node, here): %s, expected here 0, 0, 1 and '
                   '>= 2 from the node each' % others)
if bad:
    print('FAIL:\n  ' + '\n  '.join(bad))
    sys.exit(1)
print('names once per node: %d rows named as their source says; counts %s' % (len(expect_rows), counts))
PY
