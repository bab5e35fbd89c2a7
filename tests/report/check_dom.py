"""Check the DOM that headless Chromium dumped after running the report's
script (chromium --dump-dom).

  check_dom.py page DOM --regions N --lanes N [--files N]
      the script ran to the end (data-ready), every chart is present and
      non-empty, the Gantt has N lanes, the flame chart shows rank 0, the
      region table has N rows per file, sorted by total (descending)
  check_dom.py search DOM TERMS
      after loading with #q=TERMS: exactly the matching rows are visible,
      exactly the non-matching chart elements are dimmed, the call tree is
      flat
  check_dom.py actions DOM --ranks N [--pan]
      after loading with ?sptest=zoom[,pan],sort,expand (report.js replays a
      wheel zoom at 90 % of the Gantt, a drag from 60 % to 40 %, a click on
      the "calls" header, a click on the first region row): the Gantt shows
      the expected time range (computed here from the zoom rule) with only
      the bars inside it and its own axis ticks, the table is in calls
      order, the clicked row's per-rank table (N ranks) is open
"""
import math
import re
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chartlib import bars, lanes, parse_html  # noqa: E402

FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL:", msg)


def html_root(path):
    root = parse_html(open(path, encoding="utf-8", errors="replace").read())
    html = root.find_all("html")
    check(html and html[0].attrs.get("data-ready") == "1",
          "the report's script did not run to the end (no data-ready marker)")
    return root


def page(args):
    root = html_root(args.dom)
    runs = root.find_all("section", class_="run")
    check(len(runs) == args.files, f"{len(runs)} run sections, want {args.files}")
    for sec in runs:
        charts = {}
        for svg in sec.find_all("svg"):
            charts.setdefault(svg.attrs.get("data-chart"), []).append(svg)
        for kind in ("gantt", "flame", "durations", "imbalance"):
            svgs = charts.get(kind, [])
            check(svgs and all(bars(s) for s in svgs), f"{kind} chart missing or empty")
        if "gantt" in charts:
            n = len(lanes(charts["gantt"][0]))
            check(n == args.lanes, f"gantt has {n} lanes, want {args.lanes}")
        if "flame" in charts:
            check([l.attrs.get("data-rank") for l in lanes(charts["flame"][0])][:1] == ["0"],
                  "flame chart is not rank 0")
        check(len(charts.get("durations", [])) == 4, "durations: not one chart per metric")
        rows = sec.find_all("tr", class_="region")
        check(len(rows) == args.regions, f"{len(rows)} region rows, want {args.regions}")
        totals = [float(r.attrs["data-total"]) for r in rows]
        check(totals == sorted(totals, reverse=True), "region table not sorted by total")
        check(all("hidden" in d.attrs for d in sec.find_all("tr", class_="detail")),
              "per-rank rows open before a click")
    if args.files > 1:
        cmp_ = root.find_all("section", id="comparison")
        check(cmp_ and cmp_[0].find_all("svg", data_chart="speedup") and
              bars(cmp_[0].find_all("svg", data_chart="durations")[0]), "comparison charts missing")


def matches(name, terms):
    name = name.lower()
    return not terms or any(name.startswith(t[1:]) if t.startswith("^") else t in name
                            for t in terms)


def search(args):
    root = html_root(args.dom)
    terms = [t.strip().lower() for t in args.terms.split(",") if t.strip() and t.strip() != "^"]
    rows = root.find_all("tr", class_="region")
    shown = [r for r in rows if "hidden" not in r.attrs]
    check(shown and len(shown) < len(rows), f"search '{args.terms}': {len(shown)} of {len(rows)} rows shown")
    for r in rows:
        want = matches(r.attrs["data-region"], terms)
        check(("hidden" not in r.attrs) == want, f"row {r.attrs['data-region']}: visible={not want}")
    drawn = [e for svg in root.find_all("svg") for e in svg.iter() if "data-region" in e.attrs]
    for e in drawn:
        dim = "dim" in e.attrs.get("class", "").split()
        check(dim != matches(e.attrs["data-region"], terms), f"chart element {e.attrs['data-region']} dim={dim}")
    check(any("dim" in e.attrs.get("class", "").split() for e in drawn), "nothing dimmed")
    trees = root.find_all("table", class_="tree")
    check(trees and all("flat" in t.attrs.get("class", "").split() for t in trees),
          "the filtered call tree is not flat")


WHEEL_DELTA, WHEEL_RATE, AT = -500, 0.0015, 0.9  # as runTestActions/initZoom in report.js


def expected_view(pan):
    w = math.exp(WHEEL_DELTA * WHEEL_RATE)
    v0 = AT - AT * w
    if pan:  # dragged left by 20 % of the plot: the view moves right by 0.2 w
        v0 = min(v0 + 0.2 * w, 1 - w)
    return v0, v0 + w


def seconds(label):
    m = re.fullmatch(r"(-?[0-9.e+-]+) (s|ms|\u00b5s|ns)", label.strip())
    return float(m.group(1)) * {"s": 1, "ms": 1e-3, "\u00b5s": 1e-6, "ns": 1e-9}[m.group(2)] if m else None


def actions(args):
    root = html_root(args.dom)
    want = "zoom,pan,sort,expand" if args.pan else "zoom,sort,expand"
    check(root.find_all("html")[0].attrs.get("data-test-actions") == want,
          f"actions replayed: {root.find_all('html')[0].attrs.get('data-test-actions')!r}, want {want}")
    # Zoom (and pan): the range, the bars shown, the ticks.
    fig = root.find_all("figure", data_chart="gantt")[0]
    span = float(fig.attrs["data-span"])
    v0, v1 = expected_view(args.pan)
    start, end = float(fig.attrs.get("data-view-start", "nan")), float(fig.attrs.get("data-view-end", "nan"))
    check(abs(start - v0 * span) <= 1e-4 * span and abs(end - v1 * span) <= 1e-4 * span,
          f"gantt view {start}..{end} s, want {v0 * span:.6g}..{v1 * span:.6g} s of {span} s")
    check(end - start < 0.5 * span, "the Gantt's visible range did not shrink")
    svg = fig.find_all("svg")[0]
    bg = svg.find_all("rect", class_="lane-bg")[0]
    left, width = float(bg.attrs["x"]), float(bg.attrs["width"])
    all_bars = bars(svg)
    shown = [b for b in all_bars if b.attrs.get("display") != "none"]
    check(0 < len(shown) <= len(all_bars), f"{len(shown)} of {len(all_bars)} bars shown")
    check(str(len(shown)) == fig.attrs.get("data-bars-shown"), "data-bars-shown disagrees with the DOM")
    check(all(float(b.attrs["x"]) >= left - 0.01 and
              float(b.attrs["x"]) + float(b.attrs["width"]) <= left + width + 0.51 for b in shown),
          "a shown bar lies outside the plot area")
    ticks = [seconds(t.all_text()) for g in svg.find_all("g", class_="zoom-axis")
             for t in g.find_all("text")]
    check(len(ticks) >= 2 and all(t is not None and start - 1e-9 <= t <= end + 1e-9 for t in ticks),
          f"zoomed axis ticks {ticks} not inside {start}..{end}")
    # Sort: one click on "calls" sorts by calls, largest first.
    table = root.find_all("table", class_="regions")[0]
    th = table.find_all("th", data_key="calls")[0]
    check("desc" in th.attrs.get("class", "").split() and table.attrs.get("data-sorted") == "calls",
          "the calls header is not marked as the sort key")
    rows = table.find_all("tr", class_="region")
    calls = [int(r.attrs["data-calls"]) for r in rows]
    check(calls == sorted(calls, reverse=True), f"table not in calls order: {calls}")
    totals = [float(r.attrs["data-total"]) for r in rows]
    print(f"sort: calls order {calls[:6]}..., different from the total order: "
          f"{totals != sorted(totals, reverse=True)}")
    # Expand: the first row (after the sort) is open, its per-rank table visible.
    body = [c for c in table.find_all("tbody")[0].children if c.tag == "tr"]
    first = body[0]
    check("open" in first.attrs.get("class", "").split(), "the clicked row is not marked open")
    detail = body[1]
    check("detail" in detail.attrs.get("class", "").split() and "hidden" not in detail.attrs and
          detail.attrs.get("data-open") == "1", "the clicked row's per-rank table is not visible")
    ranks = [r for r in detail.find_all("tr") if "data-rank" in r.attrs]
    check(len(ranks) == args.ranks, f"{len(ranks)} per-rank rows, want {args.ranks}")
    check(all("hidden" in d.attrs for d in table.find_all("tr", class_="detail") if d is not detail),
          "other per-rank tables opened")
    print(f"zoom: {start:.6g}..{end:.6g} s of {span:.6g} s, {len(shown)} of {len(all_bars)} bars, "
          f"ticks {ticks}; expanded {first.attrs['data-region']} ({len(ranks)} ranks)")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("page")
    p.add_argument("dom")
    p.add_argument("--regions", type=int, required=True)
    p.add_argument("--lanes", type=int, required=True)
    p.add_argument("--files", type=int, default=1)
    s = sub.add_parser("search")
    s.add_argument("dom")
    s.add_argument("terms")
    a = sub.add_parser("actions")
    a.add_argument("dom")
    a.add_argument("--ranks", type=int, required=True)
    a.add_argument("--pan", action="store_true")
    args = ap.parse_args()
    {"page": page, "search": search, "actions": actions}[args.cmd](args)
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
