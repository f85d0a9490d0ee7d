//! The request × stage table (× step for a sweep): each request's count, failures and
//! latency in each stage, so one run gives the rate × request table of a seed report.

use super::by_request::fails_cell;
use super::text::stage_level;
use crate::summary::Summary;
use crate::units::{fmt_count, fmt_num, fmt_us, fmt_us_f};

/// Columns aligned left: stage, method and name.
pub const LEFT: usize = 3;

/// The header and one row per stage and request; `None` when the run has no stages, one
/// request only (the stage table says it all) or kept no requests per stage.
pub fn rows(s: &Summary) -> Option<Vec<Vec<String>>> {
    if s.by_request.len() < 2 || s.stages.iter().all(|st| st.requests.is_empty()) {
        return None;
    }
    let header = [
        "Stage", "Method", "Name", "# reqs", "# fails", "Avg", "Min", "50%", "95%", "99%", "Max",
        "Std dev", "RPS",
    ];
    let mut rows = vec![header.iter().map(|h| h.to_string()).collect::<Vec<_>>()];
    for st in &s.stages {
        let mut stage = format!("{} ({})", st.name, stage_level(s, st.from, st.to));
        if st.warmup {
            stage.push_str(" warm-up");
        }
        for r in st.requests.iter().filter(|r| r.count > 0) {
            let l = &r.latency;
            rows.push(vec![
                stage.clone(),
                r.method.clone(),
                r.name.clone(),
                fmt_count(r.count),
                fails_cell(r.failures, r.count),
                fmt_us_f(l.mean_us),
                fmt_us(l.min_us),
                fmt_us(l.p50_us),
                fmt_us(l.p95_us),
                fmt_us(l.p99_us),
                fmt_us(l.max_us),
                fmt_us_f(l.stdev_us),
                fmt_num(r.rps, 1),
            ]);
        }
    }
    Some(rows)
}
