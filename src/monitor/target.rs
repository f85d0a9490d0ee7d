//! The server watching: a local target process sampled every second (CPU, memory, threads,
//! descriptors) from /proc, so a report can say whether the server ran out of CPU.

use serde::{Deserialize, Serialize};
use std::time::Instant;

/// One second of the target process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
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

/// Samples one process by PID.
#[derive(Debug)]
pub struct TargetProbe {
    pid: u32,
    ticks_per_sec: f64,
    last: (f64, Instant),
}

impl TargetProbe {
    /// Starts watching `pid`; fails when there is no such process to read.
    pub fn new(pid: u32) -> Result<TargetProbe, MonitorError> {
        let ticks = rustix::param::clock_ticks_per_second() as f64;
        let cpu = cpu_ticks(pid).map_err(|reason| MonitorError { pid, reason })?;
        Ok(TargetProbe {
            pid,
            ticks_per_sec: ticks.max(1.0),
            last: (cpu, Instant::now()),
        })
    }

    /// The process's PID.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The process since the last sample; `None` once it is gone.
    pub fn sample(&mut self) -> Option<TargetHealth> {
        let cpu = cpu_ticks(self.pid).ok()?;
        let now = Instant::now();
        let (last_cpu, last_at) = std::mem::replace(&mut self.last, (cpu, now));
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).ok()?;
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<u64>().ok())
        };
        let wall = now.duration_since(last_at);
        Some(TargetHealth {
            cpu_percent: cpu_percent((cpu - last_cpu) / self.ticks_per_sec, wall),
            wall_secs: wall.as_secs_f64(),
            rss_bytes: field("VmRSS:").unwrap_or(0) * 1024,
            threads: field("Threads:").unwrap_or(0),
            open_fds: std::fs::read_dir(format!("/proc/{}/fd", self.pid))
                .ok()
                .map(|d| d.count() as u64),
        })
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

/// User plus system CPU time of `pid`, in clock ticks.
fn cpu_ticks(pid: u32) -> Result<f64, String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).map_err(|e| e.to_string())?;
    // The command name may hold spaces and parentheses: fields count from the last ')'.
    let after = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .ok_or("unreadable /proc stat")?;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok());
    match (ticks(11), ticks(12)) {
        (Some(user), Some(system)) => Ok(user + system),
        _ => Err("unreadable /proc stat".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_can_be_watched_and_a_missing_one_is_named() {
        let mut probe = TargetProbe::new(std::process::id()).unwrap();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        std::hint::black_box(x);
        let h = probe.sample().unwrap();
        assert!(h.rss_bytes > 0 && h.threads >= 1, "{h:?}");
        assert!(h.open_fds.is_some_and(|n| n > 0));
        let e = TargetProbe::new(u32::MAX).unwrap_err().to_string();
        assert!(e.contains("4294967295") && e.contains("PID"), "{e}");
    }
}
