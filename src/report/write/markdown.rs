//! The document as GitHub markdown, ready to paste into a performance report: the answer
//! first, then a heading and a table per section.

use crate::report::document::{Answer, Block, Document, Section};
use crate::report::write::table::markdown_left;
use std::fmt::Write as _;

/// The whole document as markdown, its title a heading of `level`.
pub fn write(doc: &Document, level: usize) -> String {
    let mut out = String::new();
    let hashes = "#".repeat(level);
    if !doc.title.is_empty() {
        let _ = writeln!(out, "{hashes} {}\n", doc.title);
    }
    if !doc.what_ran.is_empty() {
        let _ = writeln!(out, "{}\n", doc.what_ran.join(" · "));
    }
    answer(&mut out, &doc.answer);
    for s in &doc.sections {
        section(&mut out, s, level + 1);
    }
    out
}

/// The verdict in bold with its evidence as a list, the objectives and the headline
/// numbers as tables, the notes as quotes.
pub fn answer(out: &mut String, a: &Answer) {
    if let Some(v) = &a.verdict {
        let _ = writeln!(out, "**{}**\n", v.sentence);
        for e in &v.evidence {
            let _ = writeln!(out, "- {e}");
        }
        if !v.evidence.is_empty() {
            out.push('\n');
        }
    }
    if !a.objectives.is_empty() {
        let mut rows = vec![vec![
            "objective".to_string(),
            "measured".into(),
            "verdict".into(),
        ]];
        rows.extend(a.objectives.iter().map(|o| {
            vec![
                format!("`{}`", o.text),
                o.measured.to_text(),
                if o.met { "met" } else { "**not met**" }.into(),
            ]
        }));
        let _ = writeln!(out, "{}", markdown_left(&rows, 1));
    }
    if !a.numbers.is_empty() {
        let header: Vec<String> = a.numbers.iter().map(|f| f.label.clone()).collect();
        let values: Vec<String> = a.numbers.iter().map(|f| f.value.to_text()).collect();
        let _ = writeln!(out, "{}", markdown_left(&[header, values], 0));
    }
    for n in &a.notes {
        let _ = writeln!(out, "> {n}\n");
    }
}

fn section(out: &mut String, s: &Section, level: usize) {
    if !s.title.is_empty() {
        let _ = writeln!(out, "{} {}\n", "#".repeat(level.min(6)), s.title);
    }
    let mut blocks = s.blocks.iter().peekable();
    while let Some(b) = blocks.next() {
        match b {
            Block::Paragraph(p) => {
                let _ = writeln!(out, "{p}\n");
            }
            Block::Note(p) => {
                let _ = writeln!(out, "> {p}\n");
            }
            Block::Table(t) => {
                let _ = writeln!(out, "{}", markdown_left(&t.text_rows(), t.left));
            }
            Block::Fields(lines) => {
                // vegeta's block stays vegeta's text, with the Error Set lines after it in
                // the same code block, so a seed's report reads as vegeta's, line by line.
                let mut text = String::new();
                super::text::fields(&mut text, lines, "");
                if let Some(Block::Preformatted(more)) = blocks.peek() {
                    text.push_str(more);
                    blocks.next();
                }
                let _ = writeln!(out, "```\n{}\n```\n", text.trim_end());
            }
            Block::Preformatted(text) => {
                let _ = writeln!(out, "```\n{}\n```\n", text.trim_end());
            }
            Block::Sub(sub) => section(out, sub, level + 1),
        }
    }
}
