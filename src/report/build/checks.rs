//! Checks shared by the builders that report tests (JUnit): an objective as a check, and the
//! groups checks belong to, so a run, a capacity search and a regression gate name them alike.

use crate::report::document::{Check, CheckFailure};
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
    let measured = super::objectives::cell(v).to_text();
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
    use super::super::objectives::tests::verdict;
    use super::*;

    #[test]
    fn a_missed_objective_fails_its_check_and_a_close_one_passes_saying_so() {
        let missed = objective(&verdict(false, false));
        assert_eq!(missed.group, "headroom.objectives");
        let f = missed.failure.expect("failed");
        assert_eq!(
            f.message,
            "measured 240.000ms (95% CI 220.000–262.000ms) against the objective p99 < 250ms"
        );
        let close = objective(&verdict(true, true));
        assert!(close.failure.is_none());
        assert!(close.output.unwrap().contains("too close to call"));
        let sure = objective(&SloVerdict {
            request: Some("read".into()),
            ..verdict(true, false)
        });
        assert_eq!(sure.group, "headroom.objectives.read");
        assert!(sure.output.is_none());
    }
}
