//! The regression verdict in words: each rule with the baseline's value, the candidate's
//! (each with its 95 % confidence interval), the change and whether it held, regressed or
//! differed within noise; in text, markdown, JSON and JUnit.

use super::interval::{in_unit, value};
use super::junit::{Case, Failure, Suite};
use super::table::{aligned_left, markdown_left};
use super::Format;
use crate::summary::regression::{
    Allowance, Incomplete, Latency, Mismatch, Outcome, RuleVerdict, Side, Unit,
};
use crate::summary::Interval;
use crate::summary::Summary;
use crate::units::fmt_us_f;
use std::fmt::Write as _;

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
            super::build::words::load_words(baseline),
            super::build::words::load_words(candidate)
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

fn outcome_word(o: Outcome) -> &'static str {
    match o {
        Outcome::Passed => "passed",
        Outcome::WithinNoise => "within noise",
        Outcome::Failed => "REGRESSED",
        Outcome::NoData => "FAILED (nothing to measure)",
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

fn rows(verdicts: &[RuleVerdict]) -> Vec<Vec<String>> {
    let mut rows = vec![[
        "rule",
        "baseline (95% CI)",
        "candidate (95% CI)",
        "change",
        "limit",
        "verdict",
    ]
    .map(String::from)
    .to_vec()];
    for v in verdicts {
        rows.push(vec![
            v.rule.text.clone(),
            with_ci(v.unit, v.baseline, v.baseline_ci.as_ref()),
            with_ci(v.unit, v.candidate, v.candidate_ci.as_ref()),
            change(v),
            value(v.unit, v.limit),
            outcome_word(v.outcome).into(),
        ]);
    }
    rows
}

/// The rules within noise, a line each, under the table.
fn noise_lines(j: &Judged<'_>) -> Vec<String> {
    j.verdicts
        .iter()
        .filter(|v| v.outcome == Outcome::WithinNoise)
        .map(noise_line)
        .collect()
}

/// The closing line: how many rules failed, and which runs are partial.
fn tally(j: &Judged<'_>) -> String {
    let verdicts = j.verdicts;
    let failed = verdicts.iter().filter(|v| !v.passed()).count();
    let noise = match verdicts
        .iter()
        .filter(|v| v.outcome == Outcome::WithinNoise)
        .count()
    {
        0 => String::new(),
        n => format!(" ({n} within noise)"),
    };
    let rules = if failed == 0 && j.incomplete.is_empty() {
        return format!("no regression: all {} rules held{noise}", verdicts.len());
    } else if failed == 0 {
        format!("all {} rules held{noise}", verdicts.len())
    } else {
        format!("{failed} of {} rules failed{noise}", verdicts.len())
    };
    let partial: Vec<&str> = j
        .incomplete
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

/// The partial runs, a line each, under the table.
fn incomplete_block(j: &Judged<'_>) -> String {
    j.incomplete
        .iter()
        .map(|i| format!("FAILED: {}\n", incomplete_line(i)))
        .collect()
}

/// The verdict in `format`.
pub fn render(j: &Judged<'_>, format: Format) -> Result<String, super::RenderError> {
    Ok(match format {
        Format::Text => {
            let mut out = format!(
                "Regression check of {} against the baseline {}\n\n",
                j.candidate_label, j.baseline_label
            );
            out.push_str(&aligned_left(&rows(j.verdicts), 1));
            out.push('\n');
            for line in noise_lines(j) {
                let _ = writeln!(out, "{line}");
            }
            out.push_str(&incomplete_block(j));
            let _ = writeln!(out, "{}", tally(j));
            out
        }
        Format::Markdown => markdown(j),
        Format::Json => {
            serde_json::to_string_pretty(&serde_json::json!({
                "baseline": j.baseline_label,
                "candidate": j.candidate_label,
                "passed": j.passed(),
                "incomplete": j.incomplete,
                "rules": j.verdicts,
            }))
            .expect("verdicts serialize")
                + "\n"
        }
        Format::Junit => junit(j),
        Format::Html => {
            return Err(super::RenderError::Unsupported {
                what: "a regression check",
                format: "HTML",
                hint: "use text, markdown, json or junit; headroom compare BASE CANDIDATE --format html shows the runs side by side",
            })
        }
    })
}

/// The verdict as Markdown (also the step summary of `compare --fail-on`).
pub fn markdown(j: &Judged<'_>) -> String {
    let mut out = format!(
        "### headroom: regression check of `{}` against the baseline `{}`\n\n",
        super::step_summary::code_text(j.candidate_label),
        super::step_summary::code_text(j.baseline_label)
    );
    let escaped: Vec<Vec<String>> = rows(j.verdicts)
        .into_iter()
        .map(|r| {
            r.iter()
                .map(|c| super::step_summary::cell_text(c))
                .collect()
        })
        .collect();
    out.push_str(&markdown_left(&escaped, 1));
    out.push('\n');
    for line in noise_lines(j) {
        let _ = writeln!(out, "- {}", super::step_summary::cell_text(&line));
    }
    for i in j.incomplete {
        let _ = writeln!(
            out,
            "- **FAILED**: {}",
            super::step_summary::cell_text(&incomplete_line(i))
        );
    }
    let _ = writeln!(out, "\n**{}**\n", tally(j));
    out
}

/// One test case per rule, and one per partial run.
fn junit(j: &Judged<'_>) -> String {
    let partial = j.incomplete.iter().map(|i| Case {
        classname: "headroom.regression".into(),
        name: complete_check(i.side).into(),
        failure: Some(Failure {
            message: incomplete_line(i),
            kind: "partial",
            detail: incomplete_line(i),
        }),
        output: None,
    });
    let cases = j
        .verdicts
        .iter()
        .map(|v| Case {
            classname: "headroom.regression".into(),
            name: v.rule.text.clone(),
            failure: (!v.passed()).then(|| Failure {
                message: failure_line(v),
                kind: "regression",
                detail: failure_line(v),
            }),
            output: (v.outcome == Outcome::WithinNoise).then(|| noise_line(v)),
        })
        .chain(partial)
        .collect();
    Suite {
        name: format!(
            "headroom: regression check of {} against {}",
            j.candidate_label, j.baseline_label
        ),
        timestamp: Some(j.candidate.started_at.clone()),
        hostname: Some(j.candidate.host.clone()),
        secs: Some(j.candidate.duration.total_secs),
        properties: vec![
            ("baseline", j.baseline_label.to_string()),
            ("candidate", j.candidate_label.to_string()),
            ("target", j.candidate.target.clone()),
            ("load", super::build::words::load_words(j.candidate)),
        ],
        cases,
    }
    .to_xml()
}

/// The partial runs and the failed rules, a line each (for standard error).
pub fn failure_lines(j: &Judged<'_>) -> Vec<String> {
    j.incomplete
        .iter()
        .map(incomplete_line)
        .chain(j.verdicts.iter().filter(|v| !v.passed()).map(failure_line))
        .collect()
}
