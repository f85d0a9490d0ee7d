//! The diagnosis of one span (a run, a step, a probe, a shard) from its evidence.

use super::trend::{self, Unsteady};
use super::{
    Diagnosis, Finding, ReasonCount, CAP_SHARE, CPU_LIMIT, LAG_LIMIT, MIN_ANSWERS, MIN_SECS,
    MOST_FAILED, RATE_TOLERANCE, SERVER_FAILURE_SHARE, STARVED_LIMIT,
};
use crate::record::IntervalRecord;
use crate::sample::ErrorKind;
use crate::store::{IntervalDigest, RequestMeta};
use crate::summary::Stats;

/// Most reasons a "nothing succeeded" finding keeps.
const MOST_REASONS: usize = 3;

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

/// Everything a diagnosis rests on, for a run or one of its steps.
pub struct Evidence<'a> {
    /// The span judged, merged.
    pub record: &'a IntervalRecord,
    /// The run's requests, in plan order (their expectations classify failures).
    pub requests: &'a [RequestMeta],
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
    /// The open model (requests sent on a schedule, whatever the server does): requests can
    /// pile up at the server; in the closed model its users wait instead.
    pub open_model: bool,
    /// Poisson arrivals: the count sent in a span differs from rate × time by chance (its
    /// standard deviation is the square root of the count), so "short" allows for that.
    pub poisson: bool,
    /// The span's whole seconds at one load, in order: their trends are judged. Empty when
    /// the load changed through the span (a sweep's whole run): a trend then follows the
    /// load, and each step is judged on its own.
    pub seconds: &'a [IntervalDigest],
    /// How long the span is judged over, in whole seconds; `None` for a span counted in
    /// requests (a closed-model step), which is not judged by time.
    pub whole_secs: Option<f64>,
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
            // Sent and still unanswered a grace after the stop: the server was holding it.
            | ErrorKind::Unanswered
    )
}

/// Failures that are the generator's own shortage: it could not open or queue a request.
fn shortage(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::PortExhaustion | ErrorKind::TooManyOpenFiles | ErrorKind::Backlog
    )
}

/// Every request's failures by reason, summed over the requests, most frequent first.
fn reasons(e: &Evidence<'_>) -> Vec<ReasonCount> {
    let mut by: std::collections::BTreeMap<crate::summary::Reason, u64> = Default::default();
    for row in crate::summary::failures::rows(e.requests, &e.record.requests) {
        *by.entry(row.reason).or_default() += row.count;
    }
    let mut out: Vec<ReasonCount> = by
        .into_iter()
        .map(|(reason, count)| ReasonCount { reason, count })
        .collect();
    out.sort_by_key(|r| std::cmp::Reverse(r.count));
    out.truncate(MOST_REASONS);
    out
}

/// Diagnoses the span.
pub fn diagnose(e: &Evidence<'_>) -> Diagnosis {
    let r = e.record;
    let completed = r.completed();
    // Saturating: a damaged line the store let through must not wrap the counts around.
    let succeeded: u64 = r
        .requests
        .iter()
        .map(|q| q.count.saturating_sub(q.failures))
        .fold(0, u64::saturating_add);
    if completed > 0 && succeeded == 0 {
        return Diagnosis::of(vec![Finding::NothingSucceeded {
            completed,
            reasons: reasons(e),
        }]);
    }

    let mut findings = Vec::new();
    // Failures the server's overload does not explain (those are its evidence, below).
    let overloaded: u64 = r
        .errors
        .iter()
        .filter(|(k, _)| overload(k.0))
        .map(|(_, n)| n)
        .sum::<u64>()
        + r.status
            .iter()
            .filter(|(s, _)| **s == 429 || **s >= 500)
            .map(|(_, n)| n)
            .sum::<u64>();
    let failed = completed.saturating_sub(succeeded);
    if completed > 0 && failed.saturating_sub(overloaded) as f64 >= completed as f64 * MOST_FAILED {
        findings.push(Finding::MostFailed {
            share: failed as f64 / completed as f64,
            completed,
            reasons: reasons(e),
        });
    }
    let mut rate_held = true;
    // How many fewer than `n` asked may leave: the tolerance, and for Poisson arrivals
    // three standard deviations of the count.
    let slack = |n: f64| {
        let even = n * (1.0 - RATE_TOLERANCE);
        if e.poisson {
            even.max(3.0 * n.sqrt())
        } else {
            even
        }
    };
    let secs = e.whole_secs.filter(|s| *s > 0.0).unwrap_or(1.0);
    match e.asked {
        Asked::Rate { asked, sent }
            if asked > 0.0 && sent * secs < asked * secs - slack(asked * secs) =>
        {
            findings.push(Finding::RateShort { asked, sent });
            rate_held = false;
        }
        Asked::Count { asked, sent } if (sent as f64) < asked as f64 - slack(asked as f64) => {
            findings.push(Finding::CountShort { asked, sent });
            rate_held = false;
        }
        _ => {}
    }
    let lag = Stats::of(&r.lag);
    let late = lag.p99_us > LAG_LIMIT.as_micros() as u64;
    if late {
        findings.push(Finding::SentLate {
            p99_us: lag.p99_us,
            max_us: lag.max_us,
        });
    }
    let fell_short = findings.iter().any(|f| f.blame() == super::Blame::Symptom);

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
    let service = Stats::of(&r.service_ok());
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
    let share_of = |n: u64| n as f64 / completed.max(1) as f64;
    for (key, n) in &r.errors {
        if overload(key.0) && share_of(*n) >= SERVER_FAILURE_SHARE {
            findings.push(Finding::ServerFailed {
                error: key.0.key().into(),
                count: *n,
                share: share_of(*n),
            });
        }
    }
    for (status, n) in r.status.iter() {
        if (*status == 429 || *status >= 500) && share_of(*n) >= SERVER_FAILURE_SHARE {
            findings.push(Finding::ServerStatus {
                status: *status,
                count: *n,
                share: share_of(*n),
            });
        }
    }
    // Times are the generator's own readings: a generator short of CPU reads its replies and
    // its connections' completions late, so a climb or a slow connect it measured then says
    // nothing about the server. Counts (refusals, statuses) are still the server's.
    let own_clock_late = findings
        .iter()
        .any(|f| matches!(f, Finding::CpuBusy { .. } | Finding::CpuStarved { .. }));
    // Latency from the intended time includes the lag: only a rise the lag's own rise does
    // not account for happened at the server.
    let lag_rise = trend::lag_rise(e.seconds);
    let beyond_lag = |rise: &trend::Rise| rise.last_p50_us - rise.first_p50_us > lag_rise;
    let rise = trend::rise(e.seconds).filter(|rise| !own_clock_late && beyond_lag(rise));
    // The seconds in which requests first filled the pipeline (sent, not yet answered)
    // are left out of the queue's evidence: the backlog then is the latency's, not a queue's.
    let fill = 1 + (e.seconds.first().map_or(0, |d| d.p50_us) / 1_000_000) as usize;
    let settled = trend::while_sending(e.seconds.get(fill..).unwrap_or_default());
    let offered = settled.iter().map(|d| d.sent).sum::<u64>() as f64 / settled.len().max(1) as f64;
    let queue = if e.open_model {
        trend::queue(offered, &settled)
    } else {
        Vec::new()
    };
    if let Some(rise) = rise {
        // A server slower each second is queueing only when requests pile up: it completes
        // less than it is sent, or more are in flight each second. Completing all it is
        // sent while slowing, it changed with time. (A closed model cannot pile up: its
        // users wait; slower at the same users, the server changed.)
        let piled = queue.iter().any(|q| {
            matches!(
                q,
                Unsteady::BacklogGrowing { .. } | Unsteady::ThroughputShort { .. }
            )
        });
        findings.push(if piled {
            Finding::LatencyRising {
                first_p50_us: rise.first_p50_us,
                last_p50_us: rise.last_p50_us,
            }
        } else {
            Finding::LatencyDrifting {
                first_p50_us: rise.first_p50_us,
                last_p50_us: rise.last_p50_us,
                us_per_sec: rise.us_per_sec,
                secs: rise.secs,
            }
        });
    } else if let Some(rise) =
        trend::short_rise(e.seconds).filter(|rise| !own_clock_late && rate_held && beyond_lag(rise))
    {
        // Too few seconds for a trend (a sweep's 3-second step): latency climbing from the
        // first second to the last while the server completed less than it was sent, the
        // load sent as asked, is a queue all the same. Without both, nothing is said: a
        // span whose settled seconds completed what they were sent kept up.
        let short = queue
            .iter()
            .any(|q| matches!(q, Unsteady::ThroughputShort { .. }));
        if short {
            findings.push(Finding::LatencyRising {
                first_p50_us: rise.first_p50_us,
                last_p50_us: rise.last_p50_us,
            });
        }
    }

    let connect = Stats::of(&r.connect).p99_us;
    let tls = Stats::of(&r.tls_handshake).p99_us;
    let decisive = findings.iter().any(|f| {
        matches!(
            f.blame(),
            super::Blame::Generator | super::Blame::Server | super::Blame::Time
        ) || matches!(
            f,
            Finding::LatencyDrifting { .. } | Finding::MostFailed { .. }
        )
    });
    // Late only for a moment, with the load held and no side at a limit: the requests that
    // waited for connections being opened (or for one slow second) are a transient.
    let moment = (late && rate_held && !decisive)
        .then(|| trend::moment(e.seconds))
        .flatten();
    if let Some(m) = moment {
        findings.retain(|f| !matches!(f, Finding::SentLate { .. }));
        findings.push(Finding::Transient {
            cause: m.cause,
            seconds: m.seconds,
            lag_p99_us: m.lag_p99_us,
            connect_p99_us: connect,
            tls_p99_us: tls,
        });
    } else if late && !own_clock_late && connect + tls > LAG_LIMIT.as_micros() as u64 {
        findings.push(Finding::SlowToConnect {
            connect_p99_us: connect,
            tls_p99_us: tls,
        });
    }

    let d = Diagnosis::of(findings);
    // "Kept up" needs enough of a span to be said; a limit found on evidence stands. In the
    // open model it also needs a second after the pipeline filled: a span whose latency
    // took all its seconds to fill (a 2 s step answered in 1.5 s) never showed whether the
    // server completed what it was sent, so it cannot be said to have kept up.
    let secs = e.whole_secs.unwrap_or(f64::INFINITY);
    let unsettled = e.open_model && !e.seconds.is_empty() && settled.is_empty();
    if !d.limit.is_limit() && (secs < MIN_SECS || completed < MIN_ANSWERS || unsettled) {
        let mut findings = d.findings;
        findings.push(Finding::TooShort {
            secs: e.whole_secs.unwrap_or(0.0),
            completed,
            needed_secs: MIN_SECS.max(fill as f64 + 1.0),
            needed_answers: MIN_ANSWERS,
        });
        return Diagnosis::of(findings);
    }
    d
}
