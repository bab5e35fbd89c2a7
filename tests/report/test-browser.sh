#!/bin/bash
# Browser test: headless Chromium opens the HTML reports (the MPI example,
# Jacobi with 4 ranks under mpirun; known-content profiles; several files; a
# million-event file). Fails on any console message (errors, CSP violations
# = network access), checks in the DOM the script produced that every chart
# is present and non-empty, the lanes/rows, the sorting and the search box,
# then replays a Gantt zoom and pan, a sort click and a row expansion and
# checks their results, and saves screenshots under
# <build>/meson-logs/report-browser/.
set -euo pipefail
build=${SP_BUILD_DIR:?}
src=${SP_SOURCE_DIR:?}
py=${SP_PYTHON:?}
here="$src/tests/report"
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$chrome" ] || { echo "SKIP: chromium not installed (apt-get install chromium)"; exit 77; }
cli="$build/tools/scope-profiler"
[ -x "$cli" ] || { echo "FAIL: CLI not built ($cli)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
artifacts="$build/meson-logs/report-browser"
mkdir -p "$artifacts"
cd "$work"

# browse URL OUT [flags...]: OUT.dom (stdout), OUT.log (chromium's stderr).
browse() {
  local url=$1 out=$2 profile
  shift 2
  profile=$(mktemp -d "$work/profile.XXXXXX")
  if ! timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --disable-quic \
      --no-first-run --disable-background-networking --disable-component-update \
      --disable-sync --disable-extensions --user-data-dir="$profile" \
      --enable-logging=stderr --v=0 "$@" "$url" > "$out.dom" 2> "$out.log"; then
    tail -20 "$out.log"; echo "FAIL: chromium failed on $url"; exit 1
  fi
  rm -rf "$profile"
}

# Every console message is a failure: the report's script never logs.
no_console() {
  if grep -E ':CONSOLE[:(]' "$1.log"; then
    echo "FAIL: console messages while rendering $2"; exit 1
  fi
}

# The harness must see a console error: inject one into a real report.
SCOPE_PROFILER_OUTPUT="$work/manual.h5" "$build/examples/manual-regions" 3 > /dev/null 2>&1
"$cli" report manual.h5 -o manual.html > /dev/null
sed 's|</body>|<script>window.spNoSuchFunction();</script></body>|' manual.html > broken.html
browse "file://$work/broken.html" broken --dump-dom
grep -qE ':CONSOLE[:(].*spNoSuchFunction' broken.log ||
  { cat broken.log; echo "FAIL: the harness does not see console errors"; exit 1; }
sed 's|</body>|<img src="http://198.51.100.1/x.png"></body>|' manual.html > network.html
browse "file://$work/network.html" network --dump-dom
grep -qE ':CONSOLE[:(].*Content Security Policy' network.log ||
  { cat network.log; echo "FAIL: a network load is not reported"; exit 1; }
echo "harness: an injected error and a network load are both caught"

# The MPI example (the first MPI family's, under its own launcher:
# SP_MPI_FAMILY, tests/lib/mpi.sh); manual-regions without MPI.
source "$SP_SOURCE_DIR/tests/lib/mpi.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
jacobi="$build/examples/jacobi/jacobi"
lib="$build/preload/libscope-profiler.so"
# Sanitizer builds: the sanitizer runtime must be preloaded first.
lib="${SP_SANITIZER_PRELOAD:+$SP_SANITIZER_PRELOAD:}$lib"
if command -v mpirun > /dev/null && [ -x "$jacobi" ] && [ -f "$lib" ]; then
  SCOPE_PROFILER_OUTPUT="$work/mpi.h5" timeout 120 mpirun --oversubscribe -n 4 \
    -x LD_PRELOAD="$lib" -x SCOPE_PROFILER_OUTPUT "$jacobi" 96 40 5 > /dev/null 2> mpi.err ||
    { cat mpi.err; echo "FAIL: jacobi under mpirun"; exit 1; }
  ranks=4
else
  echo "note: mpirun or the Jacobi example missing; using manual-regions instead"
  cp manual.h5 mpi.h5
  ranks=1
fi
regions=$("$cli" summary mpi.h5 --json | $py -c 'import json,sys; print(len(json.load(sys.stdin)))')
"$cli" report mpi.h5 -o mpi.html > /dev/null
browse "file://$work/mpi.html" mpi --dump-dom
no_console mpi "the MPI example's report"
$py "$here/check_dom.py" page mpi.dom --regions "$regions" --lanes "$ranks"
browse "file://$work/mpi.html#q=%5Empi_,sweep" mpi-search --dump-dom
no_console mpi-search "the MPI report with a search"
[ "$ranks" = 1 ] || $py "$here/check_dom.py" search mpi-search.dom '^mpi_,sweep'
browse "file://$work/mpi.html" mpi-shot --screenshot="$artifacts/report-mpi.png" \
  --window-size=1400,2000 --hide-scrollbars
no_console mpi-shot "the screenshot"
[ "$(stat -c %s "$artifacts/report-mpi.png")" -gt 20000 ] || { echo "FAIL: blank screenshot"; exit 1; }
echo "MPI example: $ranks ranks, $regions regions, no console message; screenshot $artifacts/report-mpi.png"

# Interactions, through the page's own handlers (report.js replays them for
# ?sptest=): a wheel zoom on the Gantt, a drag, a click on the "calls"
# header, a click on the first row; the DOM must show their results.
browse "file://$work/mpi.html?sptest=zoom,sort,expand" mpi-act --dump-dom
no_console mpi-act "the zoom, sort and expansion"
$py "$here/check_dom.py" actions mpi-act.dom --ranks "$ranks"
browse "file://$work/mpi.html?sptest=zoom,pan,sort,expand" mpi-pan --dump-dom
no_console mpi-pan "the zoom and pan"
$py "$here/check_dom.py" actions mpi-pan.dom --ranks "$ranks" --pan
browse "file://$work/mpi.html?sptest=zoom,sort,expand" mpi-act-shot \
  --screenshot="$artifacts/report-mpi-sorted-expanded.png" --window-size=1400,2000 --hide-scrollbars
browse "file://$work/mpi.html?sptest=zoom,pan,show" mpi-zoom-shot \
  --screenshot="$artifacts/report-mpi-gantt-zoomed.png" --window-size=1200,600 --hide-scrollbars
no_console mpi-zoom-shot "the zoomed Gantt screenshot"
for shot in report-mpi-sorted-expanded report-mpi-gantt-zoomed; do
  [ "$(stat -c %s "$artifacts/$shot.png")" -gt 10000 ] || { echo "FAIL: blank screenshot $shot"; exit 1; }
done
echo "interactions: zoom, pan, sort and expansion checked; screenshots $artifacts/report-mpi-{sorted-expanded,gantt-zoomed}.png"

# Known contents, several files, a million events.
$py "$here/make_profiles.py" prof --big 1000000 > /dev/null
"$cli" report prof/known.h5 -o known.html > /dev/null
browse "file://$work/known.html#q=%5Eo,%20MAIN" known --dump-dom
no_console known "known.html"
$py "$here/check_dom.py" page known.dom --regions 4 --lanes 3
$py "$here/check_dom.py" search known.dom "^o, MAIN"
"$cli" report prof/scale_1.h5 prof/scale_2.h5 prof/scale_4.h5 --x omp_num_threads -o scale.html > /dev/null
browse "file://$work/scale.html" scale --dump-dom
no_console scale "scale.html"
$py "$here/check_dom.py" page scale.dom --regions 2 --lanes 1 --files 3
"$cli" report prof/big.h5 -o big.html > /dev/null
start=$(date +%s)
browse "file://$work/big.html" big --screenshot="$artifacts/report-1M-events.png" --window-size=1400,2000
no_console big "the million-event report"
echo "million-event report: $(stat -c %s big.html) bytes, rendered in $(( $(date +%s) - start )) s"
browse "file://$work/big.html" big --dump-dom
$py "$here/check_dom.py" page big.dom --regions 3 --lanes 4
echo "report browser test: OK (screenshots in $artifacts)"
