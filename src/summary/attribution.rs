//! Who set the numbers: the generator, the server, both or neither, decided from evidence.
//!
//! A symptom (the rate not held, requests leaving late) says that something fell short, not
//! what. The generator is named only on its own evidence (its CPU, the run queue its threads
//! waited in, its ports and descriptors, a connection cap too small for the asked rate); the
//! server on its own (refusals, resets, timeouts, overload statuses, latency climbing through
//! the run, connections slow to open). Each finding keeps its numbers; the renderers turn
//! them into words.

use crate::record::IntervalRecord;
use crate::sample::ErrorKind;
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
/// Latency counts as climbing when the last third of the run's median is at least this
/// many times the first third's…
pub const RISE_FACTOR: f64 = 2.0;
/// …and higher by at least this much (a 1 ms → 2 ms change is noise, not a queue).
pub const RISE_MIN: Duration = Duration::from_millis(10);

/// Which side set the run's numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// Neither: the load left as asked and the server kept up with it.
    Neither,
    /// The generator ran short of its own resources: the numbers describe it, not the server.
    Generator,
    /// The server could not keep up: it refused, failed or queued the load.
    Server,
    /// Both sides show evidence of a limit.
    Both,
    /// The load did not leave as asked and neither side shows why.
    Unexplained,
}

/// The side a finding is evidence for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blame {
    /// A symptom: something fell short, and it does not say what.
    Symptom,
    /// The generator.
    Generator,
    /// The server.
    Server,
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
    /// Requests left later than they were due.
    SentLate {
        /// Lag p99, µs.
        p99_us: u64,
        /// Largest lag, µs.
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
    /// Latency climbed through the run: requests queued at the server.
    LatencyRising {
        /// Median latency over the first third of the run, µs.
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
    /// Requests waited for connections that were slow to open (TCP connect, TLS handshake).
    SlowToConnect {
        /// Connect p99, µs.
        connect_p99_us: u64,
        /// TLS handshake p99, µs (0 without TLS).
        tls_p99_us: u64,
    },
}

impl Finding {
    /// The side it is evidence for.
    pub fn blame(&self) -> Blame {
        match self {
            Finding::RateShort { .. } | Finding::CountShort { .. } | Finding::SentLate { .. } => {
                Blame::Symptom
            }
            Finding::CpuBusy { .. }
            | Finding::CpuStarved { .. }
            | Finding::Shortage { .. }
            | Finding::Descriptors { .. }
            | Finding::ConnectionCap { .. }
            | Finding::ShardLimited { .. }
            | Finding::ShardLate { .. }
            | Finding::ShardsIncomplete { .. } => Blame::Generator,
            Finding::ServerFailed { .. }
            | Finding::ServerStatus { .. }
            | Finding::LatencyRising { .. }
            | Finding::SlowToConnect { .. } => Blame::Server,
        }
    }
}

/// The verdict on a run or a step: which side set the numbers, and the evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attribution {
    /// Which side.
    pub limit: Limit,
    /// The evidence, symptoms first.
    pub findings: Vec<Finding>,
}

impl Default for Attribution {
    fn default() -> Self {
        Attribution {
            limit: Limit::Neither,
            findings: Vec::new(),
        }
    }
}

impl Attribution {
    /// True when the generator was a limit (alone or with the server): the numbers then
    /// describe the generator at least in part.
    pub fn generator_limited(&self) -> bool {
        matches!(self.limit, Limit::Generator | Limit::Both)
    }

    /// The findings that are evidence for `blame`.
    pub fn on(&self, blame: Blame) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| f.blame() == blame)
    }
}

/// What was asked of the span judged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Asked {
    /// Nothing to hold (closed model, or a run that did not end normally).
    Nothing,
    /// A rate, req/s, and the rate sent.
    Rate {
        /// Asked.
        asked: f64,
        /// Sent, retries left out.
        sent: f64,
    },
    /// A count of requests (stages judged by count), and the count sent.
    Count {
        /// Asked.
        asked: u64,
        /// Sent, retries left out.
        sent: u64,
    },
}

/// Everything a verdict rests on, for a run or one of its steps.
pub struct Evidence<'a> {
    /// The span judged, merged.
    pub record: &'a IntervalRecord,
    /// What it was asked to send.
    pub asked: Asked,
    /// The generator's CPU as a share of its threads' cores over the span.
    pub cpu_share: f64,
    /// Engine threads.
    pub threads: usize,
    /// Run-queue wait as a share of the threads' wall time, when it could be read.
    pub waiting_share: Option<f64>,
    /// Most descriptors open, and the open-files limit.
    pub descriptors: Option<(u64, u64)>,
    /// The connection cap, when one connection carries one request at a time (HTTP/1.1
    /// in the open model): Little's law then bounds the rate it can carry.
    pub connection_cap: Option<u32>,
    /// The median latency of each whole second of the span, in order.
    pub medians_us: &'a [u64],
}

/// Failures that say the server could not take the load (as opposed to a misconfiguration
/// such as a certificate it refuses).
fn overload(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::Refused
            | ErrorKind::Reset
            | ErrorKind::Closed
            | ErrorKind::Timeout
            | ErrorKind::ConnectTimeout
            | ErrorKind::GoAway
            | ErrorKind::StreamReset
    )
}

/// Failures that are the generator's own shortage: it could not open or queue a request.
fn shortage(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::PortExhaustion | ErrorKind::TooManyOpenFiles | ErrorKind::Backlog
    )
}

/// Judges the span.
pub fn attribute(e: &Evidence<'_>) -> Attribution {
    let r = e.record;
    let mut findings = Vec::new();
    match e.asked {
        Asked::Rate { asked, sent } if asked > 0.0 && sent < asked * RATE_TOLERANCE => {
            findings.push(Finding::RateShort { asked, sent });
        }
        Asked::Count { asked, sent } if (sent as f64) < asked as f64 * RATE_TOLERANCE => {
            findings.push(Finding::CountShort { asked, sent });
        }
        _ => {}
    }
    let lag = super::Stats::of(&r.lag);
    let late = lag.p99_us > LAG_LIMIT.as_micros() as u64;
    if late {
        findings.push(Finding::SentLate {
            p99_us: lag.p99_us,
            max_us: lag.max_us,
        });
    }
    let fell_short = !findings.is_empty();

    // The generator's side.
    if e.cpu_share >= CPU_LIMIT {
        findings.push(Finding::CpuBusy {
            share: e.cpu_share,
            threads: e.threads,
        });
    }
    // Waiting for a CPU is only a limit when something fell short: a generator that
    // kept up while sharing its cores was not held back by them.
    if let Some(waiting_share) = e.waiting_share.filter(|w| *w >= STARVED_LIMIT) {
        if fell_short {
            findings.push(Finding::CpuStarved { waiting_share });
        }
    }
    for (key, n) in &r.errors {
        if shortage(key.0) {
            findings.push(Finding::Shortage {
                error: key.0.key().into(),
                count: *n,
            });
        }
    }
    if let Some((peak, limit)) = e.descriptors {
        if limit > 0 && peak * 10 >= limit * 9 {
            findings.push(Finding::Descriptors { peak, limit });
        }
    }
    let service = super::Stats::of(&r.service_ok());
    if let (Some(cap), Asked::Rate { asked, .. }) = (e.connection_cap, e.asked) {
        let needed = asked * service.mean_us / 1e6;
        if fell_short && needed >= f64::from(cap) * CAP_SHARE {
            findings.push(Finding::ConnectionCap {
                max_connections: cap,
                needed,
                service_mean_us: service.mean_us,
            });
        }
    }

    // The server's side.
    let completed = r.completed().max(1) as f64;
    for (key, n) in &r.errors {
        let share = *n as f64 / completed;
        if overload(key.0) && share >= SERVER_FAILURE_SHARE {
            findings.push(Finding::ServerFailed {
                error: key.0.key().into(),
                count: *n,
                share,
            });
        }
    }
    for (status, n) in r.status.iter() {
        let share = *n as f64 / completed;
        if (*status == 429 || *status >= 500) && share >= SERVER_FAILURE_SHARE {
            findings.push(Finding::ServerStatus {
                status: *status,
                count: *n,
                share,
            });
        }
    }
    // Times are the generator's own readings: a generator short of CPU reads its replies and
    // its connections' completions late, so a climb or a slow connect it measured then says
    // nothing about the server. Counts (refusals, statuses) are still the server's.
    let own_clock_late = findings
        .iter()
        .any(|f| matches!(f, Finding::CpuBusy { .. } | Finding::CpuStarved { .. }));
    if let Some((first, last)) = rise(e.medians_us).filter(|_| !own_clock_late) {
        // Latency from the intended time includes the lag: only a rise the lag does not
        // account for happened at the server.
        if last - first > lag.p99_us {
            findings.push(Finding::LatencyRising {
                first_p50_us: first,
                last_p50_us: last,
            });
        }
    }
    if late && !own_clock_late {
        let connect = super::Stats::of(&r.connect).p99_us;
        let tls = super::Stats::of(&r.tls_handshake).p99_us;
        if connect + tls > LAG_LIMIT.as_micros() as u64 {
            findings.push(Finding::SlowToConnect {
                connect_p99_us: connect,
                tls_p99_us: tls,
            });
        }
    }

    Attribution::of(findings)
}

impl Attribution {
    /// The verdict `findings` make: a side is a limit when there is evidence on it; a
    /// symptom with no evidence on either side is unexplained.
    pub fn of(findings: Vec<Finding>) -> Attribution {
        let has = |b: Blame| findings.iter().any(|f| f.blame() == b);
        let limit = match (has(Blame::Generator), has(Blame::Server)) {
            (true, true) => Limit::Both,
            (true, false) => Limit::Generator,
            (false, true) => Limit::Server,
            (false, false) if has(Blame::Symptom) => Limit::Unexplained,
            (false, false) => Limit::Neither,
        };
        Attribution { limit, findings }
    }
}

/// The medians of the first and last thirds of `medians_us`, when the last is a climb.
fn rise(medians_us: &[u64]) -> Option<(u64, u64)> {
    if medians_us.len() < 3 {
        return None;
    }
    let third = medians_us.len() / 3;
    let median = |s: &[u64]| {
        let mut v = s.to_vec();
        v.sort_unstable();
        v[v.len() / 2]
    };
    let first = median(&medians_us[..third]);
    let last = median(&medians_us[medians_us.len() - third..]);
    let climbed = last as f64 >= first as f64 * RISE_FACTOR
        && last.saturating_sub(first) >= RISE_MIN.as_micros() as u64;
    climbed.then_some((first, last))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::ErrorKindKey;

    fn evidence<'a>(r: &'a IntervalRecord, asked: Asked, medians: &'a [u64]) -> Evidence<'a> {
        Evidence {
            record: r,
            asked,
            cpu_share: 0.05,
            threads: 1,
            waiting_share: Some(0.0),
            descriptors: Some((20, 1024)),
            connection_cap: None,
            medians_us: medians,
        }
    }

    fn record(answered: u64, lag_ms: u64) -> IntervalRecord {
        let mut r = IntervalRecord::new(0);
        for _ in 0..answered {
            r.record(&crate::sample::Sample {
                outcome: crate::sample::Outcome::Status(200),
                latency: Duration::from_millis(2 + lag_ms),
                service: Duration::from_millis(2),
                lag: Duration::from_millis(lag_ms),
                connect: None,
                tls_handshake: None,
                first_byte: Some(Duration::from_millis(1)),
                bytes_in: 10,
                bytes_out: 0,
                retried: false,
                request: 0,
                stage: None,
                expected: true,
                iteration: None,
            });
        }
        r
    }

    #[test]
    fn a_run_that_kept_up_blames_nobody() {
        let r = record(1000, 0);
        let a = attribute(&evidence(
            &r,
            Asked::Rate {
                asked: 100.0,
                sent: 100.0,
            },
            &[2000; 5],
        ));
        assert_eq!(a.limit, Limit::Neither);
        assert!(a.findings.is_empty(), "{a:?}");
    }

    #[test]
    fn lateness_alone_names_nobody() {
        // Late and short with the generator idle and the server answering: a symptom, no
        // evidence for either side.
        let r = record(1000, 50);
        let a = attribute(&evidence(
            &r,
            Asked::Rate {
                asked: 100.0,
                sent: 80.0,
            },
            &[2000; 5],
        ));
        assert_eq!(a.limit, Limit::Unexplained, "{a:?}");
    }

    #[test]
    fn refusals_name_the_server_with_their_share() {
        let mut r = record(900, 30);
        r.errors.insert(ErrorKindKey(ErrorKind::Reset), 100);
        r.status.insert(503, 50);
        let a = attribute(&evidence(
            &r,
            Asked::Rate {
                asked: 3000.0,
                sent: 2000.0,
            },
            &[2000; 5],
        ));
        assert_eq!(a.limit, Limit::Server, "{a:?}");
        assert!(
            a.findings.iter().any(
                |f| matches!(f, Finding::ServerFailed { error, count: 100, share }
                if error == "reset" && (0.09..=0.1).contains(share))
            ),
            "{a:?}"
        );
        assert!(a
            .on(Blame::Server)
            .any(|f| matches!(f, Finding::ServerStatus { status: 503, .. })));
    }

    #[test]
    fn a_rare_reset_is_an_incident_not_a_limit() {
        let mut r = record(10_000, 0);
        r.errors.insert(ErrorKindKey(ErrorKind::Reset), 3);
        let a = attribute(&evidence(&r, Asked::Nothing, &[2000; 5]));
        assert_eq!(a.limit, Limit::Neither, "{a:?}");
    }

    #[test]
    fn the_generators_own_shortages_name_it() {
        let mut r = record(100, 40);
        r.errors
            .insert(ErrorKindKey(ErrorKind::TooManyOpenFiles), 9);
        let mut e = evidence(&r, Asked::Nothing, &[]);
        e.descriptors = Some((39, 40));
        let a = attribute(&e);
        assert_eq!(a.limit, Limit::Generator, "{a:?}");
        assert!(a.findings.contains(&Finding::Descriptors {
            peak: 39,
            limit: 40
        }));
    }

    #[test]
    fn a_busy_or_starved_cpu_names_the_generator() {
        let r = record(1000, 30);
        let mut e = evidence(
            &r,
            Asked::Rate {
                asked: 1000.0,
                sent: 900.0,
            },
            &[],
        );
        e.cpu_share = 0.97;
        assert_eq!(attribute(&e).limit, Limit::Generator);
        e.cpu_share = 0.3;
        e.waiting_share = Some(0.45);
        let a = attribute(&e);
        assert_eq!(a.limit, Limit::Generator, "{a:?}");
        // The same wait with the rate held and nothing late held nothing back.
        let on_time = record(1000, 0);
        let mut e = evidence(
            &on_time,
            Asked::Rate {
                asked: 1000.0,
                sent: 1000.0,
            },
            &[],
        );
        e.waiting_share = Some(0.45);
        assert_eq!(attribute(&e).limit, Limit::Neither);
    }

    #[test]
    fn a_cap_too_small_for_the_rate_names_the_generator() {
        // 500 req/s at 2 ms each need one connection; a cap of 1 is past 90 % of that.
        let r = record(500, 200);
        let mut e = evidence(
            &r,
            Asked::Rate {
                asked: 500.0,
                sent: 450.0,
            },
            &[],
        );
        e.connection_cap = Some(1);
        let a = attribute(&e);
        assert_eq!(a.limit, Limit::Generator, "{a:?}");
        e.connection_cap = Some(100);
        assert_eq!(attribute(&e).limit, Limit::Unexplained);
    }

    #[test]
    fn latency_climbing_beyond_the_lag_names_the_server() {
        let r = record(1000, 0);
        let medians = [2_000, 3_000, 20_000, 60_000, 120_000, 200_000];
        let a = attribute(&evidence(&r, Asked::Nothing, &medians));
        assert_eq!(a.limit, Limit::Server, "{a:?}");
        assert!(a.findings.contains(&Finding::LatencyRising {
            first_p50_us: 3_000,
            last_p50_us: 200_000
        }));
        // A climb of a few milliseconds is not a queue.
        let small = [1_000, 1_000, 2_000, 3_000, 3_000, 3_000];
        assert_eq!(
            attribute(&evidence(&r, Asked::Nothing, &small)).limit,
            Limit::Neither
        );
    }

    #[test]
    fn a_starved_generators_own_timings_do_not_name_the_server() {
        // Starved of CPU, the generator read its connections' completions and its replies
        // late: the slow connects and the climb it measured are its own, not the server's.
        let mut r = record(1000, 30);
        r.connect.record(Duration::from_secs(6));
        let medians = [2_000, 3_000, 20_000, 60_000, 120_000, 200_000];
        let mut e = evidence(
            &r,
            Asked::Rate {
                asked: 5000.0,
                sent: 250.0,
            },
            &medians,
        );
        e.waiting_share = Some(0.4);
        let a = attribute(&e);
        assert_eq!(a.limit, Limit::Generator, "{a:?}");
        // With its CPU to spare, the same readings are the server's.
        e.waiting_share = Some(0.0);
        assert_eq!(attribute(&e).limit, Limit::Server);
    }

    #[test]
    fn evidence_on_both_sides_says_both() {
        let mut r = record(1000, 30);
        r.errors.insert(ErrorKindKey(ErrorKind::Closed), 200);
        r.errors.insert(ErrorKindKey(ErrorKind::PortExhaustion), 40);
        let a = attribute(&evidence(&r, Asked::Nothing, &[]));
        assert_eq!(a.limit, Limit::Both, "{a:?}");
        assert!(a.generator_limited());
    }
}
