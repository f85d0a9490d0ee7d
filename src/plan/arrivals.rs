//! How an open model's arrivals are spaced: evenly (a metronome at the rate), or as a Poisson
//! process at the rate (independent users: bursts and lulls, as real traffic has), drawn
//! from a seed so that a run can be repeated exactly.

use super::{Load, PlanError};
use serde::{Deserialize, Serialize};

/// How arrivals are spaced, as asked (`--arrivals`, or `arrivals:` in a scenario's load).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ArrivalKind {
    /// Evenly spaced at the rate.
    #[default]
    Even,
    /// A Poisson process at the rate: exponential gaps between arrivals.
    Poisson,
}

impl std::str::FromStr for ArrivalKind {
    type Err = String;

    fn from_str(text: &str) -> Result<ArrivalKind, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "even" => Ok(ArrivalKind::Even),
            "poisson" => Ok(ArrivalKind::Poisson),
            _ => Err(format!(
                "arrivals are `even` (evenly spaced at the rate) or `poisson` (exponential gaps), got {text:?}"
            )),
        }
    }
}

/// How a plan's arrivals are spaced, with the seed of Poisson arrivals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Arrivals {
    /// Evenly spaced at the rate.
    #[default]
    Even,
    /// A Poisson process at the rate.
    Poisson {
        /// Seeds the draws: the same seed sends the same schedule. `None` until the run
        /// draws one (and stores it, so the run can be repeated).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seed: Option<u64>,
    },
}

impl Arrivals {
    /// Arrivals of `kind`, with `seed` for Poisson ones (ignored for even ones).
    pub fn of(kind: ArrivalKind, seed: Option<u64>) -> Arrivals {
        match kind {
            ArrivalKind::Even => Arrivals::Even,
            ArrivalKind::Poisson => Arrivals::Poisson { seed },
        }
    }

    /// Which spacing.
    pub fn kind(self) -> ArrivalKind {
        match self {
            Arrivals::Even => ArrivalKind::Even,
            Arrivals::Poisson { .. } => ArrivalKind::Poisson,
        }
    }

    /// True for even spacing (what runs stored before arrivals were kept had).
    pub fn is_even(&self) -> bool {
        *self == Arrivals::Even
    }

    /// The seed of Poisson arrivals, once there is one.
    pub fn seed(self) -> Option<u64> {
        match self {
            Arrivals::Even => None,
            Arrivals::Poisson { seed } => seed,
        }
    }

    /// These arrivals with a seed: the one given, else `draw()`'s.
    pub fn seeded(self, draw: impl FnOnce() -> u64) -> Arrivals {
        match self {
            Arrivals::Poisson { seed: None } => Arrivals::Poisson { seed: Some(draw()) },
            other => other,
        }
    }

    /// The spacing the schedule walks; Poisson arrivals not yet seeded walk seed 0 (a run
    /// draws its seed before it starts).
    pub fn spacing(self) -> crate::schedule::Spacing {
        match self {
            Arrivals::Even => crate::schedule::Spacing::Even,
            Arrivals::Poisson { seed } => crate::schedule::Spacing::Poisson {
                seed: seed.unwrap_or(0),
            },
        }
    }

    /// Checks the arrivals against the load model: only an open model has arrivals.
    pub(super) fn validate(self, load: &Load) -> Result<(), PlanError> {
        match (self, load) {
            (Arrivals::Poisson { .. }, Load::Closed { .. }) => Err(PlanError::Range(
                "Poisson arrivals space an open model's requests (a rate); a closed model's users send when they are answered: give --rate (rate: in a scenario), or leave arrivals even".into(),
            )),
            _ => Ok(()),
        }
    }
}

/// A seed from the operating system's randomness (std's hasher keys are drawn from it), for a
/// Poisson run not given one.
pub fn fresh_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
    );
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_and_arrivals_keep_their_seed_in_json() {
        assert_eq!("Poisson".parse(), Ok(ArrivalKind::Poisson));
        assert_eq!(" even".parse(), Ok(ArrivalKind::Even));
        assert!("bursty"
            .parse::<ArrivalKind>()
            .unwrap_err()
            .contains("poisson"));
        let p = Arrivals::of(ArrivalKind::Poisson, None).seeded(|| 42);
        assert_eq!(p, Arrivals::Poisson { seed: Some(42) });
        assert_eq!(p.seeded(|| 7).seed(), Some(42), "a seed given is kept");
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(json, r#"{"kind":"poisson","seed":42}"#);
        assert_eq!(serde_json::from_str::<Arrivals>(&json).unwrap(), p);
        assert_eq!(
            serde_json::from_str::<Arrivals>(r#"{"kind":"even"}"#).unwrap(),
            Arrivals::Even
        );
        assert_ne!(fresh_seed(), fresh_seed());
    }

    #[test]
    fn a_closed_model_has_no_arrivals_to_space() {
        let closed = Load::Closed { concurrency: 4 };
        let err = Arrivals::Poisson { seed: None }
            .validate(&closed)
            .unwrap_err();
        assert!(err.to_string().contains("open model"), "{err}");
        assert!(Arrivals::Even.validate(&closed).is_ok());
    }
}
