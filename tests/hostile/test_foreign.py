#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The reader opens only what the file holds (docs/FORMAT.md, "What the
reader refuses"). A valid profile is altered so that its region names are
an HDF5 external link to another profile, or it holds an external link to a
FIFO, a virtual dataset, or a dataset stored in an external raw file; and a
FIFO is given as the profile itself. Every command must exit 2 within 20 s
with one line naming what was refused, never show the other file's names,
and never hang on the FIFO.

Usage: test_foreign.py SCOPE_PROFILER
"""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile_files  # noqa: E402

COMMANDS = [["summary"], ["summary", "--json"], ["inspect"], ["events"], ["tree"],
            ["comm"], ["export", "chrome-trace", "-o", "-"], ["report", "-o", "{out}/r.html"],
            ["plot", "gantt", "-o", "{out}/p"], ["line-profile"]]


def variants(d):
    good = os.path.join(d, "good.h5")
    hostile_files.write_columnar(good)
    other = os.path.join(d, "other.h5")
    hostile_files.write_columnar(other, names=["SECRET_a", "SECRET_b", "SECRET_c"])
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    out = {}

    def copy(name):
        p = os.path.join(d, name + ".h5")
        with open(good, "rb") as a, open(p, "wb") as b:
            b.write(a.read())
        return p

    p = copy("elink-names")
    with h5py.File(p, "r+") as f:
        del f["region_table/names"]
        f["region_table/names"] = h5py.ExternalLink(other, "/region_table/names")
    out[p] = "external link"
    p = copy("elink-fifo")
    with h5py.File(p, "r+") as f:
        f["extra"] = h5py.ExternalLink(fifo, "/x")
    out[p] = "external link"
    p = copy("vds")
    with h5py.File(p, "r+") as f:
        n = f["events/start_times"].shape[0]
        layout = h5py.VirtualLayout(shape=(n,), dtype="i8")
        layout[:] = h5py.VirtualSource(other, "events/start_times", shape=(n,))
        del f["events/start_times"]
        f.create_virtual_dataset("events/start_times", layout)
    out[p] = "virtual dataset"
    p = copy("external-raw")
    raw = os.path.join(d, "raw.bin")
    with h5py.File(p, "r+") as f:
        v = f["events/end_times"][()]
        v.astype("<i8").tofile(raw)
        del f["events/end_times"]
        f.create_dataset("events/end_times", shape=v.shape, dtype="<i8",
                         external=[(raw, 0, v.nbytes)])
    out[p] = "external files"
    out[fifo] = "FIFO"
    return good, out


def main():
    cli = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as d:
        good, cases = variants(d)
        r = subprocess.run([cli, "summary", good], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, f"the unaltered profile must read: {r.stderr}"
        for path, why in cases.items():
            for cmd in COMMANDS:
                argv = [cli] + [a.format(out=d) for a in cmd] + [path]
                try:
                    r = subprocess.run(argv, capture_output=True, text=True, timeout=20,
                                       stdin=subprocess.DEVNULL)
                except subprocess.TimeoutExpired:
                    failures.append(f"{' '.join(cmd)} {os.path.basename(path)}: hung")
                    continue
                lines = r.stderr.strip().splitlines()
                if r.returncode != 2 or len(lines) != 1 or why not in lines[0]:
                    failures.append(f"{' '.join(cmd)} {os.path.basename(path)}: exit "
                                    f"{r.returncode}, stderr {r.stderr!r} (want exit 2, "
                                    f"one line with {why!r})")
                if "SECRET" in r.stdout + r.stderr:
                    failures.append(f"{' '.join(cmd)} {os.path.basename(path)}: the other "
                                    f"file's names were shown")
    for f in failures:
        print("FAIL:", f)
    if failures:
        sys.exit(1)
    print(f"ok: {len(cases)} files x {len(COMMANDS)} commands refused in one line")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
