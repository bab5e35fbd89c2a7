#!/bin/sh
# SPDX-License-Identifier: MIT
# The generated man pages (tools/docs/, from the --help text): one per
# command plus scope-profiler(1); `man -l` renders each without warnings,
# with its NAME, SYNOPSIS and every option of the help text.
set -u
dir=${1:?usage: test-man.sh MAN-DIR}
if ! command -v man >/dev/null 2>&1; then
	echo "SKIP: man (man-db) is not installed"
	exit 77
fi
fail=0
n=0
for page in "$dir"/scope-profiler.1 "$dir"/scope-profiler-*.1; do
	n=$((n + 1))
	out=$(MANWIDTH=100 MAN_KEEP_FORMATTING= man --warnings -E UTF-8 -l "$page" 2>"$dir/man-warnings.txt" | sed "s/.\x08//g")
	if [ -s "$dir/man-warnings.txt" ]; then
		echo "FAIL: $page: warnings:"; cat "$dir/man-warnings.txt"; fail=1
	fi
	for section in NAME SYNOPSIS "SEE ALSO"; do
		printf '%s\n' "$out" | grep -q "^$section" || { echo "FAIL: $page: no $section"; fail=1; }
	done
	cmd=$(basename "$page" .1 | sed 's/^scope-profiler-\{0,1\}//')
	# Every --long option of the command's help is in its page.
	bin=$(dirname "$dir")/scope-profiler
	if [ -n "$cmd" ]; then help=$("$bin" "$cmd" --help); else help=$("$bin" --help); fi
	for opt in $(printf '%s\n' "$help" | grep -o -- '^  -[-a-zA-Z, ]*--[a-z][a-z0-9-]*' | grep -o -- '--[a-z][a-z0-9-]*'); do
		printf '%s\n' "$out" | grep -q -- "$opt" || { echo "FAIL: $page: $opt missing"; fail=1; }
	done
done
rm -f "$dir/man-warnings.txt"
[ "$n" -eq 17 ] || { echo "FAIL: $n man pages, expected 17 (16 commands and scope-profiler.1)"; fail=1; }
[ "$fail" -eq 0 ] && echo "ok: $n man pages render"
exit "$fail"
