# SPDX-License-Identifier: MIT
"""The noise-aware check on hand-built repeated runs with known values: a
clear 30 % slowdown (exact Mann-Whitney p = 1/252 for 5 vs 5 runs), a noisy
region whose apparent slowdown is not significant, new, gone and rare
regions, reproducibility of the bootstrap, and the usage errors."""
import os

from profiles import Cli, workdir, write_profile


cli = Cli()
work = workdir("sp-repeated-")

SOLVE_B = [1.00, 1.01, 0.99, 1.02, 0.98]
SOLVE_C = [1.30, 1.31, 1.29, 1.32, 1.28]
NOISY_B = [1.0, 1.2, 0.8, 1.1, 0.9]
NOISY_C = [1.15, 1.4, 0.95, 1.3, 1.0]


def run_file(name, regions):
    """regions: {name: duration_s}, one call each, laid end to end."""
    t, calls = 0.0, {}
    for region, d in regions.items():
        calls[region] = [(t, t + d)]
        t += d
    path = os.path.join(work, name)
    write_profile(path, {0: calls}, {"label": name.split("-")[0]})
    return path


base, cand = [], []
for i in range(5):
    b = {"solve": SOLVE_B[i], "noisy": NOISY_B[i], "old": 0.5}
    c = {"solve": SOLVE_C[i], "noisy": NOISY_C[i], "extra": 0.1, "rare": 0.2}
    if i == 0:
        b["rare"] = 0.2
    base.append(run_file(f"base-{i}.h5", b))
    cand.append(run_file(f"cand-{i}.h5", c))


def regions(doc):
    return {r["name"]: r for r in doc["regions"]}


doc = cli.json("check", "--base", *base, "--cand", *cand, "--max-regression", "20", expect=1)
cli.equal(doc["mode"], "repeated", "mode")
cli.equal(doc["status"], "FAIL", "status")
cli.equal(doc["violations"], ["solve"], "violations")
r = regions(doc)
s = r.get("solve", {})
cli.equal((s.get("n_base"), s.get("n_cand"), s.get("verdict")), (5, 5, "FAIL"), "solve")
cli.close(s.get("base_median"), 1.00, "solve base median")
cli.close(s.get("cand_median"), 1.30, "solve cand median")
cli.close(s.get("estimate_pct"), 30.0, "solve estimate")
cli.close(s.get("u"), 25.0, "solve U")
cli.close(s.get("p_value"), 1 / 252, "solve exact p")
cli.equal(s.get("exact"), True, "solve exact test")
# The bootstrap medians stay within the sample ranges.
cli.check(1.28 / 1.02 - 1 <= s["ci_low_pct"] / 100 <= 0.30 <= s["ci_high_pct"] / 100
          <= 1.32 / 0.98 - 1, f"solve interval {s['ci_low_pct']} .. {s['ci_high_pct']}")
n = r.get("noisy", {})
cli.close(n.get("estimate_pct"), 15.0, "noisy estimate")
cli.equal(n.get("verdict"), "ok", "noisy: +15% is within a 20% budget")
cli.equal((r["extra"]["verdict"], r["extra"]["failed"]), ("new", False), "extra is new")
cli.equal((r["old"]["verdict"], r["old"]["failed"]), ("gone", False), "old is gone")
cli.equal((r["rare"]["verdict"], r["rare"]["n_base"]), ("insufficient", 1), "rare")
cli.equal(r["rare"]["estimate_pct"], None, "rare has no estimate")
cli.equal([x["name"] for x in doc["regions"]][:2], ["solve", "noisy"], "largest slowdown first")

# Reproducible: the bootstrap has a fixed seed.
again = cli.json("check", "--base", *base, "--cand", *cand, "--max-regression", "20", expect=1)
cli.equal(again, doc, "identical output on a second run")

# A budget above the slowdown passes; --fail-on-new fails on 'extra'.
doc = cli.json("check", "--base", *base, "--cand", *cand, "--max-regression", "40", expect=0)
cli.equal((doc["status"], regions(doc)["solve"]["verdict"]), ("PASS", "ok"), "budget 40")
doc = cli.json("check", "--base", *base, "--cand", *cand, "--max-regression", "40",
               "--fail-on-new", expect=1)
cli.equal(doc["violations"], ["extra"], "--fail-on-new")
doc = cli.json("check", "--base", *base, "--cand", *cand, "--max-regression", "5",
               "--exclude", "solve", expect=0)
n = regions(doc)["noisy"]
cli.equal(n["verdict"], "inconclusive", "noisy: above a 5% budget but not significant")
cli.check(n["ci_low_pct"] < 5 and n["p_value"] > 0.025, f"noisy stats {n}")
# Identical runs on both sides never fail, even with a zero budget.
doc = cli.json("check", "--base", *base, "--cand", *base, expect=0)
cli.equal(doc["violations"], [], "identical runs")
doc = cli.json("check", "--base", *base, "--cand", *cand, "--max-regression", "20",
               "--metric", "calls", expect=0)
cli.equal(regions(doc)["solve"]["estimate_pct"], 0.0, "--metric calls: no change")

# Globs, text output with the estimate and its interval.
rc, out, err = cli.run("check", "--base", os.path.join(work, "base-*.h5"),
                       "--cand", os.path.join(work, "cand-*.h5"), "--max-regression", "5",
                       expect=1)
for text in ("Baseline: 5 runs", "Candidate: 5 runs", "Regression check: FAIL",
             "Budget violations: solve", "+30%", "Mann-Whitney", "95% CI", "inconclusive"):
    cli.check(text in out, f"text lacks {text!r}:\n{out}")
cli.check("[+" in out and "%]" in out, f"interval printed:\n{out}")

# Usage errors: exit 2.
for args in (("--base", base[0], "--cand", *cand),
             ("--base", *base, "--cand", cand[0], os.path.join(work, "missing.h5")),
             ("--base", *base),
             ("--base", *base, "--cand", *cand, "--confidence", "100"),
             ("--base", *base, "--cand", *cand, "--resamples", "10")):
    rc, out, err = cli.run("check", *args, expect=2)
    cli.check(err.strip() != "", f"{args}: no message")

cli.finish("check (repeated runs)")
