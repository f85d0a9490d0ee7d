//! The document as one self-contained HTML page: its styles, its figures' data and the chart
//! library that draws them (uPlot, MIT, vendored in assets/uplot) inline, so it opens
//! anywhere without network access. The answer fills the first screen, the figures follow,
//! then the tables (long ones collapsed behind their heading, open when printed); tables are
//! plain HTML, so they read without JavaScript.

mod fit;

pub use fit::fitted;

use crate::report::document::{
    Answer, Block, Cell, Document, FieldLine, Figures, Section, Table, Tone,
};
use crate::report::plot::{self, PlotError};
use std::fmt::Write as _;

/// More body rows than this and a table is collapsed behind its heading.
pub const LONG: usize = 15;

// Small multiples (a comparison's figures by step, `compare-step-*`) stand two to a row, so
// the runs' trends over the steps read side by side.
// Widths: the body never passes 1240 px, so with margins and a scroll bar the page fits a
// 1280-pixel window; a table wider than that scrolls inside itself, never the page.
// Print: landscape, tables at 7 pt. A table fitted to the screen's 1200 px of 12 px type
// prints about 930 px wide, inside a landscape Letter or A4 page (980 px or more within
// 10 mm margins); on a portrait page (740 px) Chromium would shrink everything below
// legible, or cut the last columns. The charts' canvases keep their screen width: zoomed.
// Preformatted lines (a command line) wrap rather than scroll: all of it is read, on
// screen and on paper.
const STYLE: &str = "
*{box-sizing:border-box}
body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;margin:1em auto;max-width:1240px;color:#222;padding:0 12px}
h1{font-size:1.4em;margin:.2em 0;overflow-wrap:anywhere}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd;padding-bottom:.2em}
h3{font-size:1em;margin:1.2em 0 .3em}
.sub{color:#555;margin:0 0 .6em}
table{border-collapse:collapse;margin:.5em 0;font-size:.75em;display:block;max-width:100%;overflow-x:auto;font-variant-numeric:tabular-nums}
th,td{border:1px solid #ddd;padding:.2em .35em;text-align:right;white-space:nowrap}
th{background:#f4f4f4;white-space:normal}th.name,td.name{text-align:left}
td.words{text-align:left;white-space:normal;overflow-wrap:anywhere;min-width:12em}
pre{background:#f8f8f8;border:1px solid #eee;padding:.8em;font-size:.8em;max-width:100%;white-space:pre-wrap;overflow-wrap:anywhere}
.good{color:#1a7f37;font-weight:bold}.bad{color:#cf222e;font-weight:bold}.unsure{color:#9a6700;font-weight:bold}
.note{background:#fff8c5;border:1px solid #e6d48a;padding:.4em .8em;margin:.4em 0}
.answer{border:1px solid #ddd;border-left-width:6px;padding:.5em 1em;margin:.6em 0}
.answer.tone-good{border-left-color:#1a7f37}.answer.tone-bad{border-left-color:#cf222e}.answer.tone-unsure{border-left-color:#9a6700}
.verdict{font-size:1.1em;margin:.3em 0}.evidence{margin:.2em 0 .4em;padding-left:1.4em;font-size:.95em}
.answer table{margin:.3em 0}.answer .note{margin:.3em 0;padding:.2em .6em;font-size:.9em}
.numbers{display:flex;flex-wrap:wrap;gap:.4em 1.6em;margin:.5em 0}.numbers div{min-width:7em}
.numbers dt{color:#555;font-size:.8em}.numbers dd{margin:0;font-size:1.25em;font-variant-numeric:tabular-nums}
.toc{font-size:.85em;margin:.6em 0}.toc ol{display:flex;gap:1.2em;list-style:none;padding:0;margin:0;white-space:nowrap;overflow-x:auto}
figure{margin:1em 0}figcaption{color:#666;font-size:.85em}
figure[id^=compare-step-]{display:inline-block;width:calc(50% - .5em);margin:.5em .5em .5em 0;vertical-align:top}
.chart{width:100%;min-height:380px}.readout{font-size:.8em;color:#333;min-height:1.3em;padding:.2em 0}
.uplot .u-title{font-size:1em;font-weight:normal}.uplot .u-legend{font-size:.8em;display:block}.uplot table{display:table;font-size:1em}
.uplot th,.uplot td{border:0;background:none;padding:0 .3em}
.hint{color:#666;font-size:.85em}
.own-x .u-legend .u-value{display:none}
details>summary{cursor:pointer;color:#0550ae;font-size:.85em;margin:.3em 0}
@page{size:landscape;margin:10mm}
@media print{
body{max-width:none;margin:0;padding:0;font-size:10pt}
.toc,.hint,details>summary{display:none}
details::details-content{content-visibility:visible;display:contents}
table{display:table;overflow:visible;font-size:7pt}tr,figure,.answer{break-inside:avoid}
.chart{zoom:.78;min-height:0}
h2,h3{break-after:avoid}
}
";

/// uPlot, inlined: the page must draw its charts offline.
const UPLOT_JS: &str = include_str!("../../../../assets/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../../../../assets/uplot/uPlot.min.css");
/// headroom's glue from the figures' data to uPlot charts.
const FIGURES_JS: &str = include_str!("../../../../assets/figures.js");
/// Opens every collapsed table before printing, for browsers without `::details-content`.
const PRINT_JS: &str = "addEventListener('beforeprint',()=>document.querySelectorAll('details').forEach(d=>d.open=true));";

/// The whole document as a page.
pub fn write(doc: &Document) -> Result<String, PlotError> {
    let mut b = String::new();
    let _ = writeln!(b, "<header>\n<h1>{}</h1>", escape(&doc.title));
    if !doc.what_ran.is_empty() {
        let _ = writeln!(
            b,
            "<p class=\"sub\">{}</p>",
            escape(&doc.what_ran.join(" · "))
        );
    }
    b.push_str("</header>\n");
    answer(&mut b, &doc.answer);
    toc(&mut b, doc);
    if !doc.figures.shown.is_empty() || !doc.figures.left_out.is_empty() {
        b.push_str("<section id=\"figures\">\n<h2>Figures</h2>\n");
        figures(&mut b, &doc.figures)?;
        b.push_str("</section>\n");
    }
    for s in &doc.sections {
        section(&mut b, s, 2);
    }
    Ok(page(&doc.title, &b))
}

/// The answer box alone: the live page swaps it in each second.
pub fn answer_box(doc: &Document) -> String {
    let mut b = String::new();
    answer(&mut b, &doc.answer);
    b
}

/// The document's sections alone, without its figures (the live page draws those itself).
pub fn sections(doc: &Document) -> String {
    let mut b = String::new();
    for s in &doc.sections {
        section(&mut b, s, 2);
    }
    b
}

/// The answer box: the verdict, the objectives, the headline numbers, the notes.
fn answer(b: &mut String, a: &Answer) {
    let tone = a.verdict.as_ref().map(|v| v.tone).or_else(|| {
        (!a.objectives.is_empty()).then(|| {
            if a.objectives.iter().all(|o| o.met) {
                Tone::Good
            } else {
                Tone::Bad
            }
        })
    });
    let class = tone.map_or(String::new(), |t| format!(" tone-{}", tone_class(t)));
    let _ = writeln!(
        b,
        "<section class=\"answer{class}\" id=\"answer\" aria-label=\"Answer\">"
    );
    if let Some(v) = &a.verdict {
        // A mark as well as a colour: the tone reads in grey print and to colour-blind eyes.
        let _ = writeln!(
            b,
            "<p class=\"verdict\"><span class=\"{}\">{}</span> <strong>{}</strong></p>",
            tone_class(v.tone),
            mark(v.tone),
            escape(&v.sentence)
        );
        if !v.evidence.is_empty() {
            b.push_str("<ul class=\"evidence\">\n");
            for e in &v.evidence {
                let _ = writeln!(b, "<li>{}</li>", escape(e));
            }
            b.push_str("</ul>\n");
        }
    }
    if !a.objectives.is_empty() {
        let mut t = Table::new(&["objective", "measured", "verdict"], 1);
        for o in &a.objectives {
            let (tone, word) = if o.met {
                (Tone::Good, "✔ met")
            } else {
                (Tone::Bad, "✘ not met")
            };
            t.rows.push(vec![
                Cell::text(o.text.clone()),
                o.measured.clone(),
                Cell::Status(tone, word.into()),
            ]);
        }
        b.push_str(&table(&t));
    }
    if !a.numbers.is_empty() {
        b.push_str("<dl class=\"numbers\">\n");
        for f in &a.numbers {
            let _ = writeln!(
                b,
                "<div><dt>{}</dt><dd>{}</dd></div>",
                escape(&f.label),
                escape(&f.value.to_text())
            );
        }
        b.push_str("</dl>\n");
    }
    for n in &a.notes {
        let _ = writeln!(b, "<p class=\"note\">{}</p>", escape(n));
    }
    b.push_str("</section>\n");
}

/// A table of contents: the figures and every titled section.
fn toc(b: &mut String, doc: &Document) {
    let mut entries: Vec<(&str, &str)> = Vec::new();
    if !doc.figures.shown.is_empty() {
        entries.push(("figures", "Figures"));
    }
    entries.extend(
        doc.sections
            .iter()
            .filter(|s| !s.title.is_empty())
            .map(|s| (s.id.as_str(), s.title.as_str())),
    );
    if entries.len() < 2 {
        return;
    }
    b.push_str("<nav class=\"toc\" aria-label=\"Contents\"><ol>\n");
    for (id, title) in entries {
        let _ = writeln!(
            b,
            "<li><a href=\"#{}\">{}</a></li>",
            escape(id),
            escape(title)
        );
    }
    b.push_str("</ol></nav>\n");
}

fn section(b: &mut String, s: &Section, level: usize) {
    let level = level.min(6);
    if s.id.is_empty() {
        b.push_str("<section>\n");
    } else {
        let _ = writeln!(b, "<section id=\"{}\">", escape(&s.id));
    }
    if !s.title.is_empty() {
        let _ = writeln!(b, "<h{level}>{}</h{level}>", escape(&s.title));
    }
    for block in &s.blocks {
        match block {
            Block::Paragraph(p) => {
                let _ = writeln!(b, "<p>{}</p>", escape(p));
            }
            Block::Note(p) => {
                let _ = writeln!(b, "<p class=\"note\">{}</p>", escape(p));
            }
            Block::Table(t) => collapsible(b, t),
            Block::Fields(lines) => collapsible(b, &fields(lines)),
            Block::Preformatted(text) => {
                let _ = writeln!(b, "<pre>{}</pre>", escape(text));
            }
            Block::Sub(sub) => section(b, sub, level + 1),
        }
    }
    b.push_str("</section>\n");
}

/// A table, behind a "show" line when longer than a screen.
fn collapsible(b: &mut String, t: &Table) {
    if t.rows.len() > LONG {
        let _ = writeln!(
            b,
            "<details><summary>Show all {} rows</summary>\n{}</details>",
            t.rows.len(),
            fitted(t)
        );
    } else {
        b.push_str(&fitted(t));
    }
}

/// vegeta's lines as a table: label, fields, values.
fn fields(lines: &[FieldLine]) -> Table {
    // The values are data: a long one (a Poisson check, a target) wraps as words.
    let mut t = Table::new(&["", "fields", "values"], 2);
    t.rows = lines
        .iter()
        .map(|l| {
            vec![
                Cell::text(l.label.clone()),
                Cell::text(l.fields.clone()),
                l.values.clone(),
            ]
        })
        .collect();
    t
}

fn tone_class(t: Tone) -> &'static str {
    match t {
        Tone::Good => "good",
        Tone::Bad => "bad",
        Tone::Unsure => "unsure",
    }
}

fn mark(t: Tone) -> &'static str {
    match t {
        Tone::Good => "✔",
        Tone::Bad => "✘",
        Tone::Unsure => "?",
    }
}

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

/// `t` as one HTML table: names aligned left, outcomes marked by their tone.
pub fn table(t: &Table) -> String {
    // A head of its own: a table broken across printed pages repeats it on each.
    let mut out = String::from("<table>\n<thead><tr>");
    for (i, h) in t.header.iter().enumerate() {
        let class = if i < t.left { " class=\"name\"" } else { "" };
        let _ = write!(out, "<th scope=\"col\"{class}>{}</th>", escape(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for r in &t.rows {
        out.push_str("<tr>");
        for (i, cell) in r.iter().enumerate() {
            // A name column aligns left whatever its cells hold (vegeta's values line is
            // sometimes a typed cell, sometimes words).
            let class = match (cell.tone(), cell) {
                (Some(tone), _) => format!(" class=\"{}\"", tone_class(tone)),
                _ if i < t.left => " class=\"name\"".into(),
                (None, Cell::Text(s)) if s.chars().count() > 40 => " class=\"words\"".into(),
                _ => String::new(),
            };
            let _ = write!(out, "<td{class}>{}</td>", escape(&cell.to_text()));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
    out
}

/// A whole page: `body` with the shared styles (and the chart library when it has charts).
pub fn page(title: &str, body: &str) -> String {
    let charts = if body.contains("id=\"headroom-figures\"") {
        // uPlot's licence (MIT) asks for its notice in every copy.
        format!("<!-- uPlot 1.6.32, Copyright (c) 2022 Leon Sorokin, MIT License -->\n<style>{UPLOT_CSS}</style>\n<script>{UPLOT_JS}</script>\n")
    } else {
        String::new()
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"headroom {}\">\n<title>{}</title>\n{charts}<style>{STYLE}</style>\n<script>{PRINT_JS}</script>\n</head>\n<body>\n{body}</body>\n</html>\n",
        env!("CARGO_PKG_VERSION"),
        escape(title)
    )
}

/// The figures as interactive charts: a note for each left out, a place for each drawn,
/// then their data and the script that draws them.
pub fn figures(out: &mut String, figures: &Figures) -> Result<(), PlotError> {
    for note in &figures.left_out {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(note));
    }
    let shown: Vec<_> = figures.shown.iter().filter(|f| !f.is_empty()).collect();
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
            "<figure id=\"{0}\" aria-label=\"{1}\"><div class=\"chart\" id=\"chart-{0}\"></div><noscript><figcaption>{1}: drawn by JavaScript; <code>headroom report --plots DIR</code> writes it as SVG and PNG.</figcaption></noscript></figure>",
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::document::{Fact, Objective, Verdict};

    fn document(rows: usize) -> Document {
        let mut t = Table::new(&["second", "p99"], 1);
        t.rows = (0..rows)
            .map(|s| vec![Cell::Count(s as u64), Cell::Duration(1000.0)])
            .collect();
        Document {
            title: "GET <a>".into(),
            answer: Answer {
                verdict: Some(Verdict {
                    tone: Tone::Bad,
                    sentence: "The server was the limit.".into(),
                    evidence: vec!["Its latency rose.".into()],
                }),
                objectives: vec![Objective {
                    text: "p99 < 1ms".into(),
                    measured: Cell::Duration(1500.0),
                    met: false,
                }],
                numbers: vec![Fact {
                    label: "p99".into(),
                    value: Cell::Duration(1500.0),
                }],
                notes: Vec::new(),
            },
            sections: vec![
                Section::table("per-second", "Per second", t),
                Section::new("command", "Command", vec![Block::Preformatted("x".into())]),
            ],
            ..Document::default()
        }
    }

    #[test]
    fn the_answer_comes_first_then_the_contents_then_the_sections() {
        let page = write(&document(3)).unwrap();
        let at = |s: &str| page.find(s).unwrap_or_else(|| panic!("no {s} in {page}"));
        assert!(at("class=\"answer tone-bad\"") < at("class=\"verdict\""));
        assert!(at("class=\"verdict\"") < at("class=\"numbers\""));
        assert!(at("class=\"numbers\"") < at("class=\"toc\""));
        assert!(at("class=\"toc\"") < at("<h2>Per second</h2>"));
        assert!(at("href=\"#per-second\"") < at("href=\"#command\""));
        // The mark reads without colour; the title is escaped.
        assert!(page.contains("<span class=\"bad\">✘</span>"));
        assert!(page.contains("<h1>GET &lt;a&gt;</h1>"));
    }

    #[test]
    fn only_long_tables_are_collapsed_and_print_opens_them() {
        let short = write(&document(LONG)).unwrap();
        assert!(!short.contains("<details>"));
        let long = write(&document(LONG + 1)).unwrap();
        assert_eq!(long.matches("<details>").count(), 1);
        assert!(long.contains(&format!("<summary>Show all {} rows</summary>", LONG + 1)));
        // Opened for print by the stylesheet alone, and by a script where that is unknown.
        assert!(long.contains("details::details-content{content-visibility:visible"));
        assert!(long.contains("addEventListener('beforeprint'"));
        // Every row is in the page, head and all: collapsing hides, never drops.
        let inside = &long[long.find("<details>").unwrap()..long.find("</details>").unwrap()];
        assert_eq!(inside.matches("<tr>").count(), LONG + 2);
    }

    #[test]
    fn a_table_has_a_head_that_repeats_on_each_printed_page() {
        let t = table(&Table::from_text(
            &[
                vec!["name".into(), "n".into()],
                vec!["a".into(), "1".into()],
            ],
            1,
        ));
        assert!(t.starts_with(
            "<table>\n<thead><tr><th scope=\"col\" class=\"name\">name</th><th scope=\"col\">n</th></tr></thead>\n<tbody>"
        ));
        assert!(t.ends_with("</tbody>\n</table>\n"));
    }
}
