//! The run as JUnit XML, for CI test reports: one test case per objective (its class names
//! the request an objective is scoped to), one that the generator kept up (a result measured
//! on a saturated generator must not pass silently) and one that the run completed.
//!
//! The shape is the one Jenkins' xUnit plugin, GitLab and the GitHub JUnit-report actions
//! read (`junit-10.xsd`); the integration tests validate it against that schema.

use super::xml::escape;
use crate::summary::{SloVerdict, Summary};
use std::fmt::Write as _;

/// The class of test cases about the whole run's objectives.
const OBJECTIVES: &str = "headroom.objectives";
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
    pub properties: Vec<(String, String)>,
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
    pub kind: String,
    /// More lines of evidence.
    pub detail: String,
}

impl Suite {
    /// The suite as a JUnit XML document (a `<testsuites>` holding it).
    pub fn to_xml(&self) -> String {
        let failures = self.cases.iter().filter(|c| c.failure.is_some()).count();
        let tests = self.cases.len();
        // SUREFIRE_TIME: seconds with at most three decimals.
        let time = self
            .secs
            .map_or(String::new(), |t| format!(" time=\"{:.3}\"", t.max(0.0)));
        let optional = |name: &str, value: &Option<String>| {
            value
                .as_ref()
                .filter(|v| !v.is_empty())
                .map_or(String::new(), |v| format!(" {name}=\"{}\"", escape(v)))
        };
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            out,
            "<testsuites name=\"headroom\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\"{time}>"
        );
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\"{time}{}{}>",
            escape(&self.name),
            optional("timestamp", &self.timestamp),
            optional("hostname", &self.hostname),
        );
        if !self.properties.is_empty() {
            out.push_str("    <properties>\n");
            for (name, value) in &self.properties {
                let _ = writeln!(
                    out,
                    "      <property name=\"{}\" value=\"{}\"/>",
                    escape(name),
                    escape(value)
                );
            }
            out.push_str("    </properties>\n");
        }
        for case in &self.cases {
            let head = format!(
                "    <testcase classname=\"{}\" name=\"{}\"",
                escape(&case.classname),
                escape(&case.name)
            );
            let mut body = String::new();
            if let Some(f) = &case.failure {
                let _ = writeln!(
                    body,
                    "      <failure message=\"{}\" type=\"{}\">{}</failure>",
                    escape(&f.message),
                    escape(&f.kind),
                    escape(&f.detail)
                );
            }
            if let Some(text) = &case.output {
                let _ = writeln!(body, "      <system-out>{}</system-out>", escape(text));
            }
            if body.is_empty() {
                let _ = writeln!(out, "{head}/>");
            } else {
                let _ = writeln!(out, "{head}>\n{body}    </testcase>");
            }
        }
        out.push_str("  </testsuite>\n</testsuites>\n");
        out
    }
}

/// The run summarised as `s` as JUnit XML; `run_id` (its directory's name) is kept as a
/// property when known.
pub fn render(s: &Summary, run_id: Option<&str>) -> String {
    let mut cases: Vec<Case> = s.slo.iter().map(objective_case).collect();
    cases.push(succeeded_case(s));
    cases.push(generator_case(s));
    cases.push(completed_case(s));
    let mut properties = Vec::new();
    if let Some(id) = run_id {
        properties.push(("run_id".to_string(), id.to_string()));
    }
    properties.extend(
        [
            ("target", s.target.clone()),
            ("load", super::text::load_words(s)),
            ("protocol", s.protocol.clone()),
            ("requests", s.requests.total.to_string()),
            ("throughput", format!("{:.1} req/s", s.requests.throughput)),
            ("success", format!("{:.2}%", 100.0 * s.success_ratio)),
            ("latency_p99", crate::units::fmt_us(s.latency.p99_us)),
        ]
        .map(|(k, v)| (k.to_string(), v)),
    );
    Suite {
        name: format!(
            "headroom: {}",
            super::text::target_line(s, &super::text::load_words(s))
        ),
        timestamp: Some(s.started_at.clone()),
        hostname: Some(s.host.clone()),
        secs: Some(s.duration.total_secs),
        properties,
        cases,
    }
    .to_xml()
}

/// A document's checks as JUnit XML, until the document's own JUnit writer replaces this
/// file: the suite named after its title, a case per check.
pub(super) fn document(doc: &super::document::Document) -> String {
    Suite {
        name: format!("headroom: {}", doc.title),
        timestamp: doc.stamp.as_ref().map(|s| s.started.clone()),
        hostname: doc.stamp.as_ref().map(|s| s.host.clone()),
        secs: doc.stamp.as_ref().map(|s| s.secs),
        properties: doc.properties.clone(),
        cases: doc
            .checks
            .iter()
            .map(|c| Case {
                classname: c.group.clone(),
                name: c.name.clone(),
                failure: c.failure.as_ref().map(|f| Failure {
                    message: f.message.clone(),
                    kind: f.kind.clone(),
                    detail: f.detail.clone(),
                }),
                output: c.output.clone(),
            })
            .collect(),
    }
    .to_xml()
}

/// An objective as a test case: failed with what was measured against what was asked.
pub(super) fn objective_case(v: &SloVerdict) -> Case {
    Case {
        classname: match &v.request {
            Some(request) => format!("{OBJECTIVES}.{request}"),
            None => OBJECTIVES.to_string(),
        },
        name: v.objective.clone(),
        failure: (!v.met).then(|| Failure {
            message: format!(
                "measured {} against the objective {}",
                super::interval::measured(v),
                v.objective
            ),
            kind: "objective not met".into(),
            detail: format!("{}: measured {}", v.objective, super::interval::measured(v)),
        }),
        // A met objective whose bound lies inside its interval passes, and says so.
        output: (v.met && v.ci.is_some_and(|c| c.uncertain))
            .then(|| format!("{}: measured {}", v.objective, super::interval::measured(v))),
    }
}

/// Whether the generator kept up: a run whose numbers describe the generator fails it, with
/// the verdict's evidence.
fn generator_case(s: &Summary) -> Case {
    let failure = s.verdict.generator_limited().then(|| {
        let lines = super::verdict::lines(&s.verdict, &s.generator);
        Failure {
            message: lines.join(" "),
            kind: "generator limited".into(),
            detail: lines.join("\n"),
        }
    });
    Case {
        classname: TRUST.into(),
        name: "the generator kept up".into(),
        failure,
        output: None,
    }
}

/// Whether any request succeeded: a run whose every answer failed fails it, with the
/// reasons, objectives or not.
fn succeeded_case(s: &Summary) -> Case {
    let failure = s.nothing_succeeded().then(|| {
        let lines = super::verdict::lines(&s.verdict, &s.generator);
        Failure {
            message: lines.join(" "),
            kind: "nothing succeeded".into(),
            detail: lines.join("\n"),
        }
    });
    Case {
        classname: TRUST.into(),
        name: "requests succeeded".into(),
        failure,
        output: None,
    }
}

/// Whether the run went to its end: an interrupted or crashed run's numbers cover part of it.
fn completed_case(s: &Summary) -> Case {
    Case {
        classname: TRUST.into(),
        name: "the run completed".into(),
        failure: s.partial.as_ref().map(|why| Failure {
            message: format!("partial run: {why}"),
            kind: "partial run".into(),
            detail: why.clone(),
        }),
        output: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_text_in_names_and_messages_is_escaped() {
        let v = SloVerdict {
            objective: "a<b & \"c\": p99 < 10ms".into(),
            request: Some("a<b & \"c\"".into()),
            measured: "12.5ms".into(),
            met: false,
            ci: None,
        };
        let xml = Suite {
            name: "x]]>\u{1}".into(),
            timestamp: Some("t".into()),
            hostname: Some("h".into()),
            secs: Some(1.23456),
            properties: vec![("target".into(), "http://h/?a=1&b=2".into())],
            cases: vec![objective_case(&v)],
        }
        .to_xml();
        assert!(xml.contains(
            r#"classname="headroom.objectives.a&lt;b &amp; &quot;c&quot;" name="a&lt;b &amp; &quot;c&quot;: p99 &lt; 10ms""#
        ), "{xml}");
        assert!(xml.contains(r#"message="measured 12.5ms against the objective a&lt;b"#));
        assert!(xml.contains(r#"value="http://h/?a=1&amp;b=2""#));
        assert!(xml.contains("name=\"x]]&gt;\u{FFFD}\""));
        assert!(xml.contains(r#"tests="1" failures="1" errors="0" skipped="0" time="1.235""#));
    }

    #[test]
    fn a_met_objective_is_a_passing_case_of_the_run_class() {
        let v = SloVerdict {
            objective: "p99 < 10ms".into(),
            request: None,
            measured: "1ms".into(),
            met: true,
            ci: None,
        };
        let case = objective_case(&v);
        assert_eq!(case.classname, "headroom.objectives");
        assert!(case.failure.is_none());
        assert!(case.output.is_none());
    }

    #[test]
    fn a_met_objective_too_close_to_call_passes_and_says_so() {
        let v = SloVerdict {
            objective: "p99 < 10ms".into(),
            request: None,
            measured: "9.800ms".into(),
            met: true,
            ci: Some(crate::summary::SloCi {
                unit: crate::summary::regression::Unit::Micros,
                interval: crate::summary::Interval {
                    lo: Some(9_500.0),
                    hi: None,
                },
                bound: 10_000.0,
                uncertain: true,
            }),
        };
        let xml = Suite {
            name: "s".into(),
            timestamp: None,
            hostname: None,
            secs: None,
            properties: vec![],
            cases: vec![objective_case(&v)],
        }
        .to_xml();
        assert!(xml.contains(r#"failures="0""#), "{xml}");
        assert!(
            xml.contains("<system-out>p99 &lt; 10ms: measured 9.800ms (95% CI ≥9.500ms, which holds the bound 10.000ms: too close to call; more requests would settle it)</system-out>"),
            "{xml}"
        );
    }
}
