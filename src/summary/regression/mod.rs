//! The regression verdict of a candidate run against a baseline run: rules such as
//! `p99 +10%, errors +0.1pp, rps -5%` (how much worse each measure may get), parsed and judged
//! here; renderers word the verdicts.
//!
//! A measure worse than its allowance is a regression only when the two runs' 95 %
//! confidence intervals of it are disjoint; when they overlap, chance alone can make the
//! difference, and the rule passes "within noise". The intervals: order statistics for a
//! percentile, the normal one for a mean, Wilson's for the error rate, and for throughput the
//! spread of the completions of each whole second measured (see [`super::confidence`]). The
//! maximum has none, and is judged on its values alone.

use super::confidence::{self, Interval};
use super::Summary;
use serde::Serialize;

pub use rules::*;

mod rules;

/// The unit a rule's values are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Microseconds of latency.
    Micros,
    /// A share of the requests (0.01 is 1 %).
    Ratio,
    /// Successful responses per second.
    PerSecond,
}

/// How a rule came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Within its allowance.
    Passed,
    /// Worse than it allows, but the two runs' confidence intervals overlap: a difference
    /// chance alone can make, so not a regression (it passes).
    WithinNoise,
    /// Worse than it allows, with disjoint confidence intervals (or none to compare, as for
    /// the maximum): regressed.
    Failed,
    /// A side has nothing to measure (no answered request for a latency): not a pass.
    NoData,
}

/// One rule judged: the values on each side and the outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleVerdict {
    /// The rule.
    pub rule: Rule,
    /// The unit of `baseline`, `candidate` and `limit`.
    pub unit: Unit,
    /// The baseline's value.
    pub baseline: f64,
    /// The candidate's value.
    pub candidate: f64,
    /// The worst the candidate may be and pass.
    pub limit: f64,
    /// The baseline's 95 % confidence interval, in `unit`, when the measure has one.
    pub baseline_ci: Option<Interval<f64>>,
    /// The candidate's, likewise.
    pub candidate_ci: Option<Interval<f64>>,
    /// How the intervals were found, when there are any.
    pub ci_method: Option<CiMethod>,
    /// The outcome.
    pub outcome: Outcome,
}

/// How a measure's confidence interval is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CiMethod {
    /// A percentile's, from order statistics (distribution-free).
    OrderStatistics,
    /// A mean's, from the normal approximation (30 values or more).
    NormalMean,
    /// A proportion's, Wilson's score interval.
    Wilson,
    /// A rate's, from the spread of its whole seconds (Student's t).
    PerSecondSpread,
}

impl RuleVerdict {
    /// True when the rule held (within its allowance, or within noise).
    pub fn passed(&self) -> bool {
        matches!(self.outcome, Outcome::Passed | Outcome::WithinNoise)
    }
}

/// Judges each rule on `candidate` against `baseline`.
pub fn judge(rules: &[Rule], baseline: &Summary, candidate: &Summary) -> Vec<RuleVerdict> {
    rules
        .iter()
        .map(|rule| judge_one(rule, baseline, candidate))
        .collect()
}

fn judge_one(rule: &Rule, baseline: &Summary, candidate: &Summary) -> RuleVerdict {
    let latency = |s: &Summary, stat: Latency| {
        let l = &s.latency;
        match stat {
            Latency::P50 => l.p50_us as f64,
            Latency::P90 => l.p90_us as f64,
            Latency::P95 => l.p95_us as f64,
            Latency::P99 => l.p99_us as f64,
            Latency::P999 => l.p999_us as f64,
            Latency::Max => l.max_us as f64,
            Latency::Mean => l.mean_us,
        }
    };
    let errors = |s: &Summary| {
        if s.requests.total > 0 {
            1.0 - s.success_ratio
        } else {
            f64::NAN
        }
    };
    let (unit, base, cand, limit, higher_is_worse) = match rule.allowance {
        Allowance::LatencyShare { stat, share } => {
            let b = latency(baseline, stat);
            (
                Unit::Micros,
                b,
                latency(candidate, stat),
                b * (1.0 + share),
                true,
            )
        }
        Allowance::LatencyBy { stat, us } => {
            let b = latency(baseline, stat);
            (Unit::Micros, b, latency(candidate, stat), b + us, true)
        }
        Allowance::ErrorPoints { points } => {
            let b = errors(baseline);
            (Unit::Ratio, b, errors(candidate), b + points / 100.0, true)
        }
        Allowance::ThroughputShare { share } => {
            let b = baseline.requests.throughput;
            (
                Unit::PerSecond,
                b,
                candidate.requests.throughput,
                b * (1.0 - share),
                false,
            )
        }
    };
    let (b, c) = (
        interval(rule.allowance, baseline),
        interval(rule.allowance, candidate),
    );
    let ci_method = b.or(c).map(|(_, method)| method);
    let (baseline_ci, candidate_ci) = (b.map(|(i, _)| i), c.map(|(i, _)| i));
    // Latency is the answered requests'; a side without any has no latency to compare, and
    // its zeros must not pass for a fast run.
    let empty = |s: &Summary| unit == Unit::Micros && s.latency.count == 0;
    let outcome = decide(
        empty(baseline) || empty(candidate) || base.is_nan() || cand.is_nan(),
        (higher_is_worse && cand <= limit) || (!higher_is_worse && cand >= limit),
        higher_is_worse,
        baseline_ci.zip(candidate_ci),
    );
    RuleVerdict {
        rule: rule.clone(),
        unit,
        baseline: base,
        candidate: cand,
        limit,
        baseline_ci,
        candidate_ci,
        ci_method,
        outcome,
    }
}

/// A rule's outcome: nothing to measure, within its allowance, or past it, and then within
/// noise when the two runs' intervals overlap on the side that matters: the candidate's
/// better end reaches the baseline's worse end. An end the samples cannot bound (a p99.9
/// of a few hundred requests) shows no overlap: it would pass any change as noise.
fn decide(
    no_data: bool,
    held: bool,
    higher_is_worse: bool,
    intervals: Option<(Interval<f64>, Interval<f64>)>,
) -> Outcome {
    let noise = intervals.is_some_and(|(b, c)| {
        if higher_is_worse {
            matches!((b.hi, c.lo), (Some(worst), Some(best)) if best <= worst)
        } else {
            matches!((b.lo, c.hi), (Some(worst), Some(best)) if best >= worst)
        }
    });
    if no_data {
        Outcome::NoData
    } else if held {
        Outcome::Passed
    } else if noise {
        Outcome::WithinNoise
    } else {
        Outcome::Failed
    }
}

/// The 95 % confidence interval of what `allowance` watches in `s`, and how it was found;
/// `None` for the maximum and when the run has too little to bound it.
fn interval(allowance: Allowance, s: &Summary) -> Option<(Interval<f64>, CiMethod)> {
    let l = &s.latency;
    let stat = match allowance {
        Allowance::LatencyShare { stat, .. } | Allowance::LatencyBy { stat, .. } => stat,
        Allowance::ErrorPoints { .. } => {
            // success_ratio is successes / total in f64: rounding recovers the count.
            let failures = ((1.0 - s.success_ratio) * s.requests.total as f64).round() as u64;
            return confidence::wilson(failures, s.requests.total).map(|i| (i, CiMethod::Wilson));
        }
        Allowance::ThroughputShare { .. } => {
            return confidence::per_second(s.requests.throughput, &measured_seconds(s))
                .map(|i| (i, CiMethod::PerSecondSpread));
        }
    };
    if l.count == 0 {
        return None;
    }
    let ci = l.ci.as_ref();
    let percentile = match stat {
        Latency::P50 => ci.map(|c| c.p50_us),
        Latency::P90 => ci.map(|c| c.p90_us),
        Latency::P95 => ci.map(|c| c.p95_us),
        Latency::P99 => ci.map(|c| c.p99_us),
        Latency::P999 => ci.map(|c| c.p999_us),
        Latency::Mean => {
            return confidence::mean(l.mean_us, l.stdev_us, l.count)
                .map(|i| (i, CiMethod::NormalMean))
        }
        Latency::Max => return None,
    };
    percentile.map(|i| (i.as_f64(), CiMethod::OrderStatistics))
}

/// The completions of each whole second measured: warm-up seconds, the last partial second
/// and the wait for the last answers are left out.
fn measured_seconds(s: &Summary) -> Vec<u64> {
    whole_seconds(&s.timeline, s.duration.attack_secs, |stage| {
        stage
            .and_then(|i| s.stages.get(usize::from(i)))
            .is_some_and(|st| st.warmup)
    })
}

/// The completions of the seconds of `timeline` wholly inside the `attack_secs` and outside
/// a stage `warmup` says is one.
fn whole_seconds(
    timeline: &[crate::store::IntervalDigest],
    attack_secs: f64,
    warmup: impl Fn(Option<u16>) -> bool,
) -> Vec<u64> {
    timeline
        .iter()
        .filter(|d| (d.index as f64) + 1.0 <= attack_secs && !warmup(d.stage))
        .map(|d| d.completed)
        .collect()
}

/// Which of the two runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The run judged against.
    Baseline,
    /// The run judged.
    Candidate,
}

/// A run whose numbers cover less than the whole run (interrupted, killed, missing shards):
/// its figures are not the test's, so a gate fails on it whatever the rules say.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Incomplete {
    /// Which run.
    pub side: Side,
    /// Why it is partial, as the summary says.
    pub why: String,
}

/// The runs of the two that are partial, baseline first.
pub fn incomplete(baseline: &Summary, candidate: &Summary) -> Vec<Incomplete> {
    [(Side::Baseline, baseline), (Side::Candidate, candidate)]
        .into_iter()
        .filter_map(|(side, s)| {
            s.partial.as_ref().map(|why| Incomplete {
                side,
                why: why.clone(),
            })
        })
        .collect()
}

/// A way two runs differ that makes their comparison one of unlike things.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Mismatch {
    /// They sent different requests (a different mix, or other methods): different tests.
    Requests {
        /// The baseline's request names.
        baseline: Vec<String>,
        /// The candidate's.
        candidate: Vec<String>,
    },
    /// They loaded different URLs.
    Target {
        /// The baseline's.
        baseline: String,
        /// The candidate's.
        candidate: String,
    },
    /// They offered different loads or stages.
    Load,
}

impl Mismatch {
    /// True when the runs are different tests altogether, not the same test elsewhere.
    pub fn refuses(&self) -> bool {
        matches!(self, Mismatch::Requests { .. })
    }
}

/// How `candidate` differs from `baseline` in what was tested.
pub fn mismatches(baseline: &Summary, candidate: &Summary) -> Vec<Mismatch> {
    // One request is named after its URL's path (an attack), so its name follows the target,
    // whose change is only warned of; a mix is a test by its requests' names.
    let requests = |s: &Summary| -> Vec<(String, String)> {
        s.by_request
            .iter()
            .map(|r| (r.method.clone(), r.name.clone()))
            .collect()
    };
    let (rb, rc) = (requests(baseline), requests(candidate));
    let same = rb.len() == rc.len()
        && rb.iter().zip(&rc).all(|(b, c)| b.0 == c.0)
        && (rb.len() == 1 || rb == rc);
    let mut out = Vec::new();
    if !same {
        let names = |r: Vec<(String, String)>| r.into_iter().map(|(_, name)| name).collect();
        out.push(Mismatch::Requests {
            baseline: names(rb),
            candidate: names(rc),
        });
    }
    if baseline.target != candidate.target {
        out.push(Mismatch::Target {
            baseline: baseline.target.clone(),
            candidate: candidate.target.clone(),
        });
    }
    // A stage's planned shape is its name and its load at each end (its length as run can
    // differ by a fraction of a second between runs of one plan).
    let stages = |s: &Summary| -> Vec<(String, f64, f64)> {
        s.stages
            .iter()
            .map(|st| (st.name.clone(), st.from, st.to))
            .collect()
    };
    if baseline.load != candidate.load || stages(baseline) != stages(candidate) {
        out.push(Mismatch::Load);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_read_as_written() {
        let rules =
            parse_rules("p99 +10%, errors +0.1pp, rps -5%, p99.9 +5ms, mean+800us").unwrap();
        let kinds: Vec<Allowance> = rules.iter().map(|r| r.allowance).collect();
        assert_eq!(
            kinds,
            vec![
                Allowance::LatencyShare {
                    stat: Latency::P99,
                    share: 0.1
                },
                Allowance::ErrorPoints { points: 0.1 },
                Allowance::ThroughputShare { share: 0.05 },
                Allowance::LatencyBy {
                    stat: Latency::P999,
                    us: 5000.0
                },
                Allowance::LatencyBy {
                    stat: Latency::Mean,
                    us: 800.0
                },
            ]
        );
        assert_eq!(rules[0].text, "p99 +10%");
        let max: Rule = "MAX +1s".parse().unwrap();
        assert_eq!(
            max.allowance,
            Allowance::LatencyBy {
                stat: Latency::Max,
                us: 1e6
            }
        );
    }

    #[test]
    fn past_the_allowance_is_a_regression_only_when_the_intervals_are_disjoint() {
        let i = |lo: f64, hi: f64| Interval {
            lo: Some(lo),
            hi: Some(hi),
        };
        let open = Interval {
            lo: Some(9.0),
            hi: None,
        };
        assert_eq!(decide(false, true, true, None), Outcome::Passed);
        assert_eq!(
            decide(false, true, true, Some((i(1.0, 2.0), i(5.0, 6.0)))),
            Outcome::Passed
        );
        assert_eq!(
            decide(false, false, true, Some((i(1.0, 2.0), i(1.5, 3.0)))),
            Outcome::WithinNoise
        );
        assert_eq!(
            decide(false, false, true, Some((i(1.0, 2.0), i(2.5, 3.0)))),
            Outcome::Failed
        );
        // A baseline whose p99 the samples cannot bound above shows no overlap: called
        // noise, any change would pass; the values decide, as without intervals.
        assert_eq!(
            decide(false, false, true, Some((open, i(20.0, 30.0)))),
            Outcome::Failed
        );
        // Throughput: worse is lower, so the candidate's upper end meets the baseline's lower.
        assert_eq!(
            decide(false, false, false, Some((i(90.0, 110.0), i(80.0, 95.0)))),
            Outcome::WithinNoise
        );
        assert_eq!(
            decide(false, false, false, Some((i(90.0, 110.0), i(70.0, 85.0)))),
            Outcome::Failed
        );
        // Without intervals (the maximum), the values alone decide.
        assert_eq!(decide(false, false, true, None), Outcome::Failed);
        assert_eq!(
            decide(true, true, true, Some((i(1.0, 2.0), i(1.0, 2.0)))),
            Outcome::NoData
        );
        let within = RuleVerdict {
            rule: "p99 +10%".parse().unwrap(),
            unit: Unit::Micros,
            baseline: 1.0,
            candidate: 2.0,
            limit: 1.1,
            baseline_ci: None,
            candidate_ci: None,
            ci_method: None,
            outcome: Outcome::WithinNoise,
        };
        assert!(within.passed());
    }

    #[test]
    fn throughput_noise_is_read_from_the_whole_measured_seconds() {
        let second =
            |index: u64, completed: u64, stage: Option<u16>| crate::store::IntervalDigest {
                index,
                sent: completed,
                completed,
                failed: 0,
                p50_us: 0,
                p90_us: 0,
                p99_us: 0,
                max_us: 0,
                health: Default::default(),
                stage,
                server: None,
                ..Default::default()
            };
        let timeline = [
            second(0, 40, Some(0)),
            second(1, 100, Some(1)),
            second(2, 98, Some(1)),
            second(3, 102, Some(1)),
            second(4, 30, Some(1)),
        ];
        // Stage 0 is a warm-up; the attack ended 0.4 s into second 4.
        let counts = whole_seconds(&timeline, 4.4, |stage| stage == Some(0));
        assert_eq!(counts, vec![100, 98, 102]);
        assert!(whole_seconds(&timeline, 0.9, |_| false).is_empty());
    }

    #[test]
    fn bad_rules_name_the_rule_and_quote_the_grammar() {
        for (bad, named) in [
            ("p99 10%", "p99 10%"),
            ("p99 +10%, p98 +1ms", "p98 +1ms"),
            ("p99 -10%", "p99 -10%"),
            ("p99 +10", "p99 +10"),
            ("errors +0.1%", "errors +0.1%"),
            ("rps +5%", "rps +5%"),
            ("p99 +ten%", "p99 +ten%"),
            ("latency +1ms", "latency +1ms"),
            (" , ", ","),
            ("p99 +10%; rps -5%", "p99 +10%; rps -5%"),
        ] {
            let e = parse_rules(bad).unwrap_err();
            assert_eq!(e.rule, named, "{bad}");
            let line = e.to_string();
            assert!(line.contains(GRAMMAR) && !line.contains('\n'), "{line}");
        }
    }

    #[test]
    fn a_rule_that_cannot_fail_is_refused() {
        // Found trying gates as a new user would: these were taken, and passed any candidate.
        for (bad, says) in [
            ("rps -1000%", "throughput cannot fall by 100 % or more"),
            ("rps -100%", "throughput cannot fall by 100 % or more"),
            (
                "errors +200pp",
                "cannot rise by 100 percentage points or more",
            ),
            (
                "p99 +10%, errors +100pp",
                "cannot rise by 100 percentage points",
            ),
        ] {
            let e = parse_rules(bad).unwrap_err();
            assert!(
                e.reason.contains(says) && e.reason.contains("can never fail"),
                "{bad}: {e}"
            );
        }
        // At the edge, but able to fail.
        assert!(parse_rules("rps -99.9%, errors +99.9pp, rps -0%, errors +0pp").is_ok());
    }

    #[test]
    fn an_unreadable_number_is_shown_as_written() {
        for (bad, shown) in [
            ("p99 +abc%", "cannot read the number in \"+abc%\""),
            ("p99 +-10%", "cannot read the number in \"+-10%\""),
            ("p99 +1.2.3ms", "cannot read the number in \"1.2.3\""),
        ] {
            let e = parse_rules(bad).unwrap_err();
            assert!(e.reason.contains(shown), "{bad}: {}", e.reason);
        }
        for bad in ["p99 +10%; rps -5%", "errors +1pp; p99 +5ms"] {
            let e = parse_rules(bad).unwrap_err();
            assert!(e.reason.contains("separated by a comma"), "{}", e.reason);
        }
    }
}
