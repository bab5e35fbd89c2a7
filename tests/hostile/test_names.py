#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hostile region names round-trip: recorder -> HDF5 -> h5py and -> CLI JSON.
names-writer (linked with the recorder) records names with '/', spaces,
quotes, " > ", a backslash, control characters, invalid UTF-8 and 10 kB.
h5py must read back the exact bytes. Every JSON output of the CLI must be
valid UTF-8 JSON whose names equal bytes.decode('utf-8', 'replace') (one
U+FFFD per maximal invalid subpart), with the right call counts.
Usage: test_names.py NAMES_WRITER SCOPE_PROFILER."""
import json
import os
import subprocess
import sys
import tempfile

import h5py

LONG = b"long-" + b"L" * (10240 - 5)
NAMES = [
    b"outer/with/slashes", b"name with spaces", b'double "quoted" name',
    b"single 'quoted' name", b"a > b > c", b"back\\slash",
    b"ctl\x01\x1f\ttab\nnewline", b"latin1 caf\xe9 \xff\xfe",
    b"truncated utf8 \xe2\x82", b"surrogate \xed\xa0\x80 overlong \xc0\xaf",
    "valid utf8 café ✓ 🚀".encode(), LONG,
]
CALLS = {n: 2 for n in NAMES[1:]}
CALLS[NAMES[0]] = 1


def run_json(cli, *args):
    p = subprocess.run([cli, *args], capture_output=True)
    assert p.returncode == 0, (args, p.returncode, p.stderr[-2000:])
    return json.loads(p.stdout.decode("utf-8"))  # strict: must be UTF-8


def main():
    writer, cli = sys.argv[1], sys.argv[2]
    failures = []
    expected = {n.decode("utf-8", "replace"): c for n, c in CALLS.items()}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "names.h5")
        env = dict(os.environ, SCOPE_PROFILER_OUTPUT=out, SCOPE_PROFILER_QUIET="1")
        subprocess.run([writer], env=env, check=True)
        with h5py.File(out, "r") as f:
            raw = [bytes(x) for x in f["region_table/names"][()]]
            ids = f["rank_region_index/region_ids"][()]
            counts = f["rank_region_index/event_counts"][()]
        got = {raw[i]: int(c) for i, c in zip(ids, counts)}
        for n, c in CALLS.items():
            if got.get(n) != c:
                failures.append(f"h5py: {n[:60]!r}: {got.get(n)} calls, expected {c}")

        summary = run_json(cli, "summary", "--json", out)
        names = {r["name"]: r["num_calls"] for r in summary}
        for n, c in expected.items():
            if names.get(n) != c:
                failures.append(f"summary --json: {n[:60]!r}: {names.get(n)}, expected {c}")

        # Every other JSON output must parse and carry the same names.
        texts = {
            "events": subprocess.run([cli, "events", "--json", out], capture_output=True),
            "tree": subprocess.run([cli, "tree", "--json", out], capture_output=True),
        }
        for fmt in ("json", "chrome-trace", "speedscope", "region-statistics"):
            o = os.path.join(tmp, "x." + fmt)
            texts["export " + fmt] = subprocess.run(
                [cli, "export", fmt, out, "-o", o], capture_output=True)
            if texts["export " + fmt].returncode == 0:
                texts["export " + fmt].stdout = open(o, "rb").read()
        for what, p in texts.items():
            if p.returncode != 0:
                failures.append(f"{what}: rc={p.returncode} {p.stderr[-500:]!r}")
                continue
            try:
                doc = json.loads(p.stdout.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as exc:
                failures.append(f"{what}: not valid UTF-8 JSON: {exc}")
                continue
            blob = json.dumps(doc, ensure_ascii=False)
            for n in expected:
                if json.dumps(n, ensure_ascii=False)[1:-1] not in blob:
                    failures.append(f"{what}: name {n[:60]!r} missing")
    for f in failures:
        print("FAIL", f)
    print(f"names round-trip: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
