//! The per-request table (Locust's and the seeds' form), as aligned text and as markdown.

use crate::summary::{RequestRow, Summary, ROW_QUANTILES};
use crate::units::{fmt_bytes, fmt_us, fmt_us_f};

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

/// The header and one row per request, then the aggregated row.
pub fn rows(s: &Summary) -> Vec<Vec<String>> {
    std::iter::once(header()).chain(body(s)).collect()
}
