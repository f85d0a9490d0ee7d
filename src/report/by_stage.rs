//! The per-stage table of a staged run.

use super::text::stage_level;
use super::{fmt_secs, fmt_us};
use crate::summary::Summary;

/// The header and one row per stage (warm-up stages marked).
pub fn rows(s: &Summary) -> Vec<Vec<String>> {
    let header = [
        "stage", "load", "duration", "requests", "RPS", "50%", "99%", "fails",
    ];
    let mut rows = vec![header.iter().map(|h| h.to_string()).collect()];
    for st in &s.stages {
        rows.push(vec![
            if st.warmup {
                format!("{} (warm-up)", st.name)
            } else {
                st.name.clone()
            },
            stage_level(s, st.from, st.to),
            fmt_secs(st.duration_secs),
            st.count.to_string(),
            format!("{:.1}", st.rps),
            fmt_us(st.latency.p50_us),
            fmt_us(st.latency.p99_us),
            st.failures.to_string(),
        ]);
    }
    rows
}
