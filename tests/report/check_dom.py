"""Check the DOM that headless Chromium dumped after running the report's
script (chromium --dump-dom).

  check_dom.py page DOM --regions N --lanes N [--files N]
      the script ran to the end (data-ready), every chart is present and
      non-empty, the Gantt has N lanes, the flame chart shows rank 0, the
      region table has N rows per file, sorted by total (descending)
  check_dom.py search DOM TERMS
      after loading with #q=TERMS: exactly the matching rows are visible,
      exactly the non-matching chart elements are dimmed
"""
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
    args = ap.parse_args()
    (page if args.cmd == "page" else search)(args)
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
