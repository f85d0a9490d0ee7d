//! Each stage (sweep step) as its own vegeta report: requests, latencies and their 95 %
//! confidence intervals, status codes and Error Set, as the seeds list one block per rate.

use super::vegeta::{error_set, line, stats_values, status_codes, STATS_FIELDS};
use crate::report::document::{Block, Cell, FieldLine, Section};
use crate::summary::{StageRow, Summary};
use crate::units::fmt_secs;

/// A stage's name with its load, once when the name is the load: "warm (1 user)", "200/s".
pub fn label(s: &Summary, st: &StageRow) -> String {
    let level = crate::report::build::words::stage_level(s, st.from, st.to);
    if st.name == level {
        level
    } else {
        format!("{} ({level})", st.name)
    }
}

/// The measured steps that ran, each with its title ("Step 2 of 4: 200/s, 10.000s"):
/// warm-ups are left out, as from every number but the generator's (the Stages table and
/// Requests by stage still show them).
pub fn measured(s: &Summary) -> Vec<(String, &StageRow)> {
    let all = s.stages.iter().filter(|st| !st.warmup).count();
    s.stages
        .iter()
        .filter(|st| !st.warmup)
        .enumerate()
        .filter(|(_, st)| st.count > 0)
        .map(|(i, st)| {
            let title = format!(
                "Step {} of {all}: {}, {}",
                i + 1,
                label(s, st),
                fmt_secs(st.duration_secs)
            );
            (title, st)
        })
        .collect()
}

/// The percentiles whose 95 % confidence intervals a step's block lists.
const CI_FIELDS: &str = "[50, 90, 95, 99, 99.9]";

/// One step's block, without its title: a step's percentiles come from few samples (500
/// requests a step in seed 003), so their confidence intervals follow them.
pub fn block(st: &StageRow) -> Vec<Block> {
    let mut lines = vec![
        line(
            "Requests",
            "[total, rate, throughput]",
            format!("{}, {:.2}, {:.2}", st.count, st.sent_rps, st.throughput),
        ),
        line("Latencies", STATS_FIELDS, stats_values(&st.latency)),
    ];
    if let Some(ci) = &st.latency.ci {
        lines.push(line(
            "95% CI",
            CI_FIELDS,
            [ci.p50_us, ci.p90_us, ci.p95_us, ci.p99_us, ci.p999_us]
                .iter()
                .map(crate::report::document::interval::us)
                .collect::<Vec<_>>()
                .join(", "),
        ));
    }
    lines.push(FieldLine {
        label: "Success".into(),
        fields: "[ratio]".into(),
        values: Cell::Percent(100.0 * (1.0 - st.failure_ratio())),
    });
    if st.status_codes.is_empty() && st.error_set.is_empty() {
        return vec![Block::Fields(lines)];
    }
    let codes = status_codes(&st.status_codes, &st.error_set);
    lines.push(line("Status Codes", "[code:count]", codes.trim()));
    error_set(lines, &st.error_set)
}

/// The measured steps that ran, a subsection each, under "Steps"; `None` when none ran.
pub fn section(s: &Summary) -> Option<Section> {
    let steps = measured(s);
    if steps.is_empty() {
        return None;
    }
    let subs = steps
        .into_iter()
        .enumerate()
        .map(|(i, (title, st))| {
            Block::Sub(Section::new(&format!("step-{}", i + 1), &title, block(st)))
        })
        .collect();
    Some(Section::new("steps", "Steps", subs))
}
