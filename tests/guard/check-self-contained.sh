#!/bin/bash
# SPDX-License-Identifier: MIT
# A fresh clone tests itself: nothing in the tests, CI scripts or meson
# files reads outside the source tree (../shared), fetches from the network
# at test time, or names a Python by path (meson finds it, tests/meson.build).
# Usage: check-self-contained.sh SOURCE_DIR
set -u
src=${1:?usage: check-self-contained.sh SOURCE_DIR}
cd "$src" || exit 1
self=tests/guard/check-self-contained.sh

# The files under version control (a build folder inside the tree is not
# part of it); without git, the folders that hold tests and build files.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t all < <(git ls-files --cached --others --exclude-standard | grep -v "^$self\$")
else
  mapfile -t all < <(find . -path ./.git -prune -o -path './build*' -prune -o -type f -print |
                     sed 's|^\./||' | grep -v "^$self\$")
fi
[ ${#all[@]} -gt 0 ] || { echo "FAIL: no files found under $src"; exit 1; }
build_files=()
for f in "${all[@]}"; do
  case $f in
    tests/*|.ci/*|meson.build|meson_options.txt|*/meson.build) build_files+=("$f") ;;
  esac
done

fails=0
hits() { # hits WHAT PATTERN FILES...: every match of an extended regex
  local what=$1 pattern=$2
  shift 2
  local out
  out=$(grep -nIE -- "$pattern" "$@" 2>/dev/null)
  if [ -n "$out" ]; then
    echo "FAIL: $what:"
    echo "$out" | sed 's/^/  /'
    fails=$((fails + 1))
  fi
}
hits "reads outside the tree" "\.\./shared|'shared' */ *'fixtures'" "${build_files[@]}"
hits "fetches from the network" \
  'npm (install|pack|view)\b|pip3? install|\bcurl |\bwget |urllib\.request|requests\.get|http\.client|git (clone|fetch|pull) .*(://|@)' \
  "${build_files[@]}"
hits "names a Python by path" '/usr/(local/)?bin/python' "${all[@]}"

[ -f tests/fixtures/README.md ] || { echo "FAIL: tests/fixtures/README.md missing"; fails=$((fails + 1)); }
n=$(find tests/fixtures -type f ! -name '*.md' | wc -l)
[ "$n" -gt 0 ] || { echo "FAIL: no fixtures in tests/fixtures"; fails=$((fails + 1)); }

echo "self-contained: ${#all[@]} files, ${#build_files[@]} test/build files, $n fixtures, $fails problem(s)"
[ "$fails" -eq 0 ]
