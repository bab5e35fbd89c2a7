#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hostile input: every CLI command, on a truncated,
corrupt, non-HDF5, empty or wrong-schema file, prints one clear line naming
the file and exits 2 (never a signal, never a sanitizer report), and leaves
no partial output file behind.

Usage: test_hostile.py SCOPE_PROFILER [FIXTURES_DIR] [EXTRA_BASE.h5...]
Files come from hostile_files.py. Strict files are invalid by construction
and must be rejected by every command; "odd" files (calls ending before
they start, huge durations, very deep nesting) must be read; bit-flipped
copies may stay readable. Whatever `summary` says decides for the other
commands: a readable file may make a command fail for other reasons, in one
line; an unreadable one makes every command fail with one line naming it.
Environment: SP_HOSTILE_KEEP=DIR keeps the generated files in DIR;
SP_HOSTILE_FILTER=SUBSTR runs only files whose name contains SUBSTR.
"""
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile_files  # noqa: E402

EXPORT_FORMATS = ["chrome-trace", "speedscope", "folded", "json", "plot-data",
                  "region-statistics"]
# Commands whose output grows linearly with the calls, whatever the depth.
LINEAR_COMMANDS = {"summary-json", "inspect-json", "events-json",
                   "diff-a", "check", "comm", "export-chrome-trace",
                   "export-json", "export-region-statistics", "tui"}
HDF5_EXIT_BUG = "HDF5: infinite loop closing library"
SANITIZER_MARKS = ("AddressSanitizer", "UndefinedBehaviorSanitizer",
                   "LeakSanitizer", "runtime error:", "Segmentation fault")


def commands(path, good, out):
    """(name, argv, output paths that must not exist after a failure)."""
    cmds = [
        ("summary", ["summary", path], []),
        ("summary-json", ["summary", "--json", path], []),
        ("summary-flat-sort", ["summary", "--sort", "p99", path], []),
        ("inspect", ["inspect", path], []),
        ("inspect-json", ["inspect", "--json", "--full", path], []),
        ("events", ["events", path], []),
        ("events-csv", ["events", "--format", "csv", path], []),
        ("events-json", ["events", "--json", path], []),
        ("tree", ["tree", path], []),
        ("tree-json", ["tree", "--json", path], []),
        ("diff-a", ["diff", path, good], []),
        ("diff-b", ["diff", good, path], []),
        ("check", ["check", good, path], []),
        ("scaling", ["scaling", path, good], []),
        ("comm", ["comm", path], []),
        ("comm-json", ["comm", "--json", path], []),
        ("plot", ["plot", "all", path, "-o", os.path.join(out, "plot")],
         [os.path.join(out, "plot")]),
        ("report", ["report", path, "-o", os.path.join(out, "r.html")],
         [os.path.join(out, "r.html")]),
        ("tui", ["tui", path], []),
    ]
    for fmt in EXPORT_FORMATS:
        o = os.path.join(out, "x." + fmt)
        cmds.append(("export-" + fmt, ["export", fmt, path, "-o", o], [o]))
    return cmds


def strip_hdf5_exit_bug(lines, rc):
    """Drop the libhdf5 exit message (2 lines) and a LeakSanitizer report
    whose every frame past the allocator is inside libhdf5. Returns the
    remaining lines and the exit code main() returned (LSan turns it into
    1), or (None, rc) when the leak involves other code."""
    i = lines.index(HDF5_EXIT_BUG)
    lines = lines[:i] + lines[i + 2:]
    if not any("LeakSanitizer" in l for l in lines):
        return lines, rc
    start = next(k for k, l in enumerate(lines) if l.startswith("====="))
    end = max(k for k, l in enumerate(lines) if l.startswith("SUMMARY: AddressSanitizer"))
    frames = [l for l in lines[start:end] if l.strip().startswith("#")]
    if not frames or not all("libhdf5" in l or "asan_malloc" in l for l in frames):
        return None, rc
    return [l for l in lines[:start] if l.strip()], (2 if rc == 1 else rc)


def leftovers(out, expected):
    """Files in out after a failed command (expected paths or temp files)."""
    found = []
    for root, dirs, files in os.walk(out):
        for f in files:
            found.append(os.path.join(root, f))
    for p in expected:
        if os.path.isdir(p) and not os.listdir(p):
            continue  # an empty output directory holds no partial file
        if os.path.exists(p) and p not in found:
            found.append(p)
    return found


def run_one(binary, path, strict, good, workdir, known):
    problems = []
    out = tempfile.mkdtemp(dir=workdir)
    name = os.path.basename(path)
    loads = None
    for cname, argv, outputs in commands(path, good, out):
        if "very-deep" in name and cname not in LINEAR_COMMANDS:
            continue
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out, exist_ok=True)
        try:
            p = subprocess.run([binary, *argv], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, timeout=300)
        except subprocess.TimeoutExpired:
            problems.append(f"{name}: {cname}: timeout (hang)")
            continue
        rc = p.returncode
        err = p.stderr.decode("utf-8", "replace")
        lines = err.splitlines()
        if HDF5_EXIT_BUG in lines:
            # HDF5 1.10.8 prints this from its atexit handler after some
            # corrupt object headers, with no object left open by us (and
            # under LeakSanitizer leaks 56 bytes allocated inside libhdf5):
            # a libhdf5 bug, counted and reported, not a failure of ours.
            lines, rc = strip_hdf5_exit_bug(lines, rc)
            if lines is None:
                problems.append(f"{name}: {cname}: HDF5 exit message with a leak "
                                f"not inside libhdf5:\n{err[-3000:]}")
                continue
            known.append(f"{name}: {cname}")
            err = "\n".join(lines) + "\n"
        tag = f"{name}: {cname}: rc={rc}"
        if rc < 0 or rc >= 128 or any(m in err for m in SANITIZER_MARKS):
            problems.append(f"{tag}: CRASH\n{err[-3000:]}")
            continue
        if loads is None:  # the first command (summary) tells
            loads = rc == 0
            if strict is True and loads:
                problems.append(f"{tag}: an invalid file was accepted")
            if strict == "loads" and not loads:
                problems.append(f"{tag}: a readable file was rejected: {err[:500]!r}")
        ok_rcs = {0, 2} if loads else {2}
        if cname == "check" and loads:
            ok_rcs.add(1)
        if cname == "tui":
            ok_rcs = {2}  # never a terminal here: refuses in every case
        if rc not in ok_rcs:
            problems.append(f"{tag}: expected exit {sorted(ok_rcs)}; stderr={err[:500]!r}")
            continue
        # An unreadable file: one line naming it. A readable one may fail
        # for other reasons (no common region...), still in one line.
        if cname == "check" and rc == 1:
            continue  # a failed check: verdict on stdout
        if rc != 0 and (len(lines) != 1 or (not loads and name not in lines[0])):
            problems.append(f"{tag}: stderr must be one line naming the file: {err[:800]!r}")
        if rc != 0:
            left = leftovers(out, outputs)
            if left:
                problems.append(f"{tag}: partial output left behind: {left}")
    shutil.rmtree(out, ignore_errors=True)
    return problems


def main():
    binary = os.path.abspath(sys.argv[1])
    fixtures = sys.argv[2] if len(sys.argv) > 2 else None
    extra = sys.argv[3:]
    keep = os.environ.get("SP_HOSTILE_KEEP")
    only = os.environ.get("SP_HOSTILE_FILTER")
    tmp = tempfile.mkdtemp(prefix="sp-hostile-")
    try:
        files_dir = keep or os.path.join(tmp, "files")
        files = hostile_files.make_all(files_dir, fixtures, extra)
        good = hostile_files.write_columnar(os.path.join(tmp, "good.h5"))
        if only:
            files = [f for f in files if only in os.path.basename(f[0])]
        work = os.path.join(tmp, "work")
        os.makedirs(work)
        problems = []
        known = []
        jobs = max(2, os.cpu_count() or 2)
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            futs = [pool.submit(run_one, binary, p, s, good, work, known)
                    for p, s in files]
            for f in futs:
                problems += f.result()
        n_cmds = len(commands("x", "y", "z"))
        print(f"{len(files)} hostile files x {n_cmds} commands "
              f"({sum(1 for _, s in files if s)} strict)")
        for k in sorted(set(k.split(":")[0] for k in known)):
            print(f"KNOWN libhdf5 1.10.8 exit message ({HDF5_EXIT_BUG!r}) after: {k}")
        for pr in problems:
            print("FAIL", pr)
        print(f"{len(problems)} problem(s)")
        return 1 if problems else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
