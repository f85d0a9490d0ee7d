//! The watched server process over the run, from its per-second samples.

use crate::monitor::{mean_cpu_percent, TargetHealth};
use crate::store::IntervalDigest;
use serde::{Deserialize, Serialize};

/// What the server process did, when one was watched.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct ServerHealth {
    /// Seconds sampled.
    pub samples: u64,
    /// Mean CPU over the samples, as a share of one core (100 = one core busy).
    pub cpu_mean_percent: f64,
    /// The busiest second (spans too short to judge, like a run's last partial second, left out).
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
            cpu_mean_percent: mean_cpu_percent(samples.iter())?,
            cpu_max_percent: samples
                .iter()
                .filter_map(TargetHealth::judged_cpu_percent)
                .fold(0.0, f64::max),
            rss_max_bytes: samples.iter().map(|s| s.rss_bytes).max().unwrap_or(0),
            threads_max: samples.iter().map(|s| s.threads).max().unwrap_or(0),
            open_fds_max: samples.iter().filter_map(|s| s.open_fds).max(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::Health;

    fn second(index: u64, cpu_percent: f64, wall_secs: f64) -> IntervalDigest {
        IntervalDigest {
            index,
            sent: 0,
            completed: 0,
            failed: 0,
            p50_us: 0,
            p90_us: 0,
            p99_us: 0,
            max_us: 0,
            health: Health::default(),
            stage: None,
            server: Some(TargetHealth {
                cpu_percent,
                rss_bytes: 1,
                threads: 1,
                open_fds: None,
                wall_secs,
            }),
        }
    }

    #[test]
    fn a_short_last_span_is_left_out_of_the_max_and_weighed_by_its_length_in_the_mean() {
        // A single-threaded worker at 90 % for two seconds; the run's last 40 ms read one
        // 10 ms tick lump as 5 cores.
        let s = [
            second(0, 90.0, 1.0),
            second(1, 90.0, 1.0),
            second(2, 535.6, 0.04),
        ];
        let h = ServerHealth::of(&s).unwrap();
        assert_eq!(h.cpu_max_percent, 90.0);
        let mean = (0.9 + 0.9 + 5.356 * 0.04) / 2.04 * 100.0;
        assert!((h.cpu_mean_percent - mean).abs() < 1e-9, "{h:?}");
        assert!(h.cpu_mean_percent < 100.0);
    }
}
