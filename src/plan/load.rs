//! How hard and how long: the open or closed load model and the stop condition.

use super::PlanError;
use std::time::Duration;

/// The highest rate one generator paces, req/s: its timer works in microseconds.
pub const MAX_RATE: f64 = 10_000_000.0;
/// The most users (closed model) one generator runs: each holds a connection and its
/// buffers, and more than this belongs on several generators.
pub const MAX_USERS: u32 = 100_000;

/// Requests per second; always finite and positive once validated.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, serde::Serialize, serde::Deserialize)]
pub struct Rate(pub f64);

impl Rate {
    /// Requests per second.
    pub fn per_second(self) -> f64 {
        self.0
    }
}

/// The load model.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Load {
    /// Open model: requests start at a constant rate, whatever the server does.
    Open {
        /// Arrival rate.
        rate: Rate,
    },
    /// Closed model: a fixed number of workers, each sending back to back.
    Closed {
        /// Number of concurrent workers.
        concurrency: u32,
    },
}

impl Load {
    /// Checks a start-rate cap (`--max-rate`): the closed model's, positive, within what
    /// `generators` generators pace.
    pub(super) fn validate_cap(&self, cap: Option<Rate>, generators: u32) -> Result<(), PlanError> {
        let Some(Rate(cap)) = cap else {
            return Ok(());
        };
        if let Load::Open { .. } = self {
            return Err(PlanError::Range(
                "--max-rate caps the closed model (--concurrency or users); with --rate the rate is already what is sent: leave out --max-rate".into(),
            ));
        }
        if !(cap.is_finite() && cap > 0.0) {
            return Err(PlanError::Range(format!(
                "--max-rate must be a positive number of requests per second, got {cap}"
            )));
        }
        if cap > MAX_RATE * f64::from(generators.max(1)) {
            return Err(PlanError::Range(format!(
                "--max-rate {cap} is above the 10,000,000 req/s a generator can pace"
            )));
        }
        Ok(())
    }

    /// Checks the load, within what `generators` generators together can offer (1 but for
    /// the whole of a sharded test).
    pub(super) fn validate(&self, generators: u32) -> Result<(), PlanError> {
        let g = generators.max(1);
        match *self {
            Load::Open { rate } if !(rate.0.is_finite() && rate.0 > 0.0) => {
                Err(PlanError::Range(format!(
                    "--rate must be a positive number of requests per second, got {}",
                    rate.0
                )))
            }
            Load::Open { rate } if rate.0 > MAX_RATE * f64::from(g) => {
                Err(PlanError::Range(if g == 1 {
                    format!(
                        "--rate {} is above the 10,000,000 req/s a single generator can pace",
                        rate.0
                    )
                } else {
                    format!(
                        "--rate {} is above the 10,000,000 req/s each of the {g} shards can pace",
                        rate.0
                    )
                }))
            }
            Load::Closed { concurrency: 0 } => {
                Err(PlanError::Range("--concurrency must be at least 1".into()))
            }
            Load::Closed { concurrency }
                if u64::from(concurrency) > u64::from(MAX_USERS) * u64::from(g) =>
            {
                Err(PlanError::Range(if g == 1 {
                    format!(
                        "--concurrency {concurrency} is above the {MAX_USERS} users one generator runs; split the load over several generators"
                    )
                } else {
                    format!(
                        "--concurrency {concurrency} is above the {MAX_USERS} users each of the {g} shards runs; use more shards"
                    )
                }))
            }
            _ => Ok(()),
        }
    }
}

/// One stretch of a staged load: a rate (open model) or a number of users (closed model),
/// constant or ramped linearly from `from` to `to`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Stage {
    /// Its name in the report.
    pub name: String,
    /// Requests per second, or users, at the start.
    pub from: f64,
    /// At the end (equal to `from` for a constant stage).
    pub to: f64,
    /// How long it lasts.
    #[serde(with = "super::humantime_serde_compat")]
    pub duration: Duration,
    /// A warm-up: sent and stored, but left out of the reported numbers.
    #[serde(default)]
    pub warmup: bool,
    /// Closed model: the stage ends after this many requests instead of after `duration`
    /// (the steps of a concurrency sweep, "500 requests per step").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
}

impl Stage {
    /// A stage holding `level` for `duration`.
    pub fn constant(name: impl Into<String>, level: f64, duration: Duration) -> Stage {
        Stage {
            name: name.into(),
            from: level,
            to: level,
            duration,
            warmup: false,
            requests: None,
        }
    }

    /// The load `at` from the start of the stage.
    pub fn level_at(&self, at: Duration) -> f64 {
        let secs = self.duration.as_secs_f64();
        if secs <= 0.0 {
            return self.to;
        }
        let f = (at.as_secs_f64() / secs).clamp(0.0, 1.0);
        self.from + (self.to - self.from) * f
    }
}

/// Where a stage stands among a staged run's steps, numbered as its report numbers them:
/// warm-ups are not steps ("step 3 of 4", never "step 6 of 8" for a sweep warming each
/// step up); a warm-up is named for the step it warms up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepPlace {
    /// The measured step it is or warms up, from 1.
    pub number: usize,
    /// How many measured steps the run has.
    pub of: usize,
    /// A warm-up stage.
    pub warmup: bool,
    /// The stage's name.
    pub name: String,
}

impl StepPlace {
    /// Stage `index` of `stages`, when the run has more than one.
    pub fn of(stages: &[Stage], index: usize) -> Option<StepPlace> {
        let stage = stages.get(index).filter(|_| stages.len() > 1)?;
        let of = stages.iter().filter(|s| !s.warmup).count();
        let before = stages[..index].iter().filter(|s| !s.warmup).count();
        // A warm-up warms up the next step; a measured stage is the next step itself.
        let number = (before + 1).min(of.max(1));
        Some(StepPlace {
            number,
            of,
            warmup: stage.warmup,
            name: stage.name.clone(),
        })
    }
}

impl std::fmt::Display for StepPlace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = if self.warmup { "warm-up for " } else { "" };
        write!(
            f,
            "{kind}step {} of {} ({})",
            self.number, self.of, self.name
        )
    }
}

/// Where a plan's sending ends, by the seconds its records are kept in: the load's seconds
/// told from the drain's (the answers still awaited). The progress line, the safety stop and
/// the live page each ask, and must agree.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SendingEnd {
    /// Sending stops this long after the start (a timed run, or stages all timed).
    pub after: Option<Duration>,
    /// Sending stops once this many requests were sent.
    pub requests: Option<u64>,
}

impl SendingEnd {
    /// Where the sending of a plan with `stop` and `stages` ends (whichever comes first).
    pub fn of(stop: &Stop, stages: &[Stage]) -> SendingEnd {
        let staged: Duration = stages.iter().map(|s| s.duration).sum();
        let timed = !staged.is_zero() && stages.iter().all(|s| s.requests.is_none());
        SendingEnd {
            after: stop.duration.or(timed.then_some(staged)),
            requests: stop.requests,
        }
    }

    /// The planned time in whole seconds, rounded up: the second a fractional duration ends
    /// in still sends.
    pub fn secs(&self) -> Option<u64> {
        self.after.map(|d| d.as_secs_f64().ceil() as u64)
    }

    /// Whether second `index` (from 0) comes after the last send, `sent_before` requests
    /// having been sent in the seconds before it.
    pub fn drains(&self, index: u64, sent_before: u64) -> bool {
        self.secs().is_some_and(|s| index >= s) || self.requests.is_some_and(|n| sent_before >= n)
    }

    /// Whether second `index` is sent through whole: the sending ends neither in it nor
    /// before it (`sent_through`: sent up to the end of it).
    pub fn whole(&self, index: u64, sent_through: u64) -> bool {
        self.after
            .is_none_or(|d| Duration::from_secs(index.saturating_add(1)) <= d)
            && self.requests.is_none_or(|n| sent_through < n)
    }
}

/// Where each stage ends, so that a request can be placed in the stage it was sent for:
/// by its intended time, or by its number when the stages are counted in requests.
#[derive(Debug, Clone, PartialEq)]
pub enum StageBounds {
    /// No stages.
    None,
    /// The end of each stage, from the start of the run.
    Timed(Vec<Duration>),
    /// The number of requests issued by the end of each stage.
    Counted(Vec<u64>),
}

impl StageBounds {
    /// The bounds of `stages` (counted when the first stage is).
    pub fn of(stages: &[Stage]) -> StageBounds {
        match stages.first() {
            None => StageBounds::None,
            Some(s) if s.requests.is_some() => StageBounds::Counted(
                stages
                    .iter()
                    .scan(0, |end, s| {
                        *end += s.requests.unwrap_or(0);
                        Some(*end)
                    })
                    .collect(),
            ),
            Some(_) => StageBounds::Timed(
                stages
                    .iter()
                    .scan(Duration::ZERO, |end, s| {
                        *end += s.duration;
                        Some(*end)
                    })
                    .collect(),
            ),
        }
    }

    /// The stage of the run's `n`-th request, meant to leave `elapsed` after the start.
    #[inline]
    pub fn stage_of(&self, elapsed: Duration, n: u64) -> Option<u16> {
        let i = match self {
            StageBounds::None => return None,
            StageBounds::Timed(ends) => ends.partition_point(|&end| end <= elapsed),
            StageBounds::Counted(ends) => ends.partition_point(|&end| end <= n),
        };
        // Past the last stage (a request finishing the run) belongs to the last one.
        let last = self.len().checked_sub(1)?;
        u16::try_from(i.min(last)).ok()
    }

    /// The stage an interval starting `start` after the run's start is filed under: the one
    /// running then, or for counted stages the latest `last_step` it saw a request of; `None`
    /// after the last stage (the run's drain).
    pub fn interval_stage(&self, start: Duration, last_step: Option<u16>) -> Option<u16> {
        match self {
            StageBounds::None => None,
            StageBounds::Timed(ends) => {
                let i = ends.partition_point(|&end| end <= start);
                (i < ends.len()).then_some(u16::try_from(i).ok()?)
            }
            // Counted steps can be shorter than a second.
            StageBounds::Counted(_) => last_step,
        }
    }

    /// Number of stages.
    pub fn len(&self) -> usize {
        match self {
            StageBounds::None => 0,
            StageBounds::Timed(ends) => ends.len(),
            StageBounds::Counted(ends) => ends.len(),
        }
    }

    /// True without stages.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The load of a counted stage after `n` requests were issued, ramping over its count;
    /// `None` once they all were (or when the stages are timed).
    pub fn counted_level(&self, stages: &[Stage], n: u64) -> Option<f64> {
        let StageBounds::Counted(ends) = self else {
            return None;
        };
        let i = ends.partition_point(|&end| end <= n);
        let stage = stages.get(i)?;
        let count = stage.requests.unwrap_or(1).max(1);
        let into = n - (ends[i] - count.min(ends[i]));
        let f = (into as f64 / count as f64).clamp(0.0, 1.0);
        Some(stage.from + (stage.to - stage.from) * f)
    }
}

/// The stage running `elapsed` after the start, with how far into it; `None` after the last.
pub fn stage_at(stages: &[Stage], elapsed: Duration) -> Option<(usize, Duration)> {
    let mut start = Duration::ZERO;
    for (i, s) in stages.iter().enumerate() {
        if elapsed < start + s.duration {
            return Some((i, elapsed - start));
        }
        start += s.duration;
    }
    None
}

#[cfg(test)]
mod stage_tests {
    use super::*;

    fn stage(secs: u64) -> Stage {
        Stage::constant("", 1.0, Duration::from_secs(secs))
    }

    #[test]
    fn timed_bounds_place_a_request_by_its_intended_time() {
        let bounds = StageBounds::of(&[stage(2), stage(3)]);
        assert_eq!(bounds.interval_stage(Duration::from_secs(4), None), Some(1));
        assert_eq!(bounds.interval_stage(Duration::from_secs(5), None), None);
        assert_eq!(bounds.stage_of(Duration::from_millis(1999), 0), Some(0));
        assert_eq!(bounds.stage_of(Duration::from_secs(2), 0), Some(1));
        // A request due exactly at the end of the run is the last stage's.
        assert_eq!(bounds.stage_of(Duration::from_secs(9), 0), Some(1));
        assert_eq!(StageBounds::of(&[]).stage_of(Duration::ZERO, 0), None);
    }

    #[test]
    fn counted_bounds_place_a_request_by_its_number_and_ramp_over_the_count() {
        let counted = |from: f64, to: f64, n| Stage {
            from,
            to,
            requests: Some(n),
            ..stage(0)
        };
        let stages = [counted(1.0, 1.0, 500), counted(2.0, 4.0, 100)];
        let bounds = StageBounds::of(&stages);
        assert_eq!(bounds.stage_of(Duration::ZERO, 499), Some(0));
        assert_eq!(bounds.stage_of(Duration::ZERO, 500), Some(1));
        assert_eq!(bounds.counted_level(&stages, 0), Some(1.0));
        assert_eq!(bounds.counted_level(&stages, 550), Some(3.0));
        assert_eq!(bounds.counted_level(&stages, 600), None);
    }

    #[test]
    fn the_stage_running_at_a_time_is_found_and_none_after_the_last() {
        let stages = [stage(2), stage(5), stage(1), stage(1)];
        assert_eq!(
            stage_at(&stages, Duration::from_millis(7500)).map(|(i, _)| i),
            Some(2)
        );
        assert_eq!(stage_at(&stages, Duration::from_secs(9)), None);
    }
}

/// When a run stops sending new requests; whichever limit comes first wins.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Stop {
    /// Stop after this long.
    #[serde(default, with = "opt_duration")]
    pub duration: Option<Duration>,
    /// Stop after this many requests have been started.
    pub requests: Option<u64>,
}

impl Stop {
    /// A stop after `duration_ms` milliseconds and/or `requests` requests (tests' shorthand).
    #[cfg(test)]
    pub(crate) fn of_ms(duration_ms: Option<u64>, requests: Option<u64>) -> Stop {
        Stop {
            duration: duration_ms.map(Duration::from_millis),
            requests,
        }
    }

    pub(super) fn validate(&self, _load: &Load) -> Result<(), PlanError> {
        match (self.duration, self.requests) {
            (None, None) => Err(PlanError::Range(
                "give --duration or --requests so the run stops by itself".into(),
            )),
            (Some(d), _) if d.is_zero() => {
                Err(PlanError::Range("--duration must be greater than 0".into()))
            }
            (_, Some(0)) => Err(PlanError::Range("--requests must be at least 1".into())),
            _ => Ok(()),
        }
    }
}

mod opt_duration {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_str(&humantime::format_duration(*d).to_string()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|s| crate::units::parse_duration(&s).map_err(serde::de::Error::custom))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stop(duration_ms: Option<u64>, requests: Option<u64>) -> Stop {
        Stop::of_ms(duration_ms, requests)
    }

    #[test]
    fn the_sending_ends_at_the_first_of_its_time_and_its_count() {
        // 12.5 s: the thirteenth second (index 12) still sends, though not through.
        let e = SendingEnd::of(&stop(Some(12_500), None), &[]);
        assert_eq!(e.secs(), Some(13));
        assert!(!e.drains(12, 1 << 40));
        assert!(e.drains(13, 0));
        assert!(e.whole(11, 0) && !e.whole(12, 0));
        // A count: the second that reaches it is the last that sends, and not whole.
        let e = SendingEnd::of(&stop(None, Some(1_000)), &[]);
        assert!(!e.drains(3, 999) && e.drains(4, 1_000));
        assert!(e.whole(3, 999) && !e.whole(3, 1_000));
        // Both: whichever comes first.
        let e = SendingEnd::of(&stop(Some(60_000), Some(100)), &[]);
        assert!(e.drains(5, 100) && !e.whole(4, 100));
        assert!(e.drains(60, 0));
        // Neither said: never a drain.
        let e = SendingEnd::default();
        assert!(!e.drains(u64::MAX, u64::MAX) && e.whole(u64::MAX, u64::MAX));
    }

    #[test]
    fn timed_stages_end_the_sending_and_counted_ones_do_not() {
        let stage = |secs, requests| Stage {
            name: "s".into(),
            from: 1.0,
            to: 1.0,
            duration: Duration::from_secs(secs),
            requests,
            warmup: false,
        };
        let e = SendingEnd::of(&stop(None, None), &[stage(3, None), stage(4, None)]);
        assert_eq!(e.secs(), Some(7));
        let e = SendingEnd::of(
            &stop(None, Some(50)),
            &[stage(0, Some(20)), stage(0, Some(30))],
        );
        assert_eq!((e.secs(), e.requests), (None, Some(50)));
    }

    #[test]
    fn warm_ups_are_named_for_the_step_they_warm_up_and_are_not_counted() {
        let stage = |name: &str, warmup: bool| Stage {
            warmup,
            ..Stage::constant(name.to_string(), 100.0, Duration::from_secs(1))
        };
        let sweep: Vec<Stage> = ["100", "200"]
            .iter()
            .flat_map(|n| [stage(&format!("{n} warm-up"), true), stage(n, false)])
            .collect();
        let place = |i| StepPlace::of(&sweep, i).unwrap().to_string();
        assert_eq!(place(0), "warm-up for step 1 of 2 (100 warm-up)");
        assert_eq!(place(1), "step 1 of 2 (100)");
        assert_eq!(place(3), "step 2 of 2 (200)");
        assert_eq!(StepPlace::of(&sweep, 4), None);
        // One stage is no step of many.
        assert_eq!(StepPlace::of(&sweep[1..2], 0), None);
    }
}
