#!/bin/bash
# Symbol-leak test: the dynamic symbols LIB defines are exactly the expected
# list, so a new exported symbol fails here until it is added on purpose.
# Usage: check-exports.sh LIB EXPECTED VERSION [MPI_DEF [FAMILY]]
#   EXPECTED  file with one symbol a line ('#' comments)
#   VERSION   version node every export must be in ("Base": the anonymous
#             node, which libscope-profiler.so needs because a named node
#             would lose to glibc's no-op __cyg hooks)
#   MPI_DEF   mpi/mpi-functions.def: adds the names of the generated
#             wrappers (MPI_X; and, unless annotated "c", the Fortran
#             entry points MPI_X upper case, mpi_x, mpi_x_, mpi_x__)
#   FAMILY    openmpi (default) or mpich: MPICH's library has no Fortran
#             entry points and no only=openmpi functions (docs/MPI.md)
set -euo pipefail
lib=${1:?usage: check-exports.sh LIB EXPECTED VERSION [MPI_DEF]}
expected_file=${2:?}
version=${3:?}
mpi_def=${4:-}
family=${5:-openmpi}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# nm prints versioned names as name@@NODE and the node itself as an
# absolute symbol: the versions are checked below, with objdump.
nm -D --defined-only "$lib" | awk -v v="$version" '!($2 == "A" && $3 == v) { sub(/@.*/, "", $3); print $3 }' |
  sort -u > "$tmp/actual"
{
  grep -v '^[[:space:]]*\(#\|$\)' "$expected_file"
  if [ -n "$mpi_def" ]; then
    awk -v fam="$family" '/^[[:space:]]*(#|$)/ { next }
      {
        if (!match($0, /MPI_[A-Za-z0-9_]+[[:space:]]*\(/)) next
        name = substr($0, RSTART, RLENGTH); sub(/[[:space:]]*\($/, "", name)
        conly = 0
        semi = index($0, ";")
        if (semi) { n = split(substr($0, semi + 1), ann, " "); for (i = 1; i <= n; i++) {
          if (ann[i] == "c" || fam == "mpich") conly = 1
          if (ann[i] ~ /^only=/ && ann[i] != "only=" fam) next } }
        print name
        if (!conly) { low = tolower(name); print toupper(name); print low; print low "_"; print low "__" }
      }' "$mpi_def"
  fi
} | sort -u > "$tmp/expected"

status=0
extra=$(comm -23 "$tmp/actual" "$tmp/expected")
missing=$(comm -13 "$tmp/actual" "$tmp/expected")
if [ -n "$extra" ]; then
  echo "unexpected exported symbols in $(basename "$lib"):"; printf '  %s\n' $extra; status=1
fi
if [ -n "$missing" ]; then
  echo "missing exports in $(basename "$lib"):"; printf '  %s\n' $missing; status=1
fi
# objdump -T: ... <version> <name>; undefined (imported) symbols are *UND*.
badver=$(objdump -T "$lib" | awk -v v="$version" '$1 ~ /^[0-9a-f]+$/ && $0 !~ /\*UND\*/ {
  ver = $(NF - 1); gsub(/[()]/, "", ver); if (ver != v) print $NF "@" ver }')
if [ -n "$badver" ]; then
  echo "exports not in version node $version:"; printf '  %s\n' $badver; status=1
fi
[ $status -eq 0 ] && echo "exports OK: $(wc -l < "$tmp/actual") symbols, all expected, version $version"
exit $status
