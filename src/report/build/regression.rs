//! The document of a regression gate (`compare --baseline --fail-on`): whether the candidate
//! regressed, each failed rule and each rule within noise in words, then a table of the rules
//! with the baseline's value, the candidate's (each with its 95 % confidence interval), the
//! change and the outcome; a check per rule and per partial run for JUnit.

use super::checks;
use super::words::load_words;
use crate::report::document::interval::{in_unit, value};
use crate::report::document::{
    Answer, Cell, Check, CheckFailure, Document, Fact, Section, Stamp, Table, Tone, Verdict,
};
use crate::summary::regression::{
    Allowance, Incomplete, Latency, Mismatch, Outcome, RuleVerdict, Side, Unit,
};
use crate::summary::{Interval, Summary};
use crate::units::fmt_us_f;

/// The two runs judged: their labels (directory names) and summaries.
pub struct Judged<'a> {
    /// The baseline's label.
    pub baseline_label: &'a str,
    /// The baseline.
    pub baseline: &'a Summary,
    /// The candidate's label.
    pub candidate_label: &'a str,
    /// The candidate.
    pub candidate: &'a Summary,
    /// Each rule, judged.
    pub verdicts: &'a [RuleVerdict],
    /// The runs that are partial: each a failed check whatever the rules say.
    pub incomplete: &'a [Incomplete],
}

impl Judged<'_> {
    /// True when both runs are whole and every rule held.
    pub fn passed(&self) -> bool {
        self.incomplete.is_empty() && self.verdicts.iter().all(RuleVerdict::passed)
    }
}

/// The gate as a document.
pub fn build(j: &Judged<'_>) -> Document {
    let evidence = j
        .verdicts
        .iter()
        .filter(|v| !v.passed())
        .map(failure_line)
        .chain(
            j.verdicts
                .iter()
                .filter(|v| v.outcome == Outcome::WithinNoise)
                .map(noise_line),
        )
        .chain(
            j.incomplete
                .iter()
                .map(|i| format!("FAILED: {}", incomplete_line(i))),
        )
        .collect();
    let failed = j.verdicts.iter().filter(|v| !v.passed()).count();
    Document {
        title: format!(
            "Regression check of {} against the baseline {}",
            j.candidate_label, j.baseline_label
        ),
        what_ran: vec![load_words(j.candidate)],
        answer: Answer {
            verdict: Some(Verdict {
                tone: if j.passed() { Tone::Good } else { Tone::Bad },
                sentence: tally(j.verdicts, j.incomplete),
                evidence,
            }),
            objectives: Vec::new(),
            numbers: vec![
                Fact {
                    label: "rules".into(),
                    value: Cell::Count(j.verdicts.len() as u64),
                },
                Fact {
                    label: "failed".into(),
                    value: Cell::Count(failed as u64),
                },
            ],
            notes: Vec::new(),
        },
        sections: vec![Section::table("rules", "", rules(j.verdicts))],
        checks: junit_checks(j.verdicts, j.incomplete),
        properties: vec![
            ("baseline".into(), j.baseline_label.to_string()),
            ("candidate".into(), j.candidate_label.to_string()),
            ("target".into(), j.candidate.target.clone()),
            ("load".into(), load_words(j.candidate)),
        ],
        stamp: Some(Stamp {
            started: j.candidate.started_at.clone(),
            host: j.candidate.host.clone(),
            secs: j.candidate.duration.total_secs,
        }),
        data: serde_json::json!({
            "baseline": j.baseline_label,
            "candidate": j.candidate_label,
            "passed": j.passed(),
            "incomplete": j.incomplete,
            "rules": j.verdicts,
        }),
        ..Document::default()
    }
}

/// The name of the check that a run is whole (a test case in JUnit).
fn complete_check(side: Side) -> &'static str {
    match side {
        Side::Baseline => "the baseline run is complete",
        Side::Candidate => "the candidate run is complete",
    }
}

/// One line on a partial run: which, and why.
fn incomplete_line(i: &Incomplete) -> String {
    let which = match i.side {
        Side::Baseline => "the baseline run",
        Side::Candidate => "the candidate run",
    };
    format!(
        "{which} is partial ({}): its figures are not the whole test's, so the gate cannot pass; rerun it to completion",
        i.why
    )
}

/// A mismatch between the runs as one line.
pub fn mismatch_line(m: &Mismatch, baseline: &Summary, candidate: &Summary) -> String {
    match m {
        Mismatch::Requests {
            baseline,
            candidate,
        } => format!(
            "the runs sent different requests (baseline: {}; candidate: {})",
            baseline.join(", "),
            candidate.join(", ")
        ),
        Mismatch::Target {
            baseline,
            candidate,
        } => format!(
            "the runs loaded different targets (baseline {baseline}, candidate {candidate})"
        ),
        Mismatch::Load => format!(
            "the runs offered different loads (baseline {}, candidate {})",
            load_words(baseline),
            load_words(candidate)
        ),
    }
}

/// The change from baseline to candidate, in the rule's terms: relative for `%` rules,
/// absolute for `+Nms`, percentage points for errors.
fn change(v: &RuleVerdict) -> String {
    if v.outcome == Outcome::NoData {
        return "-".into();
    }
    let delta = v.candidate - v.baseline;
    match v.rule.allowance {
        Allowance::LatencyShare { .. } | Allowance::ThroughputShare { .. } => {
            if v.baseline > 0.0 {
                format!("{:+.1}%", 100.0 * delta / v.baseline)
            } else if delta == 0.0 {
                "+0.0%".into()
            } else {
                "from 0".into()
            }
        }
        Allowance::LatencyBy { .. } => {
            let sign = if delta < 0.0 { "-" } else { "+" };
            format!("{sign}{}", fmt_us_f(delta.abs()))
        }
        Allowance::ErrorPoints { .. } => format!("{:+.2}pp", 100.0 * delta),
    }
}

/// A rule's outcome as a table cell.
fn outcome_cell(o: Outcome) -> Cell {
    match o {
        Outcome::Passed => Cell::Status(Tone::Good, "passed".into()),
        Outcome::WithinNoise => Cell::Status(Tone::Unsure, "within noise".into()),
        Outcome::Failed => Cell::Status(Tone::Bad, "REGRESSED".into()),
        Outcome::NoData => Cell::Status(Tone::Bad, "FAILED (nothing to measure)".into()),
    }
}

/// A side's value with its 95 % confidence interval when it has one.
fn with_ci(unit: Unit, v: f64, ci: Option<&Interval<f64>>) -> String {
    match ci {
        Some(ci) if !v.is_nan() => format!("{} ({})", value(unit, v), in_unit(unit, ci)),
        _ => value(unit, v),
    }
}

/// The candidate against the baseline, each with its interval, the change and the limit.
fn measured_line(v: &RuleVerdict) -> String {
    format!(
        "{}: candidate {} against baseline {} ({}), allowed at most {}",
        v.rule.text,
        with_ci(v.unit, v.candidate, v.candidate_ci.as_ref()),
        with_ci(v.unit, v.baseline, v.baseline_ci.as_ref()),
        change(v),
        match v.rule.allowance {
            Allowance::ThroughputShare { .. } => format!("a fall to {}", value(v.unit, v.limit)),
            _ => value(v.unit, v.limit),
        }
    )
}

/// One line on a failed rule: what was measured against what was allowed, and why it is not
/// noise.
fn failure_line(v: &RuleVerdict) -> String {
    match v.outcome {
        Outcome::NoData => format!(
            "{}: a run has no answered requests to measure (baseline {}, candidate {})",
            v.rule.text,
            value(v.unit, v.baseline),
            value(v.unit, v.candidate)
        ),
        _ if bounded(v) => format!(
            "{}; their 95% confidence intervals do not overlap",
            measured_line(v)
        ),
        _ if v.baseline_ci.is_some() && v.candidate_ci.is_some() => format!(
            "{}; a run has too few requests to bound its interval on the side that matters (open-ended), so it is judged on the values alone",
            measured_line(v)
        ),
        _ => format!(
            "{}; {}, so it is judged on the values alone",
            measured_line(v),
            match v.rule.allowance {
                Allowance::LatencyShare {
                    stat: Latency::Max, ..
                }
                | Allowance::LatencyBy {
                    stat: Latency::Max, ..
                } => "the maximum has no confidence interval",
                Allowance::ThroughputShare { .. } =>
                    "a run is too short (under two whole seconds measured) for a throughput interval",
                _ => "a run has too few requests for a confidence interval",
            }
        ),
    }
}

/// Whether both intervals are bounded where the comparison reads them: the baseline's worse
/// end and the candidate's better end (an upper and a lower end for latency and errors, the
/// reverse for throughput).
fn bounded(v: &RuleVerdict) -> bool {
    let (Some(b), Some(c)) = (v.baseline_ci, v.candidate_ci) else {
        return false;
    };
    match v.rule.allowance {
        Allowance::ThroughputShare { .. } => b.lo.is_some() && c.hi.is_some(),
        _ => b.hi.is_some() && c.lo.is_some(),
    }
}

/// One line on a rule past its allowance whose intervals overlap.
fn noise_line(v: &RuleVerdict) -> String {
    format!(
        "{}, but their 95% confidence intervals overlap: within noise, not a regression (chance alone can make a difference this size; more requests per run narrow the intervals)",
        measured_line(v)
    )
}

/// The rules, a row each.
fn rules(verdicts: &[RuleVerdict]) -> Table {
    let mut t = Table::new(
        &[
            "rule",
            "baseline (95% CI)",
            "candidate (95% CI)",
            "change",
            "limit",
            "verdict",
        ],
        1,
    );
    for v in verdicts {
        t.rows.push(vec![
            Cell::text(v.rule.text.clone()),
            Cell::text(with_ci(v.unit, v.baseline, v.baseline_ci.as_ref())),
            Cell::text(with_ci(v.unit, v.candidate, v.candidate_ci.as_ref())),
            Cell::text(change(v)),
            Cell::text(value(v.unit, v.limit)),
            outcome_cell(v.outcome),
        ]);
    }
    t
}

/// The answer in one line: how many rules failed, and which runs are partial.
fn tally(verdicts: &[RuleVerdict], incomplete: &[Incomplete]) -> String {
    let failed = verdicts.iter().filter(|v| !v.passed()).count();
    let noise = match verdicts
        .iter()
        .filter(|v| v.outcome == Outcome::WithinNoise)
        .count()
    {
        0 => String::new(),
        n => format!(" ({n} within noise)"),
    };
    let rules = if failed == 0 && incomplete.is_empty() {
        return format!("no regression: all {} rules held{noise}", verdicts.len());
    } else if failed == 0 {
        format!("all {} rules held{noise}", verdicts.len())
    } else {
        format!("{failed} of {} rules failed{noise}", verdicts.len())
    };
    let partial: Vec<&str> = incomplete
        .iter()
        .map(|i| match i.side {
            Side::Baseline => "the baseline run is partial",
            Side::Candidate => "the candidate run is partial",
        })
        .collect();
    if partial.is_empty() {
        format!("regression: {rules}")
    } else {
        format!("not passed: {}; {rules}", partial.join(", "))
    }
}

/// A check per rule, and one per partial run.
fn junit_checks(verdicts: &[RuleVerdict], incomplete: &[Incomplete]) -> Vec<Check> {
    let partial = incomplete.iter().map(|i| Check {
        group: checks::REGRESSION.into(),
        name: complete_check(i.side).into(),
        failure: Some(CheckFailure {
            message: incomplete_line(i),
            kind: "partial".into(),
            detail: incomplete_line(i),
        }),
        output: None,
    });
    verdicts
        .iter()
        .map(|v| Check {
            group: checks::REGRESSION.into(),
            name: v.rule.text.clone(),
            failure: (!v.passed()).then(|| CheckFailure {
                message: failure_line(v),
                kind: "regression".into(),
                detail: failure_line(v),
            }),
            output: (v.outcome == Outcome::WithinNoise).then(|| noise_line(v)),
        })
        .chain(partial)
        .collect()
}

/// The partial runs and the failed rules, a line each (for standard error).
pub fn failure_lines(j: &Judged<'_>) -> Vec<String> {
    j.incomplete
        .iter()
        .map(incomplete_line)
        .chain(j.verdicts.iter().filter(|v| !v.passed()).map(failure_line))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(text: &str, baseline: f64, candidate: f64, outcome: Outcome) -> RuleVerdict {
        let ci = |v: f64| {
            Some(Interval {
                lo: Some(0.9 * v),
                hi: Some(1.1 * v),
            })
        };
        RuleVerdict {
            rule: text.parse().unwrap(),
            unit: Unit::Micros,
            baseline,
            candidate,
            limit: 1.1 * baseline,
            baseline_ci: ci(baseline),
            candidate_ci: ci(candidate),
            ci_method: None,
            outcome,
        }
    }

    #[test]
    fn the_tally_leads_and_counts_failures_noise_and_partial_runs() {
        let failed = rule("p50 +10%", 1000.0, 2000.0, Outcome::Failed);
        let noisy = rule("p99 +10%", 1000.0, 1150.0, Outcome::WithinNoise);
        let partial = Incomplete {
            side: Side::Candidate,
            why: "the run did not finish".into(),
        };
        assert_eq!(
            tally(&[failed.clone(), noisy.clone()], &[]),
            "regression: 1 of 2 rules failed (1 within noise)"
        );
        assert_eq!(
            tally(std::slice::from_ref(&noisy), &[]),
            "no regression: all 1 rules held (1 within noise)"
        );
        assert_eq!(
            tally(std::slice::from_ref(&noisy), std::slice::from_ref(&partial)),
            "not passed: the candidate run is partial; all 1 rules held (1 within noise)"
        );
        let t = rules(&[failed.clone(), noisy.clone()]);
        assert_eq!(t.rows[0][5], Cell::Status(Tone::Bad, "REGRESSED".into()));
        assert_eq!(t.rows[0][3].to_text(), "+100.0%");
        assert_eq!(t.rows[1][5].tone(), Some(Tone::Unsure));
        let checks = junit_checks(&[failed, noisy], &[partial]);
        assert_eq!(checks.len(), 3);
        assert!(checks[0]
            .failure
            .as_ref()
            .unwrap()
            .message
            .ends_with("their 95% confidence intervals do not overlap"));
        assert!(checks[1].failure.is_none());
        assert!(checks[1].output.as_ref().unwrap().contains("within noise"));
        assert_eq!(checks[2].name, "the candidate run is complete");
        assert_eq!(checks[2].group, "headroom.regression");
    }
}
