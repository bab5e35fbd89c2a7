// scope-profiler report: table sorting, per-rank rows, call-tree folding,
// chart tooltips, duration-metric tabs, the region search box and the
// Gantt's zoom and pan. No network, no libraries; everything works on the
// static page the CLI wrote. A test-only query string (?sptest=zoom,pan,
// sort,expand,show) replays those interactions through the same handlers.
(function () {
  "use strict";

  // ---- sortable tables: click a header; rows carry data-<key> values ----
  function sortValue(row, key) {
    var v = row.getAttribute("data-" + key);
    if (key === "name") return (v || "").toLowerCase();
    return v === null || v === "" ? NaN : parseFloat(v);
  }

  function sortTable(table, key, dir) {
    var tbody = table.tBodies[0];
    var groups = [];
    var rows = tbody.rows;
    for (var i = 0; i < rows.length; i++) {
      if (!rows[i].classList.contains("region")) continue;
      var detail = rows[i].nextElementSibling;
      groups.push([rows[i], detail && detail.classList.contains("detail") ? detail : null]);
    }
    groups.sort(function (a, b) {
      var x = sortValue(a[0], key), y = sortValue(b[0], key);
      if (key === "name") return dir * (x < y ? -1 : x > y ? 1 : 0);
      if (isNaN(x) && isNaN(y)) return 0;
      if (isNaN(x)) return 1;  // undefined values last
      if (isNaN(y)) return -1;
      return dir * (x - y);
    });
    groups.forEach(function (g) {
      tbody.appendChild(g[0]);
      if (g[1]) tbody.appendChild(g[1]);
    });
    var ths = table.tHead.rows[0].cells;
    for (var k = 0; k < ths.length; k++) {
      ths[k].classList.remove("asc", "desc");
      if (ths[k].getAttribute("data-key") === key) ths[k].classList.add(dir > 0 ? "asc" : "desc");
    }
    table.setAttribute("data-sorted", key);
  }

  function initSortable(table) {
    var ths = table.tHead.rows[0].cells;
    for (var i = 0; i < ths.length; i++) {
      ths[i].addEventListener("click", function (ev) {
        var th = ev.currentTarget, key = th.getAttribute("data-key");
        if (!key) return;
        // names ascend first, numbers descend first
        var dir = th.classList.contains("desc") ? 1 : th.classList.contains("asc") ? -1 :
          (key === "name" ? 1 : -1);
        sortTable(table, key, dir);
      });
    }
    var initial = table.getAttribute("data-sort");
    if (initial) sortTable(table, initial, initial === "name" || initial === "start" ? 1 : -1);
  }

  // ---- region rows expand to their per-rank table ----
  function initExpand(table) {
    table.addEventListener("click", function (ev) {
      var row = ev.target.closest("tr.region");
      if (!row) return;
      var detail = row.nextElementSibling;
      if (!detail || !detail.classList.contains("detail")) return;
      var open = detail.hidden;
      detail.hidden = !open;
      row.classList.toggle("open", open);
      detail.setAttribute("data-open", open ? "1" : "0");
    });
  }

  // ---- call tree: click a parent to fold its subtree ----
  function initTree(table) {
    var rows = table.tBodies[0].rows;
    for (var i = 0; i + 1 < rows.length; i++) {
      var d = +rows[i].getAttribute("data-depth");
      if (+rows[i + 1].getAttribute("data-depth") > d) rows[i].classList.add("parent");
    }
    table.addEventListener("click", function (ev) {
      var row = ev.target.closest("tr.parent");
      if (!row) return;
      var depth = +row.getAttribute("data-depth");
      var fold = !row.classList.contains("collapsed");
      row.classList.toggle("collapsed", fold);
      for (var r = row.nextElementSibling; r && +r.getAttribute("data-depth") > depth;
           r = r.nextElementSibling) {
        if (fold) r.setAttribute("data-folded", "1");
        else r.removeAttribute("data-folded");
        applyRow(r);
      }
    });
  }

  // ---- duration metric tabs ----
  function initTabs(box) {
    var buttons = box.querySelectorAll(".tabs button");
    function show(metric) {
      box.querySelectorAll("[data-metric]").forEach(function (el) {
        if (el.tagName !== "BUTTON") el.hidden = el.getAttribute("data-metric") !== metric;
      });
      buttons.forEach(function (b) {
        b.classList.toggle("on", b.getAttribute("data-metric") === metric);
      });
    }
    buttons.forEach(function (b) {
      b.addEventListener("click", function () { show(b.getAttribute("data-metric")); });
    });
    if (buttons.length) show(buttons[0].getAttribute("data-metric"));
  }

  // ---- tooltips from data-tip ----
  function initTips() {
    var tip = document.getElementById("tip");
    document.addEventListener("mouseover", function (ev) {
      var el = ev.target.closest ? ev.target.closest("[data-tip]") : null;
      if (!el) { tip.hidden = true; return; }
      tip.textContent = el.getAttribute("data-tip");
      tip.hidden = false;
    });
    document.addEventListener("mousemove", function (ev) {
      if (tip.hidden) return;
      tip.style.left = Math.min(ev.clientX + 14, window.innerWidth - tip.offsetWidth - 8) + "px";
      tip.style.top = (ev.clientY + 16) + "px";
    });
  }

  // ---- search: comma-separated terms, case-insensitive substring, ^ anchors ----
  var terms = [];

  function parseTerms(text) {
    return text.split(",").map(function (t) { return t.trim().toLowerCase(); })
      .filter(function (t) { return t.length > 0 && t !== "^"; });
  }

  function matches(name) {
    if (!terms.length) return true;
    name = (name || "").toLowerCase();
    return terms.some(function (t) {
      return t.charAt(0) === "^" ? name.indexOf(t.slice(1)) === 0 : name.indexOf(t) >= 0;
    });
  }

  // A table row is hidden when filtered out or inside a folded subtree.
  function applyRow(row) {
    var out = row.hasAttribute("data-region") && !matches(row.getAttribute("data-region"));
    row.hidden = out || row.hasAttribute("data-folded") ||
      (row.classList.contains("detail") && row.getAttribute("data-open") !== "1");
    row.classList.toggle("filtered", out);
  }

  function applySearch(text) {
    terms = parseTerms(text);
    var shown = {}, all = {};
    document.querySelectorAll("table [data-region]").forEach(function (row) {
      applyRow(row);
      var detail = row.nextElementSibling;
      if (row.classList.contains("region") && detail && detail.classList.contains("detail")) {
        detail.hidden = row.hidden || detail.getAttribute("data-open") !== "1";
      }
      if (row.classList.contains("region")) {
        all[row.getAttribute("data-region")] = 1;
        if (!row.hidden) shown[row.getAttribute("data-region")] = 1;
      }
    });
    // A filtered tree is flat: its indentation would relate rows that are hidden.
    document.querySelectorAll("table.tree").forEach(function (t) {
      t.classList.toggle("flat", terms.length > 0);
    });
    document.querySelectorAll("svg [data-region]").forEach(function (el) {
      el.classList.toggle("dim", !matches(el.getAttribute("data-region")));
    });
    var status = document.getElementById("search-status");
    var n = Object.keys(all).length, k = Object.keys(shown).length;
    status.textContent = terms.length ? k + " of " + n + " region names match" : "";
    document.documentElement.setAttribute("data-search", terms.join(","));
  }

  function initSearch() {
    var box = document.getElementById("search");
    var m = /[#&]q=([^&]*)/.exec(window.location.hash);
    if (m) box.value = decodeURIComponent(m[1]);
    box.addEventListener("input", function () { applySearch(box.value); });
    applySearch(box.value);
  }


  // ---- Gantt: the wheel zooms around the cursor, a drag pans, buttons and
  // the keys + - 0 (when the chart has focus) zoom in, out and reset. The
  // view is [v0, v1] as fractions of the run; bars keep their original x and
  // width (as drawn for the whole run) and are re-placed from them. ----
  var MIN_VIEW = 1e-6;

  function niceTicks(lo, hi, target) {
    var step = (hi - lo) / target, mag = Math.pow(10, Math.floor(Math.log10(step)));
    var r = step / mag;
    step = (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * mag;
    var out = [];
    for (var t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9 && out.length < 32; t += step)
      out.push(Math.abs(t) < step * 1e-9 ? 0 : t);
    return out;
  }

  // As fmt_seconds in tools/plot/svg.c: "%.3g unit".
  function fmtSec(v) {
    var units = [[1, "s"], [1e-3, "ms"], [1e-6, "\u00b5s"], [1e-9, "ns"]], a = Math.abs(v);
    if (a === 0) return "0 s";
    for (var i = 0; i < units.length; i++)
      if (a >= units[i][0] * 0.9995 || i + 1 === units.length)
        return String(parseFloat((v / units[i][0]).toPrecision(3))) + " " + units[i][1];
  }

  function initZoom(fig) {
    var svg = fig.querySelector("svg"), span = parseFloat(fig.getAttribute("data-span"));
    var bg = svg ? svg.querySelector("rect.lane-bg") : null;
    var axis = svg ? svg.querySelector("line.axis") : null;
    if (!bg || !axis || !(span > 0)) return;
    var NS = "http://www.w3.org/2000/svg";
    var L = parseFloat(bg.getAttribute("x")), W = parseFloat(bg.getAttribute("width"));
    var ay = parseFloat(axis.getAttribute("y1"));
    var bars = svg.querySelectorAll("rect.bar"), n = bars.length;
    var ox = new Float64Array(n), ow = new Float64Array(n), sx = [], sw = [];
    for (var i = 0; i < n; i++) {
      sx.push(bars[i].getAttribute("x"));
      sw.push(bars[i].getAttribute("width"));
      ox[i] = parseFloat(sx[i]);
      ow[i] = parseFloat(sw[i]);
    }
    // The axis drawn for the whole run: its grid lines and tick labels.
    var orig = [];
    svg.querySelectorAll("line.grid").forEach(function (g) {
      if (Math.abs(parseFloat(g.getAttribute("y2")) - ay) < 0.5) orig.push(g);
    });
    svg.querySelectorAll("text.small").forEach(function (t) {
      if (t.getAttribute("text-anchor") === "middle" &&
          Math.abs(parseFloat(t.getAttribute("y")) - ay - 13) < 0.5) orig.push(t);
    });
    var gridTop = orig.length && orig[0].tagName === "line" ? parseFloat(orig[0].getAttribute("y1")) : ay;
    var ticks = document.createElementNS(NS, "g");
    ticks.setAttribute("class", "zoom-axis");
    svg.appendChild(ticks);
    var label = fig.querySelector(".zoom-range");
    var v0 = 0, v1 = 1, pending = false;

    function render() {
      pending = false;
      var full = v0 <= 0 && v1 >= 1, z = 1 / (v1 - v0), shown = 0;
      for (var i = 0; i < n; i++) {
        var b = bars[i];
        if (full) {
          b.setAttribute("x", sx[i]);
          b.setAttribute("width", sw[i]);
          b.removeAttribute("display");
          shown++;
          continue;
        }
        var x = L + ((ox[i] - L) / W - v0) * z * W, x2 = x + ow[i] * z;
        if (x2 < L || x > L + W) { b.setAttribute("display", "none"); continue; }
        x = Math.max(x, L);
        x2 = Math.min(x2, L + W);
        b.setAttribute("x", x.toFixed(2));
        b.setAttribute("width", Math.max(x2 - x, 0.5).toFixed(2));
        b.removeAttribute("display");
        shown++;
      }
      orig.forEach(function (el) { if (full) el.removeAttribute("display"); else el.setAttribute("display", "none"); });
      while (ticks.firstChild) ticks.removeChild(ticks.firstChild);
      if (!full) {
        niceTicks(v0 * span, v1 * span, 8).forEach(function (t) {
          var x = L + (t / span - v0) * z * W;
          if (x < L - 0.5 || x > L + W + 0.5) return;
          var g = document.createElementNS(NS, "line");
          g.setAttribute("x1", x.toFixed(1)); g.setAttribute("x2", x.toFixed(1));
          g.setAttribute("y1", gridTop); g.setAttribute("y2", ay);
          g.setAttribute("class", "grid");
          ticks.appendChild(g);
          var tx = document.createElementNS(NS, "text");
          tx.setAttribute("x", x.toFixed(1)); tx.setAttribute("y", ay + 13);
          tx.setAttribute("text-anchor", "middle");
          tx.setAttribute("class", "small");
          tx.textContent = fmtSec(t);
          ticks.appendChild(tx);
        });
      }
      fig.setAttribute("data-view-start", (v0 * span).toPrecision(9));
      fig.setAttribute("data-view-end", (v1 * span).toPrecision(9));
      fig.setAttribute("data-bars-shown", shown);
      if (label) label.textContent = full ? "wheel: zoom at the cursor, drag: pan" :
        "showing " + fmtSec(v0 * span) + " \u2013 " + fmtSec(v1 * span) + " of " + fmtSec(span) +
        " (" + shown + " of " + n + " bars)";
    }

    function schedule() {
      if (pending) return;
      pending = true;
      window.requestAnimationFrame(render);
    }

    function setView(a, b) {
      var w = Math.min(Math.max(b - a, MIN_VIEW), 1);
      a = Math.min(Math.max(a, 0), 1 - w);
      v0 = a;
      v1 = a + w;
      schedule();
    }

    // Zoom by factor f (< 1: in) keeping the fraction p of the plot in place.
    function zoomAt(p, f) {
      var w = v1 - v0, c = v0 + p * w, nw = Math.min(Math.max(w * f, MIN_VIEW), 1);
      setView(c - p * nw, c - p * nw + nw);
    }

    // Viewbox units per CSS pixel, and the plot fraction under a pointer.
    function scale() {
      var r = svg.getBoundingClientRect();
      return r.width > 0 ? parseFloat(svg.getAttribute("width")) / r.width : 1;
    }
    function fracAt(clientX) {
      var r = svg.getBoundingClientRect();
      return ((clientX - r.left) * scale() - L) / W;
    }

    svg.addEventListener("wheel", function (ev) {
      var p = fracAt(ev.clientX);
      if (!(p >= 0 && p <= 1)) return;
      ev.preventDefault();
      var d = ev.deltaMode === 1 ? ev.deltaY * 16 : ev.deltaY;
      zoomAt(p, Math.exp(Math.max(-600, Math.min(600, d)) * 0.0015));
    }, { passive: false });

    var drag = null;
    svg.addEventListener("mousedown", function (ev) {
      var p = fracAt(ev.clientX);
      if (ev.button !== 0 || !(p >= 0 && p <= 1)) return;
      ev.preventDefault();
      drag = { x: ev.clientX, v0: v0, k: scale() };
      fig.classList.add("dragging");
    });
    window.addEventListener("mousemove", function (ev) {
      if (!drag) return;
      var w = v1 - v0;
      setView(drag.v0 - (ev.clientX - drag.x) * drag.k / W * w, drag.v0 - (ev.clientX - drag.x) * drag.k / W * w + w);
    });
    window.addEventListener("mouseup", function () {
      drag = null;
      fig.classList.remove("dragging");
    });
    fig.querySelectorAll("[data-zoom]").forEach(function (btn) {
      btn.addEventListener("click", function () {
        var what = btn.getAttribute("data-zoom");
        if (what === "reset") setView(0, 1);
        else zoomAt(0.5, what === "in" ? 0.5 : 2);
      });
    });
    fig.addEventListener("keydown", function (ev) {
      var k = ev.key;
      if (k === "+" || k === "=") zoomAt(0.5, 0.5);
      else if (k === "-") zoomAt(0.5, 2);
      else if (k === "0") setView(0, 1);
      else if (k === "ArrowLeft" || k === "ArrowRight") {
        var w = v1 - v0, d = (k === "ArrowLeft" ? -0.1 : 0.1) * w;
        setView(v0 + d, v1 + d);
      } else return;
      ev.preventDefault();
    });
    fig.spZoomFlush = function () { if (pending) render(); };
  }

  // ---- test-only: ?sptest=zoom,pan,sort,expand replays a wheel zoom, a
  // drag, a click on the "calls" header and a click on the first region row
  // through the handlers above, so a headless browser can check the result. ----
  function runTestActions() {
    var m = /[?&]sptest=([^&#]*)/.exec(window.location.search);
    if (!m) return;
    var done = [];
    var fig = document.querySelector("figure[data-chart=gantt]");
    var svg = fig ? fig.querySelector("svg") : null;
    var bg = svg ? svg.querySelector("rect.lane-bg") : null;
    function at(frac) {
      var r = svg.getBoundingClientRect(), k = r.width / parseFloat(svg.getAttribute("width"));
      var L = parseFloat(bg.getAttribute("x")), W = parseFloat(bg.getAttribute("width"));
      return { x: r.left + (L + frac * W) * k, y: r.top + (parseFloat(bg.getAttribute("y")) + 4) * k };
    }
    decodeURIComponent(m[1]).split(",").forEach(function (a) {
      if (a === "zoom" && bg) {
        var p = at(0.9);
        svg.dispatchEvent(new WheelEvent("wheel", { deltaY: -500, clientX: p.x, clientY: p.y,
                                                     bubbles: true, cancelable: true }));
        fig.spZoomFlush();
        done.push(a);
      } else if (a === "pan" && bg) {
        var s = at(0.6), e = at(0.4);
        svg.dispatchEvent(new MouseEvent("mousedown", { button: 0, clientX: s.x, clientY: s.y, bubbles: true }));
        window.dispatchEvent(new MouseEvent("mousemove", { clientX: e.x, clientY: e.y, bubbles: true }));
        window.dispatchEvent(new MouseEvent("mouseup", { clientX: e.x, clientY: e.y, bubbles: true }));
        fig.spZoomFlush();
        done.push(a);
      } else if (a === "show" && fig) {
        // For a screenshot of the Gantt: hide everything else on the page.
        for (var el = fig; el && el !== document.body; el = el.parentElement)
          Array.prototype.forEach.call(el.parentElement.children, function (c) {
            if (c !== el && c.tagName !== "SCRIPT") c.hidden = true;
          });
        done.push(a);
      } else if (a === "sort") {
        var th = document.querySelector("table.regions th[data-key=calls]");
        if (th) { th.click(); done.push(a); }
      } else if (a === "expand") {
        var row = document.querySelector("table.regions tr.region td");
        if (row) { row.click(); done.push(a); }
      }
    });
    document.documentElement.setAttribute("data-test-actions", done.join(","));
  }

  function init() {
    document.querySelectorAll("table.sortable").forEach(function (t) {
      initSortable(t);
      initExpand(t);
    });
    document.querySelectorAll("table.tree").forEach(initTree);
    document.querySelectorAll(".metric-tabs").forEach(initTabs);
    document.querySelectorAll("figure[data-chart=gantt]").forEach(initZoom);
    initTips();
    initSearch();
    runTestActions();
    // Marker for the headless-browser test: the script ran to the end.
    document.documentElement.setAttribute("data-ready", "1");
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
