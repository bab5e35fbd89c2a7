#!/bin/bash
# Benchmark: time from starting `scope-profiler tui` on a generated
# N-event profile (default 10 M, make-profile.py big) to (a) the first frame
# and (b) the summary rows on screen, polling tmux capture-pane every 5 ms.
# Best of RUNS runs; fails if (b) exceeds SP_TUI_FIRST_SCREEN_MAX seconds
# (default 1.0).
set -u
bin=${SP_TUI_BIN:-${SP_BUILD_DIR:-build}/tools/scope-profiler}
py=${SP_PYTHON:?}
events=${SP_TUI_BENCH_EVENTS:-10000000}
runs=${SP_TUI_BENCH_RUNS:-3}
max=${SP_TUI_FIRST_SCREEN_MAX:-1.0}
here=$(cd "$(dirname "$0")" && pwd)

command -v tmux >/dev/null || { echo "SKIP: tmux missing"; exit 77; }
work=$(mktemp -d)
sock="sp-tui-bench-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null; rm -rf "$work"' EXIT
"$py" "$here/make-profile.py" big "$work/big.h5" "$events" || exit 1
"$bin" summary "$work/big.h5" >/dev/null || exit 1 # warm the page cache

now() { date +%s.%N; }
poll() { # poll REGEX: until the screen matches (60 s at most)
	local end=$((SECONDS + 60))
	until tmux -L "$sock" capture-pane -p -t b 2>/dev/null | grep -qE -- "$1"; do
		[ $SECONDS -ge $end ] && { echo "FAIL: no /$1/ after 60 s"; exit 1; }
		sleep 0.005
	done
}
best_frame=999 best_rows=999
for i in $(seq "$runs"); do
	t0=$(now)
	tmux -L "$sock" new-session -d -s b -x 160 -y 48 \
		"env LANG=C.UTF-8 LC_ALL=C.UTF-8 '$bin' tui '$work/big.h5'"
	poll '1 Summary'
	t1=$(now)
	poll 'kernel \([0-9]+x\)'
	t2=$(now)
	tmux -L "$sock" kill-server 2>/dev/null
	sleep 0.5
	frame=$(awk "BEGIN { printf \"%.3f\", $t1 - $t0 }")
	rows=$(awk "BEGIN { printf \"%.3f\", $t2 - $t0 }")
	echo "run $i: first frame ${frame} s, summary rows ${rows} s"
	best_frame=$(awk "BEGIN { print ($frame < $best_frame) ? $frame : $best_frame }")
	best_rows=$(awk "BEGIN { print ($rows < $best_rows) ? $rows : $best_rows }")
done
echo "tui first screen on $events events: frame ${best_frame} s, summary rows ${best_rows} s (best of $runs)"
echo "{\"metric\": \"tui_first_frame\", \"unit\": \"s\", \"min\": $best_frame, \"events\": $events, \"runs\": $runs}"
echo "{\"metric\": \"tui_first_summary\", \"unit\": \"s\", \"min\": $best_rows, \"events\": $events, \"runs\": $runs}"
if awk "BEGIN { exit !($best_rows > $max) }"; then
	echo "FAIL: summary rows after ${best_rows} s > ${max} s"
	exit 1
fi
