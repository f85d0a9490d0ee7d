//! The request × stage table (× step for a sweep): each request's count, failures and
//! latency in each stage, so one run gives the rate × request table of a seed report; each
//! flow's iterations in rows of their own (method "flow").

use super::by_request::fails_cell;
use crate::report::document::{Cell, Table};
use crate::summary::{FlowRow, Summary, ROW_QUANTILES};

/// Columns aligned left: stage, method and name.
pub const LEFT: usize = 3;

/// One row per stage and request (then flow); `None` when the run has no stages, one
/// request and no flow (the stage table says it all) or kept no requests per stage.
pub fn table(s: &Summary) -> Option<Table> {
    if (s.by_request.len() < 2 && s.flows.is_empty())
        || s.stages.iter().all(|st| st.requests.is_empty())
    {
        return None;
    }
    let mut header = vec!["Stage".to_string()];
    header.extend(super::by_request::header());
    let mut rows: Vec<Vec<Cell>> = Vec::new();
    for st in &s.stages {
        let mut stage = super::steps::label(s, st);
        if st.warmup {
            stage.push_str(" warm-up");
        }
        for r in st.requests.iter().filter(|r| r.count > 0) {
            let mut row = vec![Cell::Text(stage.clone())];
            row.extend(super::by_request::typed(r));
            rows.push(row);
        }
        // A flow's iterations after the requests it is made of, in the same columns.
        for f in st.flows.iter().filter(|f| f.count > 0) {
            let mut row = vec![Cell::Text(stage.clone())];
            row.extend(flow_cells(f));
            rows.push(row);
        }
    }
    Some(Table {
        header,
        rows,
        left: LEFT,
    })
}

/// A flow's iterations in the per-request columns: what an iteration has (no size, no
/// failures per second, and of the percentiles those its statistics keep).
fn flow_cells(f: &FlowRow) -> Vec<Cell> {
    let t = &f.took;
    let us = |v: u64| Cell::Duration(v as f64);
    let mut c = vec![
        Cell::text("flow"),
        Cell::Text(f.name.clone()),
        Cell::Count(f.count),
        Cell::Text(fails_cell(f.failures, f.count)),
        Cell::Duration(t.mean_us),
        us(t.min_us),
        us(t.max_us),
        Cell::Duration(t.stdev_us),
        Cell::Empty,
        Cell::Number {
            value: f.per_sec,
            decimals: 1,
        },
        Cell::Empty,
    ];
    c.extend(ROW_QUANTILES.iter().map(|&q| match q {
        0.5 => us(t.p50_us),
        0.9 => us(t.p90_us),
        0.95 => us(t.p95_us),
        0.99 => us(t.p99_us),
        0.999 => us(t.p999_us),
        1.0 => us(t.max_us),
        _ => Cell::Empty,
    }));
    c
}
