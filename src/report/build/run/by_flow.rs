//! The Flows table: each flow's iterations, failures and iteration times, in rows of their
//! own beside the requests' (a flow's time is its steps' and its think times together).

use super::by_request::fails_cell;
use crate::report::document::{Cell, Table};
use crate::summary::FlowRow;

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

/// One flow's cells, typed, as [`header`] names them.
pub fn typed(f: &FlowRow) -> Vec<Cell> {
    let t = &f.took;
    let us = |v: u64| Cell::Duration(v as f64);
    vec![
        Cell::Text(f.name.clone()),
        Cell::Count(f.count),
        Cell::Text(fails_cell(f.failures, f.count)),
        Cell::Duration(t.mean_us),
        us(t.min_us),
        us(t.p50_us),
        us(t.p95_us),
        us(t.p99_us),
        us(t.max_us),
        Cell::Duration(t.stdev_us),
        Cell::Number {
            value: f.per_sec,
            decimals: 2,
        },
    ]
}

/// One flow's cells in words, as [`header`] names them.
pub fn cells(f: &FlowRow) -> Vec<String> {
    typed(f).iter().map(Cell::to_text).collect()
}

/// One row per flow.
pub fn table(flows: &[FlowRow]) -> Table {
    Table {
        header: header(),
        rows: flows.iter().map(typed).collect(),
        left: 1,
    }
}
