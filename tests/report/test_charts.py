"""Charts and HTML report on profiles with known contents: every chart must
have the right lanes / bars / points, values and colours, for `plot` (SVG
files) and `report` (inline SVG), with filters, several files and a
million-event file (aggregated per pixel, and saying so).

usage: test_charts.py CLI SOURCE_DIR
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from chartlib import bars, lanes, parse_html, parse_svg_file  # noqa: E402

CLI = sys.argv[1]
FAILS = []
LEFT, WIDTH = 120.0, 900.0  # chart-timeline-svg.c layout, default --width


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL:", msg)


def run(*args, rc=0):
    p = subprocess.run([CLI, *args], capture_output=True, text=True)
    check(p.returncode == rc, f"{' '.join(args)}: exit {p.returncode}, want {rc}: {p.stderr.strip()}")
    return p


def close(a, b, rel=1e-6):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


def count_by(items, key):
    out = {}
    for n in items:
        out[n.attrs.get(key)] = out.get(n.attrs.get(key), 0) + 1
    return out


KNOWN_CALLS = {"main": 3, "step": 12, "compute": 12, "io": 2}
KNOWN_DEPTH = {"main": "0", "step": "1", "io": "1", "compute": "2"}
KNOWN_TOTAL = {"main": 0.3, "step": 0.18, "compute": 0.136, "io": 0.006}
KNOWN_AVG = {"main": 0.1, "step": 0.015, "compute": 0.136 / 12, "io": 0.003}
KNOWN_MIN = {"main": 0.1, "step": 0.015, "compute": 0.010, "io": 0.003}
KNOWN_MAX = {"main": 0.1, "step": 0.015, "compute": 0.014, "io": 0.003}


def check_gantt_known(svg, where):
    ls = lanes(svg)
    check([l.attrs["data-rank"] for l in ls] == ["0", "1", "2"], f"{where}: gantt lanes {len(ls)}")
    check(all(l.attrs["data-rows"] == "3" for l in ls), f"{where}: gantt rows per lane")
    check([len(bars(l)) for l in ls] == [11, 9, 9], f"{where}: gantt bars per lane "
          f"{[len(bars(l)) for l in ls]}")
    bs = bars(svg)
    check(count_by(bs, "data-region") == KNOWN_CALLS, f"{where}: bars per region {count_by(bs, 'data-region')}")
    for b in bs:
        r = b.attrs["data-region"]
        check(b.attrs["data-depth"] == KNOWN_DEPTH[r], f"{where}: {r} at depth {b.attrs['data-depth']}")
        x, w = float(b.attrs["x"]), float(b.attrs["width"])
        check(LEFT - 0.01 <= x and x + w <= LEFT + WIDTH + 0.01, f"{where}: bar outside the plot")
    io = [b for b in bars(ls[0]) if b.attrs["data-region"] == "io"]
    # io calls at 2-5 ms and 92-95 ms of a 100 ms run
    check(close(float(io[0].attrs["x"]), LEFT + 0.02 * WIDTH, 1e-3) and
          close(float(io[0].attrs["width"]), 0.03 * WIDTH, 1e-3), f"{where}: io bar geometry")


def check_durations(svg, expect, where):
    bs = bars(svg)
    got = {b.attrs["data-region"]: float(b.attrs["data-value"]) for b in bs}
    check(len(bs) == len(expect), f"{where}: {len(bs)} duration bars")
    check(all(close(got.get(k, -1), v) for k, v in expect.items()), f"{where}: values {got}")
    vals = [float(b.attrs["data-value"]) for b in bs]
    check(vals == sorted(vals, reverse=True), f"{where}: bars not sorted by value")


def check_imbalance_known(svg, where):
    bs = bars(svg)
    check(len(bs) == 10, f"{where}: {len(bs)} imbalance bars, want 10")
    hot = [b for b in bs if "hot" in b.attrs["class"].split()]
    check([(b.attrs["data-region"], b.attrs["data-rank"]) for b in hot] == [("compute", "2")],
          f"{where}: hot bars {[(b.attrs['data-region'], b.attrs['data-rank']) for b in hot]}")


def colours(svgs):
    """region -> set of fills over all bars of all charts."""
    out = {}
    for s in svgs:
        for b in bars(s):
            out.setdefault(b.attrs["data-region"], set()).add(b.attrs["fill"])
    return out


def test_plot_known(work, prof):
    d = os.path.join(work, "known")
    p = run("plot", "all", f"{prof}/known.h5", "-o", d, "--json")
    written = json.loads(p.stdout)["files"]
    names = sorted(os.path.basename(f) for f in written)
    check(names == sorted(["gantt_plot.svg", "flame_chart_plot.svg", "imbalance_plot.svg",
                           "region_statistics.json"] +
                          [f"durations_plot_{m}.svg" for m in ("total", "avg", "min", "max")]),
          f"plot all: wrote {names}")
    names = [n for n in names if n.endswith(".svg")]
    svgs = {n: parse_svg_file(os.path.join(d, n)) for n in names}
    for n, s in svgs.items():
        check(float(s.attrs["width"]) > 0 and float(s.attrs["height"]) > 0 and bars(s),
              f"{n}: empty chart")
    check_gantt_known(svgs["gantt_plot.svg"], "plot gantt")
    fl = svgs["flame_chart_plot.svg"]
    check([l.attrs["data-rank"] for l in lanes(fl)] == ["0"] and len(bars(fl)) == 11,
          f"flame: {len(bars(fl))} bars")
    for m, exp in (("total", KNOWN_TOTAL), ("avg", KNOWN_AVG), ("min", KNOWN_MIN), ("max", KNOWN_MAX)):
        check_durations(svgs[f"durations_plot_{m}.svg"], exp, f"durations {m}")
    check_imbalance_known(svgs["imbalance_plot.svg"], "plot imbalance")
    col = colours(svgs.values())
    check(all(len(v) == 1 for v in col.values()), f"region colours differ between charts: {col}")
    check(len({next(iter(v)) for v in col.values()}) == 4, "regions share a colour")
    # tab20 in first-entry order: main, io, step, compute
    check({k: next(iter(v)) for k, v in col.items()} ==
          {"main": "#1f77b4", "io": "#aec7e8", "step": "#ff7f0e", "compute": "#ffbb78"},
          f"colours {col}")


def test_filters(work, prof):
    k = f"{prof}/known.h5"

    def gantt(*opts):
        d = tempfile.mkdtemp(dir=work)
        run("plot", "gantt", k, "-o", d, *opts)
        return parse_svg_file(os.path.join(d, "gantt_plot.svg"))

    s = gantt("--include", "comp")
    check(count_by(bars(s), "data-region") == {"compute": 12} and
          all(b.attrs["data-depth"] == "0" for b in bars(s)), "--include comp")
    s = gantt("--exclude", "io", "--exclude", "^main")
    check(count_by(bars(s), "data-region") == {"step": 12, "compute": 12}, "--exclude")
    s = gantt("--ranks", "1-2")
    check([l.attrs["data-rank"] for l in lanes(s)] == ["1", "2"] and len(bars(s)) == 18, "--ranks 1-2")
    s = gantt("--cmap", "tab10")
    check({b.attrs["fill"] for b in bars(s) if b.attrs["data-region"] == "io"} == {"#ff7f0e"},
          "--cmap tab10")
    d = tempfile.mkdtemp(dir=work)
    run("plot", "flame", k, "-o", d, "-r", "1,2")
    for r in (1, 2):
        f = os.path.join(d, f"flame_chart_plot_known_rank{r}.svg")
        s = parse_svg_file(f) if os.path.exists(f) else None
        check(s is not None and [l.attrs["data-rank"] for l in lanes(s)] == [str(r)] and
              len(bars(s)) == 9, f"flame --ranks rank {r}")
    d = tempfile.mkdtemp(dir=work)
    run("plot", "durations", k, "-o", d, "--metrics", "max")
    check(sorted(os.listdir(d)) == ["durations_plot.svg", "region_statistics.json"],
          f"--metrics max wrote {os.listdir(d)}")
    check_durations(parse_svg_file(os.path.join(d, "durations_plot.svg")), KNOWN_MAX, "--metrics max")


def test_one_file(work, prof):
    """-o FILE.svg: the one chart drawn goes to that file (and nothing else
    is written); several charts, or --data, are a usage error that writes
    nothing; an existing directory named *.svg stays a directory."""
    k = f"{prof}/known.h5"
    d = tempfile.mkdtemp(dir=work)
    g = os.path.join(d, "timeline.SVG")
    p = run("plot", "gantt", k, "-o", g, "--json")
    check(json.loads(p.stdout)["files"] == [g], f"gantt -o FILE --json: {p.stdout}")
    check(sorted(os.listdir(d)) == ["timeline.SVG"], f"gantt -o FILE wrote {os.listdir(d)}")
    check_gantt_known(parse_svg_file(g), "gantt -o FILE")
    f = os.path.join(d, "r2.svg")
    run("plot", "flame", k, "-o", f, "-r", "2")
    s = parse_svg_file(f)
    check([l.attrs["data-rank"] for l in lanes(s)] == ["2"] and len(bars(s)) == 9, "flame -r 2 -o FILE")
    f = os.path.join(d, "max.svg")
    run("plot", "durations", k, "-o", f, "--metrics", "max")
    check_durations(parse_svg_file(f), KNOWN_MAX, "durations -o FILE")
    for args, charts in ((["default", k], "6 charts"), (["durations", k], "4 charts"),
                         (["flame", k, "-r", "1,2"], "2 charts")):
        p = run("plot", *args, "-o", os.path.join(d, "many.svg"), rc=2)
        check("names one SVG file" in p.stderr and charts in p.stderr, f"{args} -o FILE: {p.stderr}")
    p = run("plot", "gantt", k, "-o", os.path.join(d, "x.svg"), "--data", "csv", rc=2)
    check("--data writes several files" in p.stderr, f"--data -o FILE: {p.stderr}")
    check(sorted(os.listdir(d)) == ["max.svg", "r2.svg", "timeline.SVG"],
          f"refused runs wrote files: {os.listdir(d)}")
    old = os.path.join(d, "old.svg")
    os.mkdir(old)
    run("plot", "gantt", k, "-o", old)
    check(sorted(os.listdir(old)) == ["gantt_plot.svg", "region_statistics.json"],
          f"-o existing-dir.svg wrote {os.listdir(old)}")


def test_threads(work, prof):
    d = os.path.join(work, "threads")
    run("plot", "gantt", f"{prof}/threads.h5", "-o", d)
    s = parse_svg_file(os.path.join(d, "gantt_plot.svg"))
    got = [(l.attrs["data-rank"], l.attrs["data-thread"], len(bars(l))) for l in lanes(s)]
    check(got == [("0", "0", 3), ("0", "1", 2)], f"thread lanes {got}")


def test_depths(work, prof):
    """Aggregated per pixel (--max-bars 1), each rank's lane has as many
    rows as its calls nest deep, whether or not the previous rank's depth
    (trusted by the one-walk binning) was right, and covers all its calls."""
    sys.path.insert(0, HERE)
    import make_profiles as M
    d = os.path.join(work, "depths")
    run("plot", "gantt", f"{prof}/depths.h5", "-o", d, "--max-bars", "1")
    s = parse_svg_file(os.path.join(d, "gantt_plot.svg"))
    got = [(l.attrs["data-rank"], l.attrs["data-rows"]) for l in lanes(s)]
    want = [(str(r), str(depth)) for r, depth in enumerate(M.DEPTHS)]
    check(got == want, f"depths: aggregated lanes (rank, rows) {got}, want {want}")
    calls = [sum(int(b.attrs["data-calls"]) for b in bars(l)) for l in lanes(s)]
    want_calls = [4 if depth == 1 else 1 + 4 * (depth - 1) for depth in M.DEPTHS]
    check(calls == want_calls, f"depths: calls per lane {calls}, want {want_calls}")
    check("aggregated per pixel" in "".join(n.text for n in s.iter("text")), "depths: not aggregated")
    print(f"depths: lanes {got}, calls {calls}")


def points(svg):
    out = {}
    for p in svg.find_all("circle", class_="point"):
        out.setdefault(p.attrs["data-region"], []).append((p.attrs["data-x"], float(p.attrs["data-value"])))
    return out


SPEEDUP = {"setup": [("1", 1.0), ("2", 1.0), ("4", 1.0)], "solve": [("1", 1.0), ("2", 2.0), ("4", 4.0)]}
WEAK = {"setup": [("1", 1.0), ("2", 1.0), ("4", 1.0)], "solve": [("1", 1.0), ("2", 0.5), ("4", 0.25)]}


def same_points(got, want):
    return got.keys() == want.keys() and all(
        [x for x, _ in got[k]] == [x for x, _ in want[k]] and
        all(close(a, b) for (_, a), (_, b) in zip(got[k], want[k])) for k in want)


def test_scaling(work, prof):
    d = os.path.join(work, "scale")
    files = [f"{prof}/scale_4.h5", f"{prof}/scale_1.h5", f"{prof}/scale_2.h5"]  # unsorted on purpose
    run("plot", "all", *files, "-o", d, "--x", "omp_num_threads")
    sp = parse_svg_file(os.path.join(d, "speedup_plot.svg"))
    check(same_points(points(sp), SPEEDUP), f"speedup points {points(sp)}")
    wk = parse_svg_file(os.path.join(d, "weak_scaling_plot.svg"))
    check(same_points(points(wk), WEAK), f"weak scaling points {points(wk)}")
    du = parse_svg_file(os.path.join(d, "durations_plot_total.svg"))
    check(len(bars(du)) == 6 and count_by(bars(du), "data-file") == {"0": 2, "1": 2, "2": 2},
          "durations of three files")
    p = run("plot", "speedup", f"{prof}/known.h5", "-o", d, rc=2)
    check(len(p.stderr.strip().splitlines()) <= 2 and "two files" in p.stderr, "speedup with one file")
    p = run("plot", "default", f"{prof}/known.h5", "-o", os.path.join(work, "def"))
    check(not os.path.exists(os.path.join(work, "def", "speedup_plot.svg")), "default: speedup for one file")


def csv_rows(path):
    import csv
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_data(work, prof):
    d = os.path.join(work, "data-csv")
    p = run("plot", "all", f"{prof}/known.h5", "-o", d, "--data", "csv", "--json")
    written = {os.path.basename(f) for f in json.loads(p.stdout)["files"]}
    want = {"gantt_data.csv": 29, "flame_chart_data.csv": 11, "durations_data.csv": 16,
            "imbalance_data.csv": 10}
    for name, n in want.items():
        rows = csv_rows(os.path.join(d, name)) if name in written else []
        check(len(rows) == n, f"--data csv: {name} has {len(rows)} rows, want {n}")
    check("region_statistics.json" in written, "plot did not write region_statistics.json")
    g = csv_rows(os.path.join(d, "gantt_data.csv"))
    check(list(g[0].keys()) == ["file", "rank", "region", "start_seconds", "end_seconds"], "gantt columns")
    io = sorted(float(r["start_seconds"]) for r in g if r["region"] == "io")
    check(len(io) == 2 and close(io[0], 0.002) and close(io[1], 0.092), f"io intervals {io}")
    d = os.path.join(work, "data-json")
    run("plot", "all", *[f"{prof}/scale_{n}.h5" for n in (1, 2, 4)], "-o", d, "--data", "json",
        "--x", "omp_num_threads")
    doc = json.load(open(os.path.join(d, "speedup_data.json")))
    got = {}
    for pt in doc["points"]:
        got.setdefault(pt["region"], []).append((str(pt["omp_num_threads"]), pt["speedup"]))
    check(same_points(got, SPEEDUP), f"speedup_data.json {got}")
    svg = parse_svg_file(os.path.join(d, "speedup_plot.svg"))
    fills = {g.attrs["data-region"]: g.find_all("circle")[0].attrs["fill"]
             for g in svg.find_all("g", class_="line")}
    check(doc["colors"] == fills, f"plot-data colours {doc['colors']} != chart colours {fills}")
    du = json.load(open(os.path.join(d, "durations_data.json")))
    bar_fill = {b.attrs["data-region"]: b.attrs["fill"]
                for b in bars(parse_svg_file(os.path.join(d, "durations_plot_total.svg")))}
    check(all(du["colors"].get(k) == v for k, v in bar_fill.items()), "durations colours differ")


def test_errors(work, prof):
    k = f"{prof}/known.h5"
    for args in (["gantt", k], ["gantt", k, "-o", work, "--cmap", "nope"],
                 ["durations", k, "-o", work, "--metrics", "median"],
                 ["gantt", os.path.join(work, "missing.h5"), "-o", work],
                 ["gantt", k, "-o", work, "--data", "xml"]):
        p = run("plot", *args, rc=2)
        check(p.stderr.startswith("scope-profiler") and "Traceback" not in p.stderr, f"error text {args}")
    p = run("plot", "list")
    check("gantt" in p.stdout and "weak_scaling" in p.stdout, "plot list")


def test_big(work, prof, n_events):
    d = os.path.join(work, "big")
    t = time.time()
    run("plot", "gantt", f"{prof}/big.h5", "-o", d)
    elapsed = time.time() - t
    path = os.path.join(d, "gantt_plot.svg")
    s = parse_svg_file(path)
    bs = bars(s)
    check(sum(int(b.attrs["data-calls"]) for b in bs) == n_events,
          f"aggregated bars cover {sum(int(b.attrs['data-calls']) for b in bs)} calls, want {n_events}")
    check(len(bs) <= 4 * 3 * WIDTH, f"{len(bs)} bars for 4 lanes x 3 rows")
    check(os.path.getsize(path) < 2_000_000, f"gantt of 1M events is {os.path.getsize(path)} bytes")
    check("aggregated per pixel" in "".join(n.text for n in s.iter("text")), "no aggregation note in the SVG")
    check(elapsed < 30, f"plot gantt of 1M events took {elapsed:.1f} s")
    print(f"big: {n_events} events -> {len(bs)} bars, {os.path.getsize(path)} bytes, {elapsed:.2f} s")


def report_charts(root):
    return {s.attrs["data-chart"]: s for s in root.find_all("svg")}


def test_report(work, prof):
    out = os.path.join(work, "known.html")
    p = run("report", f"{prof}/known.h5", "-o", out, "--json")
    check(json.loads(p.stdout)["output"] == out, "report --json")
    text = open(out, encoding="utf-8").read()
    check("Content-Security-Policy" in text and "default-src 'none'" in text, "no CSP")
    check(not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", text), "external reference")
    check("<link" not in text and "<script src" not in text, "external script or stylesheet")
    root = parse_html(text)
    regions = root.find_all("tr", class_="region")
    check(sorted(r.attrs["data-region"] for r in regions) == sorted(KNOWN_CALLS), "region rows")
    check(len(root.find_all("tr", class_="detail")) == 4, "per-rank rows")
    comp = [r for r in regions if r.attrs["data-region"] == "compute"][0]
    check(close(float(comp.attrs["data-total"]), 0.136) and comp.attrs["data-calls"] == "12" and
          close(float(comp.attrs["data-imbalance"]), (0.056 / (0.136 / 3) - 1) * 100), "compute row")
    detail = comp.parent.children[comp.parent.children.index(comp) + 1]
    check([t.attrs["data-rank"] for t in detail.iter("tr") if "data-rank" in t.attrs] == ["0", "1", "2"],
          "compute per-rank rows")
    hot = root.find_all("div", data_callout="hotspot")
    check(len(hot) == 1 and "compute" in hot[0].all_text(), "hot spot callout")
    imb = root.find_all("div", data_callout="imbalance")
    check(len(imb) == 1 and imb[0].attrs["data-region"] == "compute" and "rank 2" in imb[0].all_text()
          and "23.5%" in imb[0].all_text(), "imbalance callout")
    tree = [t for t in root.find_all("table", class_="tree")[0].iter("tr") if "data-depth" in t.attrs]
    check(len(tree) == 6, f"call tree rows {len(tree)}")
    charts = report_charts(root)
    check_gantt_known(charts["gantt"], "report gantt")
    check(len(bars(charts["flame"])) == 11, "report flame")
    dur = root.find_all("svg", data_chart="durations")
    check(len(dur) == 4 and all(len(bars(s)) == 4 for s in dur), "report durations")
    check_imbalance_known(charts["imbalance"], "report imbalance")
    check("testhost" in root.find_all("table", class_="meta")[0].all_text(), "metadata")

    out = os.path.join(work, "scale.html")
    run("report", *[f"{prof}/scale_{n}.h5" for n in (1, 2, 4)], "-o", out, "--x", "omp_num_threads")
    root = parse_html(open(out, encoding="utf-8").read())
    cmp_ = root.find_all("section", id="comparison")
    check(len(cmp_) == 1, "no comparison section")
    if cmp_:
        c = report_charts(cmp_[0])
        check(same_points(points(c["speedup"]), SPEEDUP), "report speedup")
        check(same_points(points(c["weak_scaling"]), WEAK), "report weak scaling")
        check(all(len(bars(s)) == 6 for s in cmp_[0].find_all("svg", data_chart="durations")),
              "report comparison durations")
    check(len(root.find_all("section", class_="run")) == 3, "one section per file")


TAB20_FIRST6 = ["#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#98df8a"]


def hue_deg(hexcol):
    import colorsys
    r, g, b = (int(hexcol[i:i + 2], 16) / 255 for i in (1, 3, 5))
    h, l, sat = colorsys.rgb_to_hls(r, g, b)
    return h * 360, sat


def red(hexcol):
    h, sat = hue_deg(hexcol)
    return sat >= 0.25 and (h <= 8.5 or h >= 351.5)


def test_many(work, prof):
    """64 regions, 15 of them MPI: unique colours, the MPI family, the same
    colour in the report, the plots and plot-data; the MPI card; the 1 %
    floor of the imbalance callouts; the elided long name."""
    sys.path.insert(0, HERE)
    import make_profiles as M
    names, mpi = M.many_names(), set(M.MANY_MPI)
    d = os.path.join(work, "many-plots")
    run("plot", "gantt", f"{prof}/many.h5", "-o", d, "--data", "json")
    plot = {k: next(iter(v)) for k, v in colours([parse_svg_file(os.path.join(d, "gantt_plot.svg"))]).items()}
    data = json.load(open(os.path.join(d, "gantt_data.json")))["colors"]
    out = os.path.join(work, "many.html")
    run("report", f"{prof}/many.h5", "-o", out)
    root = parse_html(open(out, encoding="utf-8").read())
    rep = {}
    for row in root.find_all("tr", class_="region"):
        sw = row.find_all("span", class_="swatch")[0].attrs["style"]
        rep[row.attrs["data-region"]] = sw.split("background:")[1].strip()
    check(set(data) == set(names) and set(rep) == set(names), "many: regions missing from a colour map")
    check(len(set(data.values())) == len(names), f"many: {len(names)} regions, {len(set(data.values()))} colours")
    check(all(plot[k] == data[k] for k in plot) and len(plot) == len(names),
          "many: gantt fills differ from the plot-data colours")
    check(rep == data, "many: report swatches differ from plot colours")
    check(all(red(data[k]) for k in mpi), f"many: MPI colours outside the red family: "
          f"{[(k, data[k]) for k in mpi if not red(data[k])]}")
    plain = [k for k in data if k not in mpi]  # first-seen order, as the map keeps it
    check(not any(red(data[k]) for k in plain),
          f"many: non-MPI regions in the MPI family: {[(k, data[k]) for k in plain if red(data[k])]}")
    check([data[k] for k in plain[:6]] == TAB20_FIRST6, "many: the first non-MPI regions are not tab20's")
    # MPI card: rank r spends 15 * (2 + r) ms in MPI of a 1 s run.
    card = root.find_all("div", data_card="mpi")
    pct = [15 * (2 + r) / 1000 * 100 for r in range(3)]
    check(len(card) == 1 and card[0].attrs.get("data-slowest-rank") == "2" and
          close(float(card[0].attrs["data-mpi-max-pct"]), max(pct), 1e-3) and
          f"{sum(pct) / 3:.1f} %" in card[0].all_text(), "many: MPI card")
    per_rank = root.find_all("details", class_="mpi-ranks")
    cells = [r.find_all("td")[2].all_text() for r in per_rank[0].find_all("tr") if "data-rank" in r.attrs] \
        if per_rank else []
    check(cells == [f"{p:.1f}%" for p in pct], f"many: MPI share per rank {cells}")
    # Imbalance callouts: 'imbalanced' (80 ms, +20 %) listed; 'tiny' (+50 %, 0.2 ms) and the
    # MPI calls (+33 %, 4 ms) are under 1 % of the run and only counted.
    imb = [c.attrs["data-region"] for c in root.find_all("div", data_callout="imbalance")]
    check(imb == ["imbalanced"], f"many: imbalance callouts {imb}")
    small = root.find_all("div", data_callout="imbalance-small")
    check(small and small[0].all_text().startswith("16 imbalanced regions under 1%"), "many: small-imbalance note")
    # The long C++ name: elided in the middle, whole in the title.
    cell = [r for r in root.find_all("tr", class_="region") if r.attrs["data-region"] == M.LONG_NAME]
    td = cell[0].find_all("td")[0] if cell else None
    text = td.find_all("span", class_="nm")[0].all_text() if td else ""
    check(td is not None and td.attrs.get("title") == M.LONG_NAME and "\u2026" in text and
          len(text) < 70 and text.startswith("std::vector<") and text.endswith("const&>(int)"),
          f"many: long name cell {text!r}")
    print(f"many: {len(names)} regions, {len(set(data.values()))} colours, MPI in reds, card {pct}")


def test_report_big(work, prof):
    out = os.path.join(work, "big.html")
    t = time.time()
    run("report", f"{prof}/big.h5", "-o", out)
    elapsed = time.time() - t
    root = parse_html(open(out, encoding="utf-8").read())
    note = root.find_all("div", data_callout="aggregated")
    check(len(note) == 1 and "aggregated per pixel" in note[0].all_text(), "big report: no aggregation note")
    check(os.path.getsize(out) < 5_000_000, f"big report is {os.path.getsize(out)} bytes")
    check(elapsed < 60, f"report of 1M events took {elapsed:.1f} s")
    print(f"big report: {os.path.getsize(out)} bytes, {elapsed:.2f} s")


def main():
    work = tempfile.mkdtemp(prefix="sp-report-")
    prof = os.path.join(work, "prof")
    out = subprocess.run([sys.executable, os.path.join(HERE, "make_profiles.py"), prof,
                          "--big", "1000000"], capture_output=True, text=True, check=True).stdout
    n_events = int(re.search(r"big.h5: (\d+) events", out).group(1))
    for t in (test_plot_known, test_filters, test_one_file, test_threads, test_scaling, test_data, test_errors,
              test_report, test_many, test_depths):
        t(work, prof)
    test_big(work, prof, n_events)
    test_report_big(work, prof)
    if FAILS:
        print(f"{len(FAILS)} check(s) failed; files in {work}")
        sys.exit(1)
    subprocess.run(["rm", "-rf", work])
    print("report charts: OK")


if __name__ == "__main__":
    main()
