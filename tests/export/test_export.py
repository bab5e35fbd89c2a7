# SPDX-License-Identifier: MIT
"""End-to-end checks of `scope-profiler export` on profiles with known
contents: chrome-trace (JSON schema for complete events + values read back),
speedscope (structure; the official schema is checked by
speedscope_schema.py), folded (exact counts), json (export -> read -> export
byte-identical, fixture), plot-data (CSV/JSON values), filters and errors,
the warning for an output over 100x its input.
Usage: test_export.py SCOPE_PROFILER FIXTURES_DIR."""
import csv
import decimal
import json
import os
import subprocess
import sys
import tempfile

import minischema
import profiles as P

HERE = os.path.dirname(os.path.abspath(__file__))
EXE, FIXTURES = sys.argv[1], sys.argv[2]
FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print(f"FAIL: {what}")


def run(*args, rc=0):
    p = subprocess.run([EXE, *args], capture_output=True, text=True)
    if p.returncode != rc:
        raise AssertionError(f"{args}: exit {p.returncode} (want {rc}): {p.stderr}")
    return p.stdout


def export(fmt, *args):
    return run("export", fmt, *args, "-o", "-")


def ns(dec):
    """Microseconds (Decimal) -> integer ns, exactly."""
    v = dec * 1000
    assert v == v.to_integral_value(), dec
    return int(v)


def expected_events(data, lanes=None):
    out = []
    for rank, regions in data.items():
        for name, calls in regions.items():
            for k, c in enumerate(calls):
                extra = c[2] if len(c) > 2 else {}
                args = {"call_index": k}
                args.update({f"mpi_{key}": v for key, v in extra.items()})
                tid = lanes[rank][name][k] if lanes else 0
                out.append((rank, tid, name, c[0], c[1] - c[0], json.dumps(args, sort_keys=True)))
    return sorted(out)


def chrome_events(text, origin_shift=0):
    doc = json.loads(text, parse_float=decimal.Decimal)
    plain = json.loads(text)
    errs = minischema.errors(plain, SCHEMA)
    check(not errs, f"chrome-trace schema: {errs[:3]}")
    got = []
    last = {}
    for e in doc["traceEvents"]:
        if e["ph"] != "X":
            continue
        ts, dur = ns(e["ts"]), ns(e["dur"])
        key = (e["pid"], e["tid"])
        check(last.get(key, (-1, 0)) <= (ts, -dur), f"chrome order {e}")
        last[key] = (ts, -dur)
        got.append((e["pid"], e["tid"], e["name"], ts + origin_shift, dur,
                    json.dumps(e["args"], sort_keys=True)))
    return doc, sorted(got)


def test_chrome(tmp):
    text = export("chrome-trace", f"{tmp}/nested.h5")
    doc, got = chrome_events(text)
    check(got == expected_events(P.NESTED), "chrome-trace events = recorded calls")
    check(doc["otherData"]["time_origin_ns"] == P.BASE, "chrome origin = first entry")
    names = {(e["pid"], e["args"].get("name")) for e in doc["traceEvents"]
             if e["name"] == "process_name"}
    check(names == {(0, "rank 0"), (1, "rank 1")}, f"process names {names}")
    cats = {e["cat"] for e in doc["traceEvents"] if e.get("name") == "mpi:send"}
    check(cats == {"mpi.p2p"}, "category = tags")
    # Re-serialise what we parsed: the writer's JSON survives a parse cycle.
    check(json.loads(json.dumps(json.loads(text))) == json.loads(text), "round trip")
    # --min-duration and the window.
    _, got = chrome_events(export("chrome-trace", f"{tmp}/nested.h5", "--min-duration", "1.1us"))
    want = [e for e in expected_events(P.NESTED) if e[4] >= 1100]
    check(got == want, "chrome --min-duration")
    _, got = chrome_events(export("chrome-trace", f"{tmp}/nested.h5", "--start", "2us",
                                  "--end", "7000ns", "--ranks", "0"))
    want = []
    for (r, t, n, s, d, a) in expected_events(P.NESTED):
        e = s + d
        if r == 0 and e > 2000 and s < 7000:
            want.append((r, t, n, max(s, 2000), min(e, 7000) - max(s, 2000), a))
    check(got == sorted(want), "chrome --start/--end clip")
    # Lanes: tid = thread index, thread names from the thread table.
    doc, got = chrome_events(export("chrome-trace", f"{tmp}/lanes.h5"))
    check(got == expected_events(LANE_DATA, LANES), "chrome lanes")
    tn = {(e["tid"], e["args"]["name"]) for e in doc["traceEvents"] if e["name"] == "thread_name"}
    check(tn == {(0, "MainThread"), (1, "worker-1")}, f"thread names {tn}")


def speedscope_intervals(doc):
    """{profile name: sorted (frame name, start, end)} from the O/C events."""
    frames = [f["name"] for f in doc["shared"]["frames"]]
    out = {}
    for p in doc["profiles"]:
        stack, ivals, at = [], [], None
        for ev in p["events"]:
            check(at is None or ev["at"] >= at, "speedscope at non-decreasing")
            at = ev["at"]
            if ev["type"] == "O":
                stack.append((ev["frame"], ev["at"]))
            else:
                fr, start = stack.pop()
                check(fr == ev["frame"], "speedscope close matches open")
                ivals.append((frames[fr], start, ev["at"]))
        check(not stack, "speedscope profile balanced")
        out[p["name"]] = sorted(ivals)
    return out


def test_speedscope(tmp):
    doc = json.loads(export("speedscope", f"{tmp}/nested.h5"))
    check([f["name"] for f in doc["shared"]["frames"]] == P.NAMES, "speedscope frames")
    got = speedscope_intervals(doc)
    want = {f"rank {r}": sorted((n, c[0], c[1]) for n, cs in regs.items() for c in cs)
            for r, regs in P.NESTED.items()}
    check(got == want, "speedscope intervals = recorded calls")
    check({(p["startValue"], p["endValue"]) for p in doc["profiles"]} == {(0, 20_010)},
          "speedscope: one time origin")
    got = speedscope_intervals(json.loads(export("speedscope", f"{tmp}/lanes.h5")))
    check(sorted(got) == ["rank 0 MainThread", "rank 0 worker-1"], f"speedscope lanes {sorted(got)}")


def folded(text):
    out = {}
    for line in text.splitlines():
        path, _, count = line.rpartition(" ")
        check(path not in out, f"folded: duplicate path {path}")
        out[path] = int(count)
    return out


def test_folded(tmp):
    h5 = f"{tmp}/nested.h5"
    check(folded(export("folded", h5)) == P.folded_expected(P.NESTED), "folded counts")
    merged = {}
    for r in P.NESTED:
        for k, v in P.folded_expected(P.NESTED, ranks=[r], prefix=False).items():
            merged[k] = merged.get(k, 0) + v
    check(folded(export("folded", h5, "--merge-ranks")) == merged, "folded --merge-ranks")
    got = folded(export("folded", h5, "--min-duration", "1us", "--start", "1.2us", "--end", "7us"))
    want = P.folded_expected(P.NESTED, min_dur=1000, lo=1200, hi=7000)
    check(got == want, f"folded filters {got} != {want}")
    check(folded(export("folded", h5, "--include", "solve|assemble", "--ranks", "1")) ==
          {"rank 1;solve": 10_900, "rank 1;solve;assemble": 100}, "folded selection")


def test_json(tmp):
    for name in ("nested.h5", "lanes.h5"):
        a = f"{tmp}/{name}.a.json"
        run("export", "json", f"{tmp}/{name}", "-o", a)
        run("export", "json", a, "-o", f"{tmp}/{name}.b.json")
        check(open(a, "rb").read() == open(f"{tmp}/{name}.b.json", "rb").read(),
              f"{name}: export json -> read -> export json byte-identical")
        s1 = json.loads(run("summary", "--json", f"{tmp}/{name}"))
        s2 = json.loads(run("summary", "--json", a))
        check(s1 == s2, f"{name}: same statistics from the JSON export")
    fx = os.path.join(FIXTURES, "profile-v1.json")
    first = export("json", fx)
    open(f"{tmp}/fx.json", "w").write(first)
    check(export("json", f"{tmp}/fx.json") == first, "fixture: export json round trip")
    ref = open(fx).read().replace('"scope-profiler@0.5.2"', '"@@"')
    ours = first.replace(json.loads(first)["exporter"].join('""'), '"@@"')
    check(ours == ref, "fixture: same bytes as the upstream JSON profile (exporter aside)")


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_plot_data(tmp):
    out = f"{tmp}/pd"
    run("export", "plot-data", f"{tmp}/nested.h5", "-o", out)
    gantt = read_csv(f"{out}/gantt_data.csv")
    want = sorted((int(r), n, c[0], c[1]) for r, regs in P.NESTED.items()
                  for n, cs in regs.items() for c in cs)
    got = sorted((int(g["rank"]), g["region"], round(float(g["start_seconds"]) * 1e9),
                  round(float(g["end_seconds"]) * 1e9)) for g in gantt)
    check(got == want, "plot-data gantt intervals")
    dur = {d["region"]: float(d["value_seconds"]) for d in read_csv(f"{out}/durations_data.csv")}
    tot = {n: sum(c[1] - c[0] for r in P.NESTED.values() for c in r.get(n, [])) / 1e9
           for n in P.NAMES}
    check(dur == tot, f"plot-data durations {dur} != {tot}")
    rs = json.load(open(f"{out}/region_statistics.json"))
    stats = rs["files"][0]["region_statistics"]
    check(rs["plot"] == "region_statistics" and
          {n: stats[n]["count"] for n in stats} ==
          {n: sum(len(r.get(n, [])) for r in P.NESTED.values()) for n in P.NAMES},
          "plot-data region_statistics")
    chart = read_csv(f"{out}/flame_chart_data.csv")
    check({c["rank"] for c in chart} == {"0"}, "flame chart: rank 0 by default")
    check(len(chart) == sum(len(c) for c in P.NESTED[0].values()), "flame chart calls")
    check(any(c["call_path"] == "main > solve > assemble" for c in chart), "flame chart paths")
    run("export", "plot-data", f"{tmp}/nested.h5", "-o", out, "--format", "json",
        "--plots", "flame_graph,gantt", "--ranks", "1")
    fg = json.load(open(f"{out}/flame_graph_data.json"))
    check((fg["format"], fg["format_version"], fg["plot"]) ==
          ("scope-profiler-plot-data", 1, "flame_graph"), "plot-data envelope")
    byid = {c["call_id"]: c for c in fg["calls"]}
    want = {"main": (0, 20_000), "main > solve": (0, 11_000), "main > mpi:send": (11_000, 12_000),
            "main > solve > assemble": (0, 100)}
    got = {c["call_path"]: (round(c["start_seconds"] * 1e9), round(c["end_seconds"] * 1e9))
           for c in fg["calls"]}
    check(got == want, f"flame graph layout {got}")
    check(all(c["parent_call_id"] is None or byid[c["parent_call_id"]]["depth"] == c["depth"] - 1
              for c in fg["calls"]), "flame graph parents")
    g = json.load(open(f"{out}/gantt_data.json"))
    check(g["colors"] == {"main": "#1f77b4", "solve": "#aec7e8", "assemble": "#ff7f0e",
                          "io": "#ffbb78", "mpi:send": "#2ca02c", "odd;name": "#98df8a"},
          f"colors: tab20 in region order {g['colors']}")
    check({i["rank"] for i in g["intervals"]} == {1}, "gantt --ranks")
    run("export", "plot-data", f"{tmp}/nested.h5", "-o", out, "--json", "--plots",
        "durations", "--cmap", "Set1", "--exclude", "main", "--metrics", "avg,max")
    dj = json.load(open(f"{out}/durations_data.json"))
    # Set1 in order without its red (reds are left to MPI regions: tools/cli/colors.h)
    check(list(dj["colors"].items())[:2] == [("solve", "#377eb8"), ("assemble", "#4daf4a")],
          f"--cmap Set1 / --exclude {dj['colors']}")
    check(dj["metrics"] == ["avg", "max"] and len(dj["bars"]) == 2 * (len(P.NAMES) - 1),
          "durations metrics")
    run("export", "plot-data", f"{tmp}/scale1.h5", f"{tmp}/scale2.h5", "-o", out,
        "--format", "json", "--plots", "speedup,weak_scaling")
    sp = json.load(open(f"{out}/speedup_data.json"))
    pts = [(p["region"], p["num_ranks"], p["speedup"]) for p in sp["points"]]
    check(pts == [("solve", 1, 1.0), ("solve", 2, 2.0)] and
          all(type(p["num_ranks"]) is int for p in sp["points"]), f"speedup {pts}")
    check(sp["options"] == {"x_field": "num_ranks", "x_label": "Number of MPI ranks",
                            "baseline": 1}, f"speedup options {sp['options']}")
    ws = json.load(open(f"{out}/weak_scaling_data.json"))
    check([p["normalized_runtime"] for p in ws["points"]] == [1.0, 0.5], "weak scaling")


def test_errors(tmp):
    for args in (["export", "nope", f"{tmp}/nested.h5", "-o", "-"],
                 ["export", "folded", f"{tmp}/nested.h5"],
                 ["export", "folded", f"{tmp}/missing.h5", "-o", "-"],
                 ["export", "folded", f"{tmp}/nested.h5", "-o", "-", "--min-duration", "abc"],
                 ["export", "plot-data", f"{tmp}/nested.h5", "-o", f"{tmp}/x", "--plots", "pie"],
                 ["export", "plot-data", f"{tmp}/nested.h5", "-o", f"{tmp}/x", "--cmap", "nope"],
                 ["export", "json", f"{tmp}/nested.h5", "-o", "-", "--min-duration", "1us"],
                 ["export", "speedscope", f"{tmp}/agg.json", "-o", "-"],
                 ["export", "folded", f"{tmp}/bad.json", "-o", f"{tmp}/bad.folded"]):
        p = subprocess.run([EXE, *args], capture_output=True, text=True)
        check(p.returncode == 2 and not os.path.exists(f"{tmp}/x/gantt_data.csv"), f"{args}: exit {p.returncode}")
        check(p.stderr.startswith("scope-profiler export") and p.stdout == "",
              f"{args}: one-line error: {p.stderr!r}")
    check(not os.path.exists(f"{tmp}/bad.folded"), "no output left after a failure")
    # Aggregate-layout JSON survives the round trip too.
    run("export", "json", f"{tmp}/agg.json", "-o", f"{tmp}/agg2.json")
    check(export("json", f"{tmp}/agg2.json") == open(f"{tmp}/agg2.json").read(),
          "aggregate json round trip")
    # Several inputs -> a directory with one file per input.
    run("export", "chrome-trace", f"{tmp}/nested.h5", f"{tmp}/lanes.h5", "-o", f"{tmp}/traces")
    check(sorted(os.listdir(f"{tmp}/traces")) == ["lanes.trace.json", "nested.trace.json"],
          "one trace per input")


def test_size_warning(tmp):
    """A chrome trace far bigger than its input (8000-byte region names,
    repeated in every event) is written, with a warning on stderr that
    suggests --min-duration; one that --min-duration shrinks below 100x the
    input, or a normal one, gets none."""
    name = "k" * 8000
    calls = [(i * 1000 + 10, i * 1000 + (900 if i % 10 == 0 else 110)) for i in range(2000)]
    P.write_nested(f"{tmp}/wide.h5", 1, {0: {"main": [(0, 2_000_000)], name: calls}},
                   ["main", name])
    in_size = os.path.getsize(f"{tmp}/wide.h5")
    p = subprocess.run([EXE, "export", "chrome-trace", f"{tmp}/wide.h5", "-o",
                        f"{tmp}/wide.json"], capture_output=True, text=True)
    ratio = os.path.getsize(f"{tmp}/wide.json") / in_size
    check(p.returncode == 0 and ratio > 100, f"written, {ratio:.0f}x the input")
    check(p.stderr.startswith("scope-profiler export: warning: ") and
          "--min-duration" in p.stderr and p.stderr.count("\n") == 1,
          f"one warning line: {p.stderr!r}")
    # speedscope names each region once: small, no warning.
    p = subprocess.run([EXE, "export", "speedscope", f"{tmp}/wide.h5", "-o", "-"],
                       capture_output=True, text=True)
    check(p.returncode == 0 and p.stderr == "", f"speedscope: no warning: {p.stderr!r}")
    p = subprocess.run([EXE, "export", "chrome-trace", f"{tmp}/wide.h5", "-o", f"{tmp}/w2.json",
                        "--min-duration", "500ns"], capture_output=True, text=True)
    kept = len(chrome_events(open(f"{tmp}/w2.json").read())[1])
    check(p.returncode == 0 and p.stderr == "" and kept == 201,
          f"--min-duration: no warning, 201 calls: {p.stderr!r}, {kept}")
    p = subprocess.run([EXE, "export", "chrome-trace", f"{tmp}/nested.h5", "-o", "-"],
                       capture_output=True, text=True)
    check(p.returncode == 0 and p.stderr == "", f"small trace: no warning: {p.stderr!r}")


LANES = {0: {"main": [0], "work": [1, 1]}}
LANE_DATA = {0: {"main": [(0, 1000)], "work": [(100, 700), (800, 1200)]}}
AGG = {"format": "scope-profiler-profile", "format_version": 1, "num_ranks": 2,
       "event_data_available": False, "metadata": {"mpi_size": 2, "ratio": 0.5, "names": ["a"]},
       "regions": [{"name": "solve", "rank": 0, "aggregate": {"count": 3, "total": 300,
                    "minimum": 50, "maximum": 150, "exclusive": 200}},
                   {"name": "solve", "rank": 1, "tags": ["t"], "aggregate": {
                    "count": 1, "total": 10, "minimum": 10, "maximum": 10}}]}
BAD = {"format": "scope-profiler-profile", "format_version": 1, "num_ranks": 1,  # partial overlap
       "event_data_available": True, "metadata": {},
       "regions": [{"name": "a", "rank": 0, "start_times_ns": [0], "end_times_ns": [10]},
                   {"name": "b", "rank": 0, "start_times_ns": [5], "end_times_ns": [20]}]}
SCHEMA = json.load(open(os.path.join(HERE, "chrome-trace.schema.json")))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        P.write_nested(f"{tmp}/nested.h5")
        P.write_nested(f"{tmp}/lanes.h5", 1, LANE_DATA, ["main", "work"], LANES,
                       {0: "MainThread", 1: "worker-1"})
        P.write_nested(f"{tmp}/scale1.h5", 1, {0: {"solve": [(0, 100), (200, 300)]}}, ["solve"])
        P.write_nested(f"{tmp}/scale2.h5", 2, {0: {"solve": [(0, 50)]}, 1: {"solve": [(0, 50)]}},
                       ["solve"])
        with open(f"{tmp}/agg.json", "w") as f:
            json.dump(AGG, f)
        with open(f"{tmp}/bad.json", "w") as f:
            json.dump(BAD, f)
        for t in (test_chrome, test_speedscope, test_folded, test_json, test_plot_data,
                  test_errors, test_size_warning):
            try:
                t(tmp)
            except AssertionError as exc:
                check(False, f"{t.__name__}: {exc}")
    print(f"{len(FAILS)} failure(s)" if FAILS else "all export checks passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
