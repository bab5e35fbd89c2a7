#!/bin/bash
# Public-header compile test: HEADER, included first and alone in a
# translation unit, compiles without a warning with COMPILER and FLAGS (the
# headers must be self-contained, C++-safe and C11-pedantic clean).
# Usage: check-header.sh HEADER c|c++ COMPILER... -- FLAGS...
set -euo pipefail
header=${1:?usage: check-header.sh HEADER c|c++ COMPILER... -- FLAGS...}
lang=${2:?}
shift 2
cmd=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do cmd+=("$1"); shift; done
[ $# -gt 0 ] && shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
case $lang in
c) src=$tmp/t.c ;;
c++) src=$tmp/t.cc ;;
*) echo "unknown language $lang"; exit 2 ;;
esac
# Including it twice also checks the include guard.
printf '#include "%s"\n#include "%s"\nint main(void) { return 0; }\n' "$header" "$header" > "$src"
"${cmd[@]}" "$@" -fsyntax-only -x "$lang" "$src"
echo "$(basename "$header") compiles as $lang with $*"
