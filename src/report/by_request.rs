//! The per-request table (Locust's and the seeds' form), as aligned text and as markdown.

use crate::summary::{RequestRow, Summary, ROW_QUANTILES};
use crate::units::{fmt_bytes, fmt_count, fmt_num, fmt_us, fmt_us_f};

/// Columns aligned left: the method and the name.
pub const LEFT: usize = 2;

/// The per-request columns (Locust's), without a leading column.
pub fn header() -> Vec<String> {
    let mut h: Vec<String> = [
        "Method", "Name", "# reqs", "# fails", "Avg", "Min", "Max", "Std dev", "Avg size", "RPS",
        "Fails/s",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    h.extend(ROW_QUANTILES.iter().map(|q| format!("{}%", q * 100.0)));
    h
}

/// "3 (1.50%)": failures and their share of completions.
pub fn fails_cell(failures: u64, count: u64) -> String {
    if count > 0 {
        format!(
            "{} ({:.2}%)",
            fmt_count(failures),
            100.0 * failures as f64 / count as f64
        )
    } else {
        "0".into()
    }
}

/// A request's name as rows show it: a connection's login says so, and how many more the
/// warm-up had.
pub fn name(r: &RequestRow) -> String {
    match (r.login, r.warmup_logins) {
        (true, 0) => format!("{} (login)", r.name),
        (true, n) => format!("{} (login; {} more in the warm-up)", r.name, fmt_count(n)),
        _ => r.name.clone(),
    }
}

/// One request's cells, as [`header`] names them.
pub fn cells(r: &RequestRow) -> Vec<String> {
    let mut c = vec![
        r.method.clone(),
        name(r),
        fmt_count(r.count),
        fails_cell(r.failures, r.count),
        fmt_us_f(r.latency.mean_us),
        fmt_us(r.latency.min_us),
        fmt_us(r.latency.max_us),
        fmt_us_f(r.latency.stdev_us),
        fmt_bytes(r.mean_bytes),
        fmt_num(r.rps, 1),
        fmt_num(r.failures_per_sec, 2),
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
