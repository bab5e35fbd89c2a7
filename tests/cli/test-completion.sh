#!/bin/bash
# SPDX-License-Identifier: MIT
# The generated bash completion (tools/docs/scope-profiler): sourced in a
# non-interactive bash, its function completes commands, options, chart
# kinds and export formats from COMP_WORDS, as bash would at <TAB>.
set -u
script=${1:?usage: test-completion.sh COMPLETION-SCRIPT}
# shellcheck disable=SC1090
source "$script" || { echo "FAIL: cannot source $script"; exit 1; }
complete -p scope-profiler | grep -q -- '-F _scope_profiler' ||
	{ echo "FAIL: no completion registered"; exit 1; }
fail=0
expect() { # expect "WANT" WORD...: complete the last word
	local want=$1
	shift
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMPREPLY=()
	_scope_profiler
	local got="${COMPREPLY[*]}"
	if [ "$got" != "$want" ]; then
		echo "FAIL: '$*<TAB>' completes to '$got', expected '$want'"
		fail=1
	fi
}
cd "$(mktemp -d)" || exit 1
expect "summary" scope-profiler su
expect "scaling" scope-profiler sc
expect "--columns" scope-profiler summary --co
expect "--min-duration" scope-profiler run --min
expect "--max-regression" scope-profiler check --max-r
expect "gantt" scope-profiler plot ga
expect "chrome-trace" scope-profiler export chr
expect "tree" scope-profiler help tr
touch prof.h5
expect "prof.h5" scope-profiler summary pr
expect "prof.h5" scope-profiler tree --rank 0 pr
[ "$fail" -eq 0 ] && echo "ok: completion"
exit "$fail"
