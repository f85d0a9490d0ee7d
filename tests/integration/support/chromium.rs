//! Opens an HTML report in headless Chromium at a 1280-pixel window, as a reader would, and
//! reports what the page did: script errors, its width against the window's, the widest
//! table or text block against its box, how many charts it drew, where the answer and the
//! first figure sit, which tables are collapsed, and a screenshot. Prints it to PDF too
//! (Chromium's `--print-to-pdf`, read back with poppler's `pdftotext`) to check that the
//! printed page carries every table whole.

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
    /// Where the answer, its verdict and numbers, and the first figure are; the tables.
    pub layout: Layout,
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

/// Where an element sits, in CSS pixels from the top of the page.
#[derive(Debug, Clone, Copy, serde::Deserialize)]
pub struct Span {
    /// Its top edge.
    pub top: f64,
    /// Its bottom edge.
    pub bottom: f64,
}

/// The page's layout as the probe measured it at a 1280-pixel window.
#[derive(serde::Deserialize)]
pub struct Layout {
    /// The verdict sentence in the answer box.
    pub verdict: Option<Span>,
    /// The headline numbers in it.
    pub numbers: Option<Span>,
    /// The first figure.
    pub figure: Option<Span>,
    /// How many lines the table of contents takes (0 when there is none).
    pub toc_lines: u64,
    /// How many `details` elements (collapsed tables) the page has.
    pub details: u64,
    /// Open ones, on screen.
    pub details_open: u64,
    /// Every table outside the charts, as its cells' text.
    pub tables: Vec<TableText>,
    /// Every preformatted block's text.
    pub blocks: Vec<String>,
}

impl std::fmt::Debug for Layout {
    // A failure message names the blocks by their first line, not by their whole text.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let blocks: Vec<&str> = self
            .blocks
            .iter()
            .map(|b| b.lines().next().unwrap_or(""))
            .collect();
        f.debug_struct("Layout")
            .field("verdict", &self.verdict)
            .field("numbers", &self.numbers)
            .field("figure", &self.figure)
            .field("toc_lines", &self.toc_lines)
            .field("details", &self.details)
            .field("details_open", &self.details_open)
            .field("tables", &self.tables)
            .field("blocks", &blocks)
            .finish()
    }
}

/// A table's text, row by row (the header row first), and whether it is collapsed.
#[derive(serde::Deserialize)]
pub struct TableText {
    /// Each row's cells' text.
    pub rows: Vec<Vec<String>>,
    /// Inside a closed `details`.
    pub collapsed: bool,
}

impl std::fmt::Debug for TableText {
    // A failure message names tables by their size, not by thousands of cells.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let head = self.rows.first().map(|r| r.join(" | ")).unwrap_or_default();
        write!(
            f,
            "table [{head}] of {} rows{}",
            self.rows.len(),
            if self.collapsed { ", collapsed" } else { "" }
        )
    }
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
    // Where the parts a reader looks for first sit on the page, in CSS pixels from its top.
    var at = function (selector) {
      var e = document.querySelector(selector);
      if (!e) return null;
      var r = e.getBoundingClientRect();
      return { top: r.top + window.scrollY, bottom: r.bottom + window.scrollY };
    };
    // Every table and preformatted block as the reader sees its text: what the printed page
    // must carry whole (the probe's own output is added after this is taken).
    var tables = [];
    document.querySelectorAll("table").forEach(function (t) {
      if (t.closest(".uplot")) return;
      var rows = Array.prototype.map.call(t.rows, function (r) {
        return Array.prototype.map.call(r.cells, function (c) { return c.textContent; });
      });
      var d = t.closest("details");
      tables.push({ rows: rows, collapsed: !!d && !d.open });
    });
    var blocks = Array.prototype.map.call(document.querySelectorAll("pre"), function (p) { return p.textContent; });
    var tocTops = {};
    document.querySelectorAll(".toc li").forEach(function (li) { tocTops[Math.round(li.getBoundingClientRect().top)] = true; });
    // Measured before the probe's mouse changes anything.
    var found = {
      errors: window.__errors,
      scroll_width: root.scrollWidth,
      client_width: root.clientWidth,
      cut: cut,
      charts: Number(root.getAttribute("data-charts") || 0),
      layout: {
        verdict: at(".answer .verdict"),
        numbers: at(".answer .numbers"),
        figure: at("figure"),
        toc_lines: Object.keys(tocTops).length,
        details: document.querySelectorAll("details").length,
        details_open: document.querySelectorAll("details[open]").length,
        tables: tables,
        blocks: blocks
      },
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
        layout: serde_json::from_value(v["layout"].clone()).unwrap(),
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

/// How far down the page a reader sees without scrolling: a 1280 × 800 window.
pub const FIRST_SCREEN: f64 = 800.0;
/// How far down the first figure must start: within half a screen more.
pub const FIRST_FIGURE: f64 = 1200.0;
/// The smallest printed text allowed, in points (pdftotext's word boxes are a font's
/// ascent to descent: 1.107 × its size for DejaVu Sans, measured), about 6.3 pt type. The
/// tables print at 7 pt (a 7.75 pt box), the zoomed charts' legends at about 6.5 pt (7.26,
/// the smallest on every report page); a page Chromium had to shrink to fit the paper (it
/// shrinks by up to 1.5 before it cuts) prints them smaller than this.
pub const SMALLEST_PRINTED: f64 = 7.0;

impl Rendered {
    /// Asserts the answer comes first: the verdict and the headline numbers inside the
    /// first screen, the first figure starting within `FIRST_FIGURE`, the table of contents
    /// on one line, every table longer than `long` rows collapsed and none open on screen.
    pub fn assert_answer_first(&self, long: usize) {
        let l = &self.layout;
        let bottom = |what: &str, span: Option<Span>| -> f64 {
            span.unwrap_or_else(|| panic!("the page has no {what}: {l:?}"))
                .bottom
        };
        for (what, span) in [("verdict", l.verdict), ("headline numbers", l.numbers)] {
            let b = bottom(what, span);
            assert!(
                b <= FIRST_SCREEN,
                "the {what} ends {b}px down, below the first {FIRST_SCREEN}px: {l:?}"
            );
        }
        let figure = l
            .figure
            .unwrap_or_else(|| panic!("the page has no figure: {l:?}"));
        assert!(
            figure.top <= FIRST_FIGURE,
            "the first figure starts {}px down, past {FIRST_FIGURE}px: {l:?}",
            figure.top
        );
        assert!(l.toc_lines <= 1, "the contents take {} lines", l.toc_lines);
        assert_eq!(l.details_open, 0, "collapsed tables open on screen: {l:?}");
        for t in &l.tables {
            assert!(
                t.collapsed || t.rows.len() <= long + 1,
                "a long table is not collapsed: {t:?}"
            );
        }
    }
}

/// A page as Chromium printed it.
#[derive(Debug)]
pub struct Printed {
    /// Each page's text in the order it was drawn, with no white space (a row whose cells
    /// wrap, or that the text extraction spaces differently, still reads as one string).
    pub pages: Vec<String>,
    /// The smallest word's height, in points.
    pub smallest: f64,
    /// The PDF written.
    pub pdf: PathBuf,
}

/// Text without white space, the micro sign as the Greek letter (fonts map both to one glyph,
/// which reads back as either).
fn squeeze(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| if c == '\u{b5}' { '\u{3bc}' } else { c })
        .collect()
}

fn pdftotext(pdf: &Path, mode: &str) -> String {
    let out = Command::new("pdftotext")
        .arg(mode)
        .arg(pdf)
        .arg("-")
        .output()
        .expect("pdftotext is needed for this test (tests/run installs Debian's poppler-utils)");
    assert!(out.status.success(), "pdftotext {mode} failed: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Prints `page` to PDF as Chromium's print does (scripts on, or blocked when `scripts` is
/// false), and reads its text back page by page.
pub fn print(page: &Path, work: &Path, scripts: bool) -> Printed {
    let profile = tempfile::tempdir().unwrap();
    let pdf = work.join(if scripts {
        "printed.pdf"
    } else {
        "printed-no-js.pdf"
    });
    let page = if scripts {
        page.to_path_buf()
    } else {
        // Blocked by the page's own policy: Chromium's headless print writes nothing with
        // scripting switched off (--blink-settings=scriptEnabled=false), so the copy forbids
        // every script instead, the print script that opens collapsed tables among them.
        let html = std::fs::read_to_string(page).unwrap();
        let blocked = work.join("no-scripts.html");
        std::fs::write(
            &blocked,
            html.replacen(
                "<head>",
                "<head>\n<meta http-equiv=\"Content-Security-Policy\" content=\"script-src 'none'\">",
                1,
            ),
        )
        .unwrap();
        blocked
    };
    let extra = [
        format!("--print-to-pdf={}", pdf.display()),
        "--no-pdf-header-footer".to_string(),
    ];
    let out = run(&page, profile.path(), &extra);
    assert!(
        pdf.metadata().is_ok_and(|m| m.len() > 0),
        "chromium printed nothing:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // -raw keeps the order text was drawn in: a table row's cells one after another.
    let pages = pdftotext(&pdf, "-raw")
        .split('\u{c}')
        .map(squeeze)
        .filter(|p| !p.is_empty())
        .collect();
    // Word boxes: <word xMin=".." yMin=".." xMax=".." yMax="..">text</word>.
    let attr = |line: &str, name: &str| -> Option<f64> {
        let at = line.find(&format!("{name}=\""))? + name.len() + 2;
        line[at..].split('"').next()?.parse().ok()
    };
    let smallest = pdftotext(&pdf, "-bbox")
        .lines()
        .filter(|l| l.trim_start().starts_with("<word "))
        .filter_map(|l| Some(attr(l, "yMax")? - attr(l, "yMin")?))
        .fold(f64::INFINITY, f64::min);
    Printed {
        pages,
        smallest,
        pdf,
    }
}

impl Printed {
    /// Asserts the print carries every table whole and legibly: each row of every table
    /// (collapsed ones too) and each line of every preformatted block is on one printed
    /// page, all its cells in order. A row cut at the paper's right edge loses its last
    /// cells (Chromium draws nothing past the edge), a row broken across two pages is
    /// split between them, and a collapsed table that did not open is missing: each fails.
    /// No text is smaller than `SMALLEST_PRINTED` (nothing was shrunk to fit the paper).
    pub fn assert_carries(&self, layout: &Layout) {
        let mut missing = Vec::new();
        let rows = layout
            .tables
            .iter()
            .flat_map(|t| t.rows.iter().map(|r| r.concat()));
        let lines = layout
            .blocks
            .iter()
            .flat_map(|b| b.lines().map(str::to_string));
        for text in rows.chain(lines) {
            let want = squeeze(&text);
            if !want.is_empty() && !self.pages.iter().any(|p| p.contains(&want)) {
                missing.push(text);
            }
        }
        assert!(
            missing.is_empty(),
            "{} rows or lines are not whole on any page of {} (first: {:?})",
            missing.len(),
            self.pdf.display(),
            &missing[..missing.len().min(5)]
        );
        assert!(
            self.smallest >= SMALLEST_PRINTED,
            "text printed {:.2}pt high in {}: the page was shrunk to fit the paper",
            self.smallest,
            self.pdf.display()
        );
    }
}
