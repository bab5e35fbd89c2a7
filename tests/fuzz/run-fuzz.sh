#!/bin/bash
# SPDX-License-Identifier: MIT
# Build the reader's libFuzzer target with clang (fuzzer + ASan + UBSan) from
# the reader sources, seed it with the shared fixtures and a few generated
# profiles, and fuzz for N seconds.
#   run-fuzz.sh SECONDS [WORKDIR]     (default 40 s, a temporary WORKDIR)
# Env: SP_SOURCE_DIR (default: two levels up), SP_FIXTURES, FUZZ_FORK=N
# (libFuzzer -fork=N mode: N worker processes, keeps going after a crash
# and collects every finding; for long runs).
# Exit 0 clean, 1 on a finding (crash-*/leak-*/timeout-*/oom-* files kept
# in WORKDIR), 77 when clang/libFuzzer/pkg-config deps are missing.
set -u
secs=${1:-40}
here=$(cd "$(dirname "$0")" && pwd)
src=${SP_SOURCE_DIR:-$(cd "$here/../.." && pwd)}
fixtures=${SP_FIXTURES:-$src/../shared/fixtures/scope-profiler}
work=${2:-}
if [ -z "$work" ]; then
  work=$(mktemp -d /tmp/sp-fuzz.XXXXXX)
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/corpus" "$work/seeds" "$work/findings"
cc=${CLANG:-clang}
if ! command -v "$cc" >/dev/null || ! pkg-config --exists hdf5-serial libpcre2-8; then
  echo "SKIP: needs clang and pkg-config hdf5-serial, libpcre2-8"; exit 77
fi
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }' > "$work/probe.c"
if ! "$cc" -fsanitize=fuzzer "$work/probe.c" -o "$work/probe" 2>/dev/null; then
  echo "SKIP: $cc has no libFuzzer runtime"; exit 77
fi
bin="$work/fuzz-reader"
# shellcheck disable=SC2046
"$cc" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -fno-omit-frame-pointer -std=gnu11 \
  -I"$src/reader" -I"$src/recorder" -I"$src/common" \
  "$here/fuzz-reader.c" "$src"/reader/*.c "$src"/common/*.c \
  $(pkg-config --cflags --libs hdf5-serial libpcre2-8) -lm -lpthread -o "$bin" || exit 1
cp "$fixtures"/* "$work/seeds/" 2>/dev/null
if /usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null; then
  /usr/bin/python3 -c "import sys; sys.path.insert(0, '$src/tests/hostile'); \
import hostile_files; hostile_files.make_seeds('$work/seeds')"
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fork=${FUZZ_FORK:-0}
args=(-max_total_time="$secs" -timeout=20 -rss_limit_mb=3072 -malloc_limit_mb=3072
      -max_len=65536 -artifact_prefix="$work/findings/" -print_final_stats=1)
if [ "$fork" -gt 0 ]; then
  args+=(-fork="$fork" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
fi
start=$(date +%s)
cd "$work"
"$bin" "${args[@]}" "$work/corpus" "$work/seeds" 2>&1 | tail -n 60
rc=${PIPESTATUS[0]}
n=$(find "$work/findings" -type f | wc -l)
echo "fuzz-reader: ran $(( $(date +%s) - start ))s of ${secs}s, exit $rc, $n finding(s) in $work/findings"
[ "$rc" -eq 0 ] && [ "$n" -eq 0 ]
