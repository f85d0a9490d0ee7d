//! Small multiples of a comparison of sweeps: one small figure per measure (median, p99,
//! throughput, errors), each with a line per run over the same horizontal axis (the step's
//! load), so runs are compared step by step at a glance rather than row by row. Runs are
//! told apart by dash and marker as well as colour.

use super::figure::{Axis, Figure, Mark, Series};
use crate::summary::{StageRow, Summary};

/// What one small figure shows: its name, title, vertical axis and value at a step.
struct Measure {
    name: &'static str,
    title: &'static str,
    axis: fn() -> Axis,
    value: fn(&StageRow) -> Option<f64>,
}

const MEASURES: [Measure; 4] = [
    Measure {
        name: "compare-step-p50",
        title: "Median latency by step",
        axis: || Axis::log("p50 (ms)"),
        // A step of failures only has no latency to place.
        value: |r| (r.latency.count > 0).then(|| r.latency.p50_us as f64 / 1e3),
    },
    Measure {
        name: "compare-step-p99",
        title: "p99 latency by step",
        axis: || Axis::log("p99 (ms)"),
        value: |r| (r.latency.count > 0).then(|| r.latency.p99_us as f64 / 1e3),
    },
    Measure {
        name: "compare-step-throughput",
        title: "Throughput by step",
        axis: || Axis::linear("answered as expected (req/s)"),
        value: |r| Some(r.throughput),
    },
    Measure {
        name: "compare-step-errors",
        title: "Errors by step",
        axis: || Axis::linear("failed (% of completed)"),
        value: |r| Some(100.0 * r.failure_ratio()),
    },
];

/// The measured steps of `s` that completed requests, with their load.
fn steps(s: &Summary) -> impl Iterator<Item = &StageRow> {
    s.stages.iter().filter(|r| !r.warmup && r.count > 0)
}

/// One small figure per measure, a line per run (its label and summary), when at least one
/// run has two measured steps; none otherwise (a comparison of whole runs has no steps).
pub fn by_step(runs: &[(&str, &Summary)]) -> Vec<Figure> {
    if runs.iter().all(|(_, s)| steps(s).nth(1).is_none()) {
        return Vec::new();
    }
    MEASURES
        .iter()
        .map(|m| Figure {
            name: m.name.into(),
            title: m.title.into(),
            x: Axis::linear("step load (req/s or users)"),
            y: (m.axis)(),
            y2: None,
            series: runs
                .iter()
                .map(|(label, s)| Series {
                    name: (*label).to_string(),
                    points: steps(s)
                        .filter_map(|r| (m.value)(r).map(|v| (r.to, v)))
                        .collect(),
                    mark: Mark::LinePoints,
                    secondary: false,
                    labels: Vec::new(),
                })
                .collect(),
            distinct: true,
        })
        .collect()
}
