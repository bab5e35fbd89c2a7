#!/bin/bash
# The output path, end to end with real programs and real files
# (docs/CONFIG.md, "The output path"): a relative -o after the program
# chdir()s, an exec'd child (system()), SCOPE_PROFILER_EXEC=none, each
# placeholder, rotation of a previous file, the stored command line and
# working directory, diff's warning, run's exit 2 before the program
# starts, and the preload's $TMPDIR fallback. Counts are checked with h5py.
set -euo pipefail
py=${SP_PYTHON:?}
build=${SP_BUILD_DIR:?}
app="$build/tests/paths/paths-app"; cli="$build/tools/scope-profiler"
work=$(mktemp -d); mounted=
cleanup() { [ -z "$mounted" ] || umount "$work/ro" || umount -l "$work/ro"; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
unset SCOPE_PROFILER_OUTPUT SCOPE_PROFILER_ROOT SLURM_JOB_ID PBS_JOBID LSB_JOBID FLUX_JOB_ID \
  OMPI_COMM_WORLD_RANK PMIX_RANK PMI_RANK SLURM_PROCID SCOPE_PROFILER_EXEC

# counts FILE: {region: calls} of rank 0, and the metadata asked for.
counts() {
  $py - "$@" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][()]]
idx = f["rank_region_index"]
print({names[i]: int(c) for i, c in zip(idx["region_ids"][()], idx["event_counts"][()])})
PY
}
meta() {  # FILE KEY: the metadata value (a list as space-joined words)
  $py - "$1" "$2" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
v = f["metadata"].attrs.get(sys.argv[2])
if v is None:
    print("<absent>")
else:
    if hasattr(v, "tolist"):
        v = v.tolist()
    dec = lambda x: x.decode() if isinstance(x, bytes) else str(x)
    print(" ".join(dec(x) for x in v) if isinstance(v, list) else dec(v))
PY
}
expect_counts() {  # FILE EXPECTED
  local got; got=$(counts "$1"); [ "$got" = "$2" ] || fail "$1: counts $got, expected $2"
}

# 1. A relative -o, then the program chdir()s: the file is where run was
# started, not in the new directory; cwd and command line are stored.
mkdir -p "$work/a" "$work/b"; cd "$work/a"
"$cli" run -q -o rel.h5 -- "$app" --calls 5 --chdir "$work/b" -N 256 > /dev/null
[ -f "$work/a/rel.h5" ] || fail "chdir: no $work/a/rel.h5 ($(ls "$work/a" "$work/b"))"
[ -z "$(ls "$work/b")" ] || fail "chdir: files in the new directory: $(ls "$work/b")"
expect_counts "$work/a/rel.h5" "{'work': 5}"
[ "$(meta rel.h5 working_directory)" = "$work/a" ] || fail "cwd: $(meta rel.h5 working_directory)"
[ "$(meta rel.h5 command_line)" = "$app --calls 5 --chdir $work/b -N 256" ] ||
  fail "command line: $(meta rel.h5 command_line)"
echo "chdir: $work/a/rel.h5 {'work': 5}, cwd and command line stored"

# The preload alone (no run), relative SCOPE_PROFILER_OUTPUT: the same.
SCOPE_PROFILER_QUIET=1 SCOPE_PROFILER_OUTPUT=pre.h5 "$app" --calls 2 --chdir "$work/b" > /dev/null
[ -f "$work/a/pre.h5" ] && [ -z "$(ls "$work/b")" ] || fail "preload chdir: $(ls "$work/a" "$work/b")"
expect_counts "$work/a/pre.h5" "{'work': 2}"

# 2. diff warns when the command lines differ (and not when they match).
"$cli" run -q -o n512.h5 -- "$app" --calls 5 --chdir "$work/b" -N 512 > /dev/null
"$cli" run -q -o same.h5 -- "$app" --calls 5 --chdir "$work/b" -N 256 > /dev/null
"$cli" diff rel.h5 n512.h5 > /dev/null 2> diff.err
grep -q "warning: the runs have different command lines" diff.err || fail "diff: $(cat diff.err)"
grep -q -- "-N 512" diff.err || fail "diff warning without the command line: $(cat diff.err)"
"$cli" diff rel.h5 same.h5 > /dev/null 2> same.err
[ ! -s same.err ] || fail "diff of the same command line warned: $(cat same.err)"
"$cli" check rel.h5 n512.h5 > /dev/null 2> check.err || true
grep -q "scope-profiler check: warning: the runs have different command lines" check.err ||
  fail "check: $(cat check.err)"
# (2 runs per side can fail only below 66.7 % confidence: check refuses others.)
"$cli" check --confidence 60 --base rel.h5 same.h5 --cand same.h5 rel.h5 > /dev/null 2> rep.err || true
[ ! -s rep.err ] || fail "repeated check of equal command lines warned: $(cat rep.err)"
"$cli" check --confidence 60 --base rel.h5 same.h5 --cand n512.h5 same.h5 > /dev/null 2> rep.err || true
[ "$(grep -c "check: warning: the runs have different command lines" rep.err)" = 1 ] &&
  grep -q "n512.h5: .* -N 512" rep.err || fail "repeated check: $(cat rep.err)"
"$cli" scaling rel.h5 n512.h5 > /dev/null 2> scaling.err
grep -q "scope-profiler scaling: warning: the runs have different command lines" scaling.err ||
  fail "scaling: $(cat scaling.err)"
echo "diff/check/scaling: warned on -N 256 vs -N 512, silent on equal command lines"

# 3. An exec'd child (system(), the preload inherited through run's
# LD_PRELOAD): its own file out.pid<N>.h5, the parent's file intact; the
# shell in between recorded nothing and leaves nothing (dash ends with
# _exit: its spill file, with no event, is removed there).
mkdir "$work/x"; cd "$work/x"
"$cli" run -q -o out.h5 -- "$app" --calls 4 \
  --system "$app --name child --calls 7 > child.pid" > parent.pid
child=$(cat child.pid)
[ "$(ls | grep -v '\.pid$')" = "$(printf 'out.h5\nout.pid%s.h5' "$child")" ] ||
  fail "exec'd child: files $(ls | tr '\n' ' ')"
expect_counts out.h5 "{'work': 4}"
expect_counts "out.pid$child.h5" "{'child': 7}"
echo "exec'd child: out.h5 {'work': 4}, out.pid$child.h5 {'child': 7}, no other profile"

# A wrapper between run and the program (a shell script, timeout,
# /usr/bin/time, perf) records nothing itself: the profile the program wrote
# as its exec'd child gets the name asked for, with one line and no
# "nothing was instrumented" warning. Another tree's .pid file beside it,
# fresh (copied now), is left alone: only this tree's id (metadata
# process_tree) is taken. bash ends with exit(): the library names it at
# the wrapper's end; dash ends with _exit(): run's finish does.
# timeout closes stderr before our destructor: its line is not written
# (descriptor 2 may be another file by then).
mkdir "$work/w"; cd "$work/w"
cp "$work/x/out.pid$child.h5" out.pid1.h5
wrapped() {  # SHELL OUT CALLS PREFIX: the shell runs app, which gets OUT's name
  "$cli" run -o "$2" -- "$1" -c '"$0" --calls '"$3"' > pid; exit $?' "$app" 2> err
  local pid; pid=$(cat pid); rm pid
  [ "$(ls "${2%.h5}"* | grep -vx "${2%.h5}.pid1.h5" | tr '\n' ' ')" = "$2 " ] ||
    fail "$1 wrapper: files $(ls | tr '\n' ' ')"
  expect_counts "$2" "{'work': $3}"
  grep -qx "$4$1 recorded nothing: $work/w/$2 is the profile of the program it started (pid $pid), which wrote it as $work/w/${2%.h5}.pid$pid.h5" err ||
    fail "$1 wrapper's line: $(cat err)"
  ! grep -q "nothing was instrumented" err || fail "$1 wrapper warned: $(cat err)"
}
wrapped bash out.h5 6 "scope-profiler: "
# The launcher's start-up values are for its own program only: bash's
# unsetenv leaves them to its children, whose start-up must not count
# the time bash ran before them (1 s here).
"$cli" run -q -o slept.h5 -- bash -c 'sleep 1; "$0" > /dev/null; exit $?' "$app"
[ "$($py -c "import h5py; print(int(h5py.File('slept.h5')['metadata'].attrs['profiler_startup_ns']) < 500_000_000)")" = True ] ||
  fail "the program of a wrapper: profiler_startup_ns $(meta slept.h5 profiler_startup_ns)"
rm slept.h5
wrapped sh dash.h5 5 "scope-profiler run: "
[ -f out.pid1.h5 ] && expect_counts out.pid1.h5 "{'child': 7}"
[[ "$(meta out.h5 process_tree)" =~ ^[0-9]+:[0-9a-f]{16}$ ]] &&
  [ "$(meta out.h5 process_tree)" != "$(meta out.pid1.h5 process_tree)" ] ||
  fail "process_tree: $(meta out.h5 process_tree) / $(meta out.pid1.h5 process_tree)"
"$cli" run -o t.h5 -- timeout 60 "$app" --calls 2 > /dev/null 2> err
[ "$(grep -c . err)" = 1 ] && grep -q "^scope-profiler: wrote $work/w/t.pid[0-9]*.h5 " err &&
  [ "$(ls t*)" = "t.h5" ] || fail "timeout: $(ls | tr '\n' ' '): $(cat err)"
expect_counts t.h5 "{'work': 2}"
# The preload alone (no run): the library names it.
SCOPE_PROFILER_OUTPUT=pre.h5 LD_PRELOAD="${SP_SANITIZER_PRELOAD:+$SP_SANITIZER_PRELOAD:}$build/preload/libscope-profiler.so" \
  bash -c '"$0" --calls 3 > /dev/null; exit $?' "$app" 2> err
[ "$(ls pre*)" = "pre.h5" ] && grep -q "^scope-profiler: bash recorded nothing: $work/w/pre.h5 is the profile" err ||
  fail "preload wrapper: $(ls | tr '\n' ' '): $(cat err)"
expect_counts pre.h5 "{'work': 3}"
# Two programs: each keeps its own file, both named, no empty output.
"$cli" run -o two.h5 -- bash -c '"$0" --name a --calls 2 > /dev/null; "$0" --name b --calls 3 > /dev/null; exit $?' "$app" 2> err
[ "$(ls two* | wc -l)" = 2 ] && [ ! -e two.h5 ] || fail "two: $(ls | tr '\n' ' ')"
grep -q "^scope-profiler: bash recorded nothing; the 2 programs it started wrote their own profiles: $work/w/two.pid[0-9]*.h5, $work/w/two.pid[0-9]*.h5 (no $work/w/two.h5 is written)$" err ||
  fail "two's line: $(cat err)"
[ "$(for f in two.pid*.h5; do counts "$f"; done | sort | tr '\n' ' ')" = "{'a': 2} {'b': 3} " ] ||
  fail "two's files: $(for f in two.pid*.h5; do counts "$f"; done)"
# A wrapper whose programs record nothing either: the warning, from the
# library (with the empty output) or, after an _exit, from run.
"$cli" run -o none.h5 -- sh -c 'true; exit $?' 2> err
[ ! -e none.h5 ] && grep -qx "scope-profiler run: warning: nothing was instrumented: $work/w/none.h5 was not written: sh and the programs it started recorded no function, .*" err ||
  fail "none: $(ls) $(cat err)"
# A static program (and a static-pie one): LD_PRELOAD never reaches it;
# run says so before it runs, and nothing else (no "nothing was
# instrumented", which would point at the compile flags).
printf '#include <stdio.h>\nstatic int f(int x) { return 2 * x; }\nint main(void) { int s = 0; for (int i = 0; i < 9; i++) s += f(i); printf("%%d\\n", s); return 0; }\n' > st.c
for how in -static -static-pie; do
  ${CC:-cc} -O1 -finstrument-functions $how -o st st.c || fail "cannot build a $how program"
  "$cli" run -o st.h5 -- ./st > out 2> err || fail "$how: exit $?: $(cat err)"
  [ "$(cat out)" = 72 ] && [ "$(cat err)" = "scope-profiler run: warning: ./st is statically linked: the profiler is loaded by LD_PRELOAD, which a static program never reads, so nothing of it is recorded; link it dynamically (without -static)" ] &&
    [ ! -e st.h5 ] || fail "$how: $(cat out) $(cat err)"
done
rm st st.c out
# Not when the program could not be started (said once, by run), nor
# after a signal.
set +e; "$cli" run -o nx.h5 -- ./no-such-program 2> err; rc=$?; set -e
[ $rc = 127 ] && [ "$(cat err)" = "scope-profiler run: cannot run ./no-such-program: No such file or directory" ] ||
  fail "no program: exit $rc: $(cat err)"
set +e; SCOPE_PROFILER_SPILL=0 SCOPE_PROFILER_SIGNALS=0 "$cli" run -o nx.h5 -- \
  sh -c 'kill -TERM $$; exit $?' 2> err; rc=$?; set -e
[ $rc = 143 ] && [ ! -s err ] && [ ! -e nx.h5 ] || fail "killed wrapper: exit $rc: $(cat err)"
"$cli" run -o none.h5 -- true 2> err
[ -f none.h5 ] && grep -q "^scope-profiler: warning: nothing was instrumented: $work/w/none.h5 has no" err ||
  fail "none: $(ls) $(cat err)"
echo "wrappers (bash, dash, timeout, preload alone): the program's .pid file named as asked," \
  "another tree's left alone; two programs listed"

# SCOPE_PROFILER_EXEC=none: the child records and writes nothing.
mkdir "$work/n"; cd "$work/n"
SCOPE_PROFILER_EXEC=none "$cli" run -q -o out.h5 -- "$app" --calls 4 \
  --system "$app --name child --calls 7" > /dev/null
[ "$(ls)" = "out.h5" ] || fail "EXEC=none: files $(ls | tr '\n' ' ')" # nothing, not even a spill
expect_counts out.h5 "{'work': 4}"
echo "EXEC=none: only out.h5"

# 4. Placeholders, with run (run expands all but %p) and without.
mkdir "$work/p"; cd "$work/p"
host=$($py -c 'import socket; print(socket.gethostname())')
SLURM_JOB_ID=4711 "$cli" run -q -o 'ph-%p-%r-%h-%j-%t-%%-%x.h5' -- "$app" --calls 3 > pid
name=$(ls ph-*); pid=$(cat pid)
[[ "$name" =~ ^ph-$pid-0-$host-4711-([0-9]{8}T[0-9]{6}Z)-%-%x\.h5$ ]] || fail "placeholders: $name"
stamp=${BASH_REMATCH[1]}
# %t is the start time, the same instant as the file's own timestamp (to
# the second: run took it a moment before the program started).
$py - "$stamp" "$(meta "$name" timestamp)" <<'PY' || fail "%t $stamp vs timestamp"
import sys, datetime as d
t = d.datetime.strptime(sys.argv[1], "%Y%m%dT%H%M%SZ").replace(tzinfo=d.timezone.utc)
ts = d.datetime.fromisoformat(sys.argv[2])
assert 0 <= (ts - t).total_seconds() <= 2, (t, ts)
PY
expect_counts "$name" "{'work': 3}"
[ "$(meta "$name" job_id)" = 4711 ] && [ "$(meta "$name" job_scheduler)" = slurm ] ||
  fail "job metadata: $(meta "$name" job_id) $(meta "$name" job_scheduler)"
rm ph-*
PBS_JOBID=88.pbs SCOPE_PROFILER_QUIET=1 SCOPE_PROFILER_OUTPUT='pre-%p-%j-%r.h5' "$app" > pid
[ -f "pre-$(cat pid)-88.pbs-0.h5" ] || fail "preload placeholders: $(ls)"
LSB_JOBID=99 SCOPE_PROFILER_QUIET=1 SCOPE_PROFILER_OUTPUT='lsf-%j.h5' "$app" > /dev/null
FLUX_JOB_ID=fA1 SCOPE_PROFILER_QUIET=1 SCOPE_PROFILER_OUTPUT='flux-%j.h5' "$app" > /dev/null
SCOPE_PROFILER_QUIET=1 SCOPE_PROFILER_OUTPUT='none-%j.h5' "$app" > /dev/null
[ -f lsf-99.h5 ] && [ -f flux-fA1.h5 ] && [ -f none-nojob.h5 ] || fail "job ids: $(ls)"
[ "$(meta flux-fA1.h5 job_scheduler)" = flux ] && [ "$(meta none-nojob.h5 job_id)" = "<absent>" ] ||
  fail "job metadata (flux / none)"
echo "placeholders: $name; pbs, lsf, flux and no job"

# 5. Rotation: a previous file is kept as out.1.h5, out.2.h5, with a line.
mkdir "$work/r"; cd "$work/r"
for n in 1 2 3; do "$cli" run -q -o q.h5 -- "$app" --calls $n > /dev/null 2> "rot$n.err"; done
[ "$(ls q*)" = "$(printf 'q.1.h5\nq.2.h5\nq.h5')" ] || fail "rotation: $(ls | tr '\n' ' ')"
expect_counts q.1.h5 "{'work': 1}"; expect_counts q.2.h5 "{'work': 2}"; expect_counts q.h5 "{'work': 3}"
[ ! -s rot1.err ] || fail "first run printed: $(cat rot1.err)"
grep -qx "scope-profiler: $work/r/q.h5 exists: kept it as $work/r/q.2.h5" rot3.err ||
  fail "rotation line: $(cat rot3.err)"
echo "rotation: q.h5 {work: 3}, q.2.h5 {work: 2}, q.1.h5 {work: 1}"

# 6. run refuses an output it cannot write, with the real error, exit 2,
# before the program starts (the program would create ran.*).
cd "$work"; touch plain
refuse() {  # WHAT OUTPUT ERROR
  local rc=0
  "$cli" run -o "$2" -- "$app" --ran "$work/ran.$1" > /dev/null 2> "$work/refuse.err" || rc=$?
  [ $rc = 2 ] || fail "run -o ($1): exit $rc, expected 2 ($(cat "$work/refuse.err"))"
  grep -q "^scope-profiler run: cannot write .*: $3\$" "$work/refuse.err" ||
    fail "run -o ($1): $(head -c 300 "$work/refuse.err")"
  [ ! -e "$work/ran.$1" ] || fail "run -o ($1): the program was started"
  echo "run refuses ($1): $3"
}
refuse missing "$work/no/such/dir/x.h5" "No such file or directory"
refuse notdir "$work/plain/x.h5" "Not a directory"
refuse toolong "$work/$(printf 'n%.0s' $(seq 5000)).h5" "File name too long"
refuse isdir "$work/a" "Is a directory"
mkdir "$work/ro"
if mount -t tmpfs -o ro,size=1m tmpfs "$work/ro" 2> mount.err; then
  mounted=1
  refuse readonly "$work/ro/x.h5" "Read-only file system"
else
  fail "the read-only case mounts a tmpfs (as root): $(cat mount.err)"
fi

# 7. The preload alone with an output it cannot write: one warning, the
# profile in $TMPDIR under a unique name given on stderr.
mkdir "$work/tmp"
TMPDIR="$work/tmp" SCOPE_PROFILER_OUTPUT="$work/no/such/dir/fb.h5" "$app" --calls 6 > /dev/null 2> fb.err
[ "$(grep -c "cannot write $work/no/such/dir/fb.h5: No such file or directory; the profile goes to" fb.err)" = 1 ] ||
  fail "fallback warning: $(cat fb.err)"
fb=$(ls "$work/tmp")
[[ "$fb" =~ ^scope-profiler-fb\.[A-Za-z0-9]{6}\.h5$ ]] || fail "fallback file: $fb"
grep -q "goes to $work/tmp/$fb instead" fb.err || fail "fallback not named: $(cat fb.err)"
expect_counts "$work/tmp/$fb" "{'work': 6}"
echo "preload fallback: $work/tmp/$fb {'work': 6}"
# A name too long for any directory: the fallback keeps its first 64
# characters (a 5000-character name is "File name too long" here); the
# warning shows the first 256 characters of the name, then where it went.
rm "$work/tmp/$fb"; long=$(printf 'L%.0s' $(seq 5000))
TMPDIR="$work/tmp" SCOPE_PROFILER_OUTPUT="$work/$long.h5" "$app" --calls 2 > /dev/null 2> long.err
grep -q "File name too long; the profile goes to $work/tmp/scope-profiler-$(printf 'L%.0s' $(seq 64))\.[A-Za-z0-9]\{6\}\.h5 instead" long.err ||
  fail "long name: $(head -c 200 long.err)"
expect_counts "$work/tmp/$(ls "$work/tmp")" "{'work': 2}"
echo "preload fallback for a 5000-character name: $(ls "$work/tmp")"
echo "all output-path cases passed"
