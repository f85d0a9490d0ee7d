//! The per-request table: one row per named request, as Locust's and the seeds' tables have.

use super::Stats;
use crate::record::{Histogram, RequestStats};
use crate::store::RequestMeta;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The percentiles a row shows, as fractions.
pub const ROW_QUANTILES: [f64; 9] = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999, 1.0];

/// One named request over the whole run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RequestRow {
    /// The request's name.
    pub name: String,
    /// Its HTTP method (empty on the aggregated row).
    #[serde(default)]
    pub method: String,
    /// True for the login each connection runs before its first request.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub login: bool,
    /// For a login, its completions sent in the warm-up, left out of the row's numbers like
    /// every warm-up request's but said beside them: connections log in when they open,
    /// mostly while the load warms up.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub warmup_logins: u64,
    /// Requests completed.
    pub count: u64,
    /// Completions without an expected answer.
    pub failures: u64,
    /// Latency (mean, min, max and the usual percentiles).
    pub latency: Stats,
    /// Service time, from the actual send.
    #[serde(default)]
    pub service: Stats,
    /// Latency at each of [`ROW_QUANTILES`], in microseconds; `None` (JSON `null`) when no
    /// request got an answer it expects: there is no latency then, not one of 0 µs.
    // Runs stored before it could be absent held zeros there; `latency.count` tells them.
    pub percentiles_us: Option<Vec<u64>>,
    /// Mean response body size in bytes.
    pub mean_bytes: f64,
    /// Completions per second of the run.
    pub rps: f64,
    /// Failures per second of the run.
    pub failures_per_sec: f64,
    /// Answers per status code (empty for runs stored before they were kept per request).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub status_codes: BTreeMap<u16, u64>,
}

impl RequestRow {
    /// Latency at each of [`ROW_QUANTILES`], µs, when any answer was measured (a run stored
    /// with zeros for none reads as none).
    pub fn percentiles(&self) -> Option<&[u64]> {
        self.percentiles_us
            .as_deref()
            .filter(|_| self.latency.count > 0)
    }

    /// The row of one request (or of all of them) over `secs` seconds.
    pub fn of(name: &str, method: &str, stats: &RequestStats, secs: f64) -> RequestRow {
        let per_sec = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        RequestRow {
            name: name.to_string(),
            method: method.to_string(),
            login: false,
            warmup_logins: 0,
            count: stats.count,
            failures: stats.failures,
            latency: Stats::of(&stats.latency),
            service: Stats::of(&stats.service),
            percentiles_us: percentiles(&stats.latency),
            mean_bytes: if stats.count > 0 {
                stats.bytes_in as f64 / stats.count as f64
            } else {
                0.0
            },
            rps: per_sec(stats.count),
            failures_per_sec: per_sec(stats.failures),
            status_codes: stats.status.clone(),
        }
    }
}

fn percentiles(h: &Histogram) -> Option<Vec<u64>> {
    (!h.is_empty()).then(|| {
        ROW_QUANTILES
            .iter()
            .map(|&q| h.inner().value_at_quantile(q))
            .collect()
    })
}

/// Says on each login row of `rows` how many of its completions the warm-up had (`all`:
/// the whole run's, warm-up included).
pub fn warmup_logins(rows: &mut [RequestRow], requests: &[RequestMeta], all: &[RequestStats]) {
    for ((row, meta), stats) in rows.iter_mut().zip(requests).zip(all) {
        if meta.login {
            row.warmup_logins = stats.count.saturating_sub(row.count);
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One row per request of the run, in plan order, and the aggregated row over all of them.
pub fn rows(
    requests: &[RequestMeta],
    stats: &[RequestStats],
    secs: f64,
) -> (Vec<RequestRow>, Option<RequestRow>) {
    let empty = RequestStats::default();
    let rows: Vec<RequestRow> = requests
        .iter()
        .enumerate()
        .map(|(i, meta)| RequestRow {
            login: meta.login,
            ..RequestRow::of(
                &meta.name,
                &meta.method,
                stats.get(i).unwrap_or(&empty),
                secs,
            )
        })
        .collect();
    if stats.is_empty() {
        return (rows, None);
    }
    let mut all = RequestStats::default();
    for s in stats {
        all.add(s);
    }
    (rows, Some(RequestRow::of("Aggregated", "", &all, secs)))
}
