# SPDX-License-Identifier: MIT
"""diff and check on hand-built profiles: every value of case 8 in §6.3 of
the Python reference, plus the other metrics, sort keys, rank selection,
filters, globs and the usage-error exit codes. Asserts through --json and,
for the documented strings, the text output."""
import os
import sys

from profiles import Cli, workdir, write_profile


cli = Cli()
work = workdir("sp-compare-")
A = os.path.join(work, "a.h5")
B = os.path.join(work, "b.h5")
C = os.path.join(work, "c.h5")
D = os.path.join(work, "d.h5")

# Case 8: a = setup [0,1], solve [1,3],[4,6]; b adds a slower solve and teardown.
write_profile(A, {0: {"setup": [(0, 1)], "solve": [(1, 3), (4, 6)]}},
              {"label": "baseline", "mpi_size": 1})
write_profile(B, {0: {"setup": [(0, 1)], "solve": [(1, 4), (5, 8)], "teardown": [(0, 2)]}},
              {"label": "candidate", "mpi_size": 1})
# Two ranks: per-rank totals 4/6 (c) and 4/8 (d).
write_profile(C, {0: {"solve": [(0, 2), (3, 5)]}, 1: {"solve": [(0, 6)]}})
write_profile(D, {0: {"solve": [(0, 2), (3, 5)]}, 1: {"solve": [(0, 8)]}})


def rows_by_name(doc):
    return {row["name"]: row for row in doc["rows"]}


def expect_rows(doc, want, what):
    """want: {name: (a, b, delta, pct)}"""
    rows = rows_by_name(doc)
    cli.equal(sorted(rows), sorted(want), f"{what}: regions")
    for name, (a, b, delta, pct) in want.items():
        row = rows.get(name, {})
        for key, value in (("a", a), ("b", b), ("delta", delta), ("pct", pct)):
            cli.close(row.get(key), value, f"{what}: {name}.{key}")


# ---- diff: case 8 values --------------------------------------------------------
doc = cli.json("diff", A, B)
expect_rows(doc, {"setup": (1.0, 1.0, 0.0, 0.0), "solve": (4.0, 6.0, 2.0, 50.0),
                  "teardown": (None, 2.0, 2.0, None)}, "diff a b")
cli.equal([r["name"] for r in doc["rows"]], ["solve", "teardown", "setup"], "sort=delta order")
cli.equal(doc["only_in_a"], [], "only_in_a")
cli.equal(doc["only_in_b"], ["teardown"], "only_in_b")
cli.equal((doc["a"]["label"], doc["b"]["label"]), ("baseline", "candidate"), "labels")

doc = cli.json("diff", B, A)
expect_rows(doc, {"setup": (1.0, 1.0, 0.0, 0.0), "solve": (6.0, 4.0, -2.0, -100 / 3),
                  "teardown": (2.0, None, -2.0, -100.0)}, "diff b a (swapped)")
cli.equal(doc["only_in_a"], ["teardown"], "swapped only_in_a")

doc = cli.json("diff", A, B, "--sort", "delta")
cli.equal([r["name"] for r in doc["rows"]], ["solve", "teardown", "setup"], "--sort delta")
doc = cli.json("diff", A, B, "--sort", "pct")
cli.equal([r["name"] for r in doc["rows"]], ["solve", "setup", "teardown"], "--sort pct (None last)")
doc = cli.json("diff", A, B, "--sort", "name")
cli.equal([r["name"] for r in doc["rows"]], ["setup", "solve", "teardown"], "--sort name")

doc = cli.json("diff", A, B, "--threshold", "10")
cli.equal(sorted(r["name"] for r in doc["rows"]), ["solve", "teardown"], "--threshold 10")
doc = cli.json("diff", A, B, "--threshold", "50")
cli.equal(sorted(r["name"] for r in doc["rows"]), ["solve", "teardown"], "--threshold 50 keeps +50%")
doc = cli.json("diff", B, A, "--threshold", "150")
cli.equal(sorted(r["name"] for r in doc["rows"]), [], "--threshold 150 drops -100% and -33%")

doc = cli.json("diff", A, B, "--metric", "calls")
expect_rows(doc, {"setup": (1, 1, 0, 0.0), "solve": (2, 2, 0, 0.0),
                  "teardown": (None, 1, 1, None)}, "--metric calls")
cli.check(all(isinstance(r["b"], int) for r in doc["rows"]), "calls are integers")

for metric, sa, sb in (("avg", 2.0, 3.0), ("min", 2.0, 3.0), ("max", 2.0, 3.0),
                       ("p50", 2.0, 3.0), ("p95", 2.0, 3.0), ("p99", 2.0, 3.0)):
    doc = cli.json("diff", A, B, "--metric", metric)
    expect_rows(doc, {"setup": (1.0, 1.0, 0.0, 0.0), "solve": (sa, sb, sb - sa, 50.0),
                      "teardown": (None, 2.0, 2.0, None)}, f"--metric {metric}")

# ---- diff: text output ------------------------------------------------------------
rc, out, err = cli.run("diff", A, B, expect=0)
for s in ("a: baseline", "b: candidate", "Regions (3)", "+50%", "Only in b: teardown",
          "total [s] (a)", "total [s] (b)", "delta [%]"):
    cli.check(s in out, f"diff text lacks {s!r}:\n{out}")
rc, out, err = cli.run("diff", B, A, expect=0)
cli.check("Only in a: teardown" in out and "-100%" in out, f"swapped text:\n{out}")

# ---- ranks, imbalance, percentiles on two ranks -------------------------------------
doc = cli.json("diff", C, D, "--metric", "imbalance")
expect_rows(doc, {"solve": (20.0, 100 / 3, 100 / 3 - 20, (100 / 3 - 20) / 20 * 100)},
            "--metric imbalance")
doc = cli.json("diff", C, D, "--ranks", "1")
expect_rows(doc, {"solve": (6.0, 8.0, 2.0, 100 / 3)}, "--ranks 1")
doc = cli.json("diff", C, D, "--ranks", "0")
expect_rows(doc, {"solve": (4.0, 4.0, 0.0, 0.0)}, "--ranks 0")
doc = cli.json("diff", C, D, "--ranks", "0", "--metric", "imbalance")
expect_rows(doc, {"solve": (0.0, 0.0, 0.0, None)}, "imbalance of one rank (a = 0: pct None)")
rc, out, err = cli.run("diff", C, D, "--ranks", "5", expect=2)
cli.check("--ranks 5 selects no rank of" in err and "(its ranks: 0, 1)" in err,
          f"--ranks without data is an error naming the file's ranks: {err!r}")
doc = cli.json("diff", C, D, "--metric", "p95")
expect_rows(doc, {"solve": (5.6, 7.4, 1.8, 1.8 / 5.6 * 100)}, "--metric p95 (linear)")
doc = cli.json("diff", C, D, "--metric", "p99")
expect_rows(doc, {"solve": (5.92, 7.88, 1.96, 1.96 / 5.92 * 100)}, "--metric p99 (linear)")
doc = cli.json("diff", C, D, "--metric", "avg")
expect_rows(doc, {"solve": (10 / 3, 4.0, 4 - 10 / 3, (4 - 10 / 3) / (10 / 3) * 100)},
            "--metric avg pooled over ranks")

# ---- include / exclude (re.match) and globs --------------------------------------------
doc = cli.json("diff", A, B, "--include", "s")
cli.equal(sorted(r["name"] for r in doc["rows"]), ["setup", "solve"], "--include s")
doc = cli.json("diff", A, B, "--exclude", "set")
cli.equal(sorted(r["name"] for r in doc["rows"]), ["solve", "teardown"], "--exclude set")
doc = cli.json("diff", A, B, "--include", "olve")
cli.equal(doc["rows"], [], "--include is anchored like re.match")
rc, out, err = cli.run("diff", A, B, "--include", "olve", expect=0)
cli.check("Regions (0)" in out and "(no regions to compare)" in out, f"empty diff:\n{out}")
doc = cli.json("diff", os.path.join(work, "a*.h5"), os.path.join(work, "[b].h5"))
cli.equal(len(doc["rows"]), 3, "glob file arguments")

# ---- check: case 8 ------------------------------------------------------------------------
rc, out, err = cli.run("check", A, B, "--max-regression", "60", expect=0)
cli.check("Regression check: PASS" in out and "Regression budget: +60% (total)" in out,
          f"check 60 text:\n{out}")
doc = cli.json("check", A, B, "--max-regression", "60", expect=0)
cli.equal((doc["status"], doc["violations"]), ("PASS", []), "check 60")

rc, out, err = cli.run("check", A, B, "--max-regression", "10", expect=1)
for s in ("Baseline: baseline", "Candidate: candidate", "Regression check: FAIL",
          "FAIL", "Budget violations: solve"):
    cli.check(s in out, f"check 10 text lacks {s!r}:\n{out}")
doc = cli.json("check", A, B, "--max-regression", "10", expect=1)
cli.equal((doc["status"], doc["violations"]), ("FAIL", ["solve"]), "check 10")
cli.equal([r["name"] for r in doc["rows"]], ["solve", "setup", "teardown"], "check rows by pct")

doc = cli.json("check", A, B, "--max-regression", "60", "--fail-on-new", expect=1)
cli.equal(doc["violations"], ["teardown"], "--fail-on-new")
rc, out, err = cli.run("check", A, B, "--max-regression", "60", "--fail-on-new", expect=1)
cli.check("Budget violations: teardown" in out, f"fail-on-new text:\n{out}")
doc = cli.json("check", A, B, "--max-regression", "50", expect=0)
cli.equal(doc["violations"], [], "budget is strict: +50% passes a 50% budget")
doc = cli.json("check", B, A, expect=0)
cli.equal(doc["violations"], [], "disappearing regions (-100%) never fail")
doc = cli.json("check", A, B, "--metric", "calls", expect=0)
cli.equal(doc["violations"], [], "check --metric calls")
doc = cli.json("check", A, B, "--exclude", "solve", expect=0)
cli.equal(doc["violations"], [], "check --exclude solve")

# ---- usage errors and unreadable input: exit 2, one line on stderr ----------------------
junk = os.path.join(work, "junk.h5")
with open(junk, "w") as f:
    f.write("not a profile\n")
for args in (("diff", A), ("diff", A, B, C), ("diff", A, os.path.join(work, "missing.h5")),
             ("diff", A, junk), ("diff", A, B, "--metric", "median"),
             ("diff", A, B, "--sort", "size"), ("diff", A, B, "--threshold", "x"),
             ("diff", A, B, "--include", "("),
             ("check", A), ("check", A, B, "--max-regression", "-1"),
             ("check", A, junk), ("check", "--base", A, B), ("check", "--base", A, "--cand", B),
             ("check", A, B, "--base", A, C, "--cand", B, D)):
    rc, out, err = cli.run(*args, expect=2)
    cli.check(err.strip() != "", f"{args}: no message on stderr")
rc, out, err = cli.run("diff", A, os.path.join(work, "missing.h5"), expect=2)
cli.check("missing.h5" in err, f"error names the file: {err!r}")

for cmd in ("diff", "check"):
    rc, out, err = cli.run(cmd, "--help", expect=0)
    cli.check("usage:" in out, f"{cmd} --help")
rc, out, err = cli.run("check", "--help", expect=0)
cli.check("Mann-Whitney" in out and "bootstrap" in out, "check --help names the method")

cli.finish("diff/check case 8")
