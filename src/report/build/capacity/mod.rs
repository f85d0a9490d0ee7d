//! The document of a capacity search: the answer (the capacity found, above the highest rate
//! tried, or none, with the tipping point and what broke it), the objectives as measured at
//! the answer, the headline numbers, then the figures, the probes, the method and the command.

mod answer;

use super::{checks, objectives};
use crate::capacity::fmt_level;
use crate::capacity::search::{Outcome, Verdict as Ended};
use crate::capacity::study::{CapacityRecord, ProbeRecord};
use crate::report::document::{
    Answer, Block, Cell, Check, CheckFailure, Document, Fact, Figures, Objective, Section, Table,
    Tone, Verdict,
};
use crate::report::plot;
use crate::units::fmt_span;
use answer::steady;
pub use answer::{answer, probe_line, unsteady};

/// The search as a document.
pub fn build(record: &CapacityRecord) -> Document {
    let lines = answer(record);
    let mut lines = lines.into_iter();
    let sentence = lines.next().unwrap_or_default();
    let at = answer_probe(record);
    Document {
        title: format!("Capacity of {}", record.target),
        what_ran: vec![
            format!("against {}", record.objectives.join(", ")),
            crate::units::plural(record.probes.len(), "probe"),
        ],
        answer: Answer {
            verdict: Some(Verdict {
                tone: tone(record.outcome),
                sentence,
                evidence: lines.collect(),
            }),
            objectives: at.map_or_else(Vec::new, |p| {
                p.verdicts
                    .iter()
                    .map(|v| Objective {
                        text: format!("{} at {} req/s", v.objective, fmt_level(p.rate)),
                        ..objectives::objective(v)
                    })
                    .collect()
            }),
            numbers: numbers(record, at),
            notes: Vec::new(),
        },
        figures: Figures {
            shown: plot::for_capacity(record),
            left_out: Vec::new(),
        },
        sections: vec![
            Section::table("probes", "Probes", probes(record)),
            Section::new("method", "Method", vec![Block::Paragraph(method(record))]),
            Section::new(
                "command",
                "Command",
                // Quoted as a shell reads it, so it can be pasted and run again.
                vec![Block::Preformatted(
                    shlex::try_join(record.command.iter().map(String::as_str))
                        .unwrap_or_else(|_| record.command.join(" ")),
                )],
            ),
        ],
        checks: junit_checks(record),
        properties: properties(record),
        stamp: None,
        data: serde_json::to_value(record).unwrap_or_default(),
    }
}

/// Good news when a capacity was found (or lies above the highest rate tried), bad when
/// none could be, unsure when the search could not settle it.
fn tone(outcome: Option<Outcome>) -> Tone {
    match outcome.map(|o| o.verdict) {
        Some(Ended::Found | Ended::AboveMax) => Tone::Good,
        Some(Ended::BelowMin | Ended::ChangedWithTime | Ended::NeverHeld) => Tone::Bad,
        _ => Tone::Unsure,
    }
}

/// The probe the answer rests on: the last that met the objectives at the capacity, or,
/// when there is none, the one that broke at the tipping point.
fn answer_probe(record: &CapacityRecord) -> Option<&ProbeRecord> {
    let outcome = record.outcome?;
    let met = outcome
        .capacity
        .and_then(|rate| record.probes.iter().rev().find(|p| p.met && p.rate == rate));
    met.or_else(|| {
        outcome
            .tipping
            .and_then(|rate| record.probes.iter().find(|p| !p.met && p.rate == rate))
    })
}

/// The numbers a reader came for: the capacity and the tipping point, what the probe at
/// the answer measured, and what the search cost.
fn numbers(record: &CapacityRecord, at: Option<&ProbeRecord>) -> Vec<Fact> {
    let fact = |label: &str, value: Cell| Fact {
        label: label.into(),
        value,
    };
    let mut out = Vec::new();
    if let Some(o) = record.outcome {
        if let Some(c) = o.capacity {
            out.push(fact("capacity (req/s)", level(c)));
        }
        if let Some(t) = o.tipping {
            out.push(fact("tipping point (req/s)", level(t)));
        }
    }
    if let Some(p) = at {
        out.push(fact("throughput there", Cell::Rate(p.throughput)));
        out.push(fact("p50", latency(p, p.p50_us as f64)));
        out.push(fact("p99", p99(p)));
        out.push(fact("errors", Cell::Percent(100.0 * p.failure_ratio)));
    }
    out.push(fact("probes", Cell::Count(record.probes.len() as u64)));
    if let Some(last) = record
        .probes
        .iter()
        .max_by(|a, b| a.started_secs.total_cmp(&b.started_secs))
    {
        let window = if last.window_secs > 0.0 {
            last.window_secs
        } else {
            record.window_secs
        };
        out.push(fact(
            "search took",
            Cell::text(fmt_span(record.warmup_secs + last.started_secs + window)),
        ));
    }
    out
}

/// A rate the search tried, with as many decimals as it has (the search keeps three
/// significant digits, so at most three for a rate under one): rounded to a whole number, a
/// capacity of 59.5 req/s would read 60, higher than was ever met.
fn level(r: f64) -> Cell {
    let decimals = (0..3)
        .find(|&d| {
            let scaled = r * 10f64.powi(d);
            (scaled - scaled.round()).abs() < 1e-6
        })
        .unwrap_or(3) as usize;
    Cell::Number { value: r, decimals }
}

/// A probe's latency figure, or the dash of one that measured no answer (never 0 µs).
fn latency(p: &ProbeRecord, us: f64) -> Cell {
    if p.measured() {
        Cell::Duration(us)
    } else {
        Cell::Unmeasured
    }
}

/// A probe's p99 with its interval when the record kept one.
fn p99(p: &ProbeRecord) -> Cell {
    if !p.measured() {
        return Cell::Unmeasured;
    }
    match p.p99_ci_us {
        Some(ci) => Cell::DurationCi {
            us: p.p99_us as f64,
            lo: ci.lo.map(|v| v as f64),
            hi: ci.hi.map(|v| v as f64),
        },
        None => Cell::Duration(p.p99_us as f64),
    }
}

/// The probes, one row each, in the order they ran.
fn probes(record: &CapacityRecord) -> Table {
    let watched = record.probes.iter().any(|p| p.server_cpu_percent.is_some());
    let mut header = vec![
        "#",
        "phase",
        "rate",
        "throughput",
        "50%",
        "95%",
        "99% (95% CI)",
        "max",
        "std dev",
        "errors",
        "SLO",
        "steady",
        "generator",
    ];
    if watched {
        header.push("server CPU");
    }
    let mut t = Table::new(&header, 2);
    for (i, p) in record.probes.iter().enumerate() {
        let mut row = vec![
            Cell::Count(i as u64 + 1),
            Cell::text(p.phase.name()),
            level(p.rate),
            Cell::Number {
                value: p.throughput,
                decimals: 1,
            },
            latency(p, p.p50_us as f64),
            latency(p, p.p95_us as f64),
            p99(p),
            latency(p, p.max_us as f64),
            latency(p, p.stdev_us),
            Cell::Percent(100.0 * p.failure_ratio),
            if p.verdicts.iter().all(|v| v.met) {
                Cell::Status(Tone::Good, "met".into())
            } else {
                Cell::Status(Tone::Bad, "broken".into())
            },
            if p.unsteady.is_empty() {
                Cell::Status(Tone::Good, steady(p))
            } else {
                Cell::Status(Tone::Bad, steady(p))
            },
            if p.generator_bound {
                Cell::Status(Tone::Bad, "bound".into())
            } else {
                Cell::text(format!("ok ({:.0}% cpu)", p.generator_cpu_percent))
            },
        ];
        if watched {
            row.push(
                p.server_cpu_percent
                    .map_or(Cell::Empty, |c| Cell::text(format!("{c:.0}%"))),
            );
        }
        t.rows.push(row);
    }
    t
}

/// How each probe and the hold were run, in one sentence.
pub fn method(record: &CapacityRecord) -> String {
    format!(
        "Each probe: {} of warm-up, then a {} window judged against the objectives and for a steady rate (throughput, requests in flight, latency trends); {}.",
        fmt_span(record.warmup_secs),
        fmt_span(record.window_secs),
        if record.confirm_secs > 0.0 {
            format!(
                "the answer is then held for {} (--confirm) to see what a short probe cannot",
                fmt_span(record.confirm_secs)
            )
        } else {
            "the answer was not held longer (--confirm 0)".to_string()
        }
    )
}

/// A check that a capacity was found (a search that ended otherwise fails it, with its
/// answer), and one per objective as measured at the rate found.
fn junit_checks(record: &CapacityRecord) -> Vec<Check> {
    let outcome = record.outcome;
    let found = outcome.is_some_and(|o| matches!(o.verdict, Ended::Found | Ended::AboveMax));
    let answer = answer(record);
    let mut out = vec![Check {
        group: checks::TRUST.into(),
        name: "a capacity was found".into(),
        failure: (!found).then(|| CheckFailure {
            message: answer.join(" "),
            kind: "no capacity found".into(),
            detail: answer.join("\n"),
        }),
        output: None,
    }];
    // The last probe that met the objectives at the capacity: the evidence it rests on.
    let at = outcome
        .and_then(|o| o.capacity)
        .and_then(|rate| record.probes.iter().rev().find(|p| p.met && p.rate == rate));
    if let Some(probe) = at.filter(|_| found) {
        out.extend(probe.verdicts.iter().map(|v| Check {
            name: format!("{} at {} req/s", v.objective, fmt_level(probe.rate)),
            ..checks::objective(v)
        }));
    }
    out
}

/// The search's identity for machines.
fn properties(record: &CapacityRecord) -> Vec<(String, String)> {
    let mut out = vec![
        ("target".to_string(), record.target.clone()),
        ("objectives".into(), record.objectives.join(", ")),
    ];
    if let Some(rate) = record.outcome.and_then(|o| o.capacity) {
        out.push(("capacity".into(), format!("{} req/s", fmt_level(rate))));
    }
    out
}

#[cfg(test)]
mod tests;
