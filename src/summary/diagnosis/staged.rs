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
            Limit::Server | Limit::Generator | Limit::Both | Limit::ChangedWithTime
        )
    }) {
        return at(i, s, run_wide);
    }
    if !run_wide.is_empty() {
        return Diagnosis::of(run_wide);
    }
    // Latency drifting at several loads at one speed follows the clock, not the load.
    if let Some(d) = clock(measured()) {
        return d;
    }
    // A step in which every request failed, in a run where others succeeded: the run cannot
    // be read as having kept up, nor as having failed whole.
    if let Some((i, s)) = measured().find(|(_, s)| s.verdict.limit == Limit::NothingSucceeded) {
        let failed = s.verdict.findings.iter().find_map(|f| match f {
            Finding::NothingSucceeded { completed, reasons } => Some(Finding::MostFailed {
                share: 1.0,
                completed: *completed,
                reasons: reasons.clone(),
            }),
            _ => None,
        });
        let mut findings = vec![Finding::AtStep {
            index: u16::try_from(i).unwrap_or(u16::MAX),
            name: s.name.clone(),
        }];
        findings.extend(failed);
        return Diagnosis::of(findings);
    }
    // The last step too short to judge, after steps that were judged, is a step cut short
    // (a sweep stopped, or still going on a live page), not the run's doubt: its own row
    // says it was too short, and the run is what the steps before it were. A step that ran
    // its whole planned time and is still too short is the run's doubt: it says so.
    let last = measured().next_back().map(|(i, _)| i);
    let cut_short = |i: usize, s: &StageRow| {
        s.cut_short
            && Some(i) == last
            && i > measured().next().map_or(i, |(first, _)| first)
            && !s.verdict.findings.is_empty()
            && s.verdict
                .findings
                .iter()
                .all(|f| matches!(f, Finding::TooShort { .. }))
    };
    for wanted in [Limit::CannotTell, Limit::Transient] {
        if let Some((i, s)) =
            measured().find(|(i, s)| s.verdict.limit == wanted && !cut_short(*i, s))
        {
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

/// Fastest drift over slowest past which the steps' drifts are not one clock's: a queue
/// climbs faster the nearer a load is to the limit, the clock at one speed.
const SAME_SPEED: f64 = 4.0;

/// The run's diagnosis when steps at two loads or more drifted at about one speed: the
/// server changed with time, first seen at the first of them.
fn clock<'a>(steps: impl Iterator<Item = (usize, &'a StageRow)>) -> Option<Diagnosis> {
    let drifting: Vec<(usize, &StageRow, f64)> = steps
        .filter_map(|(i, s)| {
            s.verdict.findings.iter().find_map(|f| match f {
                Finding::LatencyDrifting { us_per_sec, .. } => Some((i, s, *us_per_sec)),
                _ => None,
            })
        })
        .collect();
    let (first, _, _) = drifting.first()?;
    let loads = drifting
        .iter()
        .map(|(_, s, _)| s.from)
        .fold(Vec::<f64>::new(), |mut v, l| {
            if !v.contains(&l) {
                v.push(l);
            }
            v
        });
    let slowest = drifting.iter().map(|d| d.2).fold(f64::INFINITY, f64::min);
    let fastest = drifting.iter().map(|d| d.2).fold(0.0, f64::max);
    if loads.len() < 2 || slowest <= 0.0 || fastest > slowest * SAME_SPEED {
        return None;
    }
    let mut findings = vec![
        Finding::AtStep {
            index: u16::try_from(*first).unwrap_or(u16::MAX),
            name: drifting[0].1.name.clone(),
        },
        Finding::ClockDrift {
            steps: drifting.iter().map(|d| d.1.name.clone()).collect(),
            slowest_us_per_sec: slowest,
            fastest_us_per_sec: fastest,
        },
    ];
    findings.extend(
        drifting[0]
            .1
            .verdict
            .findings
            .iter()
            .filter(|f| matches!(f, Finding::LatencyDrifting { .. }))
            .cloned(),
    );
    Some(Diagnosis::of(findings))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::diagnosis::ReasonCount;
    use crate::summary::Reason;

    fn step(name: &str, from: f64, verdict: Diagnosis) -> StageRow {
        StageRow {
            name: name.into(),
            from,
            to: from,
            duration_secs: 5.0,
            not_run: false,
            count: 100,
            failures: 0,
            errors: 0,
            rps: 20.0,
            sent_rps: 20.0,
            latency: Default::default(),
            warmup: false,
            lag_p99_us: 0,
            cpu_share: 0.1,
            verdict,
            server_cpu_percent: None,
            throughput: 20.0,
            status_codes: Default::default(),
            error_set: Vec::new(),
            requests: Vec::new(),
            flows: Vec::new(),
            counted: false,
            cut_short: false,
        }
    }

    fn drift(us_per_sec: f64) -> Diagnosis {
        Diagnosis::of(vec![Finding::LatencyDrifting {
            first_p50_us: 1_000,
            last_p50_us: 9_000,
            us_per_sec,
            secs: 8,
        }])
    }

    #[test]
    fn one_step_in_which_everything_failed_does_not_make_the_run_fail_whole() {
        let failed = Diagnosis::of(vec![Finding::NothingSucceeded {
            completed: 100,
            reasons: vec![ReasonCount {
                reason: Reason::Status { code: 502 },
                count: 100,
            }],
        }]);
        let steps = [
            step("1 user", 1.0, failed),
            step("2 users", 2.0, Diagnosis::default()),
        ];
        let d = of_staged_run(Diagnosis::default(), &steps);
        assert_eq!(d.limit, Limit::CannotTell, "{d:?}");
        assert!(matches!(
            &d.findings[..],
            [Finding::AtStep { index: 0, .. }, Finding::MostFailed { share, .. }] if *share == 1.0
        ));
    }

    #[test]
    fn a_last_step_cut_short_does_not_make_the_run_undecided() {
        let short = || {
            Diagnosis::of(vec![Finding::TooShort {
                secs: 1.0,
                completed: 600,
                needed_secs: crate::summary::diagnosis::MIN_SECS,
                needed_answers: crate::summary::diagnosis::MIN_ANSWERS,
            }])
        };
        // A sweep stopped (or still going) one second into its second step: the run is
        // what its first step was.
        let mut steps = [
            step("200 req/s", 200.0, Diagnosis::default()),
            step("600 req/s", 600.0, short()),
        ];
        steps[1].cut_short = true;
        let d = of_staged_run(Diagnosis::default(), &steps);
        assert_eq!(d.limit, Limit::Neither, "{d:?}");
        // The same step having run its whole planned time: too short is the run's doubt,
        // never "neither side was the limit".
        steps[1].cut_short = false;
        let d = of_staged_run(Diagnosis::default(), &steps);
        assert_eq!(d.limit, Limit::CannotTell, "{d:?}");
        assert!(
            matches!(d.findings[0], Finding::AtStep { index: 1, .. }),
            "{d:?}"
        );
        // Every step too short (steps of a second by design): the run cannot tell.
        let steps = [
            step("200 req/s", 200.0, short()),
            step("600 req/s", 600.0, short()),
        ];
        let d = of_staged_run(Diagnosis::default(), &steps);
        assert_eq!(d.limit, Limit::CannotTell, "{d:?}");
        assert!(
            matches!(d.findings[0], Finding::AtStep { index: 0, .. }),
            "{d:?}"
        );
    }

    #[test]
    fn drift_at_two_loads_at_one_speed_is_the_clock_and_at_one_load_is_not() {
        let steps = [
            step("20 req/s", 20.0, drift(2_000.0)),
            step("60 req/s", 60.0, drift(2_100.0)),
        ];
        let d = of_staged_run(Diagnosis::default(), &steps);
        assert_eq!(d.limit, Limit::ChangedWithTime, "{d:?}");
        assert!(d
            .findings
            .iter()
            .any(|f| matches!(f, Finding::ClockDrift { steps, .. } if steps.len() == 2)));
        // One load drifting, the other not: a queue at the edge cannot be ruled out.
        let one = [
            step("20 req/s", 20.0, Diagnosis::default()),
            step("60 req/s", 60.0, drift(2_000.0)),
        ];
        assert_eq!(
            of_staged_run(Diagnosis::default(), &one).limit,
            Limit::CannotTell
        );
        // Speeds far apart climb with the load, as a queue does.
        let apart = [
            step("20 req/s", 20.0, drift(500.0)),
            step("60 req/s", 60.0, drift(5_000.0)),
        ];
        assert_eq!(
            of_staged_run(Diagnosis::default(), &apart).limit,
            Limit::CannotTell
        );
    }
}
