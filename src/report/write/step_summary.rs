//! The compact Markdown a CI job shows on its summary page (GitHub Actions'
//! `GITHUB_STEP_SUMMARY`), from a document's answer alone: a heading, the headline numbers,
//! each objective with ✅/❌ and the verdict, short enough that several steps' summaries read
//! one after another. The full tables stay in `--format markdown`.

use crate::report::document::Document;
use std::fmt::Write as _;

/// The document's answer as a step summary.
pub fn write(doc: &Document) -> String {
    let mut out = String::new();
    let head = if doc.what_ran.is_empty() {
        doc.title.clone()
    } else {
        format!("{}  ({})", doc.title, doc.what_ran.join(", "))
    };
    let _ = writeln!(out, "### headroom: {}\n", cell_text(&head));
    if let Some((_, id)) = doc.properties.iter().find(|(k, _)| k == "run_id") {
        let _ = writeln!(out, "Run `{}`.\n", code_text(id));
    }
    let a = &doc.answer;
    for note in &a.notes {
        let _ = writeln!(out, "> {}\n", cell_text(note));
    }
    if !a.numbers.is_empty() {
        let labels: Vec<String> = a.numbers.iter().map(|f| cell_text(&f.label)).collect();
        let values: Vec<String> = a
            .numbers
            .iter()
            .map(|f| cell_text(&f.value.to_text()))
            .collect();
        let _ = writeln!(
            out,
            "| {} |\n|{}\n| {} |\n",
            labels.join(" | "),
            "---:|".repeat(labels.len()),
            values.join(" | ")
        );
    }
    if !a.objectives.is_empty() {
        let met = a.objectives.iter().filter(|o| o.met).count();
        let _ = writeln!(
            out,
            "{met} of {} objectives met.\n\n| | objective | measured |\n|---|---|---:|",
            a.objectives.len()
        );
        for o in &a.objectives {
            let mark = if o.met { "✅" } else { "❌" };
            let _ = writeln!(
                out,
                "| {mark} | `{}` | {} |",
                code_text(&o.text),
                cell_text(&o.measured.to_text())
            );
        }
        out.push('\n');
    }
    if let Some(v) = &a.verdict {
        let _ = writeln!(out, "**Verdict: {}**\n", cell_text(&v.sentence));
        for e in &v.evidence {
            let _ = writeln!(out, "- {}", cell_text(e));
        }
        out.push('\n');
    }
    out
}

/// User text made safe inside a Markdown table cell: a `|` would end the cell and a line
/// break the row.
pub fn cell_text(text: &str) -> String {
    crate::report::write::table::markdown_cell(text)
}

/// User text made safe inside a code span in a table cell (a backtick would end the span).
pub fn code_text(text: &str) -> String {
    cell_text(&text.replace('`', "'"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::document::{Answer, Cell, Fact, Objective, Tone, Verdict};

    #[test]
    fn user_text_cannot_break_a_table_row() {
        assert_eq!(cell_text("a|b\nc"), "a\\|b c");
        assert_eq!(code_text("x`|y"), "x'\\|y");
    }

    #[test]
    fn the_answer_in_a_few_lines() {
        let doc = Document {
            title: "GET http://h/".into(),
            what_ran: vec!["open model, 10 req/s".into()],
            properties: vec![("run_id".into(), "r`1".into())],
            answer: Answer {
                verdict: Some(Verdict {
                    tone: Tone::Good,
                    sentence: "neither side was the limit".into(),
                    evidence: vec![],
                }),
                objectives: vec![Objective {
                    text: "p99 < 5ms".into(),
                    measured: Cell::Duration(6000.0),
                    met: false,
                }],
                numbers: vec![Fact {
                    label: "throughput".into(),
                    value: Cell::Rate(9.5),
                }],
                notes: vec!["PARTIAL RUN: stopped | cut".into()],
            },
            ..Document::default()
        };
        let md = write(&doc);
        assert!(md.starts_with("### headroom: GET http://h/  (open model, 10 req/s)\n\nRun `r'1`.\n\n> PARTIAL RUN: stopped \\| cut\n"), "{md}");
        assert!(md.contains("| throughput |\n|---:|\n| 9.50/s |"), "{md}");
        assert!(md.contains("0 of 1 objectives met."), "{md}");
        assert!(md.contains("| ❌ | `p99 < 5ms` | 6.000ms |"), "{md}");
        assert!(
            md.contains("**Verdict: neither side was the limit**"),
            "{md}"
        );
    }
}
