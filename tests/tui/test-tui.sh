#!/bin/bash
# End to end: drive `scope-profiler tui` in a detached tmux session on a
# profile with known contents (make-profile.py known), send the keys of each
# action and assert the captured screen: tree and (own) rows, sort order,
# filtered rows, the rank switch, call-tree expansion, per-rank bars,
# metadata groups, timeline zoom, help, CSV export, resize, ASCII mode, quit.
# Every wait polls the screen for the expected text (no fixed sleeps).
set -u

bin=${SP_TUI_BIN:-${SP_BUILD_DIR:-build}/tools/scope-profiler}
py=${SP_PYTHON:?}
here=$(cd "$(dirname "$0")" && pwd)

command -v tmux >/dev/null || { echo "SKIP: tmux missing (apt-get install tmux)"; exit 77; }
[ -x "$bin" ] || { echo "FAIL: $bin not built"; exit 1; }
locale -a 2>/dev/null | grep -qi '^c\.utf-\?8$' ||
	{ echo "FAIL: no C.UTF-8 locale (glibc ships it)"; exit 1; }

work=$(mktemp -d)
sock="sp-tui-test-$$"  # one tmux server per session started (start)
sockets=()
cleanup() {
	for s in "${sockets[@]}"; do
		tmux -L "$s" kill-server 2>/dev/null
	done
	rm -rf "$work"
}
trap cleanup EXIT
"$py" "$here/make-profile.py" known "$work/known.h5" &&
	"$py" "$here/make-profile.py" threads "$work/threads.h5" ||
	{ echo "FAIL: make-profile.py"; exit 1; }

fail() {
	echo "FAIL: $*"
	echo "---- screen ----"
	screen
	echo "----------------"
	exit 1
}
screen() { tmux -L "$sock" capture-pane -p -t tui 2>/dev/null; }
keys() { tmux -L "$sock" send-keys -t tui "$@"; }
# wait_for REGEX [seconds]: poll until the screen matches.
wait_for() {
	local deadline=$((SECONDS + ${2:-20}))
	while ! screen | grep -qE -- "$1"; do
		[ $SECONDS -ge $deadline ] && fail "timed out waiting for /$1/"
		sleep 0.05
	done
}
wait_gone() {
	local deadline=$((SECONDS + ${2:-20}))
	while screen | grep -qE -- "$1"; do
		[ $SECONDS -ge $deadline ] && fail "/$1/ still on screen"
		sleep 0.05
	done
}
has() { screen | grep -qE -- "$1" || fail "expected /$1/ on screen"; }
hasnt() { ! screen | grep -qE -- "$1" || fail "did not expect /$1/ on screen"; }
# line A B...: the screen lines matching each regex appear in this order.
order() {
	local prev=0 n
	for re in "$@"; do
		n=$(screen | grep -nE -- "$re" | head -1 | cut -d: -f1)
		[ -n "$n" ] || fail "no line /$re/"
		[ "$n" -gt "$prev" ] || fail "order: /$re/ (line $n) is not after line $prev in: $*"
		prev=$n
	done
}
start() { # start LOCALE [FILE [SHELL-PREFIX]]: a fresh server and session running the TUI
	sock="sp-tui-test-$$-$1-${2:-known}${3:+-x}"
	sockets+=("$sock")
	tmux -L "$sock" new-session -d -s tui -x 160 -y 48 \
		"cd '$work' && ${3:-} env LANG=$1 LC_ALL=$1 '$bin' tui ${2:-known}.h5; echo TUI-EXIT=\$?; sleep 600"
}

start C.UTF-8
# -- first screen: call-path tree with (own) rows, start order --------------
wait_for 'scope_profiler\.session \(2x\)'
has 'sort: start'
has '▾ scope_profiler\.session'
has '^ +\(own\) +2 +2 '
order '^▾ scope_profiler' '^    setup \(2x\)' '^  ▾ timestep \(8x\)' '^      assemble \(8x\)' \
	'^      solve \(8x\)' '^    output \(2x\)' '^    checkpoint '
has 'solve \(8x\) +2 +8 +41\.45% +8\.000000'

# -- s cycles the sort: total, then calls; S goes back -------------------
keys s
wait_for 'sort: total'
has 'total \[s\]▼'
order '^  ▾ timestep' '^      solve' '^      assemble' '^    output' '^    setup' '^    checkpoint'
keys s
wait_for 'sort: calls'
order '^  ▾ timestep \(8x\)' '^    output \(2x\)'
keys S S
wait_for 'sort: start'
order '^    setup' '^  ▾ timestep' '^    output'

# -- collapse / expand in the summary ----------------------------------------
keys g j j j Enter
wait_for '^  ▸ timestep \(8x\)'
hasnt 'assemble \(8x\)'
keys Enter
wait_for '^  ▾ timestep \(8x\)'
has 'assemble \(8x\)'

# -- / filters with re.match semantics -----------------------------------
keys /
wait_for 'filter \(regex'
keys so Enter
wait_for 'filter: so '
wait_for '^  solve \(8x\)'
hasnt 'scope_profiler\.session|assemble|setup'
keys / C-u olve Enter
wait_for 'filter: olve'
wait_for 'no regions match the filter'
keys / C-u '(' Enter
wait_for 'bad filter'
has 'filter: olve'
keys / C-u Enter
wait_for 'filter: - '
wait_for 'checkpoint'

# -- Enter on a leaf opens the per-rank statistics with imbalance bars -------
keys g j j j j j j
keys Enter
wait_for 'region solve: 2 ranks'
has 'imbalance 10\.00%'
has '^ +0 +4 +3\.600000 .* -10\.0% +█+'
has '^ +1 +4 +4\.400000 .* \+10\.0% +█+'
keys s
wait_for 'ranks sorted by total'
order '^ +1 +4 +4\.4' '^ +0 +4 +3\.6'

# -- r chooses the rank (summary and call tree follow) -----------------------
keys 1 r
wait_for 'rank \(0-1'
keys 1 Enter
wait_for 'rank: 1 '
wait_for '^▾ scope_profiler\.session +1 +1 '
has 'timestep \(4x\) +1 +4 '
keys 2
wait_for 'rank 1, thread all: 16 calls'
has '^    checkpoint'
keys r 0 Enter
wait_for 'rank 0, thread all: 15 calls'
hasnt 'checkpoint'
keys r 7 Enter
wait_for "no rank '7'"
has 'rank: 0 '

# -- call tree: lazy expansion and collapse ------------------------------
order '^▾ scope_profiler' '^    setup' '^  ▸ timestep +0 +1\.000000 +1\.500000 +0\.100000'
keys g j j l
wait_for '^  ▾ timestep +0 '
order '^  ▾ timestep +0 ' '^      assemble +0 +1\.000000' '^      solve +0 +1\.500000 +0\.900000' '^  ▸ timestep +1 '
keys h
wait_for '^  ▸ timestep +0 '
hasnt 'assemble'

# -- metadata groups ---------------------------------------------------------
keys 4
wait_for '^Parallelism'
order '^Run' '^  hostname +node042' '^System' '^Parallelism' '^  mpi_size +2' '^Slurm' \
	'^  SLURM_JOB_ID +4711' '^Environment' '^Modules \(2\)' '^  openmpi/4\.1'

# -- timeline: zoom and pan --------------------------------------------------
keys 5
wait_for 'rank 0, thread all: 0\.000000 s \.\. 9\.000000 s \(zoom x1\)'
has '^solve +│ +[░▒▓]?█+'
keys +
wait_for '\(zoom x2\)'
has '2\.250000 s \.\. 6\.750000 s'
keys l
wait_for '3\.375000 s \.\. 7\.875000 s'
keys 0
wait_for '\(zoom x1\)'

# -- help --------------------------------------------------------------------
keys '?'
wait_for 'scope-profiler tui: keys'
keys x
wait_gone 'scope-profiler tui: keys'

# -- e exports the current pane to CSV -----------------------------------
keys 1 r Enter
wait_for 'rank: all '
keys s
wait_for 'sort: total'
keys e
wait_for 'export CSV to: known-summary\.csv'
keys Enter
wait_for 'wrote 9 rows to known-summary\.csv'
csv="$work/known-summary.csv"
[ -f "$csv" ] || fail "no $csv"
head -1 "$csv" | grep -q '^depth,region,own,recursive,ranks,calls,percent,total' ||
	fail "bad CSV header: $(head -1 "$csv")"
got=$(cut -d, -f2,3 "$csv" | tail -n +2 | tr '\n' ' ')
want="scope_profiler.session,0 scope_profiler.session,1 timestep,0 timestep,1 solve,0 assemble,0 output,0 setup,0 checkpoint,0 "
[ "$got" = "$want" ] || fail "CSV rows: got '$got', want '$want'"
grep -q '^2,solve,0,0,2,8,41.4507772,8,' "$csv" || fail "CSV solve row: $(grep solve "$csv")"
keys 2 e C-u calls.csv Enter
wait_for 'wrote [0-9]+ rows to calls\.csv'
head -1 "$work/calls.csv" | grep -q '^call_id,depth,region' || fail "bad call-tree CSV"

# -- resize ------------------------------------------------------------------
keys 1
tmux -L "$sock" resize-window -t tui -x 90 -y 20
wait_for '^region +ranks +n +% session +total \[s\]▼ +avg \[s\] *$'
hasnt 'p99 \[s\]'
tmux -L "$sock" resize-window -t tui -x 160 -y 48
wait_for 'p99 \[s\]'

# -- q quits with status 0 ---------------------------------------------------
keys q
wait_for 'TUI-EXIT=0'

# -- a resize whose SIGWINCH never reaches ncurses (blocked here; a signal
# landing between ncurses' check and its read() is the same) still redraws --
cat >"$work/block-winch.py" <<'EOF'
import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGWINCH])
os.execvp(sys.argv[1], sys.argv[1:])
EOF
start C.UTF-8 known "'$py' block-winch.py"
wait_for 'scope_profiler\.session \(2x\)'
keys 1
wait_for 'p99 \[s\]'
tmux -L "$sock" resize-window -t tui -x 90 -y 20
wait_for '^region +ranks +n +% session +total \[s\]▼? +avg \[s\] *$' 5
hasnt 'p99 \[s\]'
keys q
wait_for 'TUI-EXIT=0'

# -- ASCII fallback when the locale is not UTF-8 -----------------------------
start C
wait_for '^- scope_profiler\.session \(2x\)'
has '^  - timestep \(8x\)'
keys 5
wait_for 'zoom x1'
has '^solve +\| +[.:=]?#+'
if screen | LC_ALL=C grep -q '[^[:print:][:space:]]'; then
	fail "non-ASCII output in the C locale"
fi
keys q
wait_for 'TUI-EXIT=0'

# -- t chooses the thread lane (call tree and timeline) ----------------------
start C.UTF-8 threads
wait_for '^  main_loop +1 +1 '
keys 2
wait_for 'rank 0, thread all: 5 calls'
order '^  main_loop +0 ' '^▸ worker +0 ' '^▸ worker +1 '
keys t
wait_for 'rank 0, thread 0: 1 calls'
has 'thread 0 \(main-0\)'
hasnt 'worker'
keys t
wait_for 'rank 0, thread 1: 4 calls'
has 'thread 1 \(thread-1\)'
order '^▸ worker +0 +1\.000000 +2\.000000 +1\.000000' '^▸ worker +1 '
hasnt 'main_loop'
keys 5
wait_for 'rank 0, thread 1: 1\.000000 s \.\. 6\.000000 s'
has '^main_loop +│ +│ +0 +0\.0%'
keys t
wait_for 'rank 0, thread all: '
has '^main_loop +│█+│ +1 +100\.0%'
keys q
wait_for 'TUI-EXIT=0'

echo "PASS: tui"
