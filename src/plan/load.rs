//! How hard and how long: the open or closed load model and the stop condition.

use super::PlanError;
use std::time::Duration;

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
    pub(super) fn validate(&self) -> Result<(), PlanError> {
        match *self {
            Load::Open { rate } if !(rate.0.is_finite() && rate.0 > 0.0) => {
                Err(PlanError::Range(format!(
                    "--rate must be a positive number of requests per second, got {}",
                    rate.0
                )))
            }
            Load::Open { rate } if rate.0 > 10_000_000.0 => Err(PlanError::Range(format!(
                "--rate {} is above the 10,000,000 req/s a single generator can pace",
                rate.0
            ))),
            Load::Closed { concurrency: 0 } => {
                Err(PlanError::Range("--concurrency must be at least 1".into()))
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
}

impl Stage {
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

    #[test]
    fn the_stage_running_at_a_time_is_found_and_none_after_the_last() {
        let stage = |secs| Stage {
            name: String::new(),
            from: 1.0,
            to: 1.0,
            duration: Duration::from_secs(secs),
            warmup: false,
        };
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
            .map(|s| humantime::parse_duration(&s).map_err(serde::de::Error::custom))
            .transpose()
    }
}
