//! A capacity search's compact Markdown for a CI job's summary page (GitHub Actions'
//! `GITHUB_STEP_SUMMARY`); a run's is [`super::write::step_summary`], from its document.

use crate::capacity::study::CapacityRecord;
use std::fmt::Write as _;

/// A capacity search's step summary: its answer and the objectives it was held to.
pub fn capacity(record: &CapacityRecord) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### headroom: capacity of {}\n\nObjectives: `{}`; {} probes.\n",
        cell_text(&record.target),
        code_text(&record.objectives.join(", ")),
        record.probes.len()
    );
    for line in super::capacity::answer(record) {
        let _ = writeln!(out, "**{}**\n", cell_text(&line));
    }
    out
}

pub(super) use super::write::step_summary::{cell_text, code_text};
