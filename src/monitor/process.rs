//! Readings of this process from `/proc` and rlimits.

use std::time::Duration;

/// CPU time consumed by the process.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CpuTime {
    /// User plus system time, to the nanosecond (CLOCK_PROCESS_CPUTIME_ID).
    #[serde(rename = "total_secs", with = "secs_f64")]
    pub total: Duration,
    /// Time in user mode (10 ms resolution, from /proc).
    #[serde(rename = "user_secs", with = "secs_f64")]
    pub user: Duration,
    /// Time in the kernel on the process's behalf (10 ms resolution, from /proc).
    #[serde(rename = "system_secs", with = "secs_f64")]
    pub system: Duration,
    /// Time its threads were runnable but waited for a CPU (from /proc schedstat): other
    /// processes on its cores. Zero where the kernel does not report it.
    #[serde(rename = "waiting_secs", with = "secs_f64", default)]
    pub waiting: Duration,
}

impl CpuTime {
    /// The CPU time spent between `earlier` and `self`.
    pub fn since(&self, earlier: &CpuTime) -> CpuTime {
        CpuTime {
            total: self.total.saturating_sub(earlier.total),
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
            waiting: self.waiting.saturating_sub(earlier.waiting),
        }
    }

    /// The sum of two spans' CPU time.
    pub fn plus(&self, other: &CpuTime) -> CpuTime {
        CpuTime {
            total: self.total + other.total,
            user: self.user + other.user,
            system: self.system + other.system,
            waiting: self.waiting + other.waiting,
        }
    }
}

/// Durations stored as fractional seconds, the unit reports and scripts expect.
mod secs_f64 {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let secs = f64::deserialize(d)?;
        Duration::try_from_secs_f64(secs).map_err(serde::de::Error::custom)
    }
}

/// The generator's health over one interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Health {
    /// CPU time the generator used during the interval.
    pub cpu: CpuTime,
    /// Open file descriptors at the end of the interval.
    pub open_fds: u64,
}

/// Reads the process's own CPU time and descriptors.
#[derive(Debug)]
pub struct ProcessProbe {
    ticks_per_second: u64,
    last: CpuTime,
}

impl Default for ProcessProbe {
    fn default() -> Self {
        Self::new()
    }
}

impl ProcessProbe {
    /// A probe whose first interval starts now.
    pub fn new() -> Self {
        // USER_HZ is 100 on every Linux ABI headroom runs on.
        let mut probe = ProcessProbe {
            ticks_per_second: 100,
            last: CpuTime::default(),
        };
        probe.last = probe.cpu_time();
        probe
    }

    /// CPU time used since the process started.
    pub fn cpu_time(&self) -> CpuTime {
        let precise = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
        let total = Duration::new(precise.tv_sec.max(0) as u64, precise.tv_nsec as u32);
        let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
            return CpuTime {
                total,
                ..CpuTime::default()
            };
        };
        // Fields after the command name, which is in parentheses and may contain spaces.
        let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<u64>().ok())
                .unwrap_or(0)
        };
        // utime and stime are fields 14 and 15 of the whole line: 11 and 12 after ")".
        let to = |t: u64| Duration::from_millis(t * 1000 / self.ticks_per_second);
        CpuTime {
            total,
            user: to(ticks(11)),
            system: to(ticks(12)),
            waiting: run_queue_wait(),
        }
    }

    /// Health since the previous call.
    pub fn sample(&mut self) -> Health {
        let now = self.cpu_time();
        let cpu = now.since(&self.last);
        self.last = now;
        Health {
            cpu,
            open_fds: open_fds(),
        }
    }
}

/// Time this process's live threads have waited on a run queue, summed: each thread's
/// schedstat ("on-CPU ns, waiting ns, timeslices"). A thread that exited takes its share
/// with it, so a span's difference is never negative (see `CpuTime::since`) but may miss a
/// little.
fn run_queue_wait() -> Duration {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Duration::ZERO;
    };
    let ns: u64 = tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|line| line.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum();
    Duration::from_nanos(ns)
}

/// Number of open descriptors of this process.
pub fn open_fds() -> u64 {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| d.count() as u64)
        .unwrap_or(0)
}

/// Raises the soft open-files limit to the hard limit; returns the limit now in force.
pub fn raise_open_files_limit() -> Option<u64> {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current != limit.maximum {
        limit.current = limit.maximum;
        // Failing to raise it is not fatal: the report flags EMFILE if it bites.
        let _ = setrlimit(Resource::Nofile, limit);
    }
    getrlimit(Resource::Nofile).current
}

/// Peak resident memory of this process (VmHWM), in bytes.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_own_cpu_and_descriptors() {
        let mut probe = ProcessProbe::new();
        // Spin until this thread has used 50 ms of CPU, however long a busy machine takes
        // to give it that: the probe must see at least as much for the whole process.
        let thread_cpu = || {
            let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
            Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
        };
        let start = thread_cpu();
        let mut x = 0u64;
        while thread_cpu() - start < Duration::from_millis(50) {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        std::hint::black_box(x);
        let h = probe.sample();
        assert!(h.open_fds >= 3);
        assert!(h.cpu.total >= Duration::from_millis(40), "{:?}", h.cpu);
    }
}
