//! The report of a matrix: one row per variant (its cells, then requests, achieved rate,
//! errors, latency and server CPU), and one table per request when there are several; in
//! text, markdown, JSON and HTML.

use super::table::{aligned, markdown};
use super::Format;
use crate::store::matrix::VariantState;
use crate::summary::matrix::{MatrixTable, VariantRow};
use crate::summary::Stats;
use crate::units::{fmt_count, fmt_num, fmt_us_f};
use std::fmt::Write as _;

/// Renders the matrix's table in `format`.
pub fn render(table: &MatrixTable, format: Format) -> Result<String, super::RenderError> {
    Ok(match format {
        Format::Junit => return Err(super::RenderError::Unsupported {
            what: "a matrix",
            format: "JUnit",
            hint: "render each variant's run directory: headroom report DIR/VARIANT --format junit",
        }),
        Format::Json => {
            serde_json::to_string_pretty(table).expect("a matrix table serializes") + "\n"
        }
        Format::Text => render_text(table),
        Format::Markdown => render_markdown(table),
        Format::Html => render_html(table),
    })
}

fn title(t: &MatrixTable) -> String {
    format!(
        "Matrix of {}: {} variant(s) run{}",
        t.scenario,
        t.rows.len(),
        if t.not_run > 0 {
            format!(", {} not run", t.not_run)
        } else {
            String::new()
        }
    )
}

fn notes(t: &MatrixTable) -> Vec<String> {
    let mut out: Vec<String> = t
        .rows
        .iter()
        .filter(|r| r.state != VariantState::Completed)
        .map(|r| {
            format!(
                "{} was stopped partway: its numbers cover part of its run.",
                r.run
            )
        })
        .collect();
    if t.not_run > 0 {
        out.push(format!(
            "The matrix was stopped: {} variant(s) did not run.",
            t.not_run
        ));
    }
    out
}

fn percent(ratio: f64) -> String {
    format!("{:.2}%", 100.0 * ratio)
}

/// The variant table, header first.
pub fn rows(t: &MatrixTable) -> Vec<Vec<String>> {
    let mut header: Vec<String> = t.columns.clone();
    header.extend(["requests", "req/s", "errors", "p50", "p95", "p99", "mean"].map(String::from));
    header.extend(t.cpu_columns.iter().cloned());
    let mut out = vec![header];
    for r in &t.rows {
        out.push(row(r));
    }
    out
}

/// The latency figures of `l` in order, or `-` for each when nothing succeeded (a
/// request that only failed has no latency, not one of 0µs).
fn latencies(l: &Stats, pick: &[fn(&Stats) -> f64]) -> Vec<String> {
    pick.iter()
        .map(|f| {
            if l.count == 0 {
                "-".to_string()
            } else {
                fmt_us_f(f(l))
            }
        })
        .collect()
}

/// A row's variant cells, then how many requests it sent, at what rate, how many failed.
fn counts(cells: &[String], requests: u64, rps: f64, error_rate: f64) -> Vec<String> {
    let mut out = cells.to_vec();
    out.extend([fmt_count(requests), fmt_num(rps, 2), percent(error_rate)]);
    out
}

fn row(r: &VariantRow) -> Vec<String> {
    let mut cells = counts(&r.cells, r.requests, r.rps, r.error_rate);
    cells.extend(latencies(
        &r.latency,
        &[
            |l| l.p50_us as f64,
            |l| l.p95_us as f64,
            |l| l.p99_us as f64,
            |l| l.mean_us,
        ],
    ));
    cells.extend(
        r.server_cpu
            .iter()
            .map(|c| c.map_or("-".into(), |c| format!("{c:.1}%"))),
    );
    cells
}

/// One table per request (header first), with its name.
pub fn request_rows(t: &MatrixTable) -> Vec<(String, Vec<Vec<String>>)> {
    t.by_request
        .iter()
        .map(|table| {
            let mut header = t.columns.clone();
            header.extend(
                [
                    "requests", "req/s", "errors", "min", "median", "p95", "p99", "max", "mean",
                    "std dev",
                ]
                .map(String::from),
            );
            let mut rows = vec![header];
            for r in &table.rows {
                let mut cells = counts(&r.cells, r.requests, r.rps, r.error_rate);
                cells.extend(latencies(
                    &r.latency,
                    &[
                        |l| l.min_us as f64,
                        |l| l.p50_us as f64,
                        |l| l.p95_us as f64,
                        |l| l.p99_us as f64,
                        |l| l.max_us as f64,
                        |l| l.mean_us,
                        |l| l.stdev_us,
                    ],
                ));
                rows.push(cells);
            }
            (table.request.clone(), rows)
        })
        .collect()
}

fn render_text(t: &MatrixTable) -> String {
    let mut out = format!("{}\n\n", title(t));
    out.push_str(&aligned(&rows(t)));
    for (name, rows) in request_rows(t) {
        let _ = write!(out, "\nRequest {name}\n{}", aligned(&rows));
    }
    for n in notes(t) {
        let _ = write!(out, "\n{n}");
    }
    if !notes(t).is_empty() {
        out.push('\n');
    }
    out
}

fn render_markdown(t: &MatrixTable) -> String {
    let mut out = format!("## {}\n\n", title(t));
    out.push_str(&markdown(&rows(t)));
    for (name, rows) in request_rows(t) {
        let _ = write!(out, "\n### Request {name}\n\n{}", markdown(&rows));
    }
    for n in notes(t) {
        let _ = write!(out, "\n> {n}\n");
    }
    out
}

fn render_html(t: &MatrixTable) -> String {
    use super::html::escape;
    let keys = t.columns.len();
    let mut b = format!("<h1>{}</h1>\n", escape(&title(t)));
    for n in notes(t) {
        let _ = writeln!(b, "<p class=\"note\">{}</p>", escape(&n));
    }
    b.push_str("<h2>Variants</h2>\n");
    b.push_str(&super::write::html::fitted(
        &super::document::Table::from_text(&rows(t), keys),
    ));
    for (name, rows) in request_rows(t) {
        let _ = writeln!(b, "<h2>Request {}</h2>", escape(&name));
        b.push_str(&super::write::html::fitted(
            &super::document::Table::from_text(&rows, keys),
        ));
    }
    super::html::page(&format!("headroom matrix: {}", t.scenario), &b)
}
