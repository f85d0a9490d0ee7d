//! The per-request table (Locust's and the seeds' form), as aligned text and as markdown.

use crate::report::document::{Cell, Table};
use crate::summary::{RequestRow, Summary, ROW_QUANTILES};
use crate::units::fmt_count;

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

/// The cell of a latency no answer measured: a dash, as the vegeta block shows it (JSON:
/// `null`), never 0 µs.
pub fn no_latency() -> Cell {
    Cell::Unmeasured
}

/// One request's cells, typed, as [`header`] names them.
pub fn typed(r: &RequestRow) -> Vec<Cell> {
    let measured = r.latency.count > 0;
    let latency = |us: f64| {
        if measured {
            Cell::Duration(us)
        } else {
            no_latency()
        }
    };
    let mut c = vec![
        Cell::Text(r.method.clone()),
        Cell::Text(name(r)),
        Cell::Count(r.count),
        Cell::Text(fails_cell(r.failures, r.count)),
        latency(r.latency.mean_us),
        latency(r.latency.min_us as f64),
        latency(r.latency.max_us as f64),
        latency(r.latency.stdev_us),
        Cell::Bytes(r.mean_bytes),
        Cell::Number {
            value: r.rps,
            decimals: 1,
        },
        Cell::Number {
            value: r.failures_per_sec,
            decimals: 2,
        },
    ];
    match r.percentiles() {
        Some(p) => c.extend(p.iter().map(|&us| Cell::Duration(us as f64))),
        None => c.extend(ROW_QUANTILES.iter().map(|_| no_latency())),
    }
    c
}

/// One request's cells in words, as [`header`] names them.
pub fn cells(r: &RequestRow) -> Vec<String> {
    typed(r).iter().map(Cell::to_text).collect()
}

/// One row per request, then the aggregated row.
pub fn table(s: &Summary) -> Table {
    Table {
        header: header(),
        rows: s
            .by_request
            .iter()
            .chain(&s.aggregated)
            .map(typed)
            .collect(),
        left: LEFT,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RequestStats;

    #[test]
    fn a_request_without_an_answer_has_dashes_and_null_not_zero_latencies() {
        let stats = RequestStats {
            count: 150,
            failures: 150,
            ..RequestStats::default()
        };
        let row = RequestRow::of("GET /", "GET", &stats, 1.5);
        assert_eq!(row.percentiles(), None);
        let json = serde_json::to_value(&row).unwrap();
        assert!(json["percentiles_us"].is_null(), "{json}");
        let cells = cells(&row);
        // Avg, Min, Max, Std dev, then every percentile.
        assert_eq!(
            cells.iter().filter(|c| *c == "—").count(),
            4 + ROW_QUANTILES.len()
        );
        assert!(!cells.iter().any(|c| c.ends_with("µs")), "{cells:?}");
        assert_eq!(cells[2], "150");
    }
}
