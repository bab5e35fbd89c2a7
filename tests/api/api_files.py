"""Shared readers for the API tests: our HDF5 files through h5py, and
upstream's .spt v2 layout (upstream-native-api.md §4.4) parsed byte by byte."""
import struct

import h5py
import numpy as np


def h5_calls(path):
    """{region name: (starts, ends)} of a schema-2 file, all ranks pooled;
    also {name: (source_file, line)}."""
    with h5py.File(path, "r") as f:
        names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][()]]
        idx = f["rank_region_index"]
        starts, ends = f["events/start_times"][()], f["events/end_times"][()]
        out, src = {}, {}
        files = idx["source_files"][()]
        lines = idx["source_lines"][()]
        for row, rid in enumerate(idx["region_ids"][()]):
            o, n = int(idx["event_offsets"][row]), int(idx["event_counts"][row])
            s, e = out.get(names[rid], (np.zeros(0, np.int64), np.zeros(0, np.int64)))
            out[names[rid]] = (np.concatenate([s, starts[o:o + n]]), np.concatenate([e, ends[o:o + n]]))
            fl = files[row].decode() if isinstance(files[row], bytes) else files[row]
            src[names[rid]] = (fl, int(lines[row]))
        return out, src


def read_spt(path):
    """(rank, [(name, source, line, starts, ends)]) of a .spt v2 file; every
    byte accounted for."""
    data = open(path, "rb").read()
    assert data[:8] == b"SCOPEPRF", data[:8]
    version, rank, nreg = struct.unpack_from("<iiq", data, 8)
    assert version == 2, version
    pos, regions = 24, []
    for _ in range(nreg):
        (ln,) = struct.unpack_from("<i", data, pos)
        name = data[pos + 4:pos + 4 + ln].decode()
        pos += 4 + ln
        (sl,) = struct.unpack_from("<i", data, pos)
        src = data[pos + 4:pos + 4 + sl].decode()
        pos += 4 + sl
        line, n = struct.unpack_from("<iq", data, pos)
        pos += 12
        s = np.frombuffer(data, "<i8", n, pos)
        e = np.frombuffer(data, "<i8", n, pos + 8 * n)
        pos += 16 * n
        regions.append((name, src, line, s, e))
    assert pos == len(data), "trailing bytes"
    return rank, regions
