//! The document's checks as JUnit XML, for CI test reports: one `<testsuite>` named after the
//! document, a `<testcase>` per check, the document's properties and stamp on the suite.
//!
//! The shape is the one Jenkins' xUnit plugin, GitLab and the GitHub JUnit-report actions
//! read (`junit-10.xsd`); the integration tests validate it against that schema.

use super::xml::escape;
use crate::report::document::{Check, Document};
use std::fmt::Write as _;

/// The suite's name: "headroom: " and the document's title with what ran.
fn suite_name(doc: &Document) -> String {
    if doc.what_ran.is_empty() {
        format!("headroom: {}", doc.title)
    } else {
        format!("headroom: {}  ({})", doc.title, doc.what_ran.join(", "))
    }
}

/// The document as a JUnit XML file (a `<testsuites>` holding one `<testsuite>`).
pub fn write(doc: &Document) -> String {
    let failures = doc.checks.iter().filter(|c| c.failure.is_some()).count();
    let tests = doc.checks.len();
    // SUREFIRE_TIME: seconds with at most three decimals.
    let time = doc.stamp.as_ref().map_or(String::new(), |s| {
        format!(" time=\"{:.3}\"", s.secs.max(0.0))
    });
    let optional = |name: &str, value: Option<&str>| {
        value
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
        escape(&suite_name(doc)),
        optional("timestamp", doc.stamp.as_ref().map(|s| s.started.as_str())),
        optional("hostname", doc.stamp.as_ref().map(|s| s.host.as_str())),
    );
    if !doc.properties.is_empty() {
        out.push_str("    <properties>\n");
        for (name, value) in &doc.properties {
            let _ = writeln!(
                out,
                "      <property name=\"{}\" value=\"{}\"/>",
                escape(name),
                escape(value)
            );
        }
        out.push_str("    </properties>\n");
    }
    for check in &doc.checks {
        case(&mut out, check);
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

/// One `<testcase>`: failed with its message, kind and evidence, or passing with what it
/// still wants said as `<system-out>`.
fn case(out: &mut String, c: &Check) {
    let head = format!(
        "    <testcase classname=\"{}\" name=\"{}\"",
        escape(&c.group),
        escape(&c.name)
    );
    let mut body = String::new();
    if let Some(f) = &c.failure {
        let _ = writeln!(
            body,
            "      <failure message=\"{}\" type=\"{}\">{}</failure>",
            escape(&f.message),
            escape(&f.kind),
            escape(&f.detail)
        );
    }
    if let Some(text) = &c.output {
        let _ = writeln!(body, "      <system-out>{}</system-out>", escape(text));
    }
    if body.is_empty() {
        let _ = writeln!(out, "{head}/>");
    } else {
        let _ = writeln!(out, "{head}>\n{body}    </testcase>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::document::{CheckFailure, Stamp};

    fn doc(checks: Vec<Check>) -> Document {
        Document {
            title: "x]]>\u{1}".into(),
            properties: vec![("target".into(), "http://h/?a=1&b=2".into())],
            stamp: Some(Stamp {
                started: "t".into(),
                host: "h".into(),
                secs: 1.23456,
            }),
            checks,
            ..Document::default()
        }
    }

    #[test]
    fn user_text_in_names_and_messages_is_escaped() {
        let xml = write(&doc(vec![Check {
            group: "headroom.objectives.a<b & \"c\"".into(),
            name: "a<b & \"c\": p99 < 10ms".into(),
            failure: Some(CheckFailure {
                message: "measured 12.5ms against the objective a<b".into(),
                kind: "objective not met".into(),
                detail: "line one\nline two".into(),
            }),
            output: None,
        }]));
        assert!(xml.contains(
            r#"classname="headroom.objectives.a&lt;b &amp; &quot;c&quot;" name="a&lt;b &amp; &quot;c&quot;: p99 &lt; 10ms""#
        ), "{xml}");
        assert!(xml.contains(r#"message="measured 12.5ms against the objective a&lt;b""#));
        assert!(xml.contains(">line one&#10;line two</failure>"), "{xml}");
        assert!(xml.contains(r#"value="http://h/?a=1&amp;b=2""#));
        assert!(xml.contains("name=\"headroom: x]]&gt;\u{FFFD}\""), "{xml}");
        assert!(xml.contains(r#"tests="1" failures="1" errors="0" skipped="0" time="1.235" timestamp="t" hostname="h""#), "{xml}");
    }

    #[test]
    fn a_passing_check_is_an_empty_case_or_says_what_it_must() {
        let pass = Check {
            group: "headroom.run".into(),
            name: "the run completed".into(),
            failure: None,
            output: None,
        };
        let close = Check {
            name: "p99 < 10ms".into(),
            output: Some("too close to call".into()),
            ..pass.clone()
        };
        let mut d = doc(vec![pass, close]);
        d.stamp = None;
        let xml = write(&d);
        assert!(
            xml.contains(r#"<testcase classname="headroom.run" name="the run completed"/>"#),
            "{xml}"
        );
        assert!(
            xml.contains("<system-out>too close to call</system-out>"),
            "{xml}"
        );
        assert!(
            xml.contains(r#"tests="2" failures="0" errors="0" skipped="0">"#),
            "{xml}"
        );
        assert!(!xml.contains("timestamp="), "{xml}");
    }
}
