//! A capacity search run for real: each probe is a stored run (warm-up, then a steady
//! window at one rate) judged against the objectives; the search's record is rewritten
//! after every probe, so a killed search still says what it had found.
//!
//! ```text
//! CAPACITY_DIR/capacity.json        the objectives, settings, probes and outcome
//! CAPACITY_DIR/01-grow-1000rps/     one run directory per probe
//! ```

use super::clock::{self, ClockDrift};
use super::knee::{self, Knee};
use super::search::{self, Finding, Outcome, Phase, SearchSettings};
use super::steady::{self, Unsteady};
use super::{Axis, Ladder, StepLength, Sweep};
use crate::engine::CancellationToken;
use crate::monitor::ServerWatch;
use crate::plan::{AttackPlan, Slo};
use crate::run::{Observer, RunError};
use crate::store::{RunDir, StoreError};
use crate::summary::{SloVerdict, Summary};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

/// The name of the search's record in its directory.
pub const RECORD: &str = "capacity.json";

/// Why a search could not run or be read.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    /// A probe failed to run.
    #[error("the probe at {rate} req/s failed")]
    Probe {
        /// Its rate.
        rate: f64,
        /// The cause.
        source: RunError,
    },
    /// The record cannot be written or read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The settings cannot be used.
    #[error(transparent)]
    Settings(#[from] super::CapacityError),
}

/// One probe as stored in the record.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeRecord {
    /// Requests per second offered.
    pub rate: f64,
    /// Where in the search it ran.
    pub phase: Phase,
    /// Its run directory, relative to the search's.
    pub run: String,
    /// It passed: every objective held and the rate was held steadily (nothing in
    /// `unsteady`).
    pub met: bool,
    /// How the window showed a queue, when it did: the rate was not sustainable whatever
    /// its percentiles said.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unsteady: Vec<Unsteady>,
    /// The generator, not the server, set its numbers.
    pub generator_bound: bool,
    /// Completions per second over the window.
    pub throughput: f64,
    /// Mean latency over the window, µs (absent from searches stored before it was kept).
    #[serde(default)]
    pub mean_us: f64,
    /// Latency over the window, µs.
    pub p50_us: u64,
    /// See `p50_us`.
    pub p95_us: u64,
    /// See `p50_us`.
    pub p99_us: u64,
    /// The 95 % confidence interval of `p99_us` (absent from searches stored before it was
    /// kept): a probe's window holds few samples, and its p99 rests on the slowest of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ci_us: Option<crate::summary::Interval<u64>>,
    /// See `p50_us`.
    pub max_us: u64,
    /// Their standard deviation, µs (0 in records written before it was kept).
    #[serde(default)]
    pub stdev_us: f64,
    /// Failed completions as a share of completions.
    pub failure_ratio: f64,
    /// Each objective, measured.
    pub verdicts: Vec<SloVerdict>,
    /// Which side set the probe's numbers, with the evidence.
    #[serde(default)]
    pub verdict: crate::summary::Diagnosis,
    /// The generator's CPU use, % of one core.
    pub generator_cpu_percent: f64,
    /// The watched server's mean CPU use, % of one core, when one was watched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_percent: Option<f64>,
    /// The window it was judged on, seconds (a hold's is the confirmation's; 0 in searches
    /// stored before it was kept: the search's window).
    #[serde(default)]
    pub window_secs: f64,
    /// When its window began, seconds after the search's first probe began.
    #[serde(default)]
    pub started_secs: f64,
    /// For a rate that did not hold: the seconds into its window before the first second
    /// that broke an objective on its own, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broke_after_secs: Option<f64>,
    /// For a rate that broke by failing part of its requests: the successful answers per
    /// second the server still gave from that second on (what it sustains while refusing
    /// the rest, e.g. a token bucket's refill rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served_after_break: Option<f64>,
}

/// A capacity search: what was asked, every probe, and the answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CapacityRecord {
    /// The command line, secrets redacted.
    pub command: Vec<String>,
    /// The target's URL.
    pub target: String,
    /// The objectives, as written.
    pub objectives: Vec<String>,
    /// How the search proceeded.
    pub settings: SearchSettings,
    /// Steady-state window of each probe, seconds.
    pub window_secs: f64,
    /// Warm-up before each window, seconds.
    pub warmup_secs: f64,
    /// How long the answer is held to confirm it, seconds (0: not held).
    #[serde(default)]
    pub confirm_secs: f64,
    /// The probes in the order they ran.
    pub probes: Vec<ProbeRecord>,
    /// The answer; `None` while the search runs (or after it was killed).
    pub outcome: Option<Outcome>,
    /// Where p99 turns upward with the rate, from the probes, or why they cannot say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knee: Option<Knee>,
    /// The probes' latency followed the clock, not the rate: the evidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<ClockDrift>,
}

impl CapacityRecord {
    /// Reads the record in `dir`; `None` when `dir` holds no search.
    pub fn load(dir: &Path) -> Result<Option<CapacityRecord>, StoreError> {
        let path = dir.join(RECORD);
        if !path.exists() {
            return Ok(None);
        }
        crate::store::read_json(&path).map(Some)
    }

    fn save(&self, dir: &Path) -> Result<(), StoreError> {
        crate::store::write_json(&dir.join(RECORD), self)
    }
}

/// What the search needs besides the plan.
pub struct StudySettings<'a> {
    /// The objectives a probe must meet.
    pub objectives: Vec<Slo>,
    /// How the search proceeds.
    pub search: SearchSettings,
    /// Steady-state window of each probe.
    pub window: Duration,
    /// Warm-up before each window (its connections are opened then).
    pub warmup: Duration,
    /// How long the answer is held to confirm it (zero: not held).
    pub confirm: Duration,
    /// The command line to store, secrets redacted.
    pub command: Vec<String>,
    /// Opens the server watch for a probe, when one is asked for.
    pub server: &'a mut dyn FnMut() -> Option<ServerWatch>,
    /// Live outputs every probe writes to (`--push`), each probe under its own run id.
    pub push: Vec<crate::push::PushTarget>,
}

/// Runs the search on `plan`'s requests into `dir`; `observer` sees every probe's intervals
/// and `on_probe` each probe as it ends.
pub fn run(
    plan: &AttackPlan,
    settings: StudySettings<'_>,
    dir: &Path,
    shutdown: &CancellationToken,
    observer: &mut dyn Observer,
    on_probe: &mut dyn FnMut(&ProbeRecord),
) -> Result<CapacityRecord, StudyError> {
    settings.search.validate()?;
    steady::window(&settings.objectives, Some(settings.window))?;
    if !settings.confirm.is_zero() && settings.confirm <= settings.window {
        return Err(super::CapacityError::Search(format!(
            "--confirm {} must be longer than the probes' --window {}: the hold is there to see what they cannot (or --confirm 0 to skip it)",
            humantime::format_duration(settings.confirm),
            humantime::format_duration(settings.window)
        ))
        .into());
    }
    // Steps the probes (and the hold) cannot take are refused before anything is stored.
    for window in [settings.window, settings.confirm] {
        if !window.is_zero() {
            probe_plan(
                plan,
                settings.search.start,
                &settings.objectives,
                window,
                settings.warmup,
            )?;
        }
    }
    std::fs::create_dir_all(dir).map_err(|reason| StoreError::Io {
        path: dir.to_path_buf(),
        reason,
    })?;
    if dir.join(RECORD).exists() {
        return Err(StoreError::Io {
            path: dir.join(RECORD),
            reason: std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "a search is already stored here; choose another --out",
            ),
        }
        .into());
    }
    let mut record = CapacityRecord {
        command: settings.command.clone(),
        target: plan.target.url.clone(),
        objectives: settings.objectives.iter().map(|o| o.text.clone()).collect(),
        settings: settings.search,
        window_secs: settings.window.as_secs_f64(),
        warmup_secs: settings.warmup.as_secs_f64(),
        confirm_secs: settings.confirm.as_secs_f64(),
        probes: Vec::new(),
        outcome: None,
        knee: None,
        clock: None,
    };
    record.save(dir)?;
    let StudySettings {
        objectives,
        search: mut search_settings,
        window,
        warmup,
        confirm,
        command,
        server,
        push,
    } = settings;
    search_settings.hold = !confirm.is_zero();
    record.settings = search_settings;
    let began = std::time::Instant::now();
    let launch = crate::launch::Launch {
        push,
        ..Default::default()
    };
    let outcome = search::search(&search_settings, |rate, phase| {
        if shutdown.is_cancelled() {
            return Ok::<_, StudyError>(None);
        }
        let name = format!(
            "{:02}-{}-{}rps",
            record.probes.len() + 1,
            phase.name(),
            super::fmt_level(rate)
        );
        let window = if phase == Phase::Hold {
            confirm
        } else {
            window
        };
        let started_secs = began.elapsed().as_secs_f64() + warmup.as_secs_f64();
        let probe_plan = probe_plan(plan, rate, &objectives, window, warmup)?;
        let run_dir = RunDir::at(dir.join(&name));
        let stored = crate::run::attack_launched(
            &probe_plan,
            &command,
            &run_dir,
            shutdown.clone(),
            observer,
            server(),
            &launch,
        )
        .map_err(|source| StudyError::Probe { rate, source })?;
        let summary = Summary::of(&stored);
        if summary.partial.is_some() {
            return Ok(None);
        }
        let window_secs: Vec<&crate::store::IntervalDigest> = {
            // The window is the probe's last stage; its whole seconds only (the last,
            // partial one is the drain after the attack).
            let window_stage = stored.meta.stages.len().saturating_sub(1);
            let whole = stored
                .end
                .as_ref()
                .map_or(0, |e| e.attack_secs.floor() as u64);
            stored
                .intervals
                .iter()
                .filter(|d| d.stage.map(usize::from) == Some(window_stage) && d.index < whole)
                .collect()
        };
        let mut probe = ProbeRecord::of(rate, phase, name, &summary);
        probe.window_secs = window.as_secs_f64();
        probe.started_secs = started_secs;
        probe.unsteady = steady::judge(rate, &window_secs);
        // Met only when the objectives held, the rate held steadily, and the probe's own
        // diagnosis names no server limit: 60 % of fast 503s meet a latency objective (it is
        // the answered requests'), and the server still refused them.
        let refused = matches!(
            probe.verdict.limit,
            crate::summary::Limit::Server | crate::summary::Limit::NothingSucceeded
        );
        probe.met = probe.met && probe.unsteady.is_empty() && !refused;
        if !probe.met {
            if let Some(at) = first_breach(&objectives, &window_secs) {
                probe.broke_after_secs =
                    Some((window_secs[at].index - window_secs[0].index) as f64);
                // What the server served while refusing bounds the rate it sustains: a token
                // bucket serves its refill rate. Not when it timed out instead (a server
                // collapsing under overload serves less than it can sustain).
                if refusing(&probe.verdict) {
                    probe.served_after_break = served_after(&window_secs[at..]);
                }
            }
        }
        on_probe(&probe);
        let mut finding = Finding {
            met: probe.met,
            generator_bound: probe.generator_bound,
            changed_with_time: false,
            served: probe.served_after_break,
        };
        record.probes.push(probe);
        record.clock = clock::judge(&record.probes);
        finding.changed_with_time = record.clock.is_some();
        record.save(dir)?;
        Ok(Some(finding))
    })?;
    record.outcome = Some(outcome);
    record.knee = Some(if record.clock.is_some() {
        Knee::None {
            why: "latency followed the time of the search, not the rate".into(),
        }
    } else {
        knee_of(&record.probes)
    });
    record.save(dir)?;
    Ok(record)
}

/// The knee from the probes that measured a latency: one without an answer has none, and
/// its zeros would read as a flat curve ("latency did not change").
fn knee_of(probes: &[ProbeRecord]) -> Knee {
    let points: Vec<(f64, u64)> = probes
        .iter()
        .filter(|p| p.measured())
        .map(|p| (p.rate, p.p99_us))
        .collect();
    if points.is_empty() {
        return Knee::None {
            why: "no probe got an answer it expects, so there is no latency to read one from"
                .into(),
        };
    }
    knee::estimate(&points)
}

/// Successful answers per second over `seconds` (from a breach to the window's end), when
/// some of them failed and there are enough seconds to read a rate from (at least two).
fn served_after(seconds: &[&crate::store::IntervalDigest]) -> Option<f64> {
    let failed: u64 = seconds.iter().map(|d| d.failed).sum();
    (seconds.len() >= 2 && failed > 0).then(|| {
        seconds
            .iter()
            .map(|d| d.completed.saturating_sub(d.failed))
            .sum::<u64>() as f64
            / seconds.len() as f64
    })
}

/// Whether a probe broke by refusing: overload statuses (429, 5xx) and no timeouts, resets
/// or refused connections among the evidence.
fn refusing(d: &crate::summary::Diagnosis) -> bool {
    use crate::summary::Finding;
    d.findings
        .iter()
        .any(|f| matches!(f, Finding::ServerStatus { .. }))
        && !d
            .findings
            .iter()
            .any(|f| matches!(f, Finding::ServerFailed { .. }))
}

/// The position in `window` of the first second that, on its own, broke an objective, or
/// failed as many requests as makes a server limit (`SERVER_FAILURE_SHARE`, so a search
/// whose objectives say nothing of errors still sees the refusals start): where a rate that
/// passed short probes stopped holding. Latency objectives are read from the second's own
/// percentiles (the nearest kept at or above the objective's), errors from its failed share;
/// mean and throughput objectives have no second of their own.
fn first_breach(objectives: &[Slo], window: &[&crate::store::IntervalDigest]) -> Option<usize> {
    use crate::plan::Metric;
    window.iter().position(|d| {
        let failing = d.completed > 0
            && d.failed as f64
                >= d.completed as f64 * crate::summary::diagnosis::SERVER_FAILURE_SHARE;
        failing
            || objectives.iter().any(|o| {
                let value = match o.metric {
                    Metric::Quantile(q) if d.completed > d.failed => match q {
                        q if q <= 0.5 => d.p50_us as f64,
                        q if q <= 0.9 => d.p90_us as f64,
                        q if q <= 0.99 => d.p99_us as f64,
                        _ => d.max_us as f64,
                    },
                    Metric::Max if d.completed > d.failed => d.max_us as f64,
                    Metric::ErrorRate if d.completed > 0 => d.failed as f64 / d.completed as f64,
                    _ => return false,
                };
                !o.op.holds(value, o.bound)
            })
    })
}

/// Whether the rate asked was sent: no finding says it fell short.
fn rate_held(d: &crate::summary::Diagnosis) -> bool {
    !d.findings.iter().any(|f| {
        matches!(
            f,
            crate::summary::Finding::RateShort { .. } | crate::summary::Finding::CountShort { .. }
        )
    })
}

impl ProbeRecord {
    /// Some request in its window got an answer it expects, so it has a latency: the
    /// latency figures count only those answers, as `throughput` does (a window of 401s has
    /// none, and its zeros are no latency).
    pub fn measured(&self) -> bool {
        self.throughput > 0.0
    }

    fn of(rate: f64, phase: Phase, run: String, s: &Summary) -> ProbeRecord {
        let met = s.slo_met();
        let g = &s.generator;
        ProbeRecord {
            rate,
            phase,
            run,
            met,
            unsteady: Vec::new(),
            // Only the generator's own evidence (its CPU, ports, descriptors, connection
            // cap) makes a probe generator-bound: a server holding every connection makes
            // requests leave late too. And only when it mattered: a generator that sent the
            // whole rate, however late, while the objectives held measured latencies no
            // better than the server's, so the server met them at that rate.
            generator_bound: s.verdict.generator_limited() && !(met && rate_held(&s.verdict)),
            throughput: s.requests.throughput,
            mean_us: s.latency.mean_us,
            p50_us: s.latency.p50_us,
            p95_us: s.latency.p95_us,
            stdev_us: s.latency.stdev_us,
            p99_us: s.latency.p99_us,
            p99_ci_us: s.latency.ci.map(|c| c.p99_us),
            max_us: s.latency.max_us,
            failure_ratio: s.aggregated.as_ref().map_or(0.0, |a| {
                if a.count > 0 {
                    a.failures as f64 / a.count as f64
                } else {
                    0.0
                }
            }),
            verdicts: s.slo.clone(),
            verdict: s.verdict.clone(),
            generator_cpu_percent: g.cpu_percent,
            server_cpu_percent: s.server.as_ref().map(|h| h.cpu_mean_percent),
            window_secs: 0.0,
            started_secs: 0.0,
            broke_after_secs: None,
            served_after_break: None,
        }
    }
}

/// `plan`'s requests at `rate`: a sweep of one step, its warm-up left out of the window the
/// objectives judge.
fn probe_plan(
    plan: &AttackPlan,
    rate: f64,
    objectives: &[Slo],
    window: Duration,
    warmup: Duration,
) -> Result<AttackPlan, super::CapacityError> {
    let mut p = plan.clone();
    Sweep {
        axis: Axis::Rate,
        ladder: Ladder(vec![rate]),
        length: StepLength::Time {
            duration: window,
            warmup,
        },
    }
    .apply(&mut p)?;
    p.slo = objectives.to_vec();
    Ok(p)
}
