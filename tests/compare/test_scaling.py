# SPDX-License-Identifier: MIT
"""scaling on hand-built profiles with known durations: speedup, ideal
speedup, efficiency and weak-scaling normalised runtime per region for each
x axis (num_ranks, omp_num_threads, total_cores, a metadata key), the
baseline and duplicate-x rules, globs, rank selection and errors."""
import os

from profiles import Cli, workdir, write_profile


cli = Cli()
work = workdir("sp-scaling-")


def path(name):
    return os.path.join(work, name)


def same(n, calls):
    return {rank: dict(calls) for rank in range(n)}


# Mean per-call duration of solve pooled over ranks: 8, 4, 5, 2.3 (s4 rank 0
# has calls of 1 s and 3 s, ranks 1-3 one of 2.5 s: (1+3+7.5)/5 = 2.3).
s4 = same(4, {"solve": [(0, 2.5)], "comm": [(3, 5)]})
s4[0] = {"solve": [(0, 1), (1, 4)], "comm": [(5, 7)]}
runs = {
    "s1.h5": (same(1, {"solve": [(0, 8)], "comm": [(8, 9)], "only1": [(9, 10)]}),
              {"omp_num_threads": 4, "size": "small"}),
    "s2a.h5": (same(2, {"solve": [(0, 4)], "comm": [(4, 5.5)]}),
               {"omp_num_threads": 2, "size": "medium"}),
    "s2b.h5": (same(2, {"solve": [(0, 5)], "comm": [(5, 7.5)]}),
               {"omp_num_threads": 2, "size": "medium"}),
    "s4.h5": (s4, {"omp_num_threads": 2, "size": "large"}),
}
for name, (ranks, meta) in runs.items():
    write_profile(path(name), ranks, meta)
ALL = [path(n) for n in ("s1.h5", "s2a.h5", "s2b.h5", "s4.h5")]


def points(doc, field):
    return {(p["region"], p[field]): p for p in doc["points"]}


def expect(doc, field, region, x, mean, speedup, ideal, runs):
    p = points(doc, field).get((region, x))
    if p is None:
        cli.fail(f"{field}: no point for {region} at {x}: {doc['points']}")
        return
    what = f"{field} {region}@{x}"
    cli.close(p["average_duration"], mean, what + " average_duration")
    cli.close(p["speedup"], speedup, what + " speedup")
    cli.close(p["normalized_runtime"], 1 / speedup, what + " normalized_runtime")
    cli.close(p["ideal_speedup"], ideal, what + " ideal_speedup")
    cli.close(p["efficiency"], None if ideal is None else speedup / ideal, what + " efficiency")
    cli.equal(p["runs"], runs, what + " runs")


# num_ranks (default): x sorted, baseline 1, duplicate x = 2 averaged.
doc = cli.json("scaling", *ALL)
cli.equal((doc["x_field"], doc["x_label"], doc["baseline"]), ("num_ranks", "MPI ranks", 1), "axis")
expect(doc, "num_ranks", "solve", 1, 8.0, 1.0, 1.0, 1)
expect(doc, "num_ranks", "solve", 2, 4.5, 8 / 4.5, 2.0, 2)
expect(doc, "num_ranks", "solve", 4, 2.3, 8 / 2.3, 4.0, 1)
expect(doc, "num_ranks", "comm", 1, 1.0, 1.0, 1.0, 1)
expect(doc, "num_ranks", "comm", 2, 2.0, 0.5, 2.0, 2)
expect(doc, "num_ranks", "comm", 4, 2.0, 0.5, 4.0, 1)
cli.equal(sorted({p["region"] for p in doc["points"]}), ["comm", "solve"],
          "only regions common to all runs")
cli.equal([p["num_ranks"] for p in doc["points"] if p["region"] == "solve"], [1, 2, 4], "x order")
# Input order does not matter for the scaling fields.
doc2 = cli.json("scaling", *reversed(ALL))
cli.equal(points(doc2, "num_ranks").keys(), points(doc, "num_ranks").keys(), "reversed input")
# Globs.
doc = cli.json("scaling", path("s*.h5"))
cli.equal(len(doc["runs"]), 4, "glob expands to four runs")
expect(doc, "num_ranks", "solve", 4, 2.3, 8 / 2.3, 4.0, 1)

# omp_num_threads: s1 4, others 2 -> baseline 2 = mean(4, 5, 2.3).
base = (4 + 5 + 2.3) / 3
doc = cli.json("scaling", *ALL, "--x", "omp_num_threads")
cli.equal((doc["baseline"], doc["x_label"]), (2, "OpenMP threads"), "omp axis")
expect(doc, "omp_num_threads", "solve", 2, base, 1.0, 1.0, 3)
expect(doc, "omp_num_threads", "solve", 4, 8.0, base / 8, 2.0, 1)

# total_cores = num_ranks * omp: 4, 4, 4, 8.
base = (8 + 4 + 5) / 3
doc = cli.json("scaling", *ALL, "--x", "total_cores")
cli.equal(doc["baseline"], 4, "total_cores baseline")
expect(doc, "total_cores", "solve", 4, base, 1.0, 1.0, 3)
expect(doc, "total_cores", "solve", 8, 2.3, base / 2.3, 2.0, 1)

# Any metadata key: input order, first value is the baseline, no ideal.
order = [path("s4.h5"), path("s1.h5"), path("s2a.h5"), path("s2b.h5")]
doc = cli.json("scaling", *order, "--x", "size")
cli.equal(doc["baseline"], "large", "metadata key baseline = first in input order")
cli.equal([p["size"] for p in doc["points"] if p["region"] == "solve"],
          ["large", "small", "medium"], "metadata key x order")
expect(doc, "size", "solve", "large", 2.3, 1.0, None, 1)
expect(doc, "size", "solve", "small", 8.0, 2.3 / 8, None, 1)
expect(doc, "size", "solve", "medium", 4.5, 2.3 / 4.5, None, 2)

# Rank selection: only rank 0 of each run (s4 rank 0: (1+3)/2 = 2).
doc = cli.json("scaling", *ALL, "--ranks", "0")
expect(doc, "num_ranks", "solve", 4, 2.0, 4.0, 4.0, 1)
doc = cli.json("scaling", *ALL, "--include", "comm")
cli.equal({p["region"] for p in doc["points"]}, {"comm"}, "--include")

# Text output.
rc, out, err = cli.run("scaling", *ALL, expect=0)
for s in ("Scaling over num_ranks", "baseline num_ranks = 1", "speedup", "efficiency",
          "weak-scaling runtime", "1.778", "0.8889", "3.478"):
    cli.check(s in out, f"scaling text lacks {s!r}:\n{out}")
rc, out, err = cli.run("scaling", *order, "--x", "size", expect=0)
cli.check("not a scaling field" in out, f"no-ideal note:\n{out}")

# Errors: exit 2 with one line naming the problem.
rc, out, err = cli.run("scaling", path("s1.h5"), expect=2)
rc, out, err = cli.run("scaling", *ALL, "--x", "nodes", expect=2)
cli.check("nodes" in err and "omp_num_threads" in err, f"unknown key lists fields: {err!r}")
rc, out, err = cli.run("scaling", *ALL, "--include", "nothing", expect=2)
rc, out, err = cli.run("scaling", path("s1.h5"), path("nope.h5"), expect=2)
cli.check("nope.h5" in err, f"missing file named: {err!r}")
rc, out, err = cli.run("scaling", "--help", expect=0)

cli.finish("scaling")
