//! The compact Markdown a CI job shows on its summary page (GitHub Actions'
//! `GITHUB_STEP_SUMMARY`): a headline, the objectives and the verdict, short enough that
//! several steps' summaries read one after another. The full tables stay in `--format
//! markdown`.

use crate::summary::{SloVerdict, Summary};
use crate::units::{fmt_count, fmt_num, fmt_secs, fmt_us};
use std::fmt::Write as _;

/// A run's step summary: headline numbers, each objective with its measured value, and who
/// set the numbers. `run_id` names the run directory when known.
pub fn run(s: &Summary, run_id: Option<&str>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### headroom: {}\n",
        cell_text(&super::text::target_line(s, &super::text::load_words(s)))
    );
    if let Some(id) = run_id {
        let _ = writeln!(out, "Run `{}`, started {}.\n", code_text(id), s.started_at);
    }
    if let Some(why) = &s.partial {
        let _ = writeln!(out, "> **Partial run:** {}\n", cell_text(why));
    }
    out.push_str("| requests | throughput | success | p50 | p99 | max | duration |\n");
    out.push_str("|---:|---:|---:|---:|---:|---:|---:|\n");
    let _ = writeln!(
        out,
        "| {} | {} req/s | {:.2}% | {} | {} | {} | {} |\n",
        fmt_count(s.requests.total),
        fmt_num(s.requests.throughput, 1),
        100.0 * s.success_ratio,
        fmt_us(s.latency.p50_us),
        fmt_us(s.latency.p99_us),
        fmt_us(s.latency.max_us),
        fmt_secs(s.duration.total_secs)
    );
    objectives(&mut out, &s.slo);
    let mut verdict = super::verdict::lines(&s.verdict, &s.generator).into_iter();
    if let Some(head) = verdict.next() {
        let _ = writeln!(out, "**Verdict: {}**\n", cell_text(&head));
    }
    for line in verdict {
        let _ = writeln!(out, "- {}", cell_text(&line));
    }
    out.push('\n');
    out
}

/// The objectives as a table with ✅/❌, when there are any.
fn objectives(out: &mut String, slo: &[SloVerdict]) {
    if slo.is_empty() {
        return;
    }
    let met = slo.iter().filter(|v| v.met).count();
    let _ = writeln!(
        out,
        "{met} of {} objectives met.\n\n| | objective | measured |\n|---|---|---:|",
        slo.len()
    );
    for v in slo {
        let mark = if v.met { "✅" } else { "❌" };
        let _ = writeln!(
            out,
            "| {mark} | `{}` | {} |",
            code_text(&v.objective),
            cell_text(&super::interval::measured(v))
        );
    }
    out.push('\n');
}

/// User text made safe inside a Markdown table cell: a `|` would end the cell and a line
/// break the row.
pub(super) fn cell_text(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// User text made safe inside a code span in a table cell (a backtick would end the span).
pub(super) fn code_text(text: &str) -> String {
    cell_text(&text.replace('`', "'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_text_cannot_break_a_table_row() {
        assert_eq!(cell_text("a|b\nc"), "a\\|b c");
        assert_eq!(code_text("x`|y"), "x'\\|y");
    }
}
