//! The request × stage table (× step for a sweep): each request's count, failures and
//! latency in each stage, so one run gives the rate × request table of a seed report; each
//! flow's iterations in rows of their own (method "flow").

use super::by_request::fails_cell;
use crate::summary::{FlowRow, Summary, ROW_QUANTILES};
use crate::units::{fmt_count, fmt_num, fmt_us, fmt_us_f};

/// Columns aligned left: stage, method and name.
pub const LEFT: usize = 3;

/// The header and one row per stage and request (then flow); `None` when the run has no
/// stages, one request and no flow (the stage table says it all) or kept no requests per
/// stage.
pub fn rows(s: &Summary) -> Option<Vec<Vec<String>>> {
    if (s.by_request.len() < 2 && s.flows.is_empty())
        || s.stages.iter().all(|st| st.requests.is_empty())
    {
        return None;
    }
    let mut header = vec!["Stage".to_string()];
    header.extend(super::by_request::header());
    let mut rows = vec![header];
    for st in &s.stages {
        let mut stage = super::steps::label(s, st);
        if st.warmup {
            stage.push_str(" warm-up");
        }
        for r in st.requests.iter().filter(|r| r.count > 0) {
            let mut row = vec![stage.clone()];
            row.extend(super::by_request::cells(r));
            rows.push(row);
        }
        // A flow's iterations after the requests it is made of, in the same columns.
        for f in st.flows.iter().filter(|f| f.count > 0) {
            let mut row = vec![stage.clone()];
            row.extend(flow_cells(f));
            rows.push(row);
        }
    }
    Some(rows)
}

/// A flow's iterations in the per-request columns: what an iteration has (no size, no
/// failures per second, and of the percentiles those its statistics keep).
fn flow_cells(f: &FlowRow) -> Vec<String> {
    let t = &f.took;
    let mut c = vec![
        "flow".to_string(),
        f.name.clone(),
        fmt_count(f.count),
        fails_cell(f.failures, f.count),
        fmt_us_f(t.mean_us),
        fmt_us(t.min_us),
        fmt_us(t.max_us),
        fmt_us_f(t.stdev_us),
        "-".into(),
        fmt_num(f.per_sec, 1),
        "-".into(),
    ];
    c.extend(ROW_QUANTILES.iter().map(|&q| {
        let us = match q {
            0.5 => t.p50_us,
            0.9 => t.p90_us,
            0.95 => t.p95_us,
            0.99 => t.p99_us,
            0.999 => t.p999_us,
            1.0 => t.max_us,
            _ => return "-".to_string(),
        };
        fmt_us(us)
    }));
    c
}
