#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End-to-end test of automatic function regions (-finstrument-functions).

Builds examples/functions with one compiler at one optimisation level
(argv: gcc|clang, -O0|-O2), runs each program under `scope-profiler run` and
checks, through the CLI's --json output: exact call counts, demangled names,
definition lines, the nesting of the reconstructed call stack (per thread),
include/exclude filters, min-duration and auto-throttle (events + throttled
== calls). Values the CLI does not print yet are read from the file with
h5py. Exits 77 (skip) when a compiler is missing.
"""
import json, os, re, shutil, subprocess, sys, tempfile

import h5py

BUILD = os.environ.get("SP_BUILD_DIR", "build")
SRC = os.environ.get("SP_SOURCE_DIR", ".")
EX = os.path.join(SRC, "examples", "functions")
CLI = os.path.join(BUILD, "tools", "scope-profiler")
FAILS = []


def skip(why):
    print("SKIP:", why)
    sys.exit(77)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


C_COUNTS = {"main": 1, "outer": 3, "middle": 15, "inner": 60, "twice": 60, "fib": 177,
            "run_plugin": 1, "plugin_run": 1, "plugin_step": 7, "escape": 1, "escape_deep": 1}
C_PARENTS = {"main": {None}, "outer": {"main"}, "middle": {"outer"}, "inner": {"middle"},
             "twice": {"inner"}, "fib": {"main", "fib"}, "run_plugin": {"main"},
             "plugin_run": {"run_plugin"}, "plugin_step": {"plugin_run"},
             "escape": {"main"}, "escape_deep": {"escape"}}
LAMBDA = r"main::(\{lambda\(int\)#1\}|\$_0)"
CXX_COUNTS = {"main": 1, r"geo::Rect::area\(\) const": 4, r"geo::square<int>\(int\)": 5,
              r"geo::square<double>\(double\)": 5, r"geo::detail::scale\(int\)": 6,
              r"geo::apply_n<%s>\(int, %s\)" % (LAMBDA, LAMBDA): 1,
              LAMBDA + r"::operator\(\)\(int\) const": 6}


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr))
    return p.stdout


def def_line(path, pattern):
    """1-based line of the first source line matching pattern (not a prototype)."""
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if re.search(pattern, line) and ("lam" in pattern or not line.rstrip().endswith(";")):
                return i
    raise LookupError(pattern)


def profile(prog, out, *opts):
    # These checks are about every call being an event: the default
    # auto-throttle is off unless a check sets its own throttle options
    # (test-throttle.py covers the defaults).
    if not any(o.startswith("--throttle") for o in opts):
        opts = ("--throttle-calls", "0") + opts
    run([CLI, "run", "-q", "-o", out] + list(opts) + ["--", prog])
    return out


def summary(path):
    rows = json.loads(run([CLI, "summary", path, "--json"]))
    return {r["name"]: r for r in rows}


def file_rows(path):
    """name -> dict(count, line, file, throttled) straight from the file."""
    f = h5py.File(path, "r")
    names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][:]]
    idx = f["rank_region_index"]
    out = {}
    for i, r in enumerate(idx["region_ids"][:]):
        sf = idx["source_files"][i]
        out[names[r]] = dict(
            count=int(idx["event_counts"][i]), line=int(idx["source_lines"][i]),
            file=sf.decode() if isinstance(sf, bytes) else sf,
            throttled=int(idx["throttled_counts"][i]) if "throttled_counts" in idx else 0,
            throttled_ns=int(idx["throttled_totals"][i]) if "throttled_totals" in idx else 0,
            offset=int(idx["event_offsets"][i]))
    return out


def throttled(path):
    """name -> calls not on the timeline (CLI key if it prints one)."""
    s = summary(path)
    for key in ("throttled_calls", "throttled_count", "throttled_counts"):
        if all(key in r for r in s.values()):
            return {n: int(r[key]) for n, r in s.items()}
    return {n: r["throttled"] for n, r in file_rows(path).items()}


def parents(path):
    """(thread, name) -> set of parent names, rebuilt per thread as the Python
    project's call_stack does (start asc, end desc; end <= start closes)."""
    f = h5py.File(path, "r")
    rows = file_rows(path)
    st, en = f["events/start_times"][:], f["events/end_times"][:]
    tid = f["events/thread_ids"][:] if "thread_ids" in f["events"] else None
    calls = []
    for name, r in rows.items():
        for k in range(r["offset"], r["offset"] + r["count"]):
            calls.append((int(tid[k]) if tid is not None else 0, int(st[k]), -int(en[k]), name))
    calls.sort()
    out, stack, lane, bad = {}, [], None, []
    for t, s, negend, name in calls:
        if t != lane:
            stack, lane = [], t
        while stack and -stack[-1][0] <= s:
            stack.pop()
        if stack and -negend > -stack[-1][0]:
            bad.append("%s in %s" % (name, stack[-1][1]))
        out.setdefault((t, name), set()).add(stack[-1][1] if stack else None)
        stack.append((negend, name))
    check(not bad and calls, "%d calls properly nested %s" % (len(calls), bad[:3]))
    return out


def cli_tree_parents(path):
    """Parents from `scope-profiler tree --json`, or None if not available."""
    p = subprocess.run([CLI, "tree", path, "--json"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        return None
    data = json.loads(p.stdout)
    calls = data.get("calls", data) if isinstance(data, dict) else data
    out = {}
    if calls and "children" in calls[0]:
        def walk(node, parent):
            out.setdefault(node["name"], set()).add(parent)
            for ch in node.get("children", []):
                walk(ch, node["name"])
        for root in calls:
            walk(root, None)
        return out
    by_id = {c["call_id"]: c["name"] for c in calls}
    for c in calls:
        out.setdefault(c["name"], set()).add(by_id.get(c.get("parent")))
    return out


def check_parents(path, expected, label):
    own = parents(path)
    got = {}
    for (t, name), ps in own.items():
        got.setdefault(name, set()).update(ps)
    tree = cli_tree_parents(path)
    if tree is not None:
        check(tree == got, "%s: CLI tree agrees with the per-thread reconstruction" % label)
    for name, ps in got.items():
        exp = expected.get(name)
        check(exp is not None and ps <= exp, "%s: parents of %s %s within %s" % (label, name, sorted(map(str, ps)), exp))


def build(cc, cxx, opt, tmp):
    common = ["-g", opt, "-finstrument-functions"]
    plugin = os.path.join(tmp, "libfn-plugin.so")
    run([cc] + common + ["-fPIC", "-shared", "-o", plugin, os.path.join(EX, "plugin.c")])
    exes = {"c": os.path.join(tmp, "functions-c"), "cxx": os.path.join(tmp, "functions-cxx"),
            "omp": os.path.join(tmp, "functions-omp")}
    run([cc] + common + ["-o", exes["c"], os.path.join(EX, "functions-c.c"), "-ldl"])
    run([cxx] + common + ["-o", exes["cxx"], os.path.join(EX, "functions-cxx.cpp")])
    try:
        run([cc] + common + ["-fopenmp", "-pthread", "-o", exes["omp"], os.path.join(EX, "functions-omp.c")])
    except RuntimeError as e:
        print("note: no OpenMP build:", e)
        del exes["omp"]
    return exes


def test_c(exe, tmp, label):
    src = os.path.join(EX, "functions-c.c")
    out = profile(exe, os.path.join(tmp, "c.h5"))
    s = summary(out)
    check({n: r["num_calls"] for n, r in s.items()} == C_COUNTS,
          "%s: exact call counts and names %s" % (label, {n: r["num_calls"] for n, r in s.items()}))
    rows = file_rows(out)
    for name in C_COUNTS:
        path = os.path.join(EX, "plugin.c") if name.startswith("plugin") else src
        ln = def_line(path, r"^(static )?\w[\w ]*\b%s\(" % name)
        r = rows.get(name, {})
        check(r.get("line") == ln and os.path.realpath(r.get("file", "")) == os.path.realpath(path),
              "%s: %s defined at %s:%d (file says %s:%s)" % (label, name, os.path.basename(path), ln,
                                                            r.get("file"), r.get("line")))
    check_parents(out, C_PARENTS, label)

    # Filters: re.match on the name; excluded functions are absent, others exact.
    out = profile(exe, os.path.join(tmp, "c-ex.h5"), "--exclude", "fib|tw", "--include", "[a-z]")
    got = {n: r["num_calls"] for n, r in summary(out).items()}
    exp = {n: c for n, c in C_COUNTS.items() if not re.match("fib|tw", n)}
    check(got == exp, "%s: --exclude 'fib|tw' %s" % (label, got))
    names = [n.decode() for n in h5py.File(out, "r")["region_table/names"][:]]
    check("fib" not in names and "twice" not in names, "%s: excluded names are not in the file" % label)
    out = profile(exe, os.path.join(tmp, "c-in.h5"), "--include", "plugin_|mid")
    got = {n: r["num_calls"] for n, r in summary(out).items()}
    check(got == {"plugin_run": 1, "plugin_step": 7, "middle": 15}, "%s: --include 'plugin_|mid' %s" % (label, got))

    # Min duration: every kept event is at least 2 us; events + hidden == calls.
    out = profile(exe, os.path.join(tmp, "c-min.h5"), "--min-duration", "2us")
    f = h5py.File(out, "r")
    d = f["events/end_times"][:] - f["events/start_times"][:]
    check(len(d) > 0 and d.min() >= 2000, "%s: --min-duration 2us keeps only calls >= 2us (%d kept)" % (label, len(d)))
    s, thr = summary(out), throttled(out)
    total = {n: s.get(n, {"num_calls": 0})["num_calls"] + thr.get(n, 0) for n in C_COUNTS}
    check(total == C_COUNTS, "%s: min-duration events + hidden == calls %s" % (label, total))
    check(s["twice"]["num_calls"] < 60 if "twice" in s else True, "%s: short calls were removed" % label)

    # Auto-throttle: after 10 calls with a mean under 1 ms, only counted.
    out = profile(exe, os.path.join(tmp, "c-thr.h5"), "--throttle-calls", "10", "--throttle-mean", "1ms",
                  "--throttle-timing", "exact")
    s, thr = summary(out), throttled(out)
    total = {n: s.get(n, {"num_calls": 0})["num_calls"] + thr.get(n, 0) for n in C_COUNTS}
    check(total == C_COUNTS, "%s: throttle events + throttled == calls %s" % (label, total))
    for leaf in ("inner", "twice", "middle"):
        check(s[leaf]["num_calls"] == 10, "%s: %s has exactly 10 timeline events" % (label, leaf))
    check(thr["fib"] > 0 and s["fib"]["num_calls"] >= 10, "%s: recursive fib throttled (%d + %d)" % (
        label, s["fib"]["num_calls"], thr["fib"]))
    check_parents(out, C_PARENTS, label + " throttled")

    # Throttle timing "estimate": throttled calls are counted only (no
    # timestamps); counts stay exact and a throttled total is the count times
    # the mean of the calls the decision was made on, which for these
    # non-recursive functions are exactly their 10 timeline events.
    out = profile(exe, os.path.join(tmp, "c-est.h5"), "--throttle-calls", "10", "--throttle-mean", "1ms",
                  "--throttle-timing", "estimate")
    s, thr = summary(out), throttled(out)
    total = {n: s.get(n, {"num_calls": 0})["num_calls"] + thr.get(n, 0) for n in C_COUNTS}
    check(total == C_COUNTS, "%s: estimate: events + throttled == calls %s" % (label, total))
    check(thr["fib"] > 0, "%s: estimate: recursive fib throttled" % label)
    check_parents(out, C_PARENTS, label + " throttle estimate")
    f, rows = h5py.File(out, "r"), file_rows(out)
    tt = f["metadata"].attrs.get("throttle_timing")
    check((tt.decode() if isinstance(tt, bytes) else tt) == "estimate",
          "%s: estimate: metadata throttle_timing %r" % (label, tt))
    tt = h5py.File(os.path.join(tmp, "c-thr.h5"), "r")["metadata"].attrs.get("throttle_timing")
    check((tt.decode() if isinstance(tt, bytes) else tt) == "exact",
          "%s: exact timing: metadata throttle_timing %r" % (label, tt))
    st, en = f["events/start_times"][:], f["events/end_times"][:]
    for leaf in ("inner", "twice", "middle"):
        r = rows[leaf]
        check(s[leaf]["num_calls"] == 10, "%s: estimate: %s has exactly 10 timeline events" % (label, leaf))
        got = r["throttled_ns"]
        d = en[r["offset"]:r["offset"] + r["count"]] - st[r["offset"]:r["offset"] + r["count"]]
        want = thr[leaf] * float(d.mean())
        check(abs(got - want) <= 2 * thr[leaf] + 1, "%s: estimate: %s throttled total %d ns, "
              "%d calls x mean %.1f ns = %.0f" % (label, leaf, got, thr[leaf], d.mean(), want))

    # Max depth 3: main(0) outer(1) middle(2) recorded; inner, twice counted.
    out = profile(exe, os.path.join(tmp, "c-depth.h5"), "--max-depth", "3")
    s, thr = summary(out), throttled(out)
    check("inner" not in s or s["inner"]["num_calls"] == 0, "%s: --max-depth 3 drops depth 3" % label)
    check(thr.get("inner") == 60 and s["middle"]["num_calls"] == 15, "%s: max-depth counts exact" % label)


def test_cxx(exe, tmp, label):
    src = os.path.join(EX, "functions-cxx.cpp")
    out = profile(exe, os.path.join(tmp, "cxx.h5"))
    got = {n: r["num_calls"] for n, r in summary(out).items()}
    rows = file_rows(out)
    lines = dict(zip(CXX_COUNTS, [r"^int main\(", r"double area\(\)", r"T square\(T x\)",
                                  r"T square\(T x\)", r"int scale\(int v\)", r"int apply_n\(",
                                  r"auto lam ="]))
    for pat, n in CXX_COUNTS.items():
        hit = [k for k in got if re.fullmatch(pat, k)]
        check(len(hit) == 1 and got[hit[0]] == n, "%s: %s called %d times (%s)" % (label, pat, n, hit))
        if hit:
            ln = def_line(src, lines[pat])
            check(rows[hit[0]]["line"] == ln, "%s: %s defined at line %d (file: %d)" % (
                label, hit[0], ln, rows[hit[0]]["line"]))
    extra = [k for k in got if not any(re.fullmatch(p, k) for p in CXX_COUNTS)]
    check(not extra, "%s: no unexpected C++ functions %s" % (label, extra))
    out = profile(exe, os.path.join(tmp, "cxx-in.h5"), "--include", r"geo::(?!detail)")
    got = sorted(summary(out))
    check(len(got) == 4 and all(n.startswith("geo::") and "detail" not in n for n in got),
          "%s: --include 'geo::(?!detail)' on demangled names %s" % (label, got))


def test_omp(exe, tmp, label):
    out = profile(exe, os.path.join(tmp, "omp.h5"))
    got = {n: r["num_calls"] for n, r in summary(out).items()}
    check(got.get("work") == 8200 and got.get("worker") == 2 and got.get("main") == 1,
          "%s: OpenMP + pthreads exact counts %s" % (label, got))
    f = h5py.File(out, "r")
    check("thread_ids" in f["events"] and "thread_table" in f, "%s: thread_ids and thread_table written" % label)
    rows = file_rows(out)
    tid = f["events/thread_ids"][:]
    w = rows["work"]
    per = {}
    for t in tid[w["offset"]:w["offset"] + w["count"]]:
        per[int(t)] = per.get(int(t), 0) + 1
    check(sorted(per.values()) == [100, 100] + [1000] * 8, "%s: work per thread %s" % (label, sorted(per.values())))
    check(len(f["thread_table/index"]) >= 10, "%s: %d threads in thread_table" % (label, len(f["thread_table/index"])))
    # GCC outlines parallel regions without hooks; clang instruments them
    # (".omp_outlined." and its "._debug__" body), so they may sit in between.
    omp = {n for n in got if re.match(r"\.omp_outlined\.|main\._omp_fn\.", n)}
    team = {"main", None} | omp
    check_parents(out, {"main": {None}, "worker": {None}, "work": team | {"worker"},
                        **{n: team for n in omp}}, label)
    own = parents(out)
    lanes = {t for (t, n) in own}
    ok = all(own[(t, "work")] == {"worker"} if (t, "worker") in own else own[(t, "work")] <= team
             for t in lanes if (t, "work") in own)
    check(ok and len([t for t in lanes if (t, "work") in own]) == 10,
          "%s: work's parent on each of the 10 threads" % label)


def main():
    if len(sys.argv) != 3:
        print("usage: test-hooks.py gcc|clang -O0|-O2")
        return 2
    cc, opt = sys.argv[1], sys.argv[2]
    cxx = {"gcc": "g++", "clang": "clang++"}[cc]
    for tool in (cc, cxx):
        if not shutil.which(tool):
            skip("%s is not installed" % tool)
    if not os.access(CLI, os.X_OK):
        sys.exit("FAIL: no CLI at %s" % CLI)
    label = "%s %s" % (cc, opt)
    with tempfile.TemporaryDirectory(prefix="sp-hooks-") as tmp:
        exes = build(cc, cxx, opt, tmp)
        test_c(exes["c"], tmp, label)
        test_cxx(exes["cxx"], tmp, label)
        if "omp" in exes:
            test_omp(exes["omp"], tmp, label)
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
