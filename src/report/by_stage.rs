//! The per-stage table of a staged run: for a sweep, one row per step with its offered
//! load, achieved throughput, latency (its p99 with the 95 % confidence interval), errors
//! and which side, if any, was the limit.

use super::text::stage_level;
use crate::summary::Summary;
use crate::units::{fmt_count, fmt_rate, fmt_secs, fmt_us, fmt_us_f};

/// The header and one row per stage; warm-ups are marked, steps never reached say so.
pub fn rows(s: &Summary) -> Vec<Vec<String>> {
    let header = [
        "stage",
        "load",
        "duration",
        "requests",
        "throughput",
        "50%",
        "95%",
        // The step's p99 is the evidence a sweep is read by: its interval says how sure.
        "99% (95% CI)",
        "max",
        "std dev",
        "errors",
        "limit",
    ];
    let watched = s.stages.iter().any(|st| st.server_cpu_percent.is_some());
    let mut head: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    if watched {
        head.insert(header.len() - 1, "server CPU".into());
    }
    let mut rows = vec![head];
    let reached = s
        .stages
        .iter()
        .rposition(|st| st.count > 0)
        .map_or(0, |i| i + 1);
    for (i, st) in s.stages.iter().enumerate() {
        let name = if st.warmup {
            format!("{} (warm-up)", st.name)
        } else {
            st.name.clone()
        };
        let mut row = vec![name, stage_level(s, st.from, st.to)];
        if i >= reached && s.stopped_early.is_some() {
            row.push("not run".into());
            row.resize(rows[0].len(), String::new());
            rows.push(row);
            continue;
        }
        row.extend([
            fmt_secs(st.duration_secs),
            fmt_count(st.count),
            fmt_rate(st.throughput),
            fmt_us(st.latency.p50_us),
            fmt_us(st.latency.p95_us),
            super::interval::us_with(st.latency.p99_us, st.latency.ci.as_ref().map(|c| &c.p99_us)),
            fmt_us(st.latency.max_us),
            fmt_us_f(st.latency.stdev_us),
            format!("{:.2}%", 100.0 * st.failure_ratio()),
        ]);
        if watched {
            let cpu = st.server_cpu_percent;
            row.push(cpu.map_or("-".into(), |c| format!("{c:.0}%")));
        }
        row.push(super::verdict::cell(&st.verdict));
        rows.push(row);
    }
    rows
}
