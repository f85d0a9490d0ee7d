//! Self-contained HTML reports: one file with its styles and its figures inline (SVG), so
//! it opens anywhere without network access.

use super::plot::{self, Figure, PlotError, RunView};
use crate::capacity::study::CapacityRecord;
use std::fmt::Write as _;

const STYLE: &str = "
body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em}
.sub{color:#666;margin-top:0}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}
th,td{border:1px solid #ddd;padding:.25em .6em;text-align:right;white-space:nowrap}
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}
pre{background:#f8f8f8;border:1px solid #eee;padding:.8em;overflow-x:auto;font-size:.85em}
.met{color:#1a7f37;font-weight:bold}.broken{color:#cf222e;font-weight:bold}
.note{background:#fff8c5;border:1px solid #e6d48a;padding:.5em .8em}
figure{margin:1em 0}figure svg{max-width:100%;height:auto;border:1px solid #eee}
figcaption{color:#666;font-size:.85em}
";

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

/// A whole page: `body` with the shared styles.
pub(super) fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"generator\" content=\"headroom {}\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        env!("CARGO_PKG_VERSION"),
        escape(title)
    )
}

fn figures(out: &mut String, figures: &[Figure]) -> Result<(), PlotError> {
    for f in figures.iter().filter(|f| !f.is_empty()) {
        let svg = f.svg()?;
        let _ = writeln!(
            out,
            "<figure id=\"{}\">{svg}<figcaption>{}</figcaption></figure>",
            escape(&f.name),
            escape(&f.title)
        );
    }
    Ok(())
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
    for note in [&s.partial, &s.stopped_early].into_iter().flatten() {
        let _ = writeln!(b, "<p class=\"note\">{}</p>", escape(note));
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
                v.measured.clone(),
                if v.met { "met" } else { "not met" }.into(),
            ]
        }));
        b.push_str(&table(&rows));
    }
    let _ = writeln!(
        b,
        "<h2>Summary</h2>\n<pre>{}</pre>",
        escape(&super::render_text(s))
    );
    if !s.by_request.is_empty() {
        let _ = writeln!(b, "<h2>Requests</h2>");
        b.push_str(&table(&super::by_request::rows(s)));
    }
    super::html_tables::breakdowns(&mut b, s);
    if !s.stages.is_empty() {
        let _ = writeln!(b, "<h2>Stages</h2>");
        b.push_str(&table(&super::by_stage::rows(s)));
    }
    super::html_tables::stage_breakdowns(&mut b, s);
    let _ = writeln!(b, "<h2>Figures</h2>");
    figures(&mut b, &plot::for_run(view))?;
    let _ = writeln!(
        b,
        "<h2>Options</h2>\n<p>As stored with the run (secrets redacted).</p>\n<pre>{}</pre>",
        escape(&serde_json::to_string_pretty(&view.run.meta).unwrap_or_default())
    );
    Ok(page(&format!("headroom: {}", s.target), &b))
}

/// The report of a capacity search: the answer, the probes and their figures.
pub fn capacity_page(record: &CapacityRecord) -> Result<String, PlotError> {
    let mut b = String::new();
    let _ = writeln!(b, "<h1>Capacity of {}</h1>", escape(&record.target));
    let _ = writeln!(
        b,
        "<p class=\"sub\">against <code>{}</code> · each probe {}s of warm-up, then a {}s window</p>",
        escape(&record.objectives.join(", ")),
        record.warmup_secs,
        record.window_secs
    );
    for line in super::capacity::answer(record) {
        let _ = writeln!(b, "<p><strong>{}</strong></p>", escape(&line));
    }
    let _ = writeln!(b, "<h2>Probes</h2>");
    b.push_str(&table(&super::capacity::rows(record)));
    let _ = writeln!(b, "<h2>Figures</h2>");
    figures(&mut b, &plot::for_capacity(record))?;
    let _ = writeln!(
        b,
        "<h2>Command</h2>\n<pre>{}</pre>",
        escape(&record.command.join(" "))
    );
    Ok(page(&format!("headroom capacity: {}", record.target), &b))
}

/// Runs side by side: the comparison table and the overlaid figures.
pub fn compare_page(views: &[RunView<'_>], rows: &[Vec<String>]) -> Result<String, PlotError> {
    let mut b = String::new();
    let names: Vec<&str> = views.iter().map(|v| v.label.as_str()).collect();
    let _ = writeln!(b, "<h1>Comparison: {}</h1>", escape(&names.join(" vs ")));
    b.push_str(&table(rows));
    for (title, rows) in super::compare_breakdown::tables(views) {
        let _ = writeln!(b, "<h2>{}</h2>", escape(title));
        b.push_str(&table(&rows));
    }
    let _ = writeln!(b, "<h2>Figures</h2>");
    figures(&mut b, &plot::for_comparison(views))?;
    let _ = writeln!(b, "<h2>Runs</h2>");
    for v in views {
        let _ = writeln!(
            b,
            "<h3>{}</h3>\n<pre>{}</pre>",
            escape(&v.label),
            escape(&super::render_text(v.summary))
        );
    }
    Ok(page(
        &format!("headroom compare: {}", names.join(" vs ")),
        &b,
    ))
}
