//! The server watching: local processes sampled every second (CPU, memory, threads,
//! descriptors) from /proc, each with everything it started, so a report can say whether
//! the server ran out of CPU.

use super::tree;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::time::Instant;

/// One watched process tree over one sample.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TreeHealth {
    /// The PID asked for: the tree's root.
    pub pid: u32,
    /// The root's command name.
    pub name: String,
    /// CPU the tree used over the span, as a share of one core.
    pub cpu_percent: f64,
    /// Processes in the tree.
    pub processes: u64,
    /// Threads in the tree.
    pub threads: u64,
}

/// One second of the watched server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetHealth {
    /// CPU used since the last sample, as a share of one core (100 = one core busy).
    pub cpu_percent: f64,
    /// Resident memory, bytes.
    pub rss_bytes: u64,
    /// Threads.
    pub threads: u64,
    /// Open descriptors (when readable).
    pub open_fds: Option<u64>,
    /// Seconds the CPU share covers: about one, less for the run's last, partial interval.
    #[serde(default = "one_second")]
    pub wall_secs: f64,
    /// Cores online on the server's machine (0: unknown, as through Prometheus).
    #[serde(default)]
    pub cores: u32,
    /// Each watched tree (processes watched by PID only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trees: Vec<TreeHealth>,
}

fn one_second() -> f64 {
    1.0
}

/// The shortest span whose CPU share is judged: /proc counts CPU in 10 ms ticks, attributed
/// in lumps, so a span of a few ticks can read several cores' worth for one thread.
pub const SHORTEST_JUDGED_SECS: f64 = 0.5;

impl TargetHealth {
    /// The CPU share, when the span is long enough to judge it.
    pub fn judged_cpu_percent(&self) -> Option<f64> {
        (self.wall_secs >= SHORTEST_JUDGED_SECS).then_some(self.cpu_percent)
    }

    /// CPU seconds used over the span (exact however short the span).
    pub fn cpu_secs(&self) -> f64 {
        self.cpu_percent / 100.0 * self.wall_secs
    }
}

/// The mean CPU share over `samples`, weighted by the span each covers; `None` without any.
pub fn mean_cpu_percent<'a>(samples: impl Iterator<Item = &'a TargetHealth>) -> Option<f64> {
    let (cpu, wall) = samples.fold((0.0, 0.0), |(c, w), s| (c + s.cpu_secs(), w + s.wall_secs));
    (wall > 0.0).then(|| 100.0 * cpu / wall)
}

/// Why a process cannot be watched.
#[derive(Debug, thiserror::Error)]
#[error("cannot watch process {pid}: {reason}; give the PID of a running local process (e.g. `pgrep -o nginx`)")]
pub struct MonitorError {
    /// The PID asked for.
    pub pid: u32,
    /// What went wrong.
    pub reason: String,
}

/// Samples process trees by the PIDs of their roots.
#[derive(Debug)]
pub struct TargetProbe {
    roots: Vec<u32>,
    ticks_per_sec: f64,
    page_bytes: u64,
    cores: u32,
    /// CPU ticks of every process of the trees at the last sample.
    last: HashMap<u32, u64>,
    last_at: Instant,
}

impl TargetProbe {
    /// Starts watching the trees of `roots`; fails when one is not a process to read.
    pub fn new(roots: &[u32]) -> Result<TargetProbe, MonitorError> {
        let procs = tree::scan();
        for &pid in roots {
            if !procs.iter().any(|p| p.pid == pid) {
                let reason = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .err()
                    .map_or("unreadable /proc stat".into(), |e| e.to_string());
                return Err(MonitorError { pid, reason });
            }
        }
        let mut probe = TargetProbe {
            roots: roots.to_vec(),
            ticks_per_sec: (rustix::param::clock_ticks_per_second() as f64).max(1.0),
            page_bytes: rustix::param::page_size() as u64,
            cores: tree::cores_online(),
            last: HashMap::new(),
            last_at: Instant::now(),
        };
        for &root in roots {
            for p in tree::tree(root, &procs) {
                probe.last.insert(p.pid, p.ticks);
            }
        }
        Ok(probe)
    }

    /// The PIDs watched.
    pub fn pids(&self) -> &[u32] {
        &self.roots
    }

    /// The trees since the last sample; `None` once every root is gone.
    pub fn sample(&mut self) -> Option<TargetHealth> {
        let procs = tree::scan();
        let now = Instant::now();
        let wall = now.duration_since(std::mem::replace(&mut self.last_at, now));
        let mut seen = HashMap::new();
        let mut health = TargetHealth {
            wall_secs: wall.as_secs_f64(),
            cores: self.cores,
            ..TargetHealth::default()
        };
        let mut fds = None;
        for &root in &self.roots {
            let members = tree::tree(root, &procs);
            let Some(head) = members.first() else {
                continue;
            };
            let mut used = 0;
            for p in &members {
                // A process new since the last sample was born in the span: all its CPU is.
                used += p
                    .ticks
                    .saturating_sub(self.last.get(&p.pid).copied().unwrap_or(0));
                seen.insert(p.pid, p.ticks);
                health.rss_bytes += p.rss_pages * self.page_bytes;
                if let Ok(d) = std::fs::read_dir(format!("/proc/{}/fd", p.pid)) {
                    *fds.get_or_insert(0) += d.count() as u64;
                }
            }
            let threads: u64 = members.iter().map(|p| p.threads).sum();
            health.threads += threads;
            health.trees.push(TreeHealth {
                pid: root,
                name: head.name.clone(),
                cpu_percent: cpu_percent(used as f64 / self.ticks_per_sec, wall),
                processes: members.len() as u64,
                threads,
            });
        }
        if health.trees.is_empty() {
            return None;
        }
        // Exited processes leave the map: their PIDs may come back as new processes.
        self.last = seen;
        health.cpu_percent = health.trees.iter().map(|t| t.cpu_percent).sum();
        health.open_fds = fds;
        Some(health)
    }
}

/// `used` CPU seconds over `wall` as a share of one core (100 = one core busy).
pub(super) fn cpu_percent(used: f64, wall: std::time::Duration) -> f64 {
    let wall = wall.as_secs_f64();
    if wall > 0.0 {
        (100.0 * used / wall).max(0.0)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_can_be_watched_and_a_missing_one_is_named() {
        let mut probe = TargetProbe::new(&[std::process::id()]).unwrap();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        std::hint::black_box(x);
        let h = probe.sample().unwrap();
        assert!(h.rss_bytes > 0 && h.threads >= 1, "{h:?}");
        assert!(h.open_fds.is_some_and(|n| n > 0));
        assert_eq!(h.trees.len(), 1);
        assert!(h.cores >= 1);
        let e = TargetProbe::new(&[std::process::id(), u32::MAX])
            .unwrap_err()
            .to_string();
        assert!(e.contains("4294967295") && e.contains("PID"), "{e}");
    }
}
