#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Golden-output tests of `scope-profiler summary`: fixed input files
(golden_profiles.py) and the exact expected text of each screen in
tests/cli/golden/*.txt. The numbers of those texts are checked against
h5py/numpy separately (check_golden_values.py).

    test_golden.py            compare
    test_golden.py --update   rewrite the .txt files (then review the diff)
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import golden_profiles  # noqa: E402

CLI = os.environ.get("SP_CLI") or os.path.join(os.environ.get("SP_BUILD_DIR", "build"),
                                               "tools", "scope-profiler")
UTF8 = {"LANG": "C.UTF-8"}
# name: (file, arguments, environment)
CASES = {
    "tree-default": ("tree.h5", [], UTF8),
    "tree-80": ("tree.h5", [], dict(UTF8, SCOPE_PROFILER_COLUMNS="80")),
    "tree-wide": ("tree.h5", ["--wide"], dict(UTF8, SCOPE_PROFILER_COLUMNS="80")),
    "tree-ascii": ("tree.h5", [], {"LANG": "C", "SCOPE_PROFILER_COLUMNS": "80"}),
    "tree-ascii-option": ("tree.h5", ["--ascii"], dict(UTF8, SCOPE_PROFILER_COLUMNS="80")),
    "tree-flat": ("tree.h5", ["--flat"], UTF8),
    "tree-flat-calls": ("tree.h5", ["--flat", "--sort", "calls"], UTF8),
    "tree-sort-exclusive": ("tree.h5", ["--sort", "exclusive"], UTF8),
    "tree-columns": ("tree.h5", ["--columns", "region,ranks,calls,avg,min,max,p50,p95,std",
                                 "--ranks", "0"], UTF8),
    "mpi-default": ("mpi.h5", [], UTF8),
    "mpi-sum": ("mpi.h5", ["--sum"], UTF8),
    "mpi-flat-imbalance": ("mpi.h5", ["--flat", "--sort", "imbalance"], UTF8),
    "hostile": ("hostile.h5", [], UTF8),
}
# The variables that choose glyphs and widths, removed before each case.
STYLE_VARS = ("LC_ALL", "LC_CTYPE", "LANG", "COLUMNS", "SCOPE_PROFILER_COLUMNS",
              "SCOPE_PROFILER_ASCII")


def output(tmp, name):
    path, args, env = CASES[name]
    e = {k: v for k, v in os.environ.items() if k not in STYLE_VARS}
    e.update(env)
    p = subprocess.run([CLI, "summary", path] + args, cwd=tmp, env=e,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (name, p.returncode, p.stderr.decode()))
    return p.stdout


def main():
    update = "--update" in sys.argv
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        golden_profiles.build_all(tmp)
        for name in CASES:
            got = output(tmp, name)
            want_path = os.path.join(HERE, name + ".txt")
            if update:
                with open(want_path, "wb") as f:
                    f.write(got)
                continue
            with open(want_path, "rb") as f:
                want = f.read()
            if got != want:
                failures += 1
                print("FAIL %s: output differs from %s\n--- got ---\n%s--- want ---\n%s" % (
                    name, want_path, got.decode(errors="replace"), want.decode(errors="replace")))
            else:
                print("ok   %s" % name)
        # Whatever the file holds, nothing raw reaches the terminal.
        raw = output(tmp, "hostile")
        for byte in (b"\x1b", b"\r", b"\x07"):
            if byte in raw:
                failures += 1
                print("FAIL hostile: raw %r in the output" % byte)
        # The other commands drawn by the table module (or escaping their
        # names) print the hostile names escaped too.
        e = {k: v for k, v in os.environ.items() if k not in STYLE_VARS}
        e.update(UTF8)
        for argv in (["inspect", "hostile.h5"], ["tree", "hostile.h5"],
                     ["line-profile", "hostile.h5"], ["diff", "hostile.h5", "tree.h5"],
                     ["check", "tree.h5", "hostile.h5", "--max-regression", "1000"]):
            p = subprocess.run([CLI] + argv, cwd=tmp, env=e, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
            bad = [b for b in (b"\x1b", b"\r", b"\x07") if b in p.stdout]
            if p.returncode not in (0, 1) or bad:
                failures += 1
                print("FAIL %s: exit %d, raw %r in the output" % (" ".join(argv), p.returncode, bad))
            else:
                print("ok   %s escapes names" % argv[0])
        # Bad keys are named, one line, exit 2, nothing on stdout.
        for args, word in ((["--columns", "region,bogus"], "bogus"), (["--sort", "nope"], "nope")):
            p = subprocess.run([CLI, "summary", "tree.h5"] + args, cwd=tmp, env=e,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if p.returncode != 2 or p.stdout or word not in p.stderr or p.stderr.count("\n") != 1:
                failures += 1
                print("FAIL summary %s: exit %d, stdout %r, stderr %r" % (
                    " ".join(args), p.returncode, p.stdout, p.stderr))
        # Lines fit the width where names can give way.
        for name in ("tree-80", "tree-ascii"):
            wide = [l for l in output(tmp, name).decode().splitlines()[1:]
                    if len(l) > 80 and not l.startswith(("* ", "~ "))]
            if wide:
                failures += 1
                print("FAIL %s: %d lines over 80 columns: %r" % (name, len(wide), wide[0]))
    if failures:
        print("%d failure(s)" % failures)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
