//! One row per stage of a staged load (a step of a sweep): latency and failures of the
//! requests sent for it, throughput, and whether the generator kept up while it ran.

use super::Stats;
use crate::plan::{Load, Stage};
use crate::record::{IntervalRecord, StepStats};
use crate::store::IntervalDigest;
use serde::{Deserialize, Serialize};

use super::generator::{CPU_LIMIT, LAG_LIMIT, RATE_TOLERANCE};

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
    /// How late requests left (p99), µs.
    #[serde(default)]
    pub lag_p99_us: u64,
    /// The generator's CPU use while it ran, as a share of its cores (0..=1).
    #[serde(default)]
    pub cpu_share: f64,
    /// Why the generator, not the server, may have set this step's numbers; empty when it
    /// kept up.
    #[serde(default)]
    pub generator_findings: Vec<String>,
    /// The watched server's mean CPU over the step, % of one core.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_percent: Option<f64>,
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
    /// Engine threads (the generator's cores).
    pub threads: usize,
    /// The intervals of each stage merged, by stage index.
    pub by_interval: &'a [IntervalRecord],
    /// The interval digests.
    pub digests: &'a [IntervalDigest],
    /// The whole run merged (it carries the per-step tallies).
    pub all: &'a IntervalRecord,
}

/// The rows of the stages.
pub fn rows(inputs: &StageInputs<'_>) -> Vec<StageRow> {
    let empty = IntervalRecord::new(0);
    let no_step = StepStats::default();
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
            let secs = seconds.len() as f64;
            let counted = s.requests.is_some();
            let (duration_secs, rps, sent_rps) = if counted {
                let rate = step.completion_rate();
                (step.span_secs(), rate, rate)
            } else {
                let per_sec = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
                (
                    s.duration.as_secs_f64(),
                    per_sec(r.completed()),
                    per_sec(r.sent),
                )
            };
            let cpu: f64 = seconds
                .iter()
                .map(|d| d.health.cpu.total.as_secs_f64())
                .sum();
            let cpu_share = if secs > 0.0 {
                cpu / secs / inputs.threads.max(1) as f64
            } else {
                0.0
            };
            let lag_p99_us = Stats::of(&r.lag).p99_us;
            let asked = match inputs.load {
                Load::Open { .. } if !counted => Some((s.from + s.to) / 2.0),
                _ => None,
            };
            StageRow {
                name: s.name.clone(),
                from: s.from,
                to: s.to,
                duration_secs,
                count: step.count,
                failures: step.failures,
                errors: step.errors,
                rps,
                sent_rps,
                latency: Stats::of(&step.latency),
                warmup: s.warmup,
                lag_p99_us,
                cpu_share,
                generator_findings: findings(asked, sent_rps, lag_p99_us, cpu_share, r),
                server_cpu_percent: crate::monitor::mean_cpu_percent(
                    seconds.iter().filter_map(|d| d.server.as_ref()),
                ),
            }
        })
        .collect()
}

/// Plain sentences on why a step's numbers may describe the generator.
fn findings(
    asked: Option<f64>,
    sent_rps: f64,
    lag_p99_us: u64,
    cpu_share: f64,
    r: &IntervalRecord,
) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(asked) = asked.filter(|a| *a > 0.0) {
        if sent_rps < asked * RATE_TOLERANCE {
            out.push(format!("sent {sent_rps:.0} of {asked:.0} req/s"));
        }
    }
    if lag_p99_us > LAG_LIMIT.as_micros() as u64 {
        out.push(format!(
            "requests left up to {} late (p99)",
            crate::units::fmt_us(lag_p99_us)
        ));
    }
    if cpu_share >= CPU_LIMIT {
        out.push(format!("generator CPU at {:.0} %", cpu_share * 100.0));
    }
    let own: u64 = super::generator::own_failures(r).map(|(_, n)| n).sum();
    if own > 0 {
        out.push(format!("{own} failed on the generator's side"));
    }
    out
}
