//! The watched server process over the run, from its per-second samples.

use crate::store::IntervalDigest;
use serde::{Deserialize, Serialize};

/// What the server process did, when one was watched.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct ServerHealth {
    /// Seconds sampled.
    pub samples: u64,
    /// Mean CPU over the samples, as a share of one core (100 = one core busy).
    pub cpu_mean_percent: f64,
    /// The busiest second.
    pub cpu_max_percent: f64,
    /// Largest resident memory, bytes.
    pub rss_max_bytes: u64,
    /// Most threads.
    pub threads_max: u64,
    /// Most open descriptors, when readable.
    pub open_fds_max: Option<u64>,
}

impl ServerHealth {
    /// The server over `intervals`, or `None` when none was watched.
    pub fn of(intervals: &[IntervalDigest]) -> Option<ServerHealth> {
        let samples: Vec<_> = intervals.iter().filter_map(|d| d.server).collect();
        if samples.is_empty() {
            return None;
        }
        Some(ServerHealth {
            samples: samples.len() as u64,
            cpu_mean_percent: super::mean(samples.iter().map(|s| s.cpu_percent))?,
            cpu_max_percent: samples.iter().map(|s| s.cpu_percent).fold(0.0, f64::max),
            rss_max_bytes: samples.iter().map(|s| s.rss_bytes).max().unwrap_or(0),
            threads_max: samples.iter().map(|s| s.threads).max().unwrap_or(0),
            open_fds_max: samples.iter().filter_map(|s| s.open_fds).max(),
        })
    }
}
