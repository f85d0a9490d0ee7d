// headroom's HTML report: turns each figure's data (the JSON in #headroom-figures, written
// by src/report/plot/interactive.rs) into an interactive uPlot chart: drag to zoom,
// double-click to zoom out, values on hover, click a legend entry to hide or show it.
// Ticks follow the SVG figures: log axes at 1-2-5, time on whole seconds, percentiles at
// Locust's columns.
(function () {
  "use strict";
  var PCT = [50, 66, 75, 80, 90, 95, 98, 99, 99.9, 99.99, 99.999];
  var INCRS = [];
  for (var e = -3; e <= 9; e++) {
    [1, 2, 5].forEach(function (m) { INCRS.push(round(m * Math.pow(10, e))); });
  }

  function round(v) { return +v.toPrecision(12); }
  function trim(v) {
    var a = Math.abs(v);
    var s = a >= 100 || v % 1 === 0 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : v.toFixed(3);
    return s.indexOf(".") >= 0 ? s.replace(/0+$/, "").replace(/\.$/, "") : s;
  }
  function short(v) {
    if (v == null || !isFinite(v)) return "-";
    var a = Math.abs(v);
    if (a >= 1e6) return trim(v / 1e6) + "M";
    if (a >= 1e4) return trim(v / 1e3) + "k";
    return trim(v);
  }
  function pct(v) { return v == null || !isFinite(v) ? "-" : (+v.toFixed(4)).toString() + "%"; }
  function fwd(v) { return -Math.log10(1 - Math.min(v / 100, 0.999999)); }
  function bwd(a) { return 100 * (1 - Math.pow(10, -a)); }
  function mantissaFloor(v, ms) {
    var b = Math.pow(10, Math.floor(Math.log10(v)));
    for (var i = 0; i < ms.length; i++) if (ms[i] * b <= v * (1 + 1e-9)) return round(ms[i] * b);
    return round(b);
  }
  function logFloor(v) { return mantissaFloor(v, [5, 2, 1]); }
  function logCeil(v) {
    var b = Math.pow(10, Math.floor(Math.log10(v)));
    var ms = [1, 2, 5, 10];
    for (var i = 0; i < ms.length; i++) if (ms[i] * b >= v * (1 - 1e-9)) return round(ms[i] * b);
    return round(10 * b);
  }
  function logSplits(u, ai, min, max) {
    var first = Math.floor(Math.log10(min)), last = Math.ceil(Math.log10(max));
    var ms = last - first > 4 ? [1] : [1, 2, 5], out = [];
    for (var e = first; e <= last; e++) {
      ms.forEach(function (m) {
        var v = round(m * Math.pow(10, e));
        if (v >= min * (1 - 1e-9) && v <= max * (1 + 1e-9)) out.push(v);
      });
    }
    return out;
  }
  // Locust's columns, a label's width apart (a 26th of the axis, as in the SVG figures).
  function pctSplits(u, ai, min, max) {
    var out = [], last = -Infinity, gap = (fwd(max) - fwd(min)) / 26;
    PCT.forEach(function (p) {
      if (p < min - 1e-9 || p > max + 1e-9) return;
      if (fwd(p) - last >= gap) { out.push(p); last = fwd(p); }
    });
    return out;
  }

  function scaleOf(axis, key) {
    if (axis.scale === "log") {
      return {
        distr: 3, log: 10,
        range: function (u, min, max) {
          if (min == null || !(min > 0)) return [axis.min, axis.max];
          return [logFloor(min), logCeil(Math.max(max, min * 1.01))];
        }
      };
    }
    if (axis.scale === "nines") {
      return {
        distr: 100, fwd: fwd, bwd: bwd,
        range: function (u, min, max) {
          if (min == null) return [axis.min, axis.max];
          return [Math.max(50, min), Math.max(max, Math.min(min + 1, 99.9999))];
        }
      };
    }
    if (key !== "x") {
      return {
        range: function (u, min, max) {
          if (axis.most != null) return [0, axis.most];
          if (min == null) return [axis.min, axis.max];
          return [Math.min(0, min), Math.max(max * 1.08, 1e-9)];
        }
      };
    }
    return {};
  }

  function axisOf(axis, key, side) {
    var a = {
      scale: key, label: axis.label, side: side,
      stroke: "#444", grid: { stroke: "#eee", show: side !== 1 }, ticks: { stroke: "#ddd" }
    };
    if (axis.scale === "log") {
      a.splits = logSplits;
      a.values = function (u, splits) { return splits.map(short); };
    } else if (axis.scale === "nines") {
      a.splits = pctSplits;
      a.values = function (u, splits) { return splits.map(pct); };
    } else {
      a.incrs = axis.whole ? INCRS.filter(function (i) { return i >= 1; }) : INCRS;
      a.values = function (u, splits) { return splits.map(short); };
    }
    // Every split gets its label: uPlot's own filter thins a log axis to its powers of ten.
    a.filter = function (u, splits) { return splits; };
    if (side === 3 || side === 1) a.size = 64;
    return a;
  }

  // In a chart whose series keep their own x (mode 2), the point nearest the cursor.
  function nearest(u, si) {
    var d = u.data[si], best = null, bestDist = Infinity;
    if (!d || u.cursor.left == null || u.cursor.left < 0) return null;
    var key = u.series[si].facets[1].scale;
    for (var i = 0; i < d[0].length; i++) {
      var dx = u.valToPos(d[0][i], "x") - u.cursor.left;
      var dy = u.valToPos(d[1][i], key) - u.cursor.top;
      var dist = dx * dx + dy * dy;
      if (dist < bestDist) { bestDist = dist; best = i; }
    }
    return best;
  }

  // A point's marker: the shape that, with the dash, tells a series from the others
  // without its colour (grey print, colour-blind readers); the SVG figures draw the same.
  function marker(ctx, shape, x, y, r) {
    ctx.beginPath();
    if (shape === "triangle") {
      ctx.moveTo(x, y - 1.3 * r); ctx.lineTo(x + 1.2 * r, y + 0.9 * r); ctx.lineTo(x - 1.2 * r, y + 0.9 * r);
      ctx.closePath(); ctx.fill();
    } else if (shape === "square") {
      ctx.rect(x - r, y - r, 2 * r, 2 * r); ctx.fill();
    } else if (shape === "cross") {
      ctx.moveTo(x - r, y - r); ctx.lineTo(x + r, y + r); ctx.moveTo(x - r, y + r); ctx.lineTo(x + r, y - r);
      ctx.stroke();
    } else {
      ctx.arc(x, y, r, 0, 2 * Math.PI); ctx.fill();
    }
  }

  // The legend's swatch of a series: its dash and its marker, as in the SVG legend.
  function swatch(s) {
    var line = s.dots ? "" : '<line x1="0" y1="6" x2="28" y2="6" stroke="' + s.color + '" stroke-width="2"' +
      (s.dash ? ' stroke-dasharray="' + s.dash.join(" ") + '"' : "") + "/>";
    var c = s.color, shape = "";
    if (s.marker === "triangle") shape = '<path d="M14 1.5L19 10H9z" fill="' + c + '"/>';
    else if (s.marker === "square") shape = '<rect x="10.5" y="2.5" width="7" height="7" fill="' + c + '"/>';
    else if (s.marker === "cross") shape = '<path d="M10 2L18 10M10 10L18 2" stroke="' + c + '" stroke-width="2"/>';
    else if (s.marker) shape = '<circle cx="14" cy="6" r="3.5" fill="' + c + '"/>';
    return '<svg width="28" height="12" viewBox="0 0 28 12" aria-hidden="true">' + line + shape + "</svg>";
  }

  function marksPlugin(spec) {
    return {
      hooks: {
        draw: function (u) {
          var ctx = u.ctx, dpr = window.devicePixelRatio || 1;
          ctx.save();
          // Dots and labels stay inside the plot when it is zoomed.
          ctx.beginPath();
          ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
          ctx.clip();
          ctx.font = Math.round(11 * dpr) + "px sans-serif";
          ctx.fillStyle = "#333";
          ctx.textAlign = "left";
          ctx.textBaseline = "bottom";
          var placed = [];
          spec.series.forEach(function (s, k) {
            var si = k + 1;
            if (!u.series[si].show) return;
            var key = s.secondary ? "y2" : "y";
            // Markers: at every dot of a scatter, at every point of a short line and a
            // regular few of a long one (as the SVG figures).
            if (s.marker) {
              var xs = [], ys = [];
              if (spec.mode === 2) { xs = u.data[si][0]; ys = u.data[si][1]; }
              else {
                for (var j = 0; j < u.data[si].length; j++) {
                  if (u.data[si][j] != null) { xs.push(u.data[0][j]); ys.push(u.data[si][j]); }
                }
              }
              var every = s.dots ? 1 : Math.max(1, Math.floor(xs.length / 24));
              var r = (s.dots ? 2 : 3) * dpr;
              ctx.fillStyle = s.color; ctx.strokeStyle = s.color; ctx.lineWidth = 2 * dpr;
              if (s.dots) ctx.globalAlpha = 0.7;
              for (var i = 0; i < xs.length; i += every) {
                marker(ctx, s.marker, u.valToPos(xs[i], "x", true), u.valToPos(ys[i], key, true), r);
              }
              ctx.globalAlpha = 1;
              ctx.fillStyle = "#333";
            }
            if (!s.labels.length) return;
            s.labels.forEach(function (text, i) {
              if (text == null || text === "") return;
              var x, y;
              if (spec.mode === 2) { x = u.data[si][0][i]; y = u.data[si][1][i]; }
              else {
                var n = -1;
                for (var j = 0; j < u.data[si].length; j++) {
                  if (u.data[si][j] != null && ++n === i) { x = u.data[0][j]; y = u.data[si][j]; break; }
                }
              }
              if (x == null || y == null) return;
              var px = u.valToPos(x, "x", true), py = u.valToPos(y, key, true);
              // Near the right edge the label goes left of its point, and below near the top.
              var right = px > u.bbox.left + u.bbox.width - 90 * dpr;
              ctx.textAlign = right ? "right" : "left";
              ctx.textBaseline = py < u.bbox.top + 16 * dpr ? "top" : "bottom";
              var dy = ctx.textBaseline === "top" ? 6 * dpr : -8 * dpr;
              var tx = px + (right ? -6 : 6) * dpr, ty = py + dy;
              // A label that would overlap one drawn already is left out (it shows on
              // hover, in the readout): never a stack of labels smeared into one.
              var w = ctx.measureText(text).width, h = 15 * dpr;
              var box = [right ? tx - w : tx, ctx.textBaseline === "top" ? ty : ty - h, 0, 0];
              box[2] = box[0] + w; box[3] = box[1] + h;
              var clear = placed.every(function (b) {
                return box[0] >= b[2] || b[0] >= box[2] || box[1] >= b[3] || b[1] >= box[3];
              });
              if (!clear) return;
              placed.push(box);
              ctx.fillText(text, tx, ty);
            });
          });
          ctx.restore();
        }
      }
    };
  }

  // The point of series si under the cursor, with its index among the series' own points
  // (the index of its label), or null.
  function pointAt(u, si, spec) {
    if (spec.mode === 2) {
      var i = nearest(u, si);
      return i == null ? null : { i: i, x: u.data[si][0][i], y: u.data[si][1][i] };
    }
    var idx = u.cursor.idx;
    if (idx == null || u.data[si][idx] == null) return null;
    var n = -1;
    for (var j = 0; j <= idx; j++) if (u.data[si][j] != null) n++;
    return { i: n, x: u.data[0][idx], y: u.data[si][idx] };
  }

  function readoutPlugin(spec, el) {
    return {
      hooks: {
        setCursor: function (u) {
          if (u.cursor.left == null || u.cursor.left < 0) { el.textContent = "\u00a0"; return; }
          var parts = [];
          spec.series.forEach(function (s, k) {
            var si = k + 1;
            if (!u.series[si].show) return;
            // On one x the legend has the values: the readout adds each point's label.
            if (spec.mode === 1 && !s.labels.length) return;
            var p = pointAt(u, si, spec);
            if (p == null) return;
            var level = s.labels[p.i] ? " (" + s.labels[p.i] + ")" : "";
            parts.push(s.name + level + ": " + short(p.y) + " at " + short(p.x));
          });
          el.textContent = parts.join(" \u00b7 ") || "\u00a0";
        }
      }
    };
  }

  function chart(spec, holder) {
    var readout = null;
    var plugins = [marksPlugin(spec)];
    var labelled = spec.series.some(function (s) { return s.labels.length > 0; });
    if (spec.mode === 2 || labelled) {
      readout = document.createElement("div");
      readout.className = "readout";
      readout.textContent = "\u00a0";
      plugins.push(readoutPlugin(spec, readout));
    }
    var scales = { x: scaleOf(spec.x, "x"), y: scaleOf(spec.y, "y") };
    scales.x.time = false;
    var axes = [axisOf(spec.x, "x", 2), axisOf(spec.y, "y", 3)];
    if (spec.y2) {
      scales.y2 = scaleOf(spec.y2, "y2");
      axes.push(axisOf(spec.y2, "y2", 1));
    }
    var series = [{ label: spec.x.label, value: function (u, v) { return v == null ? "-" : spec.x.scale === "nines" ? pct(v) : short(v); } }];
    spec.series.forEach(function (s) {
      var key = s.secondary ? "y2" : "y";
      var one = {
        label: s.name, stroke: s.color, width: s.width, scale: key, spanGaps: true,
        value: function (u, v) { return short(v); },
        points: { show: false }
      };
      if (s.dash) one.dash = s.dash;
      // A scatter's dots are drawn by marksPlugin, never joined.
      if (s.dots) one.paths = function () { return null; };
      if (spec.mode === 2) one.facets = [{ scale: "x", auto: true }, { scale: key, auto: true }];
      series.push(one);
    });
    var width = function () { return Math.max(320, holder.clientWidth - 2); };
    var opts = {
      mode: spec.mode, width: width(), height: 380, title: spec.title,
      scales: scales, axes: axes, series: series, plugins: plugins,
      legend: { live: spec.mode === 1 },
      cursor: spec.mode === 2 ? { dataIdx: function (u, si) { return si === 0 ? null : nearest(u, si); }, drag: { x: true, y: true } } : { drag: { x: true, y: false } }
    };
    if (spec.mode === 2) holder.classList.add("own-x");
    var u = new uPlot(opts, spec.data, holder);
    var markers = holder.querySelectorAll(".u-legend .u-series .u-marker");
    spec.series.forEach(function (s, k) {
      var m = markers[k + 1];
      if (!m) return;
      m.style.border = "0"; m.style.background = "none"; m.style.width = "28px"; m.style.height = "12px";
      m.innerHTML = swatch(s);
    });
    if (readout) holder.appendChild(readout);
    return { u: u, width: width };
  }

  function start() {
    var node = document.getElementById("headroom-figures");
    if (!node) return;
    var specs = JSON.parse(node.textContent);
    var charts = specs.map(function (spec) {
      var holder = document.getElementById("chart-" + spec.name);
      return holder ? chart(spec, holder) : null;
    }).filter(Boolean);
    var pending = null;
    window.addEventListener("resize", function () {
      clearTimeout(pending);
      pending = setTimeout(function () {
        charts.forEach(function (c) { c.u.setSize({ width: c.width(), height: 380 }); });
      }, 100);
    });
    document.documentElement.setAttribute("data-charts", String(charts.length));
  }

  // The live page (src/live/page.rs) draws and redraws its charts with the same code.
  window.headroomChart = chart;

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
