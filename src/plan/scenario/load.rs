//! Lowering the load: a rate or users until a stop, or stages.

use super::file;
use super::{Lowering, ScenarioError};
use crate::plan::{ArrivalKind, Arrivals, Load, Rate, Stage};

impl Lowering<'_> {
    pub(super) fn load(&self, l: &file::LoadSection) -> Result<Load, ScenarioError> {
        let rate = l
            .rate
            .as_ref()
            .map(|r| {
                r.per_second()
                    .map_err(|e| self.error_near("rate", 0, format!("load.rate: {e}")))
            })
            .transpose()?;
        match (rate, l.users) {
            (Some(rate), None) if rate.is_finite() && rate > 0.0 => {
                Ok(Load::Open { rate: Rate(rate) })
            }
            (Some(rate), None) => Err(self.error_near(
                "rate",
                0,
                format!("load.rate must be a positive number of requests per second, got {rate}"),
            )),
            (None, Some(0)) => {
                Err(self.error_near("users", 0, "load.users must be at least 1".into()))
            }
            (None, Some(users)) => Ok(Load::Closed { concurrency: users }),
            (Some(_), Some(_)) => Err(self.error_near(
                "load",
                0,
                "load: give rate (open model) or users (closed model), not both".into(),
            )),
            (None, None) => Err(self.error_near(
                "load",
                0,
                "load: give rate (requests per second, open model), users (closed model) or stages"
                    .into(),
            )),
        }
    }

    /// The closed model's cap on the rate of sends (`load.max_rate`), checked for its model.
    pub(super) fn max_rate(
        &self,
        l: &file::LoadSection,
        open: bool,
    ) -> Result<Option<Rate>, ScenarioError> {
        let Some(cap) = &l.max_rate else {
            return Ok(None);
        };
        let here = |why: String| self.error_near("max_rate", 0, format!("load.max_rate: {why}"));
        let cap = cap.per_second().map_err(here)?;
        if open {
            return Err(here(
                "caps the closed model (users); with a rate the rate is already what is sent: remove max_rate".into(),
            ));
        }
        if !(cap.is_finite() && cap > 0.0) {
            return Err(here(format!(
                "must be a positive number of requests per second, got {cap}"
            )));
        }
        Ok(Some(Rate(cap)))
    }

    /// How the load's arrivals are spaced, checked against its model.
    pub(super) fn arrivals(
        &self,
        l: &file::LoadSection,
        load: &Load,
    ) -> Result<Arrivals, ScenarioError> {
        let kind = l.arrivals.unwrap_or_default();
        match (kind, l.seed, load) {
            (ArrivalKind::Even, Some(_), _) => Err(self.error_near(
                "seed",
                0,
                "load.seed seeds Poisson arrivals: add arrivals: poisson, or remove the seed".into(),
            )),
            (ArrivalKind::Poisson, _, Load::Closed { .. }) => Err(self.error_near(
                "arrivals",
                0,
                "load.arrivals: poisson spaces an open model's requests (a rate); users send when they are answered: give rate, or remove arrivals".into(),
            )),
            (kind, seed, _) => Ok(Arrivals::of(kind, seed)),
        }
    }

    pub(super) fn stages(
        &self,
        stages: &[file::StageSection],
        load: &file::LoadSection,
    ) -> Result<Vec<Stage>, ScenarioError> {
        if load.rate.is_some() || load.users.is_some() || load.duration.is_some() {
            return Err(self.error_near(
                "stages",
                0,
                "load: give stages, or rate/users with duration, not both (each stage has its own rate or users and duration)".into(),
            ));
        }
        let open = stages.iter().any(|s| s.rate.is_some());
        let mut out = Vec::with_capacity(stages.len());
        for (i, s) in stages.iter().enumerate() {
            let name = s.name.clone().unwrap_or_else(|| format!("stage {}", i + 1));
            let here = |message: String| {
                self.error_near(
                    &s.duration,
                    0,
                    format!("load.stages[{i}] ({name}): {message}"),
                )
            };
            let level = match (s.rate, s.users) {
                (Some(_), Some(_)) => return Err(here("give rate or users, not both".into())),
                (Some(rate), None) if open => rate,
                (None, Some(users)) if !open => users,
                (None, None) => {
                    return Err(here("give rate (requests per second) or users".into()))
                }
                _ => {
                    return Err(here(
                        "every stage must use the same model: all rate, or all users".into(),
                    ))
                }
            };
            let (from, to) = level.span();
            out.push(Stage {
                name: name.clone(),
                from,
                to,
                duration: file::duration(&s.duration).map_err(&here)?,
                warmup: s.warmup,
                requests: None,
            });
        }
        if out.is_empty() {
            return Err(self.error_near(
                "stages",
                0,
                "load.stages: give at least one stage".into(),
            ));
        }
        // Each stage is at most a year; the run they make must be too, so that no deadline
        // computed from their sum can overflow the clock.
        let total = out
            .iter()
            .try_fold(std::time::Duration::ZERO, |t, s| t.checked_add(s.duration));
        if total.is_none_or(|t| t > crate::units::MAX_DURATION) {
            return Err(self.error_near(
                "stages",
                0,
                "load.stages: the stages add up to more than a year, the longest run headroom takes"
                    .into(),
            ));
        }
        Ok(out)
    }
}
