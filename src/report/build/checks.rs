//! Checks shared by the builders that report tests (JUnit): an objective as a check, and the
//! groups checks belong to, so a run, a capacity search and a regression gate name them alike.

use crate::report::document::{Check, CheckFailure};
use crate::report::interval;
use crate::summary::SloVerdict;

/// The group of checks about objectives (a request's objectives: this and its name).
pub const OBJECTIVES: &str = "headroom.objectives";
/// The group of checks about whether the numbers can be trusted.
pub const TRUST: &str = "headroom.run";
/// The group of a regression gate's rules.
pub const REGRESSION: &str = "headroom.regression";

/// An objective as a check: failed with what was measured against what was asked; a met
/// objective whose bound lies inside its interval passes, and says so.
pub fn objective(v: &SloVerdict) -> Check {
    let measured = interval::measured(v);
    Check {
        group: match &v.request {
            Some(request) => format!("{OBJECTIVES}.{request}"),
            None => OBJECTIVES.to_string(),
        },
        name: v.objective.clone(),
        failure: (!v.met).then(|| CheckFailure {
            message: format!("measured {measured} against the objective {}", v.objective),
            kind: "objective not met".into(),
            detail: format!("{}: measured {measured}", v.objective),
        }),
        output: (v.met && v.ci.is_some_and(|c| c.uncertain))
            .then(|| format!("{}: measured {measured}", v.objective)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_objective_is_a_check_of_its_request_failed_with_its_measure() {
        let v = SloVerdict {
            objective: "p99 < 10ms".into(),
            request: Some("read".into()),
            measured: "12.5ms".into(),
            met: false,
            ci: None,
        };
        let c = objective(&v);
        assert_eq!(c.group, "headroom.objectives.read");
        let f = c.failure.unwrap();
        assert_eq!(
            f.message,
            "measured 12.5ms against the objective p99 < 10ms"
        );
        assert_eq!(f.kind, "objective not met");
        let met = objective(&SloVerdict {
            met: true,
            request: None,
            ..v
        });
        assert_eq!(met.group, "headroom.objectives");
        assert!(met.failure.is_none() && met.output.is_none());
    }
}
