#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Validate `export speedscope` output against the file-format schema that
the npm package `speedscope` ships (dist/release/file-format-schema.json).
The package is installed into a temporary prefix with npm (or taken from
SP_SPEEDSCOPE_DIR, a directory holding an installed package). Exit 77 when
npm or the registry is unavailable, or h5py is missing.
Usage: speedscope_schema.py SCOPE_PROFILER FIXTURES_DIR."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import profiles as P
except ImportError as exc:
    print(f"skip: {exc}")
    sys.exit(77)
import minischema

EXE, FIXTURES = sys.argv[1], sys.argv[2]


def find_schema(root):
    for dirpath, _, files in os.walk(root):
        if "file-format-schema.json" in files and "speedscope" in dirpath:
            return os.path.join(dirpath, "file-format-schema.json")
    return None


def install(tmp):
    given = os.environ.get("SP_SPEEDSCOPE_DIR")
    if given:
        return find_schema(given)
    npm = shutil.which("npm")
    if not npm:
        print("skip: npm is not installed (needed to fetch the speedscope package)")
        sys.exit(77)
    p = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", tmp,
                        "speedscope"], capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        print(f"skip: npm install speedscope failed: {p.stderr.strip()[-300:]}")
        sys.exit(77)
    return find_schema(os.path.join(tmp, "node_modules", "speedscope"))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        path = install(tmp)
        if not path:
            print("FAIL: the speedscope package ships no file-format-schema.json")
            return 1
        schema = json.load(open(path))
        print(f"schema: {path}")
        lanes = {0: {"main": [0], "work": [1, 1]}}
        P.write_nested(f"{tmp}/nested.h5")
        P.write_nested(f"{tmp}/lanes.h5", 1, {0: {"main": [(0, 1000)], "work": [(100, 700), (800, 1200)]}},
                       ["main", "work"], lanes, {0: "MainThread", 1: "worker-1"})
        inputs = [f"{tmp}/nested.h5", f"{tmp}/lanes.h5"] + \
            [os.path.join(FIXTURES, f) for f in sorted(os.listdir(FIXTURES))]
        fails = 0
        for src in inputs:
            out = subprocess.run([EXE, "export", "speedscope", src, "-o", "-"],
                                 capture_output=True, text=True, check=True).stdout
            doc = json.loads(out)
            errs = minischema.errors(doc, schema)
            if errs or not doc["profiles"]:
                fails += 1
                print(f"FAIL: {src}: {errs[:5] or 'no profiles'}")
        # The validator must reject a broken file (the test can fail).
        doc["profiles"][0]["events"][0]["type"] = "X"
        del doc["shared"]["frames"][0]["name"]
        if len(minischema.errors(doc, schema)) < 2:
            fails += 1
            print("FAIL: the schema check accepts a broken file")
        print(f"{len(inputs)} files checked, {fails} failure(s)")
        return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
