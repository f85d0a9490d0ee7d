//! The verdict on the generator itself: did it send what was asked, and at what cost?

use super::Stats;
use crate::plan::Load;
use crate::record::IntervalRecord;
use crate::sample::Side;
use crate::store::{EndStatus, StoredRun};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Requests leaving later than this (p99) mean the generator, not the server, set the pace.
pub(super) const LAG_LIMIT: Duration = Duration::from_millis(10);
/// The share of the asked rate that must be sent for the rate to count as held.
pub(super) const RATE_TOLERANCE: f64 = 0.995;
/// CPU use, as a share of the engine's cores, past which the generator is saturated.
pub(super) const CPU_LIMIT: f64 = 0.90;

/// Whether the generator kept up, and what it cost.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GeneratorHealth {
    /// Requests per second asked for (open model only).
    pub rate_asked: Option<f64>,
    /// Requests per second sent.
    pub rate_held: f64,
    /// How late requests left compared with their intended time.
    pub lag: Stats,
    /// CPU seconds (user + system) the generator used.
    pub cpu_secs: f64,
    /// CPU use as a percentage of one core.
    pub cpu_percent: f64,
    /// CPU microseconds per completed request.
    pub cpu_us_per_request: f64,
    /// Engine threads.
    pub threads: usize,
    /// Most descriptors open at once.
    pub peak_open_fds: u64,
    /// The open-files limit.
    pub open_files_limit: Option<u64>,
    /// Peak resident memory in bytes.
    pub peak_rss_bytes: Option<u64>,
    /// Failures blamed on the generator's side.
    pub client_errors: u64,
    /// True when the numbers describe the generator rather than the server.
    pub saturated: bool,
    /// True when the generator ran short of its own resources (CPU, ports, descriptors),
    /// whatever the server did; lateness alone may be a server holding every connection.
    #[serde(default)]
    pub resource_bound: bool,
    /// Plain sentences saying what went wrong, if anything.
    pub findings: Vec<String>,
}

/// Failures that are the generator's own shortage (ports, descriptors, backlog): client-side
/// errors other than timeouts, which a slow server causes.
pub(super) fn own_failures(
    r: &IntervalRecord,
) -> impl Iterator<Item = (crate::sample::ErrorKind, u64)> + '_ {
    r.errors
        .iter()
        .filter(|(k, _)| k.0.side() == Side::Client && k.0 != crate::sample::ErrorKind::Timeout)
        .map(|(k, n)| (k.0, *n))
}

impl GeneratorHealth {
    pub(super) fn assess(
        run: &StoredRun,
        total: &IntervalRecord,
        attack_secs: f64,
        total_secs: f64,
        rate_held: f64,
    ) -> GeneratorHealth {
        let (cpu, peak_fds, rss) = match &run.end {
            Some(end) => (end.cpu.total, end.peak_open_fds, end.peak_rss_bytes),
            None => (
                run.intervals.iter().map(|d| d.health.cpu.total).sum(),
                run.intervals
                    .iter()
                    .map(|d| d.health.open_fds)
                    .max()
                    .unwrap_or(0),
                None,
            ),
        };
        let cpu_secs = cpu.as_secs_f64();
        let completed = total.completed();
        let lag = Stats::of(&total.lag);
        let client_errors: u64 = total
            .errors
            .iter()
            .filter(|(k, _)| k.0.side() == Side::Client)
            .map(|(_, n)| n)
            .sum();
        let threads = run.meta.threads;
        let profile = (!run.meta.stages.is_empty())
            .then(|| crate::schedule::RateProfile::of_stages(&run.meta.stages));
        let rate_asked = match (run.meta.load, &profile) {
            (Load::Open { rate }, None) => Some(rate.per_second()),
            (Load::Open { .. }, Some(p)) if !p.duration().is_zero() => {
                Some(p.total() as f64 / p.duration().as_secs_f64())
            }
            _ => None,
        };

        let mut findings = Vec::new();
        let mut resource_bound = false;
        let completed_normally = run
            .end
            .as_ref()
            .is_some_and(|e| e.status == EndStatus::Completed);
        if let (Load::Open { .. }, Some(p), true) = (run.meta.load, &profile, completed_normally) {
            // A staged rate is judged by count: the mean rate hides where it fell behind.
            let asked = p.total();
            let sent = total.sent_first();
            if (sent as f64) < asked as f64 * RATE_TOLERANCE {
                findings.push(format!(
                    "sent {sent} of the {asked} requests the stages asked ({:.1} %)",
                    100.0 * sent as f64 / asked.max(1) as f64
                ));
            }
        } else if let (Some(asked), true) = (rate_asked, completed_normally) {
            if attack_secs >= 1.0 && rate_held < asked * RATE_TOLERANCE {
                findings.push(format!(
                    "sent {rate_held:.1} req/s of the {asked} asked ({:.1} %)",
                    100.0 * rate_held / asked
                ));
            }
        }
        if lag.p99_us > LAG_LIMIT.as_micros() as u64 {
            findings.push(format!(
                "requests left late (lag p99 {}, max {}): the generator was short of CPU or of connections (--max-connections)",
                crate::units::fmt_us(lag.p99_us),
                crate::units::fmt_us(lag.max_us)
            ));
        }
        for (kind, n) in own_failures(total) {
            resource_bound = true;
            findings.push(format!(
                "{n} request(s) failed on the generator's side: {kind}"
            ));
        }
        let cpu_share = if total_secs > 0.0 {
            cpu_secs / total_secs / threads.max(1) as f64
        } else {
            0.0
        };
        if cpu_share >= CPU_LIMIT {
            resource_bound = true;
            findings.push(format!(
                "the generator used {:.0} % of its {threads} core(s)",
                100.0 * cpu_share
            ));
        }
        if let Some(limit) = run.meta.open_files_limit {
            if limit > 0 && peak_fds * 10 >= limit * 9 {
                resource_bound = true;
                findings.push(format!(
                    "{peak_fds} descriptors open of a limit of {limit} (ulimit -n)"
                ));
            }
        }
        GeneratorHealth {
            rate_asked,
            rate_held,
            lag,
            cpu_secs,
            cpu_percent: if total_secs > 0.0 {
                100.0 * cpu_secs / total_secs
            } else {
                0.0
            },
            cpu_us_per_request: if completed > 0 {
                cpu_secs * 1e6 / completed as f64
            } else {
                0.0
            },
            threads,
            peak_open_fds: peak_fds,
            open_files_limit: run.meta.open_files_limit,
            peak_rss_bytes: rss,
            client_errors,
            saturated: !findings.is_empty(),
            resource_bound,
            findings,
        }
    }
}
