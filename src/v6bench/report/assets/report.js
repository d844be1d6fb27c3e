// v6bench report charts: SVG drawn from the figures embedded in the page
// (<script id="report-data" type="application/json">). No library, nothing
// fetched. Interactions: hover for values, click a legend entry to hide or
// show its series, switch the y axis between linear and log, show the data.
"use strict";
(function () {
  var SVG = "http://www.w3.org/2000/svg"; // the SVG namespace name, not a resource
  var COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"];
  var W = 760, H = 380, M = { l: 70, r: 16, t: 14, b: 48 };

  function el(name, attrs, parent) {
    var e = document.createElementNS(SVG, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  function fmt(v) {
    if (v === null || v === undefined) return "–";
    var a = Math.abs(v);
    if (Number.isInteger(v)) return v.toLocaleString("en-US");
    if (a >= 1e4) return Math.round(v).toLocaleString("en-US");
    if (a >= 100) return v.toFixed(1);
    if (a >= 1) return v.toFixed(2);
    if (a === 0) return "0";
    return v.toPrecision(3);
  }

  function niceTicks(lo, hi, n) {
    if (!(hi > lo)) { hi = lo + 1; }
    var step = Math.pow(10, Math.floor(Math.log10((hi - lo) / n)));
    var err = (hi - lo) / n / step;
    if (err >= 7.5) step *= 10; else if (err >= 3.5) step *= 5; else if (err >= 1.5) step *= 2;
    var ticks = [];
    for (var t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(Math.abs(t) < step * 1e-9 ? 0 : t);
    return ticks;
  }

  function logTicks(lo, hi) {
    var ticks = [];
    for (var e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
      var t = Math.pow(10, e);
      if (t >= lo * 0.999 && t <= hi * 1.001) ticks.push(t);
    }
    return ticks.length >= 2 ? ticks : [lo, hi];
  }

  function scale(lo, hi, a, b, log) {
    if (log) {
      var l0 = Math.log10(lo), l1 = Math.log10(hi);
      return function (v) { return a + (Math.log10(v) - l0) / (l1 - l0 || 1) * (b - a); };
    }
    return function (v) { return a + (v - lo) / (hi - lo || 1) * (b - a); };
  }

  // A histogram bin's edges from its centre and its neighbours' (geometric on a log axis).
  function binEdges(xs, k, log) {
    function mid(a, b) { return log ? Math.sqrt(a * b) : (a + b) / 2; }
    function mirror(c, m) { return log ? c * c / m : 2 * c - m; }
    if (xs.length < 2) return log ? [xs[k] / 1.1, xs[k] * 1.1] : [xs[k] - 0.5, xs[k] + 0.5];
    var lo = k > 0 ? mid(xs[k - 1], xs[k]) : mirror(xs[k], mid(xs[k], xs[k + 1]));
    var hi = k < xs.length - 1 ? mid(xs[k], xs[k + 1]) : mirror(xs[k], mid(xs[k - 1], xs[k]));
    return [lo, hi];
  }

  function extent(values, log) {
    var vs = values.filter(function (v) { return v !== null && isFinite(v) && (!log || v > 0); });
    if (!vs.length) return null;
    return [Math.min.apply(null, vs), Math.max.apply(null, vs)];
  }

  function draw(holder, fig, state) {
    holder.querySelector("svg") && holder.removeChild(holder.querySelector("svg"));
    var svg = el("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": fig.title });
    holder.insertBefore(svg, holder.firstChild);
    var cat = fig.x_categories && fig.x_categories.length;
    var shown = fig.series.filter(function (s, i) { return !state.hidden[i]; });
    var xs = [], ys = [];
    shown.forEach(function (s) { xs = xs.concat(s.x); ys = ys.concat(s.y); });
    var ylog = state.ylog, xlog = fig.x_log && !cat;
    var xe = cat ? [-0.5, fig.x_categories.length - 0.5] : extent(xs, xlog);
    var ye = extent(ys, ylog);
    if (!xe || !ye) {
      el("text", { x: W / 2, y: H / 2, "text-anchor": "middle", "class": "label" }, svg).textContent = "no data shown";
      return [];
    }
    var bars = shown.some(function (s) { return s.style === "bar" || s.style === "hist"; });
    if (!ylog && (bars || ye[0] > 0)) ye[0] = Math.min(0, ye[0]);
    if (ye[1] === ye[0]) ye[1] = ye[0] + (Math.abs(ye[0]) || 1);
    if (!ylog) ye[1] += (ye[1] - ye[0]) * 0.05;
    if (xe[1] === xe[0]) { xe = [xe[0] * 0.9 - 1, xe[1] * 1.1 + 1]; }
    var sx = scale(xe[0], xe[1], M.l, W - M.r, xlog), sy = scale(ye[0], ye[1], H - M.b, M.t, ylog);
    var grid = el("g", { "class": "grid" }, svg), axis = el("g", { "class": "axis" }, svg);
    (ylog ? logTicks(ye[0], ye[1]) : niceTicks(ye[0], ye[1], 6)).forEach(function (t) {
      el("line", { x1: M.l, x2: W - M.r, y1: sy(t), y2: sy(t) }, grid);
      el("text", { x: M.l - 6, y: sy(t) + 4, "text-anchor": "end" }, axis).textContent = fmt(t);
    });
    var xticks = cat ? fig.x_categories.map(function (c, i) { return i; }) : (xlog ? logTicks(xe[0], xe[1]) : niceTicks(xe[0], xe[1], 8));
    xticks.forEach(function (t) {
      el("line", { x1: sx(t), x2: sx(t), y1: M.t, y2: H - M.b }, grid);
      el("text", { x: sx(t), y: H - M.b + 16, "text-anchor": "middle" }, axis).textContent = cat ? fig.x_categories[t] : fmt(t);
    });
    el("line", { x1: M.l, x2: W - M.r, y1: H - M.b, y2: H - M.b, stroke: "#333" }, svg);
    el("line", { x1: M.l, x2: M.l, y1: M.t, y2: H - M.b, stroke: "#333" }, svg);
    el("text", { x: (M.l + W - M.r) / 2, y: H - 8, "text-anchor": "middle", "class": "label" }, svg).textContent = fig.x_label;
    el("text", { x: 14, y: (M.t + H - M.b) / 2, "text-anchor": "middle", "class": "label",
                 transform: "rotate(-90 14 " + (M.t + H - M.b) / 2 + ")" }, svg).textContent = fig.y_label;
    var points = [];
    var nbar = fig.series.filter(function (s) { return s.style === "bar"; }).length, ibar = 0;
    fig.series.forEach(function (s, i) {
      if (state.hidden[i]) { if (s.style === "bar") ibar++; return; }
      var color = COLORS[i % COLORS.length], g = el("g", {}, svg);
      var base = sy(ylog ? ye[0] : Math.max(0, ye[0]));
      if (s.style === "bar") {
        var bw = (sx(1) - sx(0)) * 0.8 / Math.max(1, nbar), off = -0.4 * (sx(1) - sx(0)) + ibar * bw;
        s.x.forEach(function (x, k) {
          var y = s.y[k];
          if (y === null || (ylog && y <= 0)) return;
          el("rect", { x: sx(x) + off, y: Math.min(sy(y), base), width: bw * 0.92, height: Math.abs(base - sy(y)), fill: color }, g);
          points.push({ px: sx(x) + off + bw / 2, py: sy(y), s: s.name, x: fig.x_categories[x], y: y });
        });
        ibar++;
        return;
      }
      var d = "", pen = false;
      s.x.forEach(function (x, k) {
        var y = s.y[k];
        if (y === null || (ylog && y <= 0) || (xlog && x <= 0)) { pen = false; return; }
        if (s.style === "hist") {
          var e = binEdges(s.x, k, xlog);
          d += (pen ? "L" : "M") + sx(e[0]) + " " + sy(y) + "L" + sx(e[1]) + " " + sy(y);
        } else {
          d += (pen ? "L" : "M") + sx(x) + " " + sy(y);
        }
        pen = true;
        points.push({ px: sx(x), py: sy(y), s: s.name, x: x, y: y });
        if (s.style === "line") el("circle", { cx: sx(x), cy: sy(y), r: 3, fill: color }, g);
      });
      el("path", { d: d, fill: "none", stroke: color, "stroke-width": s.style === "reference" ? 1.5 : 2,
                   "stroke-dasharray": s.style === "reference" ? "6 4" : "none" }, g);
    });
    return points;
  }

  function dataTable(fig) {
    var t = document.createElement("table");
    var head = t.insertRow();
    ["series", fig.x_label, fig.y_label].forEach(function (h) { var c = document.createElement("th"); c.textContent = h; head.appendChild(c); });
    fig.series.forEach(function (s) {
      s.x.forEach(function (x, k) {
        var r = t.insertRow();
        r.insertCell().textContent = s.name;
        r.insertCell().textContent = fig.x_categories.length ? fig.x_categories[x] : fmt(x);
        r.insertCell().textContent = fmt(s.y[k]);
      });
    });
    return t;
  }

  function chart(holder, fig) {
    var state = { hidden: {}, ylog: fig.y_log };
    var tip = document.createElement("div");
    tip.className = "tooltip";
    holder.appendChild(tip);
    var points = draw(holder, fig, state);
    var legend = document.createElement("ul");
    legend.className = "legend";
    fig.series.forEach(function (s, i) {
      var li = document.createElement("li"), sw = document.createElement("span");
      sw.className = "swatch";
      sw.style.background = COLORS[i % COLORS.length];
      li.appendChild(sw);
      li.appendChild(document.createTextNode(s.name));
      li.title = "click to hide or show";
      li.addEventListener("click", function () {
        state.hidden[i] = !state.hidden[i];
        li.className = state.hidden[i] ? "off" : "";
        points = draw(holder, fig, state);
      });
      legend.appendChild(li);
    });
    holder.appendChild(legend);
    var tools = document.createElement("div");
    tools.className = "tools";
    var logb = document.createElement("button"), datab = document.createElement("button");
    logb.textContent = "y: log / linear";
    logb.addEventListener("click", function () { state.ylog = !state.ylog; points = draw(holder, fig, state); });
    datab.textContent = "show data";
    var wrap = document.createElement("div");
    wrap.className = "tablewrap";
    wrap.style.display = "none";
    datab.addEventListener("click", function () {
      if (!wrap.firstChild) wrap.appendChild(dataTable(fig));
      wrap.style.display = wrap.style.display === "none" ? "" : "none";
    });
    tools.appendChild(logb);
    tools.appendChild(datab);
    holder.appendChild(tools);
    holder.appendChild(wrap);
    holder.addEventListener("mousemove", function (ev) {
      var svg = holder.querySelector("svg");
      if (!svg) return;
      var box = svg.getBoundingClientRect(), k = W / box.width;
      var mx = (ev.clientX - box.left) * k, my = (ev.clientY - box.top) * k, best = null, bd = 400;
      points.forEach(function (p) {
        var d = (p.px - mx) * (p.px - mx) + (p.py - my) * (p.py - my);
        if (d < bd) { bd = d; best = p; }
      });
      if (!best) { tip.style.display = "none"; return; }
      tip.textContent = best.s + ": " + (typeof best.x === "string" ? best.x : fmt(best.x)) + " → " + fmt(best.y);
      tip.style.display = "block";
      tip.style.left = (best.px / k + 12) + "px";
      tip.style.top = (best.py / k - 10) + "px";
    });
    holder.addEventListener("mouseleave", function () { tip.style.display = "none"; });
  }

  function sortable(table) {
    var heads = table.querySelectorAll("th");
    heads.forEach(function (th, col) {
      th.addEventListener("click", function () {
        var rows = Array.prototype.slice.call(table.tBodies[0].rows), asc = th.dataset.asc !== "1";
        rows.sort(function (a, b) {
          var x = a.cells[col].dataset.v, y = b.cells[col].dataset.v;
          var nx = parseFloat(x), ny = parseFloat(y);
          var c = (isFinite(nx) && isFinite(ny)) ? nx - ny : String(a.cells[col].textContent).localeCompare(b.cells[col].textContent);
          return asc ? c : -c;
        });
        rows.forEach(function (r) { table.tBodies[0].appendChild(r); });
        th.dataset.asc = asc ? "1" : "0";
      });
    });
  }

  var figures = JSON.parse(document.getElementById("report-data").textContent);
  var drawn = 0;
  document.querySelectorAll(".chart").forEach(function (holder) {
    chart(holder, figures[holder.dataset.fig]);
    drawn++;
  });
  document.querySelectorAll("table.data").forEach(sortable);
  document.body.setAttribute("data-charts-drawn", String(drawn));
})();
