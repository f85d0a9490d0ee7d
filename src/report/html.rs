//! Self-contained HTML reports: one file with its styles, its figures' data and the chart
//! library that draws them (uPlot, MIT, vendored in assets/uplot) inline, so it opens
//! anywhere without network access and fits a 1280-pixel window.

use super::plot::{self, Figure, LeftOut, PlotError, RunView};
use std::fmt::Write as _;

// Widths: the body never passes 1240 px, so with margins and a scroll bar the page fits a
// 1280-pixel window; a table wider than that scrolls inside itself, never the page.
const STYLE: &str = "
*{box-sizing:border-box}
body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;margin:1.5em auto;max-width:1240px;color:#222;padding:0 12px}
h1{font-size:1.5em;margin-bottom:.2em;overflow-wrap:anywhere}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em}
.sub{color:#666;margin-top:0}
table{border-collapse:collapse;margin:.5em 0;font-size:.75em;display:block;max-width:100%;overflow-x:auto;font-variant-numeric:tabular-nums}
th,td{border:1px solid #ddd;padding:.2em .35em;text-align:right;white-space:nowrap}
th{background:#f4f4f4;white-space:normal}td:first-child,th:first-child{text-align:left}
table.options td{text-align:left;white-space:normal;overflow-wrap:anywhere}
table.options td:first-child{white-space:nowrap;color:#555}
pre{background:#f8f8f8;border:1px solid #eee;padding:.8em;overflow-x:auto;font-size:.8em;max-width:100%}
.met{color:#1a7f37;font-weight:bold}.broken{color:#cf222e;font-weight:bold}
.note{background:#fff8c5;border:1px solid #e6d48a;padding:.5em .8em}
figure{margin:1.5em 0}figcaption{color:#666;font-size:.85em}
.chart{width:100%;min-height:380px}.readout{font-size:.8em;color:#333;min-height:1.3em;padding:.2em 0}
.uplot .u-title{font-size:1em;font-weight:normal}.uplot .u-legend{font-size:.8em;display:block}.uplot table{display:table;font-size:1em}
.hint{color:#666;font-size:.85em}
.own-x .u-legend .u-value{display:none}
";

/// uPlot, inlined: the page must draw its charts offline.
const UPLOT_JS: &str = include_str!("../../assets/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../../assets/uplot/uPlot.min.css");
/// headroom's glue from the figures' data to uPlot charts.
const FIGURES_JS: &str = include_str!("../../assets/figures.js");

/// Text made safe to put between tags or in an attribute.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The rows (header first) as an HTML table.
pub fn table(rows: &[Vec<String>]) -> String {
    let mut out = String::from("<table>\n");
    for (i, r) in rows.iter().enumerate() {
        let tag = if i == 0 { "th" } else { "td" };
        out.push_str("<tr>");
        for cell in r {
            let class = match cell.as_str() {
                "met" => " class=\"met\"",
                "broken" | "not met" => " class=\"broken\"",
                _ => "",
            };
            let _ = write!(out, "<{tag}{class}>{}</{tag}>", escape(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

/// A whole page: `body` with the shared styles (and the chart library when it has charts).
pub(super) fn page(title: &str, body: &str) -> String {
    let charts = if body.contains("id=\"headroom-figures\"") {
        // uPlot's licence (MIT) asks for its notice in every copy.
        format!("<!-- uPlot 1.6.32, Copyright (c) 2022 Leon Sorokin, MIT License -->\n<style>{UPLOT_CSS}</style>\n<script>{UPLOT_JS}</script>\n")
    } else {
        String::new()
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"headroom {}\">\n<title>{}</title>\n{charts}<style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        env!("CARGO_PKG_VERSION"),
        escape(title)
    )
}

/// The figures as interactive charts: a note for each left out, a place for each drawn,
/// then their data and the script that draws them.
fn figures(out: &mut String, figures: &[Figure], left_out: &[LeftOut]) -> Result<(), PlotError> {
    for note in left_out {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(&note.sentence()));
    }
    let shown: Vec<&Figure> = figures.iter().filter(|f| !f.is_empty()).collect();
    if shown.is_empty() {
        return Ok(());
    }
    let _ = writeln!(
        out,
        "<p class=\"hint\">Drag across a chart to zoom in, double-click to zoom out, click a legend entry to hide or show its line.</p>"
    );
    for f in &shown {
        let _ = writeln!(
            out,
            "<figure id=\"{0}\"><div class=\"chart\" id=\"chart-{0}\"></div><noscript><figcaption>{1}: drawn by JavaScript; <code>headroom report --plots DIR</code> writes it as SVG and PNG.</figcaption></noscript></figure>",
            escape(&f.name),
            escape(&f.title)
        );
    }
    let specs: Vec<serde_json::Value> = shown.iter().map(|f| plot::interactive::spec(f)).collect();
    let data = serde_json::to_string(&specs).map_err(|e| PlotError {
        name: "figures".into(),
        reason: e.to_string(),
    })?;
    // Inside a script element "</" ends it and "<!--" changes how it is read: no "<" at
    // all (it is only ever inside a JSON string, where \u003c reads the same).
    let _ = writeln!(
        out,
        "<script type=\"application/json\" id=\"headroom-figures\">{}</script>\n<script>{FIGURES_JS}</script>",
        data.replace('<', "\\u003c")
    );
    Ok(())
}

/// The stored options as a two-column table, nested fields named by their path
/// (`connection.keep_alive`, `requests.1.method`).
fn options_table(meta: &serde_json::Value) -> String {
    fn flatten(prefix: &str, v: &serde_json::Value, rows: &mut Vec<(String, String)>) {
        use serde_json::Value;
        let key = |k: &str| {
            if prefix.is_empty() {
                k.to_string()
            } else {
                format!("{prefix}.{k}")
            }
        };
        match v {
            Value::Object(map) => {
                for (k, v) in map {
                    flatten(&key(k), v, rows);
                }
            }
            Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
                let text: Vec<String> = items.iter().map(scalar).collect();
                rows.push((
                    prefix.to_string(),
                    text.join(if prefix == "command" { " " } else { ", " }),
                ));
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    flatten(&key(&i.to_string()), item, rows);
                }
            }
            other => rows.push((prefix.to_string(), scalar(other))),
        }
    }
    fn scalar(v: &serde_json::Value) -> String {
        match v {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Null => "-".into(),
            other => other.to_string(),
        }
    }
    let mut rows = Vec::new();
    flatten("", meta, &mut rows);
    let mut out =
        String::from("<table class=\"options\">\n<tr><th>option</th><th>value</th></tr>\n");
    for (k, v) in rows {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td></tr>",
            escape(&k),
            escape(&v)
        );
    }
    out.push_str("</table>\n");
    out
}

/// The report of one run: summary, objectives, tables, figures and the options used.
pub fn run_page(view: &RunView<'_>) -> Result<String, PlotError> {
    let s = view.summary;
    let mut b = String::new();
    let _ = writeln!(b, "<h1>{}</h1>", escape(&s.target));
    let _ = writeln!(
        b,
        "<p class=\"sub\">{} · {} · started {}</p>",
        escape(&super::text::load_words(s)),
        escape(&s.protocol),
        escape(&s.started_at)
    );
    if let Some(shard) = super::text::shard_words(s) {
        let _ = writeln!(b, "<p class=\"note\">{}</p>", escape(&shard));
    }
    for note in [&s.partial, &s.stopped_early].into_iter().flatten() {
        let _ = writeln!(b, "<p class=\"note\">{}</p>", escape(note));
    }
    for o in &s.outputs {
        let _ = writeln!(
            b,
            "<p class=\"note\">{}</p>",
            escape(&super::outputs::line(o))
        );
    }
    if !s.slo.is_empty() {
        let _ = writeln!(b, "<h2>Objectives</h2>");
        let mut rows = vec![vec![
            "objective".into(),
            "measured".into(),
            "verdict".into(),
        ]];
        rows.extend(s.slo.iter().map(|v| {
            vec![
                v.objective.clone(),
                super::interval::measured(v),
                if v.met { "met" } else { "not met" }.into(),
            ]
        }));
        b.push_str(&table(&rows));
    }
    let _ = writeln!(
        b,
        "<h2>Summary</h2>\n<pre>{}</pre>",
        escape(&super::text::headline(s))
    );
    for t in super::sections::tables(s, true) {
        let _ = writeln!(b, "<h2>{}</h2>", t.title);
        b.push_str(&super::write::html::fitted(
            &super::document::Table::from_text(&t.rows, t.left),
        ));
    }
    super::html_tables::steps(&mut b, s);
    let _ = writeln!(b, "<h2>Figures</h2>");
    let drawn = plot::for_run(view);
    figures(&mut b, &drawn.shown, &drawn.left_out)?;
    let _ = writeln!(
        b,
        "<h2>Options</h2>\n<p>As stored with the run (secrets redacted).</p>"
    );
    let mut meta = serde_json::to_value(&view.run.meta).unwrap_or_default();
    // A merged run's shards are the Shards table above (their records are histograms,
    // not options).
    if let Some(merged) = meta.get_mut("merged").and_then(|m| m.as_object_mut()) {
        merged.remove("shards");
    }
    b.push_str(&options_table(&meta));
    Ok(page(&format!("headroom: {}", s.target), &b))
}
