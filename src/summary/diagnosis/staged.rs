//! A staged run's diagnosis (a sweep, a ramp, a probe's warm-up and window): the load
//! changed from step to step, so lateness, trends and limits are each step's, judged on its
//! own; the run says where the load stopped being carried, and which step showed it first.

use super::{Blame, Diagnosis, Finding, Limit};
use crate::summary::StageRow;

/// The run's diagnosis from the whole run's (`whole`, judged without trends) and its
/// steps'. Nothing succeeding in the whole run says it all; otherwise the first measured
/// step at a limit is the run's verdict, named as such; the generator's run-wide shortages
/// (ports, descriptors) join it. Without a step at a limit, the run is as undecided or as
/// transient as its first such step, or kept up.
pub fn of_staged_run(whole: Diagnosis, steps: &[StageRow]) -> Diagnosis {
    if whole.limit == Limit::NothingSucceeded {
        return whole;
    }
    let run_wide: Vec<Finding> = whole
        .findings
        .into_iter()
        .filter(|f| matches!(f, Finding::Shortage { .. } | Finding::Descriptors { .. }))
        .collect();
    let measured = || {
        steps
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.warmup && s.count > 0)
    };
    let at = |i: usize, s: &StageRow, extra: Vec<Finding>| {
        let mut findings = vec![Finding::AtStep {
            index: u16::try_from(i).unwrap_or(u16::MAX),
            name: s.name.clone(),
        }];
        findings.extend(s.verdict.findings.iter().cloned());
        for f in extra {
            if !findings.contains(&f) {
                findings.push(f);
            }
        }
        Diagnosis::of(findings)
    };
    if let Some((i, s)) = measured().find(|(_, s)| {
        matches!(
            s.verdict.limit,
            Limit::NothingSucceeded
                | Limit::Server
                | Limit::Generator
                | Limit::Both
                | Limit::ChangedWithTime
        )
    }) {
        return at(i, s, run_wide);
    }
    if !run_wide.is_empty() {
        return Diagnosis::of(run_wide);
    }
    for wanted in [Limit::CannotTell, Limit::Transient] {
        if let Some((i, s)) = measured().find(|(_, s)| s.verdict.limit == wanted) {
            return at(i, s, Vec::new());
        }
    }
    if measured().next().is_none() {
        // Not one measured step completed a request.
        return Diagnosis::of(vec![Finding::TooShort {
            secs: 0.0,
            completed: 0,
            needed_secs: super::MIN_SECS,
            needed_answers: super::MIN_ANSWERS,
        }]);
    }
    Diagnosis::default()
}

/// The step a run's diagnosis was found at, when it was one step's.
pub fn step_of(d: &Diagnosis) -> Option<(u16, &str)> {
    d.findings.iter().find_map(|f| match f {
        Finding::AtStep { index, name } => Some((*index, name.as_str())),
        _ => None,
    })
}

impl Diagnosis {
    /// The findings without where they were found: the evidence itself.
    pub fn evidence(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.blame() != Blame::Context)
    }
}
