//! One row per stage of a staged load, read from the intervals that began in it.

use super::Stats;
use crate::plan::Stage;
use crate::record::IntervalRecord;
use crate::store::IntervalDigest;
use serde::{Deserialize, Serialize};

/// One stage over the run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StageRow {
    /// The stage's name.
    pub name: String,
    /// Load at its start and end (req/s or users).
    pub from: f64,
    /// See `from`.
    pub to: f64,
    /// Its length, in seconds.
    pub duration_secs: f64,
    /// Requests completed in the intervals that began in it.
    pub count: u64,
    /// Of those, completions without an expected answer.
    pub failures: u64,
    /// Completions per second of those intervals.
    pub rps: f64,
    /// Latency over those intervals.
    pub latency: Stats,
    /// A warm-up stage, left out of the run's other numbers.
    #[serde(default)]
    pub warmup: bool,
}

/// The rows of `stages`, from each stage's merged record and the interval digests.
pub fn rows(
    stages: &[Stage],
    records: &[IntervalRecord],
    digests: &[IntervalDigest],
) -> Vec<StageRow> {
    let empty = IntervalRecord::new(0);
    stages
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let r = records.get(i).unwrap_or(&empty);
            let secs = digests
                .iter()
                .filter(|d| d.stage.map(usize::from) == Some(i))
                .count() as f64;
            let count = r.completed();
            StageRow {
                name: s.name.clone(),
                from: s.from,
                to: s.to,
                duration_secs: s.duration.as_secs_f64(),
                count,
                failures: r.requests.iter().map(|q| q.failures).sum(),
                rps: if secs > 0.0 { count as f64 / secs } else { 0.0 },
                latency: Stats::of(&r.latency_all()),
                warmup: s.warmup,
            }
        })
        .collect()
}
