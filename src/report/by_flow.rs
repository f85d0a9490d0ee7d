//! The Flows table: each flow's iterations, failures and iteration times, in rows of their
//! own beside the requests' (a flow's time is its steps' and its think times together).

use super::by_request::fails_cell;
use crate::summary::FlowRow;
use crate::units::{fmt_count, fmt_num, fmt_us, fmt_us_f};

/// The header of the Flows table.
pub fn header() -> Vec<String> {
    [
        "Flow",
        "# iterations",
        "# fails",
        "Avg",
        "Min",
        "50%",
        "95%",
        "99%",
        "Max",
        "Std dev",
        "per sec",
    ]
    .iter()
    .map(|h| h.to_string())
    .collect()
}

/// One flow's cells, as [`header`] names them.
pub fn cells(f: &FlowRow) -> Vec<String> {
    let t = &f.took;
    vec![
        f.name.clone(),
        fmt_count(f.count),
        fails_cell(f.failures, f.count),
        fmt_us_f(t.mean_us),
        fmt_us(t.min_us),
        fmt_us(t.p50_us),
        fmt_us(t.p95_us),
        fmt_us(t.p99_us),
        fmt_us(t.max_us),
        fmt_us_f(t.stdev_us),
        fmt_num(f.per_sec, 2),
    ]
}

/// The header and one row per flow.
pub fn rows(flows: &[FlowRow]) -> Vec<Vec<String>> {
    std::iter::once(header())
        .chain(flows.iter().map(cells))
        .collect()
}
