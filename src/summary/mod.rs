//! The model every report renders: built from a stored run's intervals, never from the engine.
//!
//! # One set of counts
//! Every count here is computed once, and every format (text, markdown, JSON, HTML, JUnit,
//! figures) reads it from the summary, never from the stored run:
//! - **Which requests**: the measured ones, those sent for a stage that is not a warm-up,
//!   wherever their answers fell (the one definition is in `store`'s `measured`). Warm-up
//!   requests are in the generator's numbers (`generator`, `verdict`) and in no other.
//! - **`requests.total`** is their completions (answered or failed) = the status codes +
//!   the transport errors = the per-request rows (and the aggregated row) = the measured
//!   stages' rows = the per-second rows' measured completions (`timeline`,
//!   [`IntervalDigest::measured_completed`]). [`Summary::count_identity`] checks it.
//! - **Answered OK** is a completion that met its request's expectations (by default a 2xx or
//!   3xx; a status list or a body the request expects otherwise): `success_ratio`, the
//!   latency histograms, throughput and the figures' OK per second use this split, and a
//!   failure is every other completion, by reason in `failures`.
//! - **`requests.sent`** is the measured requests sent; the rates are in `span`'s doc.

mod arrivals;
mod by_flow;
mod by_request;
mod by_stage;
pub mod confidence;
pub mod diagnosis;
pub(crate) mod failures;
pub mod fit;
mod generator;
mod identity;
pub mod live;
pub mod matrix;
mod outputs;
pub mod regression;
mod server;
mod shards;
mod slo;
mod span;
mod stats;
mod whole;

pub use arrivals::{Arrivals, Fit, SendCheck, SendFinding, MIN_SPANS};
pub use by_flow::FlowRow;
pub use by_request::{RequestRow, ROW_QUANTILES};
pub use by_stage::StageRow;
pub use confidence::{Interval, PercentileIntervals};
pub use diagnosis::{Blame, Diagnosis, Finding, Limit};
pub use failures::{FailureRow, Reason};
pub use generator::GeneratorHealth;
pub use identity::Mismatch;
pub use outputs::{DropReason, OutputKind, OutputRecord};
pub use server::{ServerHealth, TreeSummary};
pub use shards::{ShardRow, Shards};
pub use slo::{measure, Measured, SloCi, SloVerdict};
pub use stats::Stats;
// The safety stop as stored is the summary's model too: reports name it without the store.
pub use crate::store::Aborted;

use crate::plan::Load;
use crate::record::StatusClass;
use crate::sample::Side;
use crate::store::{Counting, EndStatus, IntervalDigest, StoredRun};
use serde::{Deserialize, Serialize};
use span::Span;
use std::collections::{BTreeMap, BTreeSet};

/// A run, summarised.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    /// The target URL.
    pub target: String,
    /// HTTP method, when the run sent one kind of request.
    pub method: Option<String>,
    /// The load model and its parameter.
    pub load: Load,
    /// The closed model's cap on requests started per second (`--max-rate`), when asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rate: Option<crate::plan::Rate>,
    /// How the open model's arrivals were spaced, and whether a Poisson run's sends were
    /// Poisson (absent from summaries stored before it was kept: even).
    #[serde(default)]
    pub arrivals: Arrivals,
    /// The HTTP version spoken.
    pub protocol: String,
    /// What the preflight noticed about the server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<crate::sample::Notice>,
    /// Wall-clock start.
    pub started_at: String,
    /// The generator machine's host name (empty in summaries stored before it was kept).
    #[serde(default)]
    pub host: String,
    /// Which part of a sharded test the run was, when it was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::store::ShardMeta>,
    /// Why the numbers cover less than the whole run, when they do.
    pub partial: Option<String>,
    /// Why the run stopped itself before its last stage (a sweep passing its limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<String>,
    /// The safety stop's conditions the run was watched with (`--abort-when`), as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub abort_when: Vec<String>,
    /// The safety stop that ended the run (`--abort-when`): which condition held, from
    /// which second, and when it stopped the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborted: Option<Aborted>,
    /// Counts and rates.
    pub requests: Requests,
    /// How long the run took.
    pub duration: Durations,
    /// Latency from the intended send time, of the requests that got an expected answer.
    pub latency: Stats,
    /// Service time from the actual send, of the same requests.
    pub service_time: Stats,
    /// Latency of the requests that did not (an error, or a status not expected), when any
    /// failed: kept apart so that fast failures never make the server look fast.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_latency: Option<Stats>,
    /// TCP connect times, when connections were opened.
    pub connect: Option<Stats>,
    /// TLS handshake times, when TLS was used.
    pub tls_handshake: Option<Stats>,
    /// Time to the response head.
    pub first_byte: Option<Stats>,
    /// Latency per status class.
    pub classes: BTreeMap<StatusClass, ClassSummary>,
    /// Body bytes in and out.
    pub bytes: Bytes,
    /// Share of requests that got an answer they expect (by default 2xx or 3xx).
    pub success_ratio: f64,
    /// Responses per status code.
    pub status_codes: BTreeMap<u16, u64>,
    /// Failures, each kind with its count and the side it is blamed on (the Error Set).
    pub errors: Vec<ErrorEntry>,
    /// The Failures table: each request's failures by reason, most frequent first.
    #[serde(default)]
    pub failures: Vec<FailureRow>,
    /// Whether the generator kept up, and what it cost.
    pub generator: GeneratorHealth,
    /// What the evidence says: which side set the numbers, or that nothing succeeded, a
    /// transient, a server changing with time, or that it cannot tell; with the evidence.
    #[serde(default)]
    pub verdict: Diagnosis,
    /// The watched server (`--monitor-pid` or `--monitor-prometheus`), if one was.
    #[serde(default)]
    pub server: Option<ServerHealth>,
    /// One row per named request, in plan order.
    pub by_request: Vec<RequestRow>,
    /// The same over all requests.
    pub aggregated: Option<RequestRow>,
    /// One row per flow, in plan order: its iterations and their times.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<FlowRow>,
    /// Each objective of the run, and whether it held.
    pub slo: Vec<SloVerdict>,
    /// One row per stage of a staged load.
    pub stages: Vec<StageRow>,
    /// How the warm-up was told apart: by the stage each request was sent for, or (runs
    /// stored before that was kept) by whole seconds.
    #[serde(default, skip_serializing_if = "Counting::is_whole")]
    pub counting: Counting,
    /// Seconds of warm-up stages: the requests sent in them are left out of every number
    /// but the generator's.
    #[serde(default)]
    pub warmup_secs: f64,
    /// One entry per second: sent, completed and failed (each with the warm-up's share),
    /// p50/p99 of its measured answers, and the generator's health.
    pub timeline: Vec<IntervalDigest>,
    /// The shards a merged run was made from (`headroom merge`), each judged on its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<Shards>,
    /// What the live outputs (`--push`) sent and dropped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<OutputRecord>,
}

/// Counts and rates, of the measured requests.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Requests {
    /// Requests completed (answered or failed).
    pub total: u64,
    /// Requests sent (retries included).
    pub sent: u64,
    /// Requests sent per second of their sending, retries left out.
    pub rate: f64,
    /// Requests sent a second time, on a fresh connection, because the server had closed
    /// the first one without processing them (HTTP/2 GOAWAY, an idle keep-alive close);
    /// those the server refused are at most about a tenth of the requests sent (each
    /// worker's retry budget), those a graceful GOAWAY passed over are not bounded.
    pub retried: u64,
    /// Completions answered as they expect, per second of the measured span (from the first
    /// measured request's intended send to the last measured answer).
    pub throughput: f64,
}

/// Where the time went.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Durations {
    /// Attack plus wait, in seconds.
    pub total_secs: f64,
    /// From the first to the last request sent.
    pub attack_secs: f64,
    /// From the last request sent to the last response.
    pub wait_secs: f64,
}

/// Latency of one status class.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClassSummary {
    /// Requests in the class.
    pub count: u64,
    /// Their latency.
    pub latency: Stats,
}

/// Body bytes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Bytes {
    /// Response body bytes, total.
    pub in_total: u64,
    /// Per completed request.
    pub in_mean: f64,
    /// Request body bytes, total.
    pub out_total: u64,
    /// Per completed request.
    pub out_mean: f64,
}

/// One kind of failure.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorEntry {
    /// Stable key ("reset", "timeout", "status_503", …).
    pub key: String,
    /// Who is to blame.
    pub side: Side,
    /// What it means.
    pub description: String,
    /// How often it happened.
    pub count: u64,
}

impl Summary {
    /// True unless an objective of the run was not met.
    pub fn slo_met(&self) -> bool {
        self.slo.iter().all(|v| v.met)
    }

    /// True when not one request got an answer it expects: every number describes failures.
    pub fn nothing_succeeded(&self) -> bool {
        self.verdict.limit == Limit::NothingSucceeded
    }

    /// Summarises a stored run (complete or partial).
    pub fn of(run: &StoredRun) -> Summary {
        let total = &run.total;
        let completed = total.completed();
        let successes: u64 = total.requests.iter().map(|r| r.count - r.failures).sum();

        let (attack_secs, wait_secs) = match &run.end {
            Some(end) => (end.attack_secs, end.wait_secs),
            // Without end.json only whole intervals are known.
            None => (run.intervals.len() as f64, 0.0),
        };
        let total_secs = attack_secs + wait_secs;
        // The sending rate is the generator's, warm-up included; rates of what is reported
        // are over the time after the warm-up.
        // Retries are counted apart (`retried`), never in the rate the load was asked at.
        let lead = run
            .meta
            .shard
            .as_ref()
            .map_or(0.0, |s| shard_lead(s.index, s.count, &s.whole_load));
        let generator_rate = send_rate(run.all.sent_first(), attack_secs, lead);
        let warmup_planned: f64 = run
            .meta
            .stages
            .iter()
            .filter(|s| s.warmup)
            .map(|s| s.duration.as_secs_f64())
            .sum();
        // Runs counted by second left out whole seconds (each interval by the stage it
        // began in): a warm-up ending mid-second took that whole second with it.
        let warmup_intervals = run
            .intervals
            .iter()
            .filter(|d| in_warmup(run, d.stage))
            .count() as f64;
        let warmup_secs = if run.counting == Counting::BySecond && warmup_intervals > 0.0 {
            warmup_intervals
        } else {
            warmup_planned
        };
        let span = Span::of(run, attack_secs, total_secs, warmup_secs);
        let measured_secs = span.secs;

        let partial = match (&run.end, run.torn_tail) {
            (None, _) => Some(format!(
                "the run did not finish (killed or crashed): {} whole interval(s) recorded",
                run.intervals.len()
            )),
            (Some(end), _) if end.status == EndStatus::Interrupted => {
                Some("the run was interrupted before its stop condition".into())
            }
            (Some(_), true) => Some("the last interval line was torn and skipped".into()),
            _ => None,
        };
        let shards = shards::of(run);
        // A merged run says which shards it lacks, not that "the run" did not finish.
        let partial = match shards.as_ref().map(shards::partial) {
            Some(Some(why)) => Some(why),
            _ => partial,
        };

        let errors = failures::error_set(
            &total.errors,
            &total.status,
            &run.meta.requests,
            &total.requests,
        );

        let (mut by_request, aggregated) =
            by_request::rows(&run.meta.requests, &total.requests, measured_secs);
        if warmup_secs > 0.0 {
            by_request::warmup_logins(&mut by_request, &run.meta.requests, &run.all.requests);
        }
        let generator = GeneratorHealth::assess(
            run,
            &run.all,
            total_secs,
            generator_rate,
            &generator::seconds_health(run),
        );
        // Stopped before its plan's end: only then did its sending end short of the plan.
        let stopped = run.meta.stop.requests.is_some()
            || run.end.as_ref().is_none_or(|e| {
                e.reason.is_some()
                    || matches!(e.status, EndStatus::Interrupted | EndStatus::Aborted)
            });
        let sending_end = crate::plan::SendingEnd::of(&run.meta.stop, &run.meta.stages);
        let whole = whole::seconds(&sending_end, &run.intervals, attack_secs, stopped);
        let mut stages = by_stage::rows(&by_stage::StageInputs {
            stages: &run.meta.stages,
            load: run.meta.load,
            poisson: run.meta.arrivals.kind() == crate::plan::ArrivalKind::Poisson,
            threads: run.meta.threads,
            connection_cap: generator::connection_cap(run),
            attack_secs,
            stopped,
            whole: &whole,
            run_secs: total_secs,
            by_interval: &run.stages,
            digests: &run.intervals,
            all: &run.all,
            requests: &run.meta.requests,
            flows: &run.meta.flows,
        });
        let think_us = think_per_request_us(run);
        // The closed model's cap: users waiting for its slots waited as asked.
        let cap = run.meta.max_rate.map(|r| r.per_second());
        if matches!(run.meta.load, Load::Closed { .. }) {
            diagnosis::closed::judge_steps(&mut stages, think_us, cap);
        }
        let verdict = if run.meta.stages.is_empty() {
            // One load throughout: its seconds' trends are the run's.
            let seconds = whole_seconds(run, &whole);
            let mut evidence = generator.evidence(run, &run.all, total_secs, &seconds);
            if run.end.is_some() {
                // The seconds sent through whole, as its trend is judged on.
                evidence.whole_secs = Some(seconds.len() as f64);
            }
            let mut d = diagnosis::diagnose(&evidence);
            if let Load::Closed { concurrency } = run.meta.load {
                // As for a closed step: too few requests per user and the users starting and
                // finishing weigh on the throughput.
                let enough = completed as f64
                    >= f64::from(concurrency) * diagnosis::closed::LITTLE_PER_USER as f64;
                if !d.limit.is_limit() && attack_secs > 0.0 && enough {
                    let mean_us = Stats::of(&run.all.latency_ok()).mean_us;
                    let throughput = run.all.completed() as f64 / attack_secs;
                    if let Some(f) = diagnosis::closed::little(
                        f64::from(concurrency),
                        throughput,
                        mean_us,
                        think_us,
                        cap,
                    ) {
                        let mut findings = d.findings;
                        findings.push(f);
                        d = Diagnosis::of(findings);
                    }
                }
            }
            d
        } else {
            // The load changed from step to step: each step is judged on its own seconds,
            // and the whole run only on what spans them (its shortages).
            // Nothing succeeding is said of the measured requests, as every count beside it
            // is (a sweep's warm-ups failing too must not double "every one of the N").
            let measured = diagnosis::diagnose(&generator.evidence(run, total, total_secs, &[]));
            let whole = if measured.limit == Limit::NothingSucceeded {
                measured
            } else {
                diagnosis::diagnose(&generator.evidence(run, &run.all, total_secs, &[]))
            };
            diagnosis::of_staged_run(whole, &stages)
        };
        let arrivals = Arrivals::of(&run.meta, &run.all);
        let verdict = diagnosis::with_sends(verdict, &arrivals);
        let verdict = match &shards {
            Some(s) => shards::judge(verdict, s),
            None => verdict,
        };
        // A warm-up's sends are the generator's: the rate of the measured ones is their
        // stages' (or, for counted steps, over the span they were sent in).
        let rate = match run.counting {
            Counting::ByStage => measured_send_rate(&stages)
                .unwrap_or_else(|| span.send_rate(total.sent_first(), lead)),
            Counting::Whole | Counting::BySecond => generator_rate,
        };
        let per = |x: u64| {
            if completed > 0 {
                x as f64 / completed as f64
            } else {
                0.0
            }
        };
        Summary {
            target: run.meta.target.url.clone(),
            method: match run.meta.requests.as_slice() {
                [only] => Some(only.method.clone()),
                _ => None,
            },
            load: run.meta.load,
            max_rate: run.meta.max_rate,
            arrivals,
            protocol: run.meta.protocol.clone(),
            notices: run.meta.notices.clone(),
            started_at: run.meta.started_at.clone(),
            host: run.meta.host.clone(),
            shard: run.meta.shard.clone(),
            partial,
            stopped_early: run.end.as_ref().and_then(|e| e.reason.clone()),
            abort_when: run.meta.abort_when.clone(),
            aborted: run.end.as_ref().and_then(|e| e.aborted.clone()),
            outputs: run.outputs.clone(),
            requests: Requests {
                total: completed,
                sent: total.sent,
                rate,
                retried: total.retried,
                throughput: span.per_sec(successes),
            },
            duration: Durations {
                total_secs,
                attack_secs,
                wait_secs,
            },
            latency: Stats::of(&total.latency_ok()),
            service_time: Stats::of(&total.service_ok()),
            failed_latency: Stats::of_nonempty(&total.latency_failed()),
            connect: Stats::of_nonempty(&total.connect),
            tls_handshake: Stats::of_nonempty(&total.tls_handshake),
            first_byte: Stats::of_nonempty(&total.first_byte),
            classes: total
                .classes
                .iter()
                .map(|(class, c)| {
                    (
                        *class,
                        ClassSummary {
                            count: c.latency.len(),
                            latency: Stats::of(&c.latency),
                        },
                    )
                })
                .collect(),
            bytes: Bytes {
                in_total: total.bytes_in,
                in_mean: per(total.bytes_in),
                out_total: total.bytes_out,
                out_mean: per(total.bytes_out),
            },
            success_ratio: per(successes),
            status_codes: total.status.clone(),
            errors,
            failures: failures::rows(&run.meta.requests, &total.requests),
            generator,
            verdict,
            server: ServerHealth::of(&measured_intervals(run)),
            by_request,
            aggregated,
            flows: by_flow::rows(&run.meta.flows, &total.flows, measured_secs),
            stages,
            slo: slo::judge(
                &run.meta.slo,
                &run.meta.requests,
                &total.requests,
                measured_secs,
            ),
            counting: run.counting,
            warmup_secs,
            timeline: run.intervals.clone(),
            shards,
        }
    }
}

/// Requests sent per second of attack: from the first to the last sent, so a run of `n`
/// requests spans `n - 1` gaps, and `lead` gaps more before its first (see [`shard_lead`]).
fn send_rate(sent: u64, attack_secs: f64, lead: f64) -> f64 {
    if attack_secs > 0.0 && sent > 1 {
        (sent as f64 - 1.0 + lead) / attack_secs
    } else {
        sent as f64
    }
}

/// The part of one of its own gaps before shard `index` of `count` sends its first request
/// of an open-model test: its clock starts at the common start, and its first request is
/// the whole schedule's `index`-th, `index / count` of the shard's gap later.
fn shard_lead(index: u32, count: u32, whole: &crate::plan::Load) -> f64 {
    match whole {
        crate::plan::Load::Open { .. } if count > 0 => f64::from(index) / f64::from(count),
        _ => 0.0,
    }
}

/// Whether an interval that began in `stage` is a warm-up's.
fn in_warmup(run: &StoredRun, stage: Option<u16>) -> bool {
    stage
        .and_then(|i| run.meta.stages.get(usize::from(i)))
        .is_some_and(|s| s.warmup)
}

/// The intervals outside warm-up stages, or every interval when all were warm-up: the
/// server's numbers are of the load the run reports, like the rest.
fn measured_intervals(run: &StoredRun) -> Vec<IntervalDigest> {
    let measured: Vec<IntervalDigest> = run
        .intervals
        .iter()
        .filter(|d| !in_warmup(run, d.stage))
        .cloned()
        .collect();
    if measured.iter().any(|d| d.server.is_some()) {
        measured
    } else {
        run.intervals.clone()
    }
}

/// Each second of the measured attack sent through whole (`whole`), in order: warm-up
/// seconds, a partial last second and the wait for the last answers are left out, so a
/// trend is the load's, not the run's edges'.
fn whole_seconds(run: &StoredRun, whole: &BTreeSet<u64>) -> Vec<IntervalDigest> {
    run.intervals
        .iter()
        .filter(|d| whole.contains(&d.index) && !in_warmup(run, d.stage))
        .cloned()
        .collect()
}

/// The think time per request of a run's flows, µs: each flow thinks between its steps,
/// weighted by how often it runs (0 without flows).
fn think_per_request_us(run: &StoredRun) -> f64 {
    let flows = &run.meta.flows;
    let (think, requests) = flows.iter().fold((0.0, 0.0), |(t, n), f| {
        let steps = f.steps.len() as f64;
        let w = f64::from(f.weight.max(1));
        (
            t + w * f.think_us as f64 * (steps - 1.0).max(0.0),
            n + w * steps,
        )
    });
    if requests > 0.0 {
        think / requests
    } else {
        0.0
    }
}

/// The measured stages' requests sent per second of their length, when each was timed:
/// the rate the stages' rows show, so a run of one measured stage has its stage's.
fn measured_send_rate(stages: &[StageRow]) -> Option<f64> {
    let measured: Vec<&StageRow> = stages.iter().filter(|s| !s.warmup).collect();
    if measured.is_empty() || measured.iter().any(|s| s.counted) {
        return None;
    }
    let secs: f64 = measured.iter().map(|s| s.duration_secs).sum();
    let sent: f64 = measured.iter().map(|s| s.sent_rps * s.duration_secs).sum();
    (secs > 0.0).then(|| sent / secs)
}
