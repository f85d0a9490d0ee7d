//! The request × stage table (× step for a sweep): each request's count, failures and
//! latency in each stage, so one run gives the rate × request table of a seed report; each
//! flow's iterations in rows of their own (method "flow").

use super::by_request::{fails_cell, name};
use crate::summary::Summary;
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
    let header = [
        "Stage", "Method", "Name", "# reqs", "# fails", "Avg", "Min", "50%", "95%", "99%", "Max",
        "Std dev", "RPS",
    ];
    let mut rows = vec![header.iter().map(|h| h.to_string()).collect::<Vec<_>>()];
    for st in &s.stages {
        let mut stage = super::steps::label(s, st);
        if st.warmup {
            stage.push_str(" warm-up");
        }
        let mut flows = Vec::new();
        for f in st.flows.iter().filter(|f| f.count > 0) {
            let t = &f.took;
            flows.push(vec![
                stage.clone(),
                "flow".into(),
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
                fmt_num(f.per_sec, 1),
            ]);
        }
        for r in st.requests.iter().filter(|r| r.count > 0) {
            let l = &r.latency;
            rows.push(vec![
                stage.clone(),
                r.method.clone(),
                name(r),
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
        // A flow's iterations after the requests it is made of.
        rows.append(&mut flows);
    }
    Some(rows)
}
