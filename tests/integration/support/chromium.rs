//! Opens an HTML report in headless Chromium at a 1280-pixel window, as a reader would, and
//! reports what the page did: script errors, its width against the window's, the widest
//! table or text block against its box, how many charts it drew, and a screenshot.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The window a report must fit.
pub const WINDOW_WIDTH: u64 = 1280;

/// What Chromium made of a page.
#[derive(Debug)]
pub struct Rendered {
    /// Uncaught errors and `console.error` calls, in order.
    pub errors: Vec<String>,
    /// The document's full width and the width of the window's viewport, in CSS pixels.
    pub scroll_width: u64,
    /// The viewport's width (the window less its scroll bar).
    pub client_width: u64,
    /// Tables and preformatted blocks whose content is wider than their box: cut-off
    /// columns, as `TAG content/box`.
    pub cut: Vec<String>,
    /// Charts the page's script drew (`data-charts` on the root element).
    pub charts: u64,
    /// The screenshot taken.
    pub screenshot: PathBuf,
    /// What the latency-over-time chart showed as the probe used it with the mouse
    /// (`interact` in the probe); `None` when the page has no such chart.
    pub interaction: Option<Interaction>,
}

/// Legend values of a time chart (x first, then each series) at each step of the probe's use
/// of it, and the readout of a chart of points after a hover.
#[derive(Debug, serde::Deserialize)]
pub struct Interaction {
    /// Before any hover.
    pub before: Vec<String>,
    /// Hovering at a fifth of its width.
    pub left: Vec<String>,
    /// Hovering at four fifths.
    pub right: Vec<String>,
    /// At four fifths again, after dragging over its left half to zoom in.
    pub zoomed: Vec<String>,
    /// At four fifths again, after a double-click zoomed back out.
    pub unzoomed: Vec<String>,
    /// Whether clicking its first series' legend entry hid the series.
    pub hidden: bool,
    /// The readout line of the first chart of points, hovered in its middle.
    #[serde(default)]
    pub readout: Option<String>,
}

/// A script put first in the page's head: it catches errors from the start and, once the
/// page has loaded and drawn, writes its findings into the DOM for `--dump-dom` to show.
const PROBE: &str = r##"<script>
window.__errors = [];
window.addEventListener("error", function (e) { window.__errors.push("error: " + e.message); });
(function () {
  var original = console.error;
  console.error = function () {
    window.__errors.push("console.error: " + Array.prototype.join.call(arguments, " "));
    original.apply(console, arguments);
  };
})();
// Uses the first time chart as a reader would with a mouse: hover, drag to zoom, double-click
// to zoom out, click a legend entry; and hovers a chart of points (its readout line). uPlot
// applies a zoom in a microtask, so each reading after one waits for the next timer.
function interact(done) {
  function mouse(el, type, fx, fy, target) {
    var r = el.getBoundingClientRect();
    (target || el).dispatchEvent(new MouseEvent(type, {
      bubbles: true, cancelable: true, view: window, button: 0, buttons: type === "mouseup" ? 0 : 1,
      movementX: 1, movementY: 1, clientX: r.left + r.width * fx, clientY: r.top + r.height * fy
    }));
  }
  var plot = document.querySelector("#chart-latency-over-time .uplot");
  if (!plot) return done(null);
  var over = plot.querySelector(".u-over");
  var legend = function () {
    return Array.prototype.map.call(plot.querySelectorAll(".u-legend .u-value"), function (v) { return v.textContent; });
  };
  var out = { before: legend() };
  mouse(over, "mousemove", 0.2, 0.5);
  out.left = legend();
  mouse(over, "mousemove", 0.8, 0.5);
  out.right = legend();
  mouse(over, "mousedown", 0.0, 0.5);
  mouse(over, "mousemove", 0.5, 0.5);
  mouse(over, "mouseup", 0.5, 0.5, document);
  setTimeout(function () {
    mouse(over, "mousemove", 0.8, 0.5);
    out.zoomed = legend();
    over.dispatchEvent(new MouseEvent("dblclick", { bubbles: true, view: window }));
    setTimeout(function () {
      mouse(over, "mousemove", 0.8, 0.5);
      out.unzoomed = legend();
      var row = plot.querySelectorAll(".u-legend .u-series")[1];
      row.querySelector(".u-label").dispatchEvent(new MouseEvent("click", { bubbles: true, view: window }));
      out.hidden = row.classList.contains("u-off");
      var points = document.querySelector(".own-x");
      if (points) {
        mouse(points.querySelector(".u-over"), "mousemove", 0.5, 0.5);
        out.readout = points.querySelector(".readout").textContent;
      }
      done(out);
    }, 50);
  }, 50);
}
window.addEventListener("load", function () {
  setTimeout(function () {
    var root = document.documentElement;
    var cut = [];
    document.querySelectorAll("table, pre").forEach(function (t) {
      if (t.closest(".uplot")) return;
      if (t.scrollWidth > t.clientWidth + 1) cut.push(t.tagName + " " + t.scrollWidth + "/" + t.clientWidth);
    });
    // Measured before the probe's mouse changes anything.
    var found = {
      errors: window.__errors,
      scroll_width: root.scrollWidth,
      client_width: root.clientWidth,
      cut: cut,
      charts: Number(root.getAttribute("data-charts") || 0),
      interaction: null
    };
    var report = function (interaction) {
      found.interaction = interaction;
      var out = document.createElement("pre");
      out.id = "probe-result";
      out.textContent = JSON.stringify(found);
      document.body.appendChild(out);
    };
    try { interact(report); } catch (e) { window.__errors.push("probe: " + e); report(null); }
  }, 500);
});
</script>"##;

fn chromium() -> &'static str {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| Command::new(c).arg("--version").output().is_ok())
        .expect("chromium is needed for this test (tests/run installs Debian's chromium)")
}

fn run(page: &Path, profile: &Path, extra: &[String]) -> std::process::Output {
    Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            // Timers run on virtual time: the probe's wait does not depend on the machine.
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--window-size={WINDOW_WIDTH},3000"))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs")
}

/// Renders `page` (a copy with the probe, written into `work`) and reads the probe back.
pub fn render(page: &Path, work: &Path) -> Rendered {
    let html = std::fs::read_to_string(page).unwrap();
    let probed = work.join("probed.html");
    std::fs::write(
        &probed,
        html.replacen("<head>", &format!("<head>\n{PROBE}"), 1),
    )
    .unwrap();
    let profile = tempfile::tempdir().unwrap();
    let screenshot = work.join("screenshot.png");
    let shot = run(
        &probed,
        profile.path(),
        &[format!("--screenshot={}", screenshot.display())],
    );
    assert!(
        screenshot.metadata().is_ok_and(|m| m.len() > 0),
        "chromium took no screenshot:\n{}",
        String::from_utf8_lossy(&shot.stderr)
    );
    let dumped = run(&probed, profile.path(), &["--dump-dom".to_string()]);
    let dom = String::from_utf8_lossy(&dumped.stdout);
    let start = dom.find("<pre id=\"probe-result\">").unwrap_or_else(|| {
        panic!(
            "the page never finished loading in chromium:\n{}",
            String::from_utf8_lossy(&dumped.stderr)
        )
    }) + "<pre id=\"probe-result\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let json = dom[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let strings = |key: &str| -> Vec<String> {
        v[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e.as_str().unwrap().to_string())
            .collect()
    };
    Rendered {
        errors: strings("errors"),
        scroll_width: v["scroll_width"].as_u64().unwrap(),
        client_width: v["client_width"].as_u64().unwrap(),
        cut: strings("cut"),
        charts: v["charts"].as_u64().unwrap(),
        screenshot,
        interaction: serde_json::from_value(v["interaction"].clone()).unwrap(),
    }
}

impl Rendered {
    /// Asserts the charts answer the mouse: values on hover that follow the cursor, a drag
    /// that zooms in and a double-click that zooms out, a legend entry that hides its series,
    /// a chart of points (when the page has one) that reads out the nearest point.
    pub fn assert_interactive(&self) {
        let i = self
            .interaction
            .as_ref()
            .unwrap_or_else(|| panic!("no latency-over-time chart to use: {self:?}"));
        let x = |values: &[String]| -> f64 {
            values[0]
                .parse()
                .unwrap_or_else(|_| panic!("no x value in the legend: {i:?}"))
        };
        assert!(i.before.iter().all(|v| v == "-" || v == "--"), "{i:?}");
        assert!(
            i.left[1..].iter().any(|v| v.parse::<f64>().is_ok()),
            "{i:?}"
        );
        assert!(
            x(&i.left) < x(&i.right),
            "hover values do not follow the cursor: {i:?}"
        );
        assert!(
            x(&i.zoomed) < x(&i.right),
            "the drag did not zoom in: {i:?}"
        );
        assert_eq!(
            x(&i.unzoomed),
            x(&i.right),
            "double-click did not zoom out: {i:?}"
        );
        assert!(i.hidden, "the legend entry did not hide its series: {i:?}");
        if let Some(readout) = &i.readout {
            assert!(readout.contains(": ") && readout.contains(" at "), "{i:?}");
        }
    }

    /// Asserts what every report must be: no errors, no horizontal overflow at 1280 px, no
    /// cut-off table, and at least `charts` charts drawn.
    pub fn assert_fits(&self, charts: u64) {
        assert!(
            self.errors.is_empty(),
            "the page logged errors: {:?}",
            self.errors
        );
        assert!(
            self.client_width <= WINDOW_WIDTH && self.client_width > WINDOW_WIDTH / 2,
            "unexpected viewport: {self:?}"
        );
        assert!(
            self.scroll_width <= self.client_width,
            "the page is wider than a {WINDOW_WIDTH}px window: {self:?}"
        );
        assert!(self.cut.is_empty(), "cut-off columns: {:?}", self.cut);
        assert!(
            self.charts >= charts,
            "only {} charts drawn: {self:?}",
            self.charts
        );
        assert!(self.screenshot.metadata().is_ok_and(|m| m.len() > 0));
    }
}
