//! The per-request table (Locust's and the seeds' form), as aligned text and as markdown.

use super::{fmt_bytes, fmt_us, fmt_us_f};
use crate::summary::{RequestRow, Summary, ROW_QUANTILES};

fn header() -> Vec<String> {
    let mut h: Vec<String> = [
        "Name", "# reqs", "# fails", "Avg", "Min", "Max", "Avg size", "RPS", "Fails/s",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    h.extend(ROW_QUANTILES.iter().map(|q| format!("{}%", q * 100.0)));
    h
}

fn cells(r: &RequestRow) -> Vec<String> {
    let mut c = vec![
        r.name.clone(),
        r.count.to_string(),
        if r.count > 0 {
            format!(
                "{} ({:.2}%)",
                r.failures,
                100.0 * r.failures as f64 / r.count as f64
            )
        } else {
            "0".into()
        },
        fmt_us_f(r.latency.mean_us),
        fmt_us(r.latency.min_us),
        fmt_us(r.latency.max_us),
        fmt_bytes(r.mean_bytes),
        format!("{:.1}", r.rps),
        format!("{:.2}", r.failures_per_sec),
    ];
    c.extend(r.percentiles_us.iter().map(|&us| fmt_us(us)));
    c
}

fn body(s: &Summary) -> Vec<Vec<String>> {
    s.by_request
        .iter()
        .chain(&s.aggregated)
        .map(cells)
        .collect()
}

/// The table as aligned text columns.
pub fn text_table(s: &Summary) -> String {
    let rows: Vec<Vec<String>> = std::iter::once(header()).chain(body(s)).collect();
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, w))| {
                if i == 0 {
                    format!("{cell:<w$}")
                } else {
                    format!("{cell:>w$}")
                }
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// The table in GitHub markdown, ready to paste into a report.
pub fn markdown_table(s: &Summary) -> String {
    let h = header();
    let mut out = format!("| {} |\n", h.join(" | "));
    out.push_str(&format!(
        "|{}\n",
        h.iter()
            .enumerate()
            .map(|(i, _)| if i == 0 { "---|" } else { "---:|" })
            .collect::<String>()
    ));
    for r in body(s) {
        out.push_str(&format!("| {} |\n", r.join(" | ")));
    }
    out
}
