#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cost bounded by the file (docs/FORMAT.md, "What the reader refuses"),
and nothing raw on a terminal or in a spreadsheet. Each crafted file is
small; every command runs under a 1 GiB address-space limit and 60 s of CPU
(limits, not timings: a run that needs more is killed and fails):

- a 4 MB gzip "bomb" whose event columns claim 2^27 values while its index
  uses 3: read only as far as the index refers;
- mpi_size = 2^31: refused in one line ("out of range");
- two 1 MB region names: cut, with the "...[+N bytes]" marker;
- names with ESC, an OSC title sequence, CR, BEL and a newline: no control
  byte reaches a table (summary, inspect, events, tree, comm);
- a name "=cmd|' /C calc'!A0": its CSV cell starts with ' (events --format
  csv), so a spreadsheet shows it as text.

Usage: test_bounded.py SCOPE_PROFILER
"""
import os
import resource
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile_files  # noqa: E402
import profile_builder as B  # noqa: E402

COMMANDS = [["summary"], ["summary", "--json"], ["inspect"], ["events"],
            ["events", "--format", "csv"], ["tree"], ["comm"],
            ["export", "chrome-trace", "-o", "{out}/t.json"],
            ["report", "-o", "{out}/r.html"], ["plot", "all", "-o", "{out}/p"]]
AS_LIMIT = 1 << 30


def limits():
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))
    resource.setrlimit(resource.RLIMIT_CPU, (60, 60))


def run(cli, argv, out):
    argv = [cli] + [a.format(out=out) for a in argv]
    return subprocess.run(argv, capture_output=True, preexec_fn=limits,
                          stdin=subprocess.DEVNULL)


def bomb(path):
    B.columnar(path, ["a", "b"], [(0, 0, [10, 20], [15, 25]), (1, 0, [30], [40])],
               metadata={"mpi_size": 1})
    n, chunk = 1 << 27, 1 << 20
    with h5py.File(path, "r+") as f:
        for k in ("start_times", "end_times"):
            del f["events/" + k]
            d = f.create_dataset("events/" + k, shape=(n,), dtype="<i8", chunks=(chunk,),
                                 compression="gzip", compression_opts=9)
            z = np.zeros(chunk, dtype="<i8")
            z[:3] = [10, 20, 30] if k == "start_times" else [15, 25, 40]
            for i in range(0, n, chunk):
                d[i:i + chunk] = z
                z[:3] = 0


def main():
    cli = sys.argv[1]
    fails = []
    with tempfile.TemporaryDirectory() as d:
        files = {}
        files["bomb"] = os.path.join(d, "bomb.h5")
        bomb(files["bomb"])
        assert os.path.getsize(files["bomb"]) < 10 << 20
        files["mpi_size"] = os.path.join(d, "mpi-size.h5")
        hostile_files.write_columnar(files["mpi_size"])
        with h5py.File(files["mpi_size"], "r+") as f:
            f["metadata"].attrs["mpi_size"] = np.int64(1 << 31)
        files["huge-names"] = os.path.join(d, "huge-names.h5")
        hostile_files.write_columnar(files["huge-names"], depth=2,
                                     names=["A" * (1 << 20), "B" * (1 << 20)])
        ctl = ["esc-\x1b[31mred", "osc-\x1b]0;pwned\x07", "cr-\roverwrite", "nl-\nrow",
               "=cmd|' /C calc'!A0"]
        files["control"] = os.path.join(d, "control.h5")
        hostile_files.write_columnar(files["control"], depth=len(ctl), names=ctl)

        for key, path in files.items():
            for cmd in COMMANDS:
                r = run(cli, cmd + [path], d)
                tag = f"{key}: {' '.join(cmd)}"
                err = r.stderr.decode("utf-8", "replace")
                if r.returncode < 0:
                    fails.append(f"{tag}: killed by signal {-r.returncode} (over the 1 GiB "
                                 f"or 60 s CPU limit?) {err[-300:]}")
                    continue
                if key == "mpi_size":
                    if r.returncode != 2 or "out of range" not in err:
                        fails.append(f"{tag}: rc {r.returncode}, {err!r}: want exit 2, "
                                     f"'out of range'")
                    continue
                if r.returncode == 2 and cmd == ["comm"] and "no MPI columns" in err:
                    continue  # a file without MPI columns: one line, exit 2
                if r.returncode != 0:
                    fails.append(f"{tag}: rc {r.returncode}: {err[-300:]}")
                    continue
                text = not {"--json", "export", "report", "csv"} & set(cmd)
                if text and key == "control":
                    raw = [c for c in (b"\x1b", b"\x07", b"\r") if c in r.stdout + r.stderr]
                    if raw:
                        fails.append(f"{tag}: raw control bytes {raw} on the terminal")
                if key == "huge-names" and cmd == ["summary"]:
                    if b"...[+" not in r.stdout:
                        fails.append(f"{tag}: no cut marker for a 1 MB name")
                if key == "control" and "csv" in cmd:
                    lines = r.stdout.decode().splitlines()
                    cells = [ln for ln in lines if "calc" in ln]
                    if not cells or not all(ln.startswith("\"'=cmd") for ln in cells):
                        fails.append(f"{tag}: the formula cell is not neutralised: {cells[:2]}")
            if key == "huge-names":
                size = os.path.getsize(os.path.join(d, "r.html"))
                if size > 50 << 20:
                    fails.append(f"huge-names: report is {size} bytes")
    for f in fails:
        print("FAIL:", f)
    if fails:
        sys.exit(1)
    print(f"ok: {len(files)} crafted files x {len(COMMANDS)} commands within 1 GiB and 60 s CPU")


if __name__ == "__main__":
    main()
