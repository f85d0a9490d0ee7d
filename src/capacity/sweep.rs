//! A sweep: one run whose stages step the rate or the concurrency, on the same warm
//! connections, stopping itself once a step passes a limit.

use super::{CapacityError, Ladder};
use crate::engine::CancellationToken;
use crate::plan::{AttackPlan, Load, Metric, Rate, Slo, Stage, Stop};
use crate::record::StepStats;
use crate::run::Observer;
use crate::store::IntervalLine;
use std::collections::BTreeMap;
use std::time::Duration;

/// The limits a sweep stops at unless told otherwise: a server this broken tells nothing more.
pub const DEFAULT_LIMITS: &str = "errors > 10%, p99 > 10s";
/// A step still running is judged once this many of its requests completed.
const MIN_PARTIAL: u64 = 50;

/// What a sweep steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// Requests per second (open model).
    Rate,
    /// Users sending back to back (closed model).
    Concurrency,
}

/// How long each step lasts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepLength {
    /// A time, after a warm-up at the same load that is left out of the step's numbers.
    Time {
        /// Measured part.
        duration: Duration,
        /// Warm-up before it.
        warmup: Duration,
    },
    /// A number of requests (concurrency sweeps).
    Requests(u64),
}

/// A sweep over a ladder of loads.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// Rate or concurrency.
    pub axis: Axis,
    /// The loads, in order.
    pub ladder: Ladder,
    /// How long each step lasts.
    pub length: StepLength,
}

impl Sweep {
    /// Makes `plan` this sweep: its load becomes one stage per step (and warm-up).
    pub fn apply(&self, plan: &mut AttackPlan) -> Result<(), CapacityError> {
        let top = self.ladder.0.iter().copied().fold(0.0, f64::max);
        match self.axis {
            Axis::Rate => plan.load = Load::Open { rate: Rate(top) },
            Axis::Concurrency => {
                self.ladder.whole()?;
                plan.load = Load::Closed {
                    concurrency: top as u32,
                };
            }
        }
        // A step's name in every table and figure: "200 req/s", "1 user", "10 users".
        let axis = self.axis;
        let step_name = move |level: f64| match axis {
            Axis::Rate => format!("{} req/s", fmt_level(level)),
            Axis::Concurrency => crate::units::plural(fmt_level(level), "user"),
        };
        let mut stages = Vec::new();
        match self.length {
            StepLength::Time { duration, warmup } => {
                for d in [duration, warmup] {
                    // Steps line up with the one-second intervals their throughput is read from.
                    if d.subsec_nanos() != 0 {
                        return Err(CapacityError::Step(format!(
                            "{} is not a whole number of seconds",
                            humantime::format_duration(d)
                        )));
                    }
                }
                for &level in &self.ladder.0 {
                    let name = step_name(level);
                    if !warmup.is_zero() {
                        stages.push(Stage {
                            warmup: true,
                            ..Stage::constant(format!("{name} warm-up"), level, warmup)
                        });
                    }
                    stages.push(Stage::constant(name, level, duration));
                }
                plan.stop = Stop {
                    duration: Some(stages.iter().map(|s| s.duration).sum()),
                    requests: None,
                };
            }
            StepLength::Requests(n) => {
                if self.axis == Axis::Rate {
                    return Err(CapacityError::Step(
                        "a rate sweep steps by time (--step-duration); steps counted in requests are for --concurrency".into(),
                    ));
                }
                for &level in &self.ladder.0 {
                    stages.push(Stage {
                        requests: Some(n),
                        ..Stage::constant(step_name(level), level, Duration::ZERO)
                    });
                }
                plan.stop = Stop {
                    duration: None,
                    requests: Some(n * self.ladder.0.len() as u64),
                };
            }
        }
        plan.stages = stages;
        plan.validate()
            .map_err(|e| CapacityError::Step(e.to_string()))
    }
}

/// A load as it reads in a step's name: whole numbers without decimals.
pub fn fmt_level(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// Reads limits such as "errors > 10%, p99 > 2s" ("none" for no limit); a limit names what
/// stops the sweep, so a step meeting it is the last.
pub fn parse_limits(text: &str) -> Result<Vec<Slo>, CapacityError> {
    if text.trim().eq_ignore_ascii_case("none") {
        return Ok(Vec::new());
    }
    let limits = parse_objectives(text)?;
    if let Some(l) = limits.iter().find(|l| l.request.is_some()) {
        return Err(CapacityError::Limit(format!(
            "{l}: a sweep's limits apply to every request of a step; drop the request name"
        )));
    }
    Ok(limits)
}

/// Reads comma-separated objectives, "p99 < 250ms, errors < 0.1%".
pub fn parse_objectives(text: &str) -> Result<Vec<Slo>, CapacityError> {
    text.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            s.parse::<Slo>()
                .map_err(|e| CapacityError::Limit(e.to_string()))
        })
        .collect()
}

/// Watches a sweep's steps as their intervals arrive and stops the run at the first step
/// that meets a limit; passes each interval on.
pub struct StopWatch<'a> {
    limits: Vec<Slo>,
    stages: Vec<Stage>,
    handle: CancellationToken,
    steps: BTreeMap<u16, StepStats>,
    judged: usize,
    stopped: Option<String>,
    inner: &'a mut dyn Observer,
}

impl<'a> StopWatch<'a> {
    /// Watches the steps of `plan` against `limits`, stopping the run through `handle`.
    pub fn new(
        plan: &AttackPlan,
        limits: Vec<Slo>,
        handle: CancellationToken,
        inner: &'a mut dyn Observer,
    ) -> Self {
        StopWatch {
            limits,
            stages: plan.stages.clone(),
            handle,
            steps: BTreeMap::new(),
            judged: 0,
            stopped: None,
            inner,
        }
    }

    /// The first limit that `stage`'s requests meet, as a sentence.
    fn broken(&self, stage: usize, min_count: u64) -> Option<String> {
        let s = self.stages.get(stage).filter(|s| !s.warmup)?;
        let step = self.steps.get(&u16::try_from(stage).ok()?)?;
        if step.count < min_count.max(1) {
            return None;
        }
        self.limits.iter().find_map(|limit| {
            let (value, measured) = crate::summary::measure(
                limit.metric,
                step.count,
                step.failures,
                &step.latency,
                step.span_secs(),
            );
            let met = limit.op.holds(value, limit.bound)
                && (limit.metric != Metric::Rps || step.span_secs() >= 1.0);
            met.then(|| format!("step {} met the limit \"{limit}\" ({measured})", s.name))
        })
    }
}

impl Observer for StopWatch<'_> {
    fn interval(&mut self, line: &IntervalLine) {
        self.inner.interval(line);
        if self.stopped.is_some() || self.limits.is_empty() {
            return;
        }
        for (stage, step) in &line.record.steps {
            self.steps.entry(*stage).or_default().add(step);
        }
        let current = line
            .stage
            .map(usize::from)
            .or_else(|| self.steps.keys().next_back().map(|&k| usize::from(k)))
            .unwrap_or(0);
        // Steps that ended are judged once, whole; the running one as soon as it has enough
        // answers, so a dead server is not hammered to the end of a long step.
        let mut verdict = None;
        while self.judged < current && verdict.is_none() {
            verdict = self.broken(self.judged, 1);
            self.judged += 1;
        }
        let verdict = verdict.or_else(|| self.broken(current, MIN_PARTIAL));
        if let Some(why) = verdict {
            self.stopped = Some(why);
            self.handle.cancel();
        }
    }

    fn notice(&mut self, notice: &crate::sample::Notice) {
        self.inner.notice(notice);
    }

    fn aborting(&mut self, aborted: &crate::store::Aborted) {
        self.inner.aborting(aborted);
    }

    fn stopping(&mut self) {
        self.inner.stopping();
    }

    fn stopped_early(&self) -> Option<String> {
        self.stopped.clone()
    }
}
