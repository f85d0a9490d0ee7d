//! One row per stage of a staged load (a step of a sweep): latency and failures of the
//! requests sent for it, throughput, and whether the generator kept up while it ran.
//!
//! # Definitions
//! - A stage's counts (`count`, `failures`, `errors`, status codes, latency, the request ×
//!   step table) are of the requests sent for it, wherever their answers fell (see
//!   [`crate::store`]'s `measured`): the measured stages' counts add up to the run's.
//! - A stage's `rps` and `throughput` are its completions, and of those the ones answered as
//!   they expect, per second of its span: from its first request's intended send to its last
//!   answer ([`StepStats::span_secs`]), as the run's are over the measured span, so a run
//!   of one measured stage has that stage's throughput. A step counted in requests (the
//!   closed model's "500 requests per step") is read between its first answer and its last
//!   instead ([`StepStats::completion_rate`]): its users' first answers come a latency after
//!   they start, a large part of a short step.
//! - `sent_rps` is the requests sent for it (retries left out) per second of its length.
//! - Runs stored before the per-stage tallies kept their sends read `rps` and `sent_rps`
//!   from the seconds that began in the stage, as they were reported then.

use super::Stats;
use crate::plan::{Load, Stage};
use crate::record::{IntervalRecord, StepStats};
use crate::store::IntervalDigest;
use serde::{Deserialize, Serialize};

use super::diagnosis::{self, Asked, Diagnosis, Evidence};
use super::span::per_sec;
use super::{ErrorEntry, FlowRow, RequestRow};
use crate::store::{FlowMeta, RequestMeta};
use std::collections::BTreeMap;

/// The seconds over which a step's `count` completions came at `rps`: each request's rate
/// in the step is then its share of the step's.
fn rps_secs(rps: f64, count: u64) -> f64 {
    if rps > 0.0 {
        count as f64 / rps
    } else {
        0.0
    }
}

/// The share `ok` of `count` of `rate`.
fn ok_share(rate: f64, ok: u64, count: u64) -> f64 {
    if count > 0 {
        rate * ok as f64 / count as f64
    } else {
        0.0
    }
}

/// One stage over the run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StageRow {
    /// The stage's name.
    pub name: String,
    /// Load at its start and end (req/s or users).
    pub from: f64,
    /// See `from`.
    pub to: f64,
    /// Its length, in seconds (for a step counted in requests, from its first send to its
    /// last answer).
    pub duration_secs: f64,
    /// The run stopped before it began (an interrupt, a safety stop, a sweep's limit, a
    /// count reached): it has no numbers, and every view says "not run" rather than zeros
    /// that would read as a step that ran clean.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_run: bool,
    /// Requests sent for it that completed.
    pub count: u64,
    /// Of those, completions without an expected answer.
    pub failures: u64,
    /// Of those, completions with no answer at all.
    #[serde(default)]
    pub errors: u64,
    /// Completions per second while it ran: the achieved throughput.
    pub rps: f64,
    /// Requests per second sent while it ran.
    #[serde(default)]
    pub sent_rps: f64,
    /// Latency of the requests sent for it.
    pub latency: Stats,
    /// A warm-up stage, left out of the run's other numbers.
    #[serde(default)]
    pub warmup: bool,
    /// A step counted in requests (the closed model's), whose rates are read between its
    /// first answer and its last.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub counted: bool,
    /// It ran shorter than planned: the run stopped in it, or (a run still going, on the
    /// live page) it is still running. Only such a step's shortness is not the run's doubt.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut_short: bool,
    /// How late requests left (p99), µs.
    #[serde(default)]
    pub lag_p99_us: u64,
    /// The generator's CPU use while it ran, as a share of its cores (0..=1).
    #[serde(default)]
    pub cpu_share: f64,
    /// What the evidence says of this step, with the evidence.
    #[serde(default)]
    pub verdict: Diagnosis,
    /// The watched server's mean CPU over the step, % of one core.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_percent: Option<f64>,
    /// Completions with an expected answer per second while it ran.
    #[serde(default)]
    pub throughput: f64,
    /// Answers per status code of the requests sent for it (empty for runs stored before
    /// they were kept per step).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub status_codes: BTreeMap<u16, u64>,
    /// Its Error Set: failures by kind, expectation failures included.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub error_set: Vec<ErrorEntry>,
    /// One row per request of the run, in plan order: the request × step table.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<RequestRow>,
    /// One row per flow: the iterations begun in it that ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<FlowRow>,
}

impl StageRow {
    /// Failed completions as a share of completions.
    pub fn failure_ratio(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.failures as f64 / self.count as f64
        }
    }
}

/// What a row is read from.
pub struct StageInputs<'a> {
    /// The plan's stages.
    pub stages: &'a [Stage],
    /// The load model.
    pub load: Load,
    /// Poisson arrivals (see `diagnosis::Evidence::poisson`).
    pub poisson: bool,
    /// Engine threads (the generator's cores).
    pub threads: usize,
    /// The connection cap, when it bounds the rate (see `diagnosis::Evidence`).
    pub connection_cap: Option<u32>,
    /// Seconds from the start to the last request sent: a run stopped early (a sweep's
    /// `--stop-when`) ends its last step there, not at the step's planned end.
    pub attack_secs: f64,
    /// Whether the run stopped before its planned end (a stop condition, an interrupt, a
    /// crash): only then is a step shorter than planned.
    pub stopped: bool,
    /// The seconds sent through whole (`summary::whole`): a step is judged on its own.
    pub whole: &'a std::collections::BTreeSet<u64>,
    /// How long the whole run took (the attack and the wait for answers after it), seconds.
    pub run_secs: f64,
    /// The intervals of each stage merged, by stage index.
    pub by_interval: &'a [IntervalRecord],
    /// The interval digests.
    pub digests: &'a [IntervalDigest],
    /// The whole run merged (it carries the per-step tallies).
    pub all: &'a IntervalRecord,
    /// The run's requests, in plan order.
    pub requests: &'a [RequestMeta],
    /// The run's flows, in plan order.
    pub flows: &'a [FlowMeta],
}

/// The rows of the stages.
pub fn rows(inputs: &StageInputs<'_>) -> Vec<StageRow> {
    let empty = IntervalRecord::new(0);
    let no_step = StepStats::default();
    // The stages up to the last one that sent or completed anything: past it, a run that
    // stopped (a limit, a safety stop, an interrupt, a count) never began them.
    let reached = (0..inputs.stages.len())
        .rposition(|i| {
            u16::try_from(i)
                .ok()
                .and_then(|i| inputs.all.steps.get(&i))
                .is_some_and(|s| s.sent > 0 || s.count > 0)
        })
        .map_or(0, |i| i + 1);
    inputs
        .stages
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let r = inputs.by_interval.get(i).unwrap_or(&empty);
            let step = u16::try_from(i)
                .ok()
                .and_then(|i| inputs.all.steps.get(&i))
                .unwrap_or(&no_step);
            let seconds: Vec<&IntervalDigest> = inputs
                .digests
                .iter()
                .filter(|d| d.stage.map(usize::from) == Some(i))
                .collect();
            // The step a stop cut short ran from its start to the stop, not its planned length.
            let start: f64 = inputs.stages[..i]
                .iter()
                .map(|s| s.duration.as_secs_f64())
                .sum();
            let ran = (inputs.attack_secs - start).clamp(0.0, s.duration.as_secs_f64());
            // Only a stop: a run that ran to its end sends its last request a gap before it.
            let cut = inputs.stopped && !s.duration.is_zero() && ran < s.duration.as_secs_f64();
            let secs = if cut { ran } else { seconds.len() as f64 };
            let counted = s.requests.is_some();
            let ok = step.count - step.failures;
            let (duration_secs, rps, throughput, sent_rps) = if counted {
                let rate = step.completion_rate();
                (step.span_secs(), rate, ok_share(rate, ok, step.count), rate)
            } else {
                let length = if cut { ran } else { s.duration.as_secs_f64() };
                if step.sent > 0 {
                    let span = step.span_secs();
                    (
                        length,
                        per_sec(step.count, span),
                        per_sec(ok, span),
                        per_sec(step.sent_first(), length),
                    )
                } else {
                    let rps = per_sec(r.completed(), secs);
                    (
                        length,
                        rps,
                        ok_share(rps, ok, step.count),
                        per_sec(r.sent_first(), secs),
                    )
                }
            };
            // CPU is read per interval, and the last interval ends with the run, not the
            // step a stop cut short: the step's CPU is over the wall time its intervals cover.
            let covered: f64 = seconds
                .iter()
                .map(|d| (inputs.run_secs - d.index as f64).clamp(0.0, 1.0))
                .sum();
            let share = |d: &dyn Fn(&IntervalDigest) -> f64| {
                let total: f64 = seconds.iter().map(|x| d(x)).sum();
                if covered > 0.0 {
                    total / covered / inputs.threads.max(1) as f64
                } else {
                    0.0
                }
            };
            let cpu_share = share(&|d| d.health.cpu.total.as_secs_f64());
            let waiting_share = share(&|d| d.health.cpu.waiting.as_secs_f64());
            let lag_p99_us = Stats::of(&r.lag).p99_us;
            let asked = match inputs.load {
                Load::Open { .. } if !counted && secs >= 1.0 => Asked::Rate {
                    asked: (s.from + s.to) / 2.0,
                    sent: sent_rps,
                },
                _ => Asked::Nothing,
            };
            let whole_seconds: Vec<IntervalDigest> = seconds
                .iter()
                .filter(|d| inputs.whole.contains(&d.index))
                .map(|d| (*d).clone())
                .collect();
            // The step's evidence is its own requests' (what was sent for it, wherever the
            // answers fell; a step counted in requests may last less than a second), with
            // the generator's lag from the seconds it ran in. Runs stored before steps kept
            // their requests are judged on those seconds.
            let own = (!step.requests.is_empty())
                .then(|| crate::store::record_of_stages(inputs.all, r, |st| usize::from(st) == i));
            let verdict = diagnosis::diagnose(&Evidence {
                record: own.as_ref().unwrap_or(r),
                requests: inputs.requests,
                asked,
                cpu_share,
                threads: inputs.threads,
                waiting_share: Some(waiting_share),
                descriptors: None,
                connection_cap: inputs.connection_cap,
                open_model: matches!(inputs.load, Load::Open { .. }),
                poisson: inputs.poisson,
                // A ramp's latency follows its load: only a constant step's trend is judged.
                seconds: if s.from == s.to { &whole_seconds } else { &[] },
                whole_secs: (!counted).then_some(whole_seconds.len() as f64),
            });
            let mut status_codes = BTreeMap::new();
            let mut errors = BTreeMap::new();
            for q in &step.requests {
                for (code, n) in &q.status {
                    *status_codes.entry(*code).or_default() += n;
                }
                for (kind, n) in &q.errors {
                    *errors.entry(*kind).or_default() += n;
                }
            }
            let requests = if step.requests.is_empty() {
                Vec::new()
            } else {
                super::by_request::rows(inputs.requests, &step.requests, rps_secs(rps, step.count))
                    .0
            };
            let flows = super::by_flow::rows(inputs.flows, &step.flows, duration_secs);
            StageRow {
                flows,
                throughput,
                error_set: super::failures::error_set(
                    &errors,
                    &status_codes,
                    inputs.requests,
                    &step.requests,
                ),
                status_codes,
                requests,
                name: s.name.clone(),
                from: s.from,
                to: s.to,
                duration_secs,
                not_run: inputs.stopped && i >= reached,
                count: step.count,
                failures: step.failures,
                errors: step.errors,
                rps,
                sent_rps,
                latency: Stats::of(&step.latency),
                warmup: s.warmup,
                counted,
                cut_short: cut,
                lag_p99_us,
                cpu_share,
                verdict,
                server_cpu_percent: crate::monitor::mean_cpu_percent(
                    seconds.iter().filter_map(|d| d.server.as_ref()),
                ),
            }
        })
        .collect()
}
