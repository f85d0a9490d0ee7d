// headroom's live page (src/live/page.rs): follows the run's frames (server-sent events from
// /events, one a second), swaps in the report's own answer box and tables, and redraws the
// report's own charts (assets/figures.js) with each frame's data without rebuilding them.
// When the run ends the last event carries the final report, which replaces the page, so a
// browser left open keeps the answer after headroom exits.
(function () {
  "use strict";
  var token = new URLSearchParams(location.search).get("token");
  var query = token ? "?token=" + encodeURIComponent(token) : "";
  var charts = {};
  var frames = 0;

  function html(id, text) {
    var el = document.getElementById(id);
    if (el && el.innerHTML !== text) el.innerHTML = text;
  }
  function words(id, text) {
    var el = document.getElementById(id);
    if (el && el.textContent !== text) el.textContent = text;
  }
  function shapeOf(spec) {
    return JSON.stringify([spec.mode, !!spec.y2, spec.series.map(function (s) { return [s.name, s.secondary]; })]);
  }
  function remove(name) {
    charts[name].chart.u.destroy();
    charts[name].fig.remove();
    delete charts[name];
  }

  function draw(specs) {
    var holder = document.getElementById("charts");
    var seen = {};
    specs.forEach(function (spec) {
      seen[spec.name] = true;
      var c = charts[spec.name], shape = shapeOf(spec);
      if (c && c.shape === shape) {
        // The same chart with more seconds: new data, the chart kept (no flicker).
        c.spec.series.forEach(function (s, k) { s.labels = spec.series[k].labels; });
        c.chart.u.setData(spec.data);
        return;
      }
      if (c) remove(spec.name);
      var fig = document.createElement("figure");
      fig.id = spec.name;
      fig.setAttribute("aria-label", spec.title);
      var div = document.createElement("div");
      div.className = "chart";
      div.id = "chart-" + spec.name;
      fig.appendChild(div);
      holder.appendChild(fig);
      charts[spec.name] = { chart: window.headroomChart(spec, div), spec: spec, shape: shape, fig: fig };
    });
    Object.keys(charts).forEach(function (name) { if (!seen[name]) remove(name); });
    var order = specs.map(function (s) { return s.name; }).join(" ");
    var now = Array.prototype.map.call(holder.children, function (f) { return f.id; }).join(" ");
    if (order !== now) specs.forEach(function (s) { holder.appendChild(charts[s.name].fig); });
    document.documentElement.setAttribute("data-charts", String(specs.length));
  }

  function frame(e) {
    var f = JSON.parse(e.data);
    frames++;
    document.title = "live: " + f.title;
    words("title", f.title);
    words("what", f.what);
    html("position", f.position);
    html("warnings", f.warnings);
    html("shards", f.shards);
    html("answer-slot", f.answer);
    html("now", f.now);
    html("left-out", f.left_out);
    draw(f.figures);
    html("sections", f.sections);
    words("status", "");
    document.documentElement.setAttribute("data-frames", String(frames));
  }

  function start() {
    var source = new EventSource("/events" + query);
    source.addEventListener("frame", frame);
    source.addEventListener("end", function (e) {
      source.close();
      var report = JSON.parse(e.data).report;
      document.open();
      document.write(report);
      document.close();
    });
    source.onerror = function () {
      words("status", "The connection to headroom was lost; retrying (the run goes on, and its report is written in its run directory).");
    };
    var stop = document.getElementById("stop");
    if (stop) {
      stop.addEventListener("click", function () {
        stop.disabled = true;
        fetch("/stop", { method: "POST", headers: { "x-headroom-token": token } })
          .then(function (r) { return r.text(); })
          .then(function (t) { words("status", t); })
          .catch(function () { words("status", "The stop did not reach headroom; press Ctrl-C where it runs."); stop.disabled = false; });
      });
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
