#!/usr/bin/env python3
"""The CLI prints floats exactly as Python's repr() does (shortest digits
that round-trip, same notation), so JSON/CSV values compare equal."""
import random
import subprocess
import sys

prog = sys.argv[1]
rng = random.Random(7)
values = [0.0, -0.0, 1.0, -2.5, 0.1, 1e-4, 9.999e-5, 1e-5, 1.5e-7, 123.456, 1e15, 1e16,
          9999999999999998.0, 123456789012345678.0, 5e-324, 1.7976931348623157e308,
          0.30000000000000004, 2 / 3, 1e22, 1e-300]
values += [rng.uniform(-1e6, 1e6) for _ in range(300)]
values += [rng.randrange(0, 10**13) / 1e9 for _ in range(300)]
values += [rng.random() * 10 ** rng.randrange(-30, 30) for _ in range(300)]
args = [repr(v) for v in values]
out = subprocess.run([prog] + args, capture_output=True, text=True, check=True).stdout.split()
bad = [(a, o) for a, o in zip(args, out) if a != o]
assert len(out) == len(args), (len(out), len(args))
assert not bad, bad[:10]
print(f"format: {len(args)} values identical to Python repr()")
