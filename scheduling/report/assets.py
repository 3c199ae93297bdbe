"""The report's inline style sheet and script. The script reads the page's JSON block (never data
spliced into code): it shows the filters and applies them, and shows a plot point's value and
date on hover. Without it the page still reads fine: every check shown, <title> per point."""

from __future__ import annotations

import json

CSS = """
:root{--ok:#1a7f37;--tol:#9a6700;--bad:#c0231a;--err:#7c3aed;--line:#2f6fdf;--mute:#667085;
--edge:#e4e7ec;--bg:#f6f7f9}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2939;
background:var(--bg)}
main{max-width:1280px;margin:0 auto;padding:1.5rem 1.5rem 4rem}
h1{font-size:1.6rem;margin:.2rem 0}h2{font-size:1.2rem;margin:2rem 0 .6rem}
h3{font-size:1.1rem;margin:0 0 .4rem}h4{font-size:.95rem;margin:1.2rem 0 .4rem;color:#344054}
a{color:#175cd3}.muted{color:var(--mute)}[hidden]{display:none!important}
.cards{display:flex;gap:.8rem;flex-wrap:wrap;margin:1rem 0}
.card{background:#fff;border:1px solid var(--edge);border-radius:8px;padding:.6rem 1rem;
min-width:8.5rem}.card b{display:block;font-size:1.5rem}
#filters{position:sticky;top:0;z-index:2;background:var(--bg);padding:.6rem 0;display:flex;
gap:1rem;align-items:center;flex-wrap:wrap;border-bottom:1px solid var(--edge)}
#filters label{font-weight:600}
#filters select{margin-left:.3rem;padding:.2rem;font:inherit;max-width:14rem}
table{border-collapse:collapse;background:#fff;width:100%;margin:.3rem 0}
td,th{border-bottom:1px solid var(--edge);padding:.35rem .6rem;text-align:left;vertical-align:top}
th{background:#f2f4f7;font-weight:600;font-size:.85rem}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.wrap{overflow-x:auto}
td,h3,.why,dd{overflow-wrap:break-word}
#latest td:nth-child(2),#latest td:last-child{white-space:nowrap}
#latest td:nth-child(3){overflow-wrap:anywhere;min-width:10rem}
table.sample{font-size:.85rem}
table.sample td{white-space:nowrap;max-width:20rem;overflow:hidden;text-overflow:ellipsis}
.wrap:has(table.sample){max-height:24rem;overflow:auto}
details summary{cursor:pointer}
#latest td:nth-child(7),#latest td:nth-child(8){overflow-wrap:anywhere;min-width:7rem}

.passed{color:var(--ok)}.tolerated{color:var(--tol)}
.failed{color:var(--bad);font-weight:600}.error{color:var(--err);font-weight:600}
.badge{display:inline-block;border-radius:999px;padding:0 .55rem;font-size:.8rem;
border:1px solid currentColor;margin-left:.4rem;vertical-align:2px}
.tag{display:inline-block;background:#eef4ff;color:#3538cd;border-radius:4px;padding:0 .35rem;
margin:0 .2rem .1rem 0;font-size:.8rem}
.strip{white-space:nowrap}.dot{display:inline-block;width:7px;height:14px;margin-right:1px;
border-radius:2px;background:var(--ok);vertical-align:middle}
.dot.tolerated{background:#e8b200}.dot.failed{background:var(--bad)}.dot.error{background:var(--err)}
section.check{background:#fff;border:1px solid var(--edge);border-radius:10px;padding:1rem 1.2rem;
margin:1rem 0;scroll-margin-top:4rem}
.why{margin:.2rem 0 .6rem;max-width:75ch}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.1rem .8rem;margin:.3rem 0}
dl.meta dt{color:var(--mute)}dl.meta dd{margin:0}
.plots{display:flex;flex-wrap:wrap;gap:.5rem 1.2rem}
figure.plot{margin:.3rem 0}figure.plot figcaption{font-weight:600;font-size:.85rem}
svg .frame{fill:#fcfcfd;stroke:var(--edge)}svg .grid{stroke:#eaecf0}
svg .axis{stroke:#98a2b3}svg text{font-size:10px;fill:#475467}
svg .ytick{text-anchor:end}svg .xtick{text-anchor:middle}
svg .line{fill:none;stroke:var(--line);stroke-width:1.6}
svg .pt{fill:var(--line)}svg .pt.failed{fill:var(--bad)}svg .pt.outlier{fill:#e36c09}
svg .pt.hot{stroke:#101828;stroke-width:2}
svg .guide{stroke:#98a2b3;stroke-dasharray:3 3;visibility:hidden}
svg:hover .guide{visibility:visible}
#tip{position:fixed;pointer-events:none;background:#101828;color:#fff;padding:.25rem .5rem;
border-radius:4px;font-size:12px;white-space:nowrap;z-index:5}
ol.timeline{list-style:none;padding:0;margin:.2rem 0;border-left:2px solid var(--edge)}
ol.timeline li{padding:.1rem 0 .1rem .8rem;position:relative}
ol.timeline li::before{content:"";position:absolute;left:-6px;top:.55rem;width:10px;height:10px;
border-radius:50%;background:var(--bad)}
ol.timeline li.resolved::before{background:var(--ok)}
ol.timeline li.escalated::before{background:#e36c09}
ol.timeline li.person::before{background:var(--line)}
.legend span{margin-right:1rem}.legend i{display:inline-block;width:9px;height:9px;
border-radius:50%;margin-right:.3rem}
"""

JS = """
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var bar = document.getElementById("filters");
  if (bar) { filters(bar); }

  function filters(bar) {
    var selects = bar.querySelectorAll("select");
    var count = document.getElementById("shown");
    var ids = Object.keys(data.checks);

    function apply() {
      var want = {};
      selects.forEach(function (s) { want[s.name] = s.value; });
      var shown = 0;
      ids.forEach(function (id) {
        var c = data.checks[id];
        var ok = (!want.owner || c.owner === want.owner) &&
          (!want.tag || c.tags.indexOf(want.tag) >= 0) &&
          (!want.status || c.status === want.status);
        document.querySelectorAll('[data-check="' + id + '"]').forEach(function (el) {
          el.hidden = !ok;
        });
        if (ok) { shown += 1; }
      });
      count.textContent = shown + " of " + ids.length + " checks shown";
    }
    selects.forEach(function (s) { s.addEventListener("change", apply); });
    document.getElementById("reset").addEventListener("click", function () {
      selects.forEach(function (s) { s.value = ""; });
      apply();
    });
    bar.hidden = false;
    apply();
  }

  // A sample value cut short in its cell: the whole (stored) value as the cell's title.
  document.querySelectorAll("td[data-c]").forEach(function (td) {
    td.title = data.cells[Number(td.getAttribute("data-c"))];
  });

  // Times are written in UTC; hovering one shows it in the viewer's zone.
  document.querySelectorAll("time[datetime]").forEach(function (t) {
    t.title = new Date(t.getAttribute("datetime")).toString();
  });

  var MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
    "Dec"];
  var NOTES = ["", " \u00b7 failed run", " \u00b7 outlier"];
  function two(n) { return (n < 10 ? "0" : "") + n; }
  // A point's hover text from [value, minutes since 1970 UTC, kind] (plot.py); where it is
  // drawn comes from its circle.
  function label(p) {
    var d = new Date(p[1] * 60000);
    return p[0] + " \u00b7 " + MONTHS[d.getUTCMonth()] + " " + two(d.getUTCDate()) + " " +
      d.getUTCFullYear() + " " + two(d.getUTCHours()) + ":" + two(d.getUTCMinutes()) + " UTC" +
      NOTES[p[2]];
  }

  var tip = document.getElementById("tip");
  document.querySelectorAll("svg[data-plot]").forEach(function (svg) {
    var points = data.plots[svg.getAttribute("data-plot")];
    var marks = svg.querySelectorAll("circle.pt");
    var xs = Array.prototype.map.call(marks, function (m) { return m.cx.baseVal.value; });
    var guide = svg.querySelector(".guide");
    var hot = null;
    svg.addEventListener("mousemove", function (ev) {
      var ctm = svg.getScreenCTM();
      if (!ctm) { return; }
      var at = new DOMPoint(ev.clientX, ev.clientY).matrixTransform(ctm.inverse());
      var best = 0;
      xs.forEach(function (x, i) {
        if (Math.abs(x - at.x) < Math.abs(xs[best] - at.x)) { best = i; }
      });
      var p = points[best];
      guide.setAttribute("x1", xs[best]);
      guide.setAttribute("x2", xs[best]);
      if (hot) { hot.classList.remove("hot"); }
      hot = marks[best];
      hot.classList.add("hot");
      var screen = new DOMPoint(xs[best], hot.cy.baseVal.value).matrixTransform(ctm);
      tip.textContent = label(p);
      tip.hidden = false;
      var left = Math.min(screen.x + 12, window.innerWidth - tip.offsetWidth - 8);
      tip.style.left = Math.max(left, 4) + "px";
      tip.style.top = Math.max(screen.y - tip.offsetHeight - 10, 4) + "px";
    });
    svg.addEventListener("mouseleave", function () {
      tip.hidden = true;
      if (hot) { hot.classList.remove("hot"); hot = null; }
    });
  });
})();
"""


def json_block(value: object) -> str:
    """`value` as JSON that cannot end its <script> element or open another: <, > and & are
    written as unicode escapes, which JSON.parse reads back unchanged."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escape)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
