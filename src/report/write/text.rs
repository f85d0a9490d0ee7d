//! The document as plain text: the answer in the first lines, then each section, tables
//! aligned in columns and vegeta's lines laid out as vegeta lays them out, so a seed's report
//! can be compared with vegeta's line by line.

use crate::report::document::{Answer, Block, Document, FieldLine, Section};
use crate::report::write::table::aligned_left;
use std::fmt::Write as _;

/// vegeta's widths: the label, then the fields' names.
const LABEL: usize = 14;
const FIELDS: usize = 47;

/// The whole document as text.
pub fn write(doc: &Document) -> String {
    let mut out = String::new();
    head(&mut out, doc);
    answer(&mut out, &doc.answer);
    for s in &doc.sections {
        section(&mut out, s, "");
    }
    out
}

/// What ran, on one line.
fn head(out: &mut String, doc: &Document) {
    if doc.title.is_empty() {
        return;
    }
    if doc.what_ran.is_empty() {
        let _ = writeln!(out, "{}", doc.title);
    } else {
        let _ = writeln!(out, "{}  ({})", doc.title, doc.what_ran.join(", "));
    }
}

/// The verdict and its evidence, the headline numbers, the objectives and the notes: the
/// numbers before the objectives, so that however many objectives there are, the verdict and
/// the numbers stand in the first lines.
pub fn answer(out: &mut String, a: &Answer) {
    if let Some(v) = &a.verdict {
        let _ = writeln!(out, "{}", v.sentence);
        for e in &v.evidence {
            let _ = writeln!(out, "  - {e}");
        }
    }
    if !a.numbers.is_empty() {
        let facts: Vec<String> = a
            .numbers
            .iter()
            .map(|f| format!("{} {}", f.label, f.value.to_text()))
            .collect();
        let _ = writeln!(out, "{}", facts.join(" · "));
    }
    if !a.objectives.is_empty() {
        let width = a
            .objectives
            .iter()
            .map(|o| o.text.chars().count())
            .max()
            .unwrap_or(0);
        for o in &a.objectives {
            let verdict = if o.met { "met" } else { "NOT MET" };
            let _ = writeln!(
                out,
                "  {verdict:<9}{:<width$}  measured {}",
                o.text,
                o.measured.to_text()
            );
        }
    }
    for n in &a.notes {
        let _ = writeln!(out, "{n}");
    }
}

/// One section: its heading (none when untitled), then its blocks, indented by `indent`
/// (and two more under a heading, unless prose stands among them).
fn section(out: &mut String, s: &Section, indent: &str) {
    if !s.title.is_empty() {
        let _ = writeln!(out, "{indent}{}:", s.title);
    }
    let laid_out = s
        .blocks
        .iter()
        .all(|b| matches!(b, Block::Table(_) | Block::Sub(_) | Block::Fields(_)));
    let inner = if s.title.is_empty() || !laid_out {
        indent.to_string()
    } else {
        format!("{indent}  ")
    };
    for b in &s.blocks {
        block(out, b, &inner);
    }
}

/// A subsection: its title as a line of its own (a step: "Step 2 of 4: 200/s, 10.000s"),
/// its blocks two spaces further in.
fn sub(out: &mut String, s: &Section, indent: &str) {
    if !s.title.is_empty() {
        let _ = writeln!(out, "{indent}{}", s.title);
    }
    let inner = format!("{indent}  ");
    for b in &s.blocks {
        block(out, b, &inner);
    }
}

fn block(out: &mut String, b: &Block, indent: &str) {
    match b {
        Block::Paragraph(p) | Block::Note(p) => {
            let _ = writeln!(out, "{indent}{p}");
        }
        Block::Table(t) => {
            for line in aligned_left(&t.text_rows(), t.left).lines() {
                let _ = writeln!(out, "{indent}{line}");
            }
        }
        Block::Fields(lines) => fields(out, lines, indent),
        Block::Preformatted(text) => {
            for line in text.lines() {
                let _ = writeln!(out, "{indent}{line}");
            }
        }
        Block::Sub(s) => sub(out, s, indent),
    }
}

/// vegeta's lines, label and field names in fixed columns.
pub(super) fn fields(out: &mut String, lines: &[FieldLine], indent: &str) {
    for l in lines {
        let line = format!(
            "{indent}{:<LABEL$}{:<FIELDS$}{}",
            l.label,
            l.fields,
            l.values.to_text()
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::document::{Cell, Fact, Objective, Table, Tone, Verdict};

    fn doc() -> Document {
        let mut t = Table::new(&["request", "count"], 1);
        t.rows.push(vec!["read".into(), Cell::Count(1200)]);
        Document {
            title: "GET http://h/".into(),
            what_ran: vec!["open model, 100 req/s".into(), "HTTP/1.1".into()],
            answer: Answer {
                verdict: Some(Verdict {
                    tone: Tone::Bad,
                    sentence: "the server was the limit:".into(),
                    evidence: vec!["14 answers (7.0 %) were HTTP 503".into()],
                }),
                objectives: vec![Objective {
                    text: "p99 < 5ms".into(),
                    measured: Cell::Duration(4763.0),
                    met: true,
                }],
                numbers: vec![Fact {
                    label: "throughput".into(),
                    value: Cell::Rate(90.27),
                }],
                notes: vec![],
            },
            sections: vec![
                Section::new(
                    "",
                    "",
                    vec![Block::Fields(vec![FieldLine {
                        label: "Success".into(),
                        fields: "[ratio]".into(),
                        values: Cell::Percent(90.0),
                    }])],
                ),
                Section::table("by-request", "Requests by name", t),
            ],
            ..Document::default()
        }
    }

    #[test]
    fn the_answer_comes_before_the_evidence() {
        let text = write(&doc());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "GET http://h/  (open model, 100 req/s, HTTP/1.1)");
        assert_eq!(lines[1], "the server was the limit:");
        assert_eq!(lines[2], "  - 14 answers (7.0 %) were HTTP 503");
        assert_eq!(lines[3], "throughput 90.27/s");
        assert_eq!(lines[4], "  met      p99 < 5ms  measured 4.763ms");
        assert!(lines[5].starts_with("Success       [ratio]"), "{text}");
        assert_eq!(lines[6], "Requests by name:");
        assert_eq!(lines[8], "  read     1,200");
    }
}
