#!/bin/bash
# SPDX-License-Identifier: MIT
# Build the reader's libFuzzer target with clang (fuzzer + ASan + UBSan) from
# the reader sources, seed it with tests/fixtures and a few generated
# profiles, and fuzz for N seconds.
#   run-fuzz.sh SECONDS [WORKDIR]     (default 40 s, a temporary WORKDIR)
# Env: SP_SOURCE_DIR (default: two levels up), SP_FIXTURES, SP_PYTHON (with
# h5py, for the generated seeds), FUZZ_FORK=N
# (libFuzzer -fork=N mode: N worker processes, keeps going after a crash
# and collects every finding; for long runs).
# Exit 0 clean, 1 on a finding (crash-*/leak-*/timeout-*/oom-* files kept
# in WORKDIR), 77 when clang or its libFuzzer runtime is missing.
set -u
secs=${1:-40}
here=$(cd "$(dirname "$0")" && pwd)
src=${SP_SOURCE_DIR:-$(cd "$here/../.." && pwd)}
fixtures=${SP_FIXTURES:-$src/tests/fixtures}
py=${SP_PYTHON:-python3}
work=${2:-}
if [ -z "$work" ]; then
  work=$(mktemp -d /tmp/sp-fuzz.XXXXXX)
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/corpus" "$work/seeds" "$work/findings"
cc=${CLANG:-clang}
command -v "$cc" >/dev/null || { echo "SKIP: $cc not installed"; exit 77; }
pkg-config --exists hdf5-serial libpcre2-8 ||
  { echo "FAIL: pkg-config finds no hdf5-serial, libpcre2-8"; exit 1; }
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }' > "$work/probe.c"
if ! "$cc" -fsanitize=fuzzer "$work/probe.c" -o "$work/probe" 2>/dev/null; then
  echo "SKIP: $cc has no libFuzzer runtime"; exit 77
fi
bin="$work/fuzz-reader"
# The reader's generated MPI name -> kind table (meson makes it in a build).
python3 "$src/mpi/gen-mpi-wrappers.py" --reader-kinds "$src/mpi/mpi-functions.def" \
  "$work/mpi-kinds.h" || exit 1
# The reader reaches HDF5 through the lazy loader (recorder/lazy/); here
# the target links HDF5 itself, which the loader finds in its global scope.
# Its SONAMEs come from meson (the test's environment), else from
# objdump -p, as recorder/lazy/meson.build reads them.
soname() {
  local d
  for d in $(pkg-config --libs-only-L "$1" | sed 's/-L//g') $(pkg-config --variable=libdir "$1"); do
    [ -e "$d/$2" ] && { objdump -p "$d/$2" | sed -n 's/^ *SONAME *//p'; return; }
  done
}
h5so=${SP_HDF5_SONAME:-$(soname hdf5-serial libhdf5.so)}
dwso=${SP_LIBDW_SONAME:-$(soname libdw libdw.so)}
[ -n "$h5so" ] && [ -n "$dwso" ] || { echo "FAIL: no SONAME for HDF5 or libdw"; exit 1; }
# shellcheck disable=SC2046
"$cc" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -fno-omit-frame-pointer -std=gnu11 \
  -I"$src/reader" -I"$src/format" -I"$src/common" -I"$src/recorder/lazy" -I"$work" \
  -DSP_HDF5_SONAME="\"$h5so\"" -DSP_LIBDW_SONAME="\"$dwso\"" \
  "$here/fuzz-reader.c" "$src"/reader/*.c "$src"/common/*.c "$src/recorder/lazy/lazy.c" \
  $(pkg-config --cflags --libs hdf5-serial libpcre2-8) -lm -lpthread -ldl -o "$bin" || exit 1
cp "$fixtures"/*.{h5,spt,json} "$work/seeds/" || exit 1
PYTHONPATH="$src/tests/lib:$src/tests/hostile" "$py" -c \
  "import sys, hostile_files; hostile_files.make_seeds(sys.argv[1])" "$work/seeds" || exit 1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
# Leaks of memory HDF5 allocated inside itself are HDF5's: 1.10 loses a
# free-list block on some malformed files (seen once in 4 runs: 424 bytes,
# the stack ending in libhdf5, which has no frame pointers). Ours stay
# checked: the reader's own allocations, and what it must give back to
# HDF5 (H5free_memory, H5Dvlen_reclaim) is checked by the ASan e2e tests
# on real files.
printf 'leak:libhdf5_serial.so\nleak:libhdf5.so\n' > "$work/lsan.supp"
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$work/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fork=${FUZZ_FORK:-0}
args=(-max_total_time="$secs" -timeout=20 -rss_limit_mb=3072 -malloc_limit_mb=3072
      -max_len=65536 -artifact_prefix="$work/findings/" -print_final_stats=1)
if [ "$fork" -gt 0 ]; then
  args+=(-fork="$fork" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
fi
# The spill-file target (recover and merge read them), seeded with a valid
# spill file of every record type written by the same source.
spill="$work/fuzz-spill"
mkdir -p "$work/spill-corpus" "$work/spill-seeds"
"$cc" -g -O1 -std=gnu11 -DSPILL_SEED -I"$src/recorder" -I"$src/format" -I"$src/common" \
  "$here/fuzz-spill.c" -o "$work/spill-seed" && "$work/spill-seed" "$work/spill-seeds/seed.spill" ||
  exit 1
"$cc" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -fno-omit-frame-pointer -std=gnu11 -I"$src/recorder" -I"$src/format" -I"$src/common" \
  "$here/fuzz-spill.c" "$src/recorder/spill-read.c" -o "$spill" || exit 1
start=$(date +%s)
cd "$work"
# Three quarters of the time to the reader (HDF5, JSON, .spt), the rest to spills.
rsecs=$(( secs * 3 / 4 )); ssecs=$(( secs - rsecs ))
"$bin" "${args[@]/-max_total_time=$secs/-max_total_time=$rsecs}" "$work/corpus" "$work/seeds" 2>&1 |
  tail -n 60
rc=${PIPESTATUS[0]}
"$spill" "${args[@]/-max_total_time=$secs/-max_total_time=$ssecs}" "$work/spill-corpus" \
  "$work/spill-seeds" 2>&1 | tail -n 20
src_rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] && rc=$src_rc
n=$(find "$work/findings" -type f | wc -l)
echo "fuzz: reader and spill targets ran $(( $(date +%s) - start ))s of ${secs}s, exit $rc, $n finding(s) in $work/findings"
[ "$rc" -eq 0 ] && [ "$n" -eq 0 ]
