//! The watched server process over the run, from its per-second samples.

use crate::monitor::{mean_cpu_percent, TargetHealth};
use crate::store::IntervalDigest;
use serde::{Deserialize, Serialize};

/// What the server process did, when one was watched.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerHealth {
    /// Seconds sampled.
    pub samples: u64,
    /// Mean CPU over the samples, as a share of one core (100 = one core busy).
    pub cpu_mean_percent: f64,
    /// The busiest second (spans too short to judge, like a run's last partial second, left out).
    pub cpu_max_percent: f64,
    /// The most CPU the watched processes could use: 100 per core they could run on at
    /// once (the cores online, or fewer when they had fewer threads). `None` when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_bound_percent: Option<f64>,
    /// Largest resident memory, bytes.
    pub rss_max_bytes: u64,
    /// Most threads.
    pub threads_max: u64,
    /// Most open descriptors, when readable.
    pub open_fds_max: Option<u64>,
    /// Each watched process tree, when watched by PID.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trees: Vec<TreeSummary>,
}

/// One watched process tree over the run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TreeSummary {
    /// The PID asked for.
    pub pid: u32,
    /// Its command name.
    pub name: String,
    /// Mean CPU, % of one core.
    pub cpu_mean_percent: f64,
    /// Most processes in the tree at once.
    pub processes_max: u64,
}

impl ServerHealth {
    /// The server over `intervals`, or `None` when none was watched.
    pub fn of(intervals: &[IntervalDigest]) -> Option<ServerHealth> {
        let samples: Vec<&TargetHealth> =
            intervals.iter().filter_map(|d| d.server.as_ref()).collect();
        if samples.is_empty() {
            return None;
        }
        let threads_max = samples.iter().map(|s| s.threads).max().unwrap_or(0);
        let cores = samples.iter().map(|s| s.cores).max().unwrap_or(0);
        let bound = (cores > 0 && threads_max > 0)
            .then(|| 100.0 * u64::from(cores).min(threads_max) as f64);
        let mut trees: Vec<TreeSummary> = Vec::new();
        for s in &samples {
            for t in &s.trees {
                if !trees.iter().any(|x| x.pid == t.pid) {
                    let of_tree = samples
                        .iter()
                        .filter_map(|s| s.trees.iter().find(|x| x.pid == t.pid).map(|x| (s, x)));
                    let (cpu, wall, processes) =
                        of_tree.fold((0.0, 0.0, 0), |(c, w, n), (s, x)| {
                            (
                                c + x.cpu_percent / 100.0 * s.wall_secs,
                                w + s.wall_secs,
                                n.max(x.processes),
                            )
                        });
                    trees.push(TreeSummary {
                        pid: t.pid,
                        name: t.name.clone(),
                        cpu_mean_percent: if wall > 0.0 { 100.0 * cpu / wall } else { 0.0 },
                        processes_max: processes,
                    });
                }
            }
        }
        Some(ServerHealth {
            samples: samples.len() as u64,
            cpu_mean_percent: mean_cpu_percent(samples.iter().copied())?,
            cpu_max_percent: samples
                .iter()
                .filter_map(|s| s.judged_cpu_percent())
                .fold(0.0, f64::max),
            cpu_bound_percent: bound,
            rss_max_bytes: samples.iter().map(|s| s.rss_bytes).max().unwrap_or(0),
            threads_max,
            open_fds_max: samples.iter().filter_map(|s| s.open_fds).max(),
            trees,
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
            warmup_sent: 0,
            warmup_completed: 0,
            warmup_failed: 0,
            stage: None,
            server: Some(TargetHealth {
                cpu_percent,
                rss_bytes: 1,
                threads: 1,
                open_fds: None,
                wall_secs,
                cores: 2,
                trees: vec![],
            }),
            ..Default::default()
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
        // One thread can keep one of the two cores busy.
        assert_eq!(h.cpu_bound_percent, Some(100.0));
    }
}
