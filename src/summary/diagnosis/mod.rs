//! The one diagnosis of a run, a sweep step or a capacity probe: what the numbers say about
//! who set them, decided from evidence, in one typed vocabulary every view shares.
//!
//! A symptom (the rate not held, requests leaving late) says that something fell short, not
//! what. The generator is named only on its own evidence (its CPU, the run queue its threads
//! waited in, its ports and descriptors, a connection cap too small for the asked rate,
//! users waiting on its side by Little's law, unless the cap asked for held them); the server
//! on its own (refusals, resets, timeouts, overload statuses, a queue growing, throughput that
//! stopped following the users). Besides the limits there are the answers a demanding reader needs as much:
//! nothing succeeded at all; a transient (connections opening, one slow second) that held
//! nothing back; a server that changed with time whatever the load; and "cannot tell", with
//! what would settle it. Each finding keeps its numbers; the renderers turn them into words
//! (`report::build::verdict`), so no two views of one run can disagree.

pub mod closed;
mod judge;
pub mod staged;
#[cfg(test)]
mod tests;
pub mod trend;

pub use judge::{diagnose, Asked, Evidence};
pub use staged::of_staged_run;

use super::failures::Reason;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Requests leaving later than this (p99) mean something held them back.
pub const LAG_LIMIT: Duration = Duration::from_millis(10);
/// The share of the asked rate that must be sent for the rate to count as held.
pub const RATE_TOLERANCE: f64 = 0.995;
/// CPU use, as a share of the engine's cores, past which the generator is saturated.
pub const CPU_LIMIT: f64 = 0.90;
/// Time its threads spent waiting for a CPU, as a share of their wall time, past which
/// the generator was starved by other processes on its cores.
pub const STARVED_LIMIT: f64 = 0.20;
/// The share of completions a kind of server failure must reach to be evidence of overload
/// rather than an incident.
pub const SERVER_FAILURE_SHARE: f64 = 0.01;
/// The share of the connection cap, by Little's law, past which the cap set the pace.
pub const CAP_SHARE: f64 = 0.9;
/// Fewest whole seconds a span judged by time needs before "kept up" can be said of it.
pub const MIN_SECS: f64 = 2.0;
/// Fewest completions a span needs before "kept up" can be said of it.
pub const MIN_ANSWERS: u64 = 50;
/// The share of completions failing for other reasons than overload (a 401, an expectation
/// not met, a refused certificate) past which the numbers describe the few that succeeded.
pub const MOST_FAILED: f64 = 0.5;

/// Which side set the numbers, or what else the evidence says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// Neither: the load left as asked and the server kept up with it.
    Neither,
    /// The load held; something slowed for a moment (connections opening, one slow second)
    /// and held nothing back.
    Transient,
    /// Not one request got an answer it expects: the numbers describe failures only.
    NothingSucceeded,
    /// The generator ran short of its own resources: the numbers describe it, not the server.
    Generator,
    /// The server could not keep up: it refused, failed, queued or saturated.
    Server,
    /// Both sides show evidence of a limit.
    Both,
    /// The server's latency trended with time while the load stayed the same.
    ChangedWithTime,
    /// The evidence cannot settle it: too short, too few samples, or a symptom neither side
    /// explains.
    #[serde(alias = "unexplained")]
    CannotTell,
}

impl Limit {
    /// True for the answers that name a limit or a failure: not "kept up", not a transient.
    pub fn is_limit(self) -> bool {
        !matches!(self, Limit::Neither | Limit::Transient)
    }
}

/// What a finding is evidence for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blame {
    /// A symptom: something fell short, and it does not say what.
    Symptom,
    /// The generator.
    Generator,
    /// The server.
    Server,
    /// The server changing with time, whatever the load.
    Time,
    /// A transient that held nothing back.
    Transient,
    /// Not enough evidence to judge.
    Undecided,
    /// Nothing succeeded.
    Nothing,
    /// Where the evidence was found (a step of a staged run): no side.
    Context,
    /// What the user asked for explains it (a closed model held to its cap): no side, and
    /// no limit.
    Asked,
}

/// Why requests slowed for a moment without holding the load back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransientCause {
    /// New connections (TCP, TLS) were being opened at the start of the span.
    ConnectionOpening,
    /// The span's first seconds, before anything settled, with no connection opened.
    StartUp,
    /// One second, and only one, was slow.
    OneSlowSecond,
}

/// A reason requests failed, and how often (from the Failures table's classification).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReasonCount {
    /// Why.
    pub reason: Reason,
    /// How many.
    pub count: u64,
}

/// One piece of evidence, with its numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "finding", rename_all = "snake_case")]
pub enum Finding {
    /// Fewer requests per second left than were asked.
    RateShort {
        /// Asked, req/s.
        asked: f64,
        /// Sent, req/s (retries left out).
        sent: f64,
    },
    /// A staged load sent fewer requests than its stages asked.
    CountShort {
        /// Asked by the stages.
        asked: u64,
        /// Sent (retries left out).
        sent: u64,
    },
    /// Requests left the generator later than they were due.
    SentLate {
        /// The generator's send lag p99, µs.
        p99_us: u64,
        /// Its largest, µs.
        max_us: u64,
    },
    /// The generator's threads used nearly all of their cores.
    CpuBusy {
        /// CPU used as a share of its threads' cores (0..=1).
        share: f64,
        /// Engine threads.
        threads: usize,
    },
    /// The generator's threads waited for a CPU while other processes ran on its cores.
    CpuStarved {
        /// Run-queue wait as a share of its threads' wall time (0..=1).
        waiting_share: f64,
    },
    /// Requests failed for want of the generator's own resources.
    Shortage {
        /// The error's key (`ErrorKind::key`).
        error: String,
        /// How many.
        count: u64,
    },
    /// Descriptors open came near the open-files limit.
    Descriptors {
        /// Most open at once.
        peak: u64,
        /// The limit (ulimit -n).
        limit: u64,
    },
    /// The connection cap could not carry the asked rate at the server's service time
    /// (Little's law: connections needed = rate × service time).
    ConnectionCap {
        /// The cap (--max-connections).
        max_connections: u32,
        /// Connections the asked rate needed.
        needed: f64,
        /// Mean service time, µs.
        service_mean_us: f64,
    },
    /// The server refused, reset or closed connections, or did not answer in time.
    ServerFailed {
        /// The error's key (`ErrorKind::key`).
        error: String,
        /// How many.
        count: u64,
        /// Their share of completions (0..=1).
        share: f64,
    },
    /// The server answered with an overload status (5xx or 429).
    ServerStatus {
        /// The status code.
        status: u16,
        /// How many.
        count: u64,
        /// Their share of completions (0..=1).
        share: f64,
    },
    /// Latency climbed through the span while requests piled up: a queue at the server.
    LatencyRising {
        /// Median latency over the first third of the span, µs.
        first_p50_us: u64,
        /// Over the last third, µs.
        last_p50_us: u64,
    },
    /// One generator of a test merged from shards could not keep up (its own evidence, judged
    /// on its own: the test's numbers are in part that generator's).
    ShardLimited {
        /// The shard's index.
        shard: u32,
        /// Host it ran on.
        host: String,
        /// Its symptoms and the evidence on its side.
        findings: Vec<Finding>,
    },
    /// One generator of a test merged from shards started after the test's common start, so
    /// its share of the load began late.
    ShardLate {
        /// The shard's index.
        shard: u32,
        /// Host it ran on.
        host: String,
        /// How long after the common start it started, µs.
        late_us: u64,
    },
    /// A test merged from shards lacks some of them, or some were cut short (stopped by a
    /// signal, killed, a torn log): their share of the load is not in the merged run.
    ShardsIncomplete {
        /// The shards not given to the merge.
        missing: Vec<u32>,
        /// The shards merged that did not run to their stop condition.
        cut_short: Vec<u32>,
    },
    /// Requests waited for connections that were slow to open (TCP connect, TLS handshake),
    /// through the span, not only while its connections were first opened.
    SlowToConnect {
        /// Connect p99, µs.
        connect_p99_us: u64,
        /// TLS handshake p99, µs (0 without TLS).
        tls_p99_us: u64,
    },
    /// Not one completion got an answer its request expects.
    NothingSucceeded {
        /// Completions, all failed.
        completed: u64,
        /// Why, most frequent first (at most a few).
        reasons: Vec<ReasonCount>,
    },
    /// Requests left late for a moment only, and the load held: nothing was at its limit.
    Transient {
        /// What it was.
        cause: TransientCause,
        /// The seconds it lasted (indices from the run's start).
        seconds: Vec<u64>,
        /// The generator's send lag p99 over those seconds' worst, µs.
        lag_p99_us: u64,
        /// Connect p99 over the span, µs (0 when none was opened).
        connect_p99_us: u64,
        /// TLS handshake p99 over the span, µs (0 without TLS).
        tls_p99_us: u64,
    },
    /// Latency trended upward with time while the load stayed the same and the server kept
    /// up with what it was sent. In one span at one load this is a server that slows with
    /// time or one at the very edge of its capacity (a slowly growing queue looks the
    /// same); spans at other loads tell them apart (`ClockDrift`).
    LatencyDrifting {
        /// Median latency over the first third of the span, µs.
        first_p50_us: u64,
        /// Over the last third, µs.
        last_p50_us: u64,
        /// The median's least-squares slope, µs per second.
        us_per_sec: f64,
        /// Whole seconds it was fitted on.
        secs: u64,
    },
    /// Latency drifted through steps at different loads at about the same speed: it follows
    /// the clock, not the load — the server changed with time.
    ClockDrift {
        /// The steps that drifted, by name.
        steps: Vec<String>,
        /// The slowest and fastest drift of their medians, µs per second.
        slowest_us_per_sec: f64,
        /// See `slowest_us_per_sec`.
        fastest_us_per_sec: f64,
    },
    /// Most completions failed for other reasons than overload: the numbers describe the
    /// few that succeeded (all of them failed, in a step of a run where others succeeded).
    MostFailed {
        /// Failed completions as a share of completions (0..=1).
        share: f64,
        /// Completions.
        completed: u64,
        /// Why, most frequent first (at most a few).
        reasons: Vec<ReasonCount>,
    },
    /// Too short or too few answers to judge whether anything kept up.
    TooShort {
        /// Whole seconds measured (for a span judged by time).
        secs: f64,
        /// Completions.
        completed: u64,
        /// Seconds a verdict needs.
        needed_secs: f64,
        /// Completions a verdict needs.
        needed_answers: u64,
    },
    /// A closed-model step of too few requests for its users: Little's law and the step's
    /// throughput are mostly its start and end.
    FewPerUser {
        /// Users.
        users: f64,
        /// Requests completed.
        requests: u64,
        /// Requests the step would need to be judged.
        needed: u64,
    },
    /// Closed model: throughput stopped growing with the users while latency grew — the
    /// server saturated, and more users only queued.
    Saturated {
        /// Users at the knee, by Little's law (plateau throughput × the lightest step's
        /// latency, its median or mean whichever is lower, plus think time).
        knee_users: f64,
        /// The plateau throughput, completions per second.
        throughput: f64,
        /// Latency at the lightest load, µs: its median, or its mean when lower.
        base_latency_us: u64,
        /// The first step past the knee, in users.
        from_users: f64,
        /// Median latency there, µs.
        from_p50_us: u64,
        /// The heaviest step, in users.
        to_users: f64,
        /// Median latency there, µs.
        to_p50_us: u64,
    },
    /// Closed model: fewer requests were in flight than there were users (Little's law,
    /// users ≈ throughput × (latency + think)): users waited on the generator's side.
    LittleMismatch {
        /// Users.
        users: f64,
        /// Users the throughput and latency account for.
        implied: f64,
        /// Completions per second.
        throughput: f64,
        /// Mean latency, µs.
        latency_us: f64,
        /// Think time per request, µs.
        think_us: f64,
    },
    /// Closed model capped by `--max-rate`: fewer requests were in flight than there were
    /// users (Little's law), and the throughput reached the cap: the users waited for start
    /// slots, as asked, not for the generator.
    HeldToCap {
        /// Users.
        users: f64,
        /// Users the throughput and latency account for.
        implied: f64,
        /// Completions per second.
        throughput: f64,
        /// The cap asked for (`--max-rate`), req/s.
        cap: f64,
        /// Mean latency, µs.
        latency_us: f64,
        /// Think time per request, µs.
        think_us: f64,
    },
    /// Poisson arrivals, but what was sent was not Poisson (the run's check of its sends):
    /// the latencies describe other traffic than was asked.
    NotPoisson {
        /// The generator's send lag p99, µs: a generator behind its schedule bunches its
        /// sends.
        lag_p99_us: u64,
        /// The check's largest Kolmogorov–Smirnov statistic…
        statistic: f64,
        /// …and its critical value.
        critical: f64,
    },
    /// Where a run's verdict was found: the first step of a staged run to show it.
    AtStep {
        /// The step's index in the run's stages.
        index: u16,
        /// Its name.
        name: String,
    },
}

impl Finding {
    /// What it is evidence for.
    pub fn blame(&self) -> Blame {
        match self {
            Finding::RateShort { .. }
            | Finding::CountShort { .. }
            | Finding::SentLate { .. }
            | Finding::NotPoisson { .. } => Blame::Symptom,
            Finding::CpuBusy { .. }
            | Finding::CpuStarved { .. }
            | Finding::Shortage { .. }
            | Finding::Descriptors { .. }
            | Finding::ConnectionCap { .. }
            | Finding::ShardLimited { .. }
            | Finding::ShardLate { .. }
            | Finding::ShardsIncomplete { .. }
            | Finding::LittleMismatch { .. } => Blame::Generator,
            Finding::ServerFailed { .. }
            | Finding::ServerStatus { .. }
            | Finding::LatencyRising { .. }
            | Finding::SlowToConnect { .. }
            | Finding::Saturated { .. } => Blame::Server,
            Finding::ClockDrift { .. } => Blame::Time,
            Finding::Transient { .. } => Blame::Transient,
            Finding::TooShort { .. }
            | Finding::FewPerUser { .. }
            | Finding::LatencyDrifting { .. }
            | Finding::MostFailed { .. } => Blame::Undecided,
            Finding::NothingSucceeded { .. } => Blame::Nothing,
            Finding::AtStep { .. } => Blame::Context,
            Finding::HeldToCap { .. } => Blame::Asked,
        }
    }
}

/// The diagnosis of a run or a step: which side set the numbers, and the evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnosis {
    /// What the evidence says.
    pub limit: Limit,
    /// The evidence, symptoms first.
    pub findings: Vec<Finding>,
}

impl Default for Diagnosis {
    fn default() -> Self {
        Diagnosis {
            limit: Limit::Neither,
            findings: Vec::new(),
        }
    }
}

/// `d` with the check of a Poisson run's sends: sends that were not Poisson are a symptom
/// of the whole run (the check is over all of its sends), unless nothing succeeded anyway.
pub fn with_sends(d: Diagnosis, arrivals: &crate::summary::Arrivals) -> Diagnosis {
    let Some(c) = arrivals
        .check
        .as_ref()
        .filter(|c| c.finding == crate::summary::SendFinding::NotPoisson)
    else {
        return d;
    };
    if d.limit == Limit::NothingSucceeded {
        return d;
    }
    let worse = if c.gaps.statistic / c.gaps.critical.max(f64::MIN_POSITIVE)
        >= c.spans.statistic / c.spans.critical.max(f64::MIN_POSITIVE)
    {
        c.gaps
    } else {
        c.spans
    };
    let mut findings = d.findings;
    findings.push(Finding::NotPoisson {
        lag_p99_us: c.lag_p99_us,
        statistic: worse.statistic,
        critical: worse.critical,
    });
    Diagnosis::of(findings)
}

impl Diagnosis {
    /// True when the generator was a limit (alone or with the server): the numbers then
    /// describe the generator at least in part.
    pub fn generator_limited(&self) -> bool {
        matches!(self.limit, Limit::Generator | Limit::Both)
    }

    /// The findings that are evidence for `blame`.
    pub fn on(&self, blame: Blame) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| f.blame() == blame)
    }

    /// The diagnosis `findings` make. Nothing succeeding says the most; then a side with
    /// evidence is a limit (both when both have it); then a server changing with time; then
    /// a symptom no side explains, or too little to judge, is "cannot tell"; a transient
    /// alone held nothing back.
    pub fn of(findings: Vec<Finding>) -> Diagnosis {
        let has = |b: Blame| findings.iter().any(|f| f.blame() == b);
        let limit = if has(Blame::Nothing) {
            Limit::NothingSucceeded
        } else {
            match (has(Blame::Generator), has(Blame::Server)) {
                (true, true) => Limit::Both,
                (true, false) => Limit::Generator,
                (false, true) => Limit::Server,
                _ if has(Blame::Time) => Limit::ChangedWithTime,
                _ if has(Blame::Symptom) || has(Blame::Undecided) => Limit::CannotTell,
                _ if has(Blame::Transient) => Limit::Transient,
                _ => Limit::Neither,
            }
        };
        Diagnosis { limit, findings }
    }
}
