// scope-profiler report: table sorting, per-rank rows, call-tree folding,
// chart tooltips, duration-metric tabs and the region search box.
// No network, no libraries; everything works on the static page the CLI wrote.
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

  function init() {
    document.querySelectorAll("table.sortable").forEach(function (t) {
      initSortable(t);
      initExpand(t);
    });
    document.querySelectorAll("table.tree").forEach(initTree);
    document.querySelectorAll(".metric-tabs").forEach(initTabs);
    initTips();
    initSearch();
    // Marker for the headless-browser test: the script ran to the end.
    document.documentElement.setAttribute("data-ready", "1");
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
