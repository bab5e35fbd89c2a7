#!/bin/bash
# No symlink clobbering in a shared directory (docs/RESILIENCE.md, "Files
# in shared directories"). A second user (nobody, through setpriv) plants
# symlinks to root-owned victim files at every name the profiler and the
# CLI could predict: the spill and temporary names of the next PIDs, the
# outputs' .tmp names, and the output itself. Then root profiles a program
# into that directory, kills one run (so a spill is written and recovered),
# and writes report, export, plot and merge outputs there. No victim may
# change, and every output must be a regular file that reads back.
# The directory is world-writable without the sticky bit, so the kernel's
# protected_symlinks never hides a follow; a sticky /tmp-like one is run too.
set -euo pipefail
py=${SP_PYTHON:?}
build=${SP_BUILD_DIR:?}
app="$build/tests/paths/paths-app"; cli="$build/tools/scope-profiler"
fail() { echo "FAIL: $*"; exit 1; }
# Sanitizer builds: the sanitizer runtime must be preloaded first.
lib="${SP_SANITIZER_PRELOAD:+$SP_SANITIZER_PRELOAD:}$build/preload/libscope-profiler.so"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to act as a second user"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP: setpriv (util-linux) missing"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
unset SCOPE_PROFILER_OUTPUT SCOPE_PROFILER_ROOT OMPI_COMM_WORLD_RANK PMIX_RANK PMI_RANK \
  SLURM_PROCID SCOPE_PROFILER_EXEC
export SCOPE_PROFILER_QUIET=1
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }

mkdir "$work/victims"
for i in $(seq 1 8); do echo "victim $i" > "$work/victims/v$i"; done
sums() { (cd "$work/victims" && md5sum v*); }
before=$(sums)

# plant DIR: symlinks at every predictable name for the next 400 PIDs.
plant() {
  local d=$1 last p
  last=$(cat /proc/sys/kernel/ns_last_pid)
  as_nobody bash -c '
    d=$1; v=$2; last=$3
    for n in out.h5 rec.h5 merged.h5 report.html trace.json stats.csv; do
      ln -s "$v/v1" "$d/$n"
      ln -s "$v/v2" "$d/$n.tmp"
    done
    ln -s "$v/v3" "$d/out.h5.spill.rank00000"
    for p in $(seq $((last + 1)) $((last + 400))); do
      ln -s "$v/v4" "$d/out.h5.spill.pid$p"
      ln -s "$v/v5" "$d/.out.h5.$p.tmp"
      ln -s "$v/v6" "$d/trace.json.tmp$p"
      ln -s "$v/v7" "$d/stats.csv.tmp.$p"
      ln -s "$v/v8" "$d/.rec.h5.$p.tmp"
      ln -s "$v/v8" "$d/.merged.h5.$p.tmp"
    done' _ "$d" "$work/victims" "$last"
}

regular() { [ -f "$1" ] && [ ! -L "$1" ] || fail "$1 is not a regular file"; }

# One shared directory, world-writable (mode $1).
round() {
  local mode=$1 d="$work/shared$1"
  mkdir "$d"; chmod "$mode" "$d"
  plant "$d"
  # A complete run.
  "$cli" run -o "$d/out.h5" -- "$app" --calls 100 > /dev/null || fail "run ($mode)"
  regular "$d/out.h5"
  "$cli" summary --json "$d/out.h5" | grep -q '"work"' || fail "out.h5 unreadable ($mode)"
  # A killed run: the preload's spill, then recover into a planted name.
  SCOPE_PROFILER_OUTPUT="$d/k.h5" LD_PRELOAD="$lib" \
    "$app" --calls 50 --system "kill -TERM \$PPID" > /dev/null 2>&1 || true
  ls "$d"/k.h5.spill.pid* > /dev/null 2>&1 || fail "no spill file of the killed run ($mode)"
  for s in "$d"/k.h5.spill.pid*; do regular "$s"; done
  "$cli" recover -o "$d/rec.h5" "$d"/k.h5.spill.pid* > /dev/null 2>&1 || fail "recover ($mode)"
  regular "$d/rec.h5"
  # CLI outputs at planted names.
  "$cli" report -o "$d/report.html" "$d/out.h5" > /dev/null 2>&1 || fail "report ($mode)"
  "$cli" export chrome-trace -o "$d/trace.json" "$d/out.h5" > /dev/null 2>&1 ||
    fail "export ($mode)"
  "$cli" export region-statistics -o "$d/stats.csv" "$d/out.h5" > /dev/null 2>&1 ||
    fail "region-statistics ($mode)"
  "$cli" merge -o "$d/merged.h5" "$d/out.h5" > /dev/null 2>&1 || fail "merge ($mode)"
  for f in report.html trace.json stats.csv merged.h5; do regular "$d/$f"; done
  grep -q '"traceEvents"' "$d/trace.json" || fail "trace.json is not the trace ($mode)"
  [ "$(sums)" = "$before" ] || { sums; fail "a victim changed ($mode)"; }
  # The outputs honour the umask (022 here): no group or other write bit.
  umask 022
  for f in out.h5 rec.h5 report.html merged.h5; do
    [ -z "$(find "$d/$f" -perm /022)" ] || fail "$f is group/other writable ($mode)"
  done
}
umask 022
round 0777
round 1777
echo "ok: no victim changed; outputs are regular files"
