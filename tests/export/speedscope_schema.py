# SPDX-License-Identifier: MIT
"""Validate `export speedscope` output against speedscope's file-format
schema, shipped next to this file (speedscope-file-format-schema.md says
where it comes from).
Usage: speedscope_schema.py SCOPE_PROFILER FIXTURES_DIR."""
import json
import os
import subprocess
import sys
import tempfile

import minischema
import profiles as P

EXE, FIXTURES = sys.argv[1], sys.argv[2]
SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "speedscope-file-format-schema.json")


def main():
    with open(SCHEMA) as fh:
        schema = json.load(fh)
    with tempfile.TemporaryDirectory() as tmp:
        lanes = {0: {"main": [0], "work": [1, 1]}}
        P.write_nested(f"{tmp}/nested.h5")
        P.write_nested(f"{tmp}/lanes.h5", 1, {0: {"main": [(0, 1000)], "work": [(100, 700), (800, 1200)]}},
                       ["main", "work"], lanes, {0: "MainThread", 1: "worker-1"})
        inputs = [f"{tmp}/nested.h5", f"{tmp}/lanes.h5"] + P.B.fixture_paths(FIXTURES)
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
