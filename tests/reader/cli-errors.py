# SPDX-License-Identifier: MIT
"""CLI error paths: schema 4, schema "one", corrupt offsets, overlapping and
duplicate rows, a missing file, a non-profile file and usage errors must exit
2 with exactly one line on stderr naming the file. Also --version/--help.
Usage: cli-errors.py SCOPE_PROFILER_BINARY."""
import os
import subprocess
import sys
import tempfile

import profile_builder as B


def columnar(path, schema=2, offsets=(0, 2), counts=(2, 2), regions=(0, 1), ranks=(0, 0)):
    B.write_file(path, schema=schema, names=["a", "b"],
                 index={"region_ids": regions, "ranks": ranks, "event_offsets": offsets,
                        "event_counts": counts},
                 events={"start_times": [1, 3, 5, 7], "end_times": [2, 4, 6, 8]})


def run(binary, *args):
    p = subprocess.run([binary, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def main():
    binary = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        cases = {
            "schema4.h5": (dict(schema=4), "unsupported schema version 4"),
            "schemaone.h5": (dict(schema="one"), "must be an integer"),
            "past.h5": (dict(offsets=(0, 3)), "past the end"),
            "overlap.h5": (dict(offsets=(0, 1)), "overlap"),
            "dup.h5": (dict(regions=(0, 0)), "duplicate"),
        }
        for name, (kw, text) in cases.items():
            path = os.path.join(tmp, name)
            columnar(path, **kw)
            cases[name] = (path, text)
        good = os.path.join(tmp, "good.h5")
        columnar(good)
        notprof = os.path.join(tmp, "notes.txt")
        with open(notprof, "w") as fh:
            fh.write("hello\n")
        checks = [(["summary", p], p, t) for p, t in cases.values()]
        checks += [
            (["summary", os.path.join(tmp, "missing.h5")], "missing.h5", "No such file"),
            (["summary", notprof], notprof, "not a scope-profiler file"),
            (["summary", "--json", notprof], notprof, "not a scope-profiler file"),
            (["summary", good, "--include", "("], "(", "invalid regular expression"),
            (["summary", good, "--ranks", "1-"], "1-", "invalid rank list"),
            (["summary", good, "--sort", "bogus"], "bogus", "unknown sort key"),
            (["summary"], "summary", "no profile file"),
            (["frobnicate"], "frobnicate", "invalid command"),
        ]
        for args, must_name, text in checks:
            rc, out, err = run(binary, *args)
            lines = [l for l in err.splitlines() if not l.startswith("usage:")]
            if rc != 2 or len(lines) != 1 or must_name not in lines[0] or text not in lines[0]:
                failures.append(f"{args}: rc={rc} stderr={err!r}")
        rc, out, err = run(binary)
        if rc != 2 or "usage" not in err:
            failures.append(f"no args: rc={rc}")
        rc, out, err = run(binary, "--version")
        if rc != 0 or not out.startswith("scope-profiler "):
            failures.append(f"--version: rc={rc} out={out!r}")
        rc, out, err = run(binary, "--help")
        if rc != 0 or "summary" not in out:
            failures.append(f"--help: rc={rc}")
        rc, out, err = run(binary, "summary", good)
        if rc != 0 or not ("call path" in out and "incl" in out and "excl" in out):
            failures.append(f"summary good: rc={rc} err={err!r}")
    for f in failures:
        print("FAIL", f)
    print(f"cli-errors: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
