//! The per-stage table of a staged run: for a sweep, one row per step with its offered
//! load, achieved throughput, latency (its p99 with the 95 % confidence interval), errors
//! and which side, if any, was the limit.

use crate::report::build::words::stage_level;
use crate::report::document::{Cell, Table};
use crate::summary::Summary;

/// One row per stage; warm-ups are marked, steps never reached say so.
pub fn table(s: &Summary) -> Table {
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
    let width = head.len();
    let mut rows: Vec<Vec<Cell>> = Vec::new();
    for st in &s.stages {
        let name = if st.warmup {
            format!("{} (warm-up)", st.name)
        } else {
            st.name.clone()
        };
        let mut row = vec![Cell::Text(name), Cell::Text(stage_level(s, st.from, st.to))];
        if st.not_run {
            row.push("not run".into());
            row.resize(width, Cell::text(""));
            rows.push(row);
            continue;
        }
        // A step whose requests all failed has no latency: a dash, not 0 µs.
        let measured = st.latency.count > 0;
        let us = |v: f64| {
            if measured {
                Cell::Duration(v)
            } else {
                super::by_request::no_latency()
            }
        };
        let p99 = if measured {
            super::with_interval(st.latency.p99_us, st.latency.ci.as_ref().map(|c| &c.p99_us))
        } else {
            super::by_request::no_latency()
        };
        row.extend([
            Cell::Duration(st.duration_secs * 1e6),
            Cell::Count(st.count),
            Cell::Rate(st.throughput),
            us(st.latency.p50_us as f64),
            us(st.latency.p95_us as f64),
            p99,
            us(st.latency.max_us as f64),
            us(st.latency.stdev_us),
            Cell::Percent(100.0 * st.failure_ratio()),
        ]);
        if watched {
            let cpu = st.server_cpu_percent;
            row.push(cpu.map_or(Cell::Text("-".into()), |c| Cell::Text(format!("{c:.0}%"))));
        }
        row.push(Cell::Text(crate::report::build::verdict::cell(&st.verdict)));
        rows.push(row);
    }
    Table {
        header: head,
        rows,
        left: 1,
    }
}
