//! A capacity search and a regression gate as JUnit test cases, written by the one JUnit
//! writer ([`super::write::junit`]); a run's checks are its document's.

use super::document::{Check, CheckFailure, Document, Stamp};
use crate::capacity::fmt_level;
use crate::capacity::search::Verdict;
use crate::capacity::study::CapacityRecord;

/// The class of test cases about whether the numbers can be trusted.
const TRUST: &str = "headroom.run";

/// One `<testsuite>`: what it ran, its cases and the properties that identify it.
pub(super) struct Suite {
    /// The suite's name (the run's headline).
    pub name: String,
    /// When it started (RFC 3339), when known.
    pub timestamp: Option<String>,
    /// The generator's host name, when known.
    pub hostname: Option<String>,
    /// Its length, seconds, when known.
    pub secs: Option<f64>,
    /// Name and value pairs shown with the suite.
    pub properties: Vec<(&'static str, String)>,
    /// Its test cases, in order.
    pub cases: Vec<Case>,
}

/// One `<testcase>`, failed when it has a failure.
pub(super) struct Case {
    /// Its class (a group in CI views).
    pub classname: String,
    /// Its name.
    pub name: String,
    /// Why it failed, when it did.
    pub failure: Option<Failure>,
    /// What a passing case has to say (an objective too close to call, a change within
    /// noise), as its `<system-out>`.
    pub output: Option<String>,
}

/// A `<failure>`: a one-line message, a type, and the detail as its text.
pub(super) struct Failure {
    /// One line: what was measured against what was asked.
    pub message: String,
    /// The kind of failure.
    pub kind: &'static str,
    /// More lines of evidence.
    pub detail: String,
}

impl Suite {
    /// The suite as a JUnit XML document, through the one JUnit writer.
    pub fn to_xml(&self) -> String {
        let doc = Document {
            // The writer names the suite "headroom: " and the title.
            title: self
                .name
                .strip_prefix("headroom: ")
                .unwrap_or(&self.name)
                .to_string(),
            properties: self
                .properties
                .iter()
                .map(|(k, v)| ((*k).to_string(), v.clone()))
                .collect(),
            stamp: self.secs.map(|secs| Stamp {
                started: self.timestamp.clone().unwrap_or_default(),
                host: self.hostname.clone().unwrap_or_default(),
                secs,
            }),
            checks: self
                .cases
                .iter()
                .map(|c| Check {
                    group: c.classname.clone(),
                    name: c.name.clone(),
                    failure: c.failure.as_ref().map(|f| CheckFailure {
                        message: f.message.clone(),
                        kind: f.kind.into(),
                        detail: f.detail.clone(),
                    }),
                    output: c.output.clone(),
                })
                .collect(),
            ..Document::default()
        };
        super::write::junit::write(&doc)
    }
}

/// A capacity search as JUnit XML: a test case that it found a capacity (a search that
/// ended otherwise fails it, with its answer), and one per objective as measured at the rate
/// found.
pub fn capacity(record: &CapacityRecord) -> String {
    let outcome = record.outcome;
    let found = outcome.is_some_and(|o| matches!(o.verdict, Verdict::Found | Verdict::AboveMax));
    let answer = super::capacity::answer(record);
    let mut cases = vec![Case {
        classname: TRUST.into(),
        name: "a capacity was found".into(),
        failure: (!found).then(|| Failure {
            message: answer.join(" "),
            kind: "no capacity found",
            detail: answer.join("\n"),
        }),
        output: None,
    }];
    // The last probe that met the objectives at the capacity: the evidence it rests on.
    let at = outcome
        .and_then(|o| o.capacity)
        .and_then(|rate| record.probes.iter().rev().find(|p| p.met && p.rate == rate));
    if let Some(probe) = at.filter(|_| found) {
        cases.extend(probe.verdicts.iter().map(|v| {
            let check = super::build::checks::objective(v);
            Case {
                classname: check.group,
                name: format!("{} at {} req/s", v.objective, fmt_level(probe.rate)),
                failure: check.failure.map(|f| Failure {
                    message: f.message,
                    kind: "objective not met",
                    detail: f.detail,
                }),
                output: check.output,
            }
        }));
    }
    let mut properties = vec![
        ("target", record.target.clone()),
        ("objectives", record.objectives.join(", ")),
    ];
    if let Some(rate) = outcome.and_then(|o| o.capacity) {
        properties.push(("capacity", format!("{} req/s", fmt_level(rate))));
    }
    Suite {
        name: format!("headroom: capacity of {}", record.target),
        timestamp: None,
        hostname: None,
        secs: None,
        properties,
        cases,
    }
    .to_xml()
}
