//! The generator itself: what it sent, how late, and at what cost. Which side set the
//! numbers is the diagnosis' (`diagnosis`), which reads these.

use super::diagnosis::{Asked, Evidence};
use super::Stats;
use crate::monitor::Health;
use crate::plan::Load;
use crate::record::IntervalRecord;
use crate::sample::Side;
use crate::store::{EndStatus, StoredRun};
use serde::{Deserialize, Serialize};
use std::time::Duration;

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
    /// Seconds its threads spent runnable but waiting for a CPU (other processes on its
    /// cores), when the kernel reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_secs: Option<f64>,
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
}

impl GeneratorHealth {
    /// The generator of `run`, over `total_secs` at `rate_held`; `seconds` is its health
    /// over the seconds it wrote ([`seconds_health`]), read when it wrote no end.
    pub(super) fn assess(
        run: &StoredRun,
        total: &IntervalRecord,
        total_secs: f64,
        rate_held: f64,
        seconds: &Health,
    ) -> GeneratorHealth {
        let (cpu, peak_fds, rss) = match &run.end {
            Some(end) => (end.cpu, end.peak_open_fds, end.peak_rss_bytes),
            None => (seconds.cpu, seconds.open_fds, None),
        };
        let cpu_secs = cpu.total.as_secs_f64();
        let completed = total.completed();
        let client_errors: u64 = total
            .errors
            .iter()
            .filter(|(k, _)| k.0.side() == Side::Client)
            .map(|(_, n)| n)
            .sum();
        GeneratorHealth {
            rate_asked: rate_asked(run),
            rate_held,
            lag: Stats::of(&total.lag),
            cpu_secs,
            cpu_percent: if total_secs > 0.0 {
                100.0 * cpu_secs / total_secs
            } else {
                0.0
            },
            waiting_secs: run.end.as_ref().map(|_| cpu.waiting.as_secs_f64()),
            cpu_us_per_request: if completed > 0 {
                cpu_secs * 1e6 / completed as f64
            } else {
                0.0
            },
            threads: run.meta.threads,
            peak_open_fds: peak_fds,
            open_files_limit: run.meta.open_files_limit,
            peak_rss_bytes: rss,
            client_errors,
        }
    }

    /// The run's evidence, over `total_secs` of it; `seconds` are its whole seconds at one
    /// load, whose trends are judged (none for a staged run).
    pub(super) fn evidence<'a>(
        &self,
        run: &'a StoredRun,
        record: &'a IntervalRecord,
        total_secs: f64,
        seconds: &'a [crate::store::IntervalDigest],
    ) -> Evidence<'a> {
        let threads = self.threads.max(1) as f64;
        let share = |secs: f64| {
            if total_secs > 0.0 {
                secs / total_secs / threads
            } else {
                0.0
            }
        };
        Evidence {
            record,
            asked: self.asked(run, record),
            cpu_share: share(self.cpu_secs),
            threads: self.threads,
            waiting_share: self.waiting_secs.map(share),
            descriptors: self.open_files_limit.map(|l| (self.peak_open_fds, l)),
            connection_cap: connection_cap(run),
            open_model: matches!(run.meta.load, Load::Open { .. }),
            poisson: run.meta.arrivals.kind() == crate::plan::ArrivalKind::Poisson,
            requests: &run.meta.requests,
            seconds,
            // Without its end only whole intervals are known, and `total_secs` counts them:
            // the caller's count, since a merged run's shard row holds its count of seconds,
            // not the seconds themselves.
            whole_secs: Some(
                run.end
                    .as_ref()
                    .map_or(total_secs, |e| e.attack_secs.floor()),
            ),
        }
    }

    /// What the run asked to send, judged only when it ran to its end: an interrupted run
    /// was not asked to finish.
    fn asked(&self, run: &StoredRun, record: &IntervalRecord) -> Asked {
        if !ran_to_its_end(run) || !matches!(run.meta.load, Load::Open { .. }) {
            return Asked::Nothing;
        }
        if !run.meta.stages.is_empty() {
            // A staged rate is judged by count: the mean rate hides where it fell behind.
            let p = crate::schedule::RateProfile::of_stages(&run.meta.stages);
            return Asked::Count {
                asked: p.total(),
                sent: record.sent_first(),
            };
        }
        // Without its end (a merged run with a shard killed), only whole seconds are known.
        let attack_secs = run
            .end
            .as_ref()
            .map_or(run.intervals.len() as f64, |e| e.attack_secs);
        match self.rate_asked {
            Some(asked) if attack_secs >= 1.0 => Asked::Rate {
                asked,
                sent: self.rate_held,
            },
            _ => Asked::Nothing,
        }
    }
}

/// Whether the run sent to the end of its plan, so that what it sent is held to what it was
/// asked: a run stopped, interrupted or killed was not asked to finish.
///
/// A test merged from shards has no end when one shard was killed (that shard wrote none),
/// yet the test ran on: the other shards sent their shares to their own ends, and what the
/// killed one did not send is the test's shortfall, which its verdict names
/// (`ShardsIncomplete`). So it is held to what it asked once no shard is still sending,
/// one at least ended, and every end is a completion; with every shard killed, it ran to
/// no end.
fn ran_to_its_end(run: &StoredRun) -> bool {
    let completed = |end: &crate::store::RunEnd| end.status == EndStatus::Completed;
    match (&run.end, &run.meta.merged) {
        (Some(end), _) => completed(end),
        (None, Some(merged)) => {
            !merged.shards.iter().any(|s| s.sending)
                && merged.shards.iter().any(|s| s.end.is_some())
                && merged
                    .shards
                    .iter()
                    .filter_map(|s| s.end.as_ref())
                    .all(completed)
        }
        (None, None) => false,
    }
}

/// The generator's health over the seconds `run` wrote: their CPU added up, the most
/// descriptors open at a second's end.
pub(super) fn seconds_health(run: &StoredRun) -> Health {
    Health {
        cpu: run.intervals.iter().fold(Default::default(), |sum, d| {
            crate::monitor::CpuTime::plus(&sum, &d.health.cpu)
        }),
        open_fds: run
            .intervals
            .iter()
            .map(|d| d.health.open_fds)
            .max()
            .unwrap_or(0),
    }
}

/// The rate asked, for the open model: a staged rate's mean.
fn rate_asked(run: &StoredRun) -> Option<f64> {
    match run.meta.load {
        Load::Open { rate } if run.meta.stages.is_empty() => Some(rate.per_second()),
        Load::Open { .. } => {
            let p = crate::schedule::RateProfile::of_stages(&run.meta.stages);
            // A run stopped before its last stage (a sweep's limit, Ctrl-C) was asked only
            // the stages it reached: held against the plan's mean, a 100 req/s step would
            // read as half of a 100..300 sweep's 200.
            let ran = run
                .end
                .as_ref()
                .map(|e| e.attack_secs)
                .unwrap_or(f64::INFINITY);
            let span = p.duration().as_secs_f64().min(ran);
            (span > 0.0).then(|| p.expected_by(Duration::from_secs_f64(span)) / span)
        }
        Load::Closed { .. } => None,
    }
}

/// The connection cap, when it bounds the rate by Little's law: in the open model over
/// HTTP/1.1, where a connection carries one request at a time.
pub(super) fn connection_cap(run: &StoredRun) -> Option<u32> {
    (matches!(run.meta.load, Load::Open { .. }) && run.meta.protocol == "HTTP/1.1")
        .then_some(run.meta.connection.max_connections)
}
