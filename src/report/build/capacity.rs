//! The document of a capacity search: the answer (the capacity found, above the highest rate
//! tried, or none, with the tipping point and what broke it), the objectives as measured at
//! the answer, the headline numbers, then the figures, the probes, the method and the command.

use super::{checks, objectives, verdict};
use crate::capacity::fmt_level;
use crate::capacity::knee::Knee;
use crate::capacity::search::{Outcome, Phase, Verdict as Ended, DEFAULT_MAX};
use crate::capacity::steady::Unsteady;
use crate::capacity::study::{CapacityRecord, ProbeRecord};
use crate::report::document::interval;
use crate::report::document::{
    Answer, Block, Cell, Check, CheckFailure, Document, Fact, Figures, Objective, Section, Table,
    Tone, Verdict,
};
use crate::report::plot;
use crate::summary::{Blame, Diagnosis, Limit};
use crate::units::{fmt_num, fmt_span, fmt_us, fmt_us_f};

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
                vec![Block::Preformatted(record.command.join(" "))],
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
        out.push(fact("p50", Cell::Duration(p.p50_us as f64)));
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

/// A probe's p99 with its interval when the record kept one.
fn p99(p: &ProbeRecord) -> Cell {
    match p.p99_ci_us {
        Some(ci) => Cell::DurationCi {
            us: p.p99_us as f64,
            lo: ci.lo.map(|v| v as f64),
            hi: ci.hi.map(|v| v as f64),
        },
        None => Cell::Duration(p.p99_us as f64),
    }
}

/// One line per probe, for the progress on stderr.
pub fn probe_line(p: &ProbeRecord) -> String {
    format!(
        "probe {:<28} {:>9} req/s: {}  p99 {}  errors {:.2}%  {:.1} req/s{}",
        p.run,
        fmt_level(p.rate),
        if p.met {
            "met".to_string()
        } else if p.unsteady.is_empty() {
            "broken".to_string()
        } else {
            steady(p)
        },
        interval::us_with(p.p99_us, p.p99_ci_us.as_ref()),
        100.0 * p.failure_ratio,
        p.throughput,
        if p.generator_bound {
            "  (generator-bound)"
        } else {
            ""
        }
    )
}

/// How a probe's window was steady, in a word each way it was not: "yes", or "short,
/// queue", as the table's `steady` column and the progress line say it.
fn steady(p: &ProbeRecord) -> String {
    if p.unsteady.is_empty() {
        return "yes".into();
    }
    p.unsteady
        .iter()
        .map(|u| match u {
            Unsteady::ThroughputShort { .. } => "short",
            Unsteady::BacklogGrowing { .. } => "queue",
            Unsteady::LatencyClimbing { .. } => "climbing",
            Unsteady::LatencyDrifting { .. } => "drifting",
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The side a broken probe's diagnosis blames, in words, when it names the server or that
/// nothing succeeded: "the server was the limit: 14 answer(s) (7.0 %) were HTTP 503".
fn limit_words(d: &Diagnosis) -> Option<String> {
    let (head, side) = match d.limit {
        Limit::Server => ("the server was the limit", Blame::Server),
        Limit::NothingSucceeded => ("nothing succeeded", Blame::Server),
        _ => return None,
    };
    let evidence: Vec<String> = d
        .evidence()
        .filter(|f| f.blame() == side || d.limit == Limit::NothingSucceeded)
        .map(verdict::sentence)
        .collect();
    Some(if evidence.is_empty() {
        head.to_string()
    } else {
        format!("{head}: {}", evidence.join(", "))
    })
}

/// What broke a probe that did not pass: each objective missed with its measure, each way
/// its window was not steady, and the server limit its own diagnosis named.
fn what_broke(p: &ProbeRecord) -> String {
    p.verdicts
        .iter()
        .filter(|v| !v.met)
        .map(|v| format!("{} measured {}", v.objective, objectives::cell(v).to_text()))
        .chain(p.unsteady.iter().map(unsteady))
        .chain(limit_words(&p.verdict))
        .collect::<Vec<_>>()
        .join("; ")
}

/// "held it for 60 s (p99 1.204ms, errors 0.00 %)": what the hold of `rate` measured.
fn held_for(record: &CapacityRecord, rate: f64) -> String {
    match record
        .probes
        .iter()
        .rev()
        .find(|p| p.phase == Phase::Hold && p.met && p.rate == rate)
    {
        Some(p) => format!(
            "held it for {} (p99 {}, errors {:.2} %)",
            fmt_span(p.window_secs),
            fmt_us(p.p99_us),
            100.0 * p.failure_ratio
        ),
        None if record.confirm_secs > 0.0 => "was not held for the confirmation".into(),
        None => "was not held longer than its probes (--confirm 0): a limit that shows only after a while (burst credits, a cache filling, a leak) would not be seen".into(),
    }
}

/// Whether a confirmation repeated `rate` and met.
fn repeated(record: &CapacityRecord, rate: f64) -> bool {
    record
        .probes
        .iter()
        .any(|p| p.phase == Phase::Confirm && p.met && p.rate == rate)
}

/// The generator's own evidence on a probe, as sentences.
fn generator_evidence(p: &ProbeRecord) -> String {
    p.verdict
        .on(Blame::Generator)
        .map(verdict::sentence)
        .collect::<Vec<_>>()
        .join("; ")
}

/// The answer as sentences, the first the one that answers: the capacity (or why there is
/// none), then the tipping point and what broke it, the rates that passed their probes but
/// not the hold, and the knee.
pub fn answer(record: &CapacityRecord) -> Vec<String> {
    let objectives = record.objectives.join(", ");
    let Some(Outcome {
        verdict,
        capacity,
        tipping,
        ceiling,
        served,
        ..
    }) = record.outcome
    else {
        return vec![format!(
            "The search did not finish ({} probes recorded): no capacity yet; the bracket so far is in the probe table. Run the search again to get an answer.",
            record.probes.len()
        )];
    };
    let rate = |r: Option<f64>| r.map_or("-".into(), |r| format!("{} req/s", fmt_level(r)));
    let broke = tipping.and_then(|t| {
        record
            .probes
            .iter()
            .find(|p| p.rate == t && !p.met)
            .map(what_broke)
    });
    let mut out = Vec::new();
    match verdict {
        Ended::Found => {
            out.push(format!(
                "Sustainable capacity: {} (meets {objectives} with the rate held steadily; {}{}).",
                rate(capacity),
                if capacity.is_some_and(|c| repeated(record, c)) {
                    "confirmed by a repeated run, and "
                } else {
                    ""
                },
                capacity.map_or(String::new(), |c| held_for(record, c))
            ));
            // A hold that broke while the server still answered less than it was sent bounds
            // the tipping point below the rate tried.
            out.push(match (served, tipping) {
                (Some(s), Some(t)) if s < t => format!(
                    "Tipping point: above {} req/s, at most {} ({b}): the server sustained no more than {} req/s while it refused the rest.",
                    fmt_num(s, 0),
                    rate(tipping),
                    fmt_num(s, 0),
                    b = broke.unwrap_or_default()
                ),
                _ => format!(
                    "Tipping point: {}{}.",
                    rate(tipping),
                    broke.map(|b| format!(" ({b})")).unwrap_or_default()
                ),
            });
        }
        Ended::AboveMax => out.push(format!(
            "Capacity is above the highest rate tried: {} met {objectives} and {}{}. Raise --max to search further.",
            rate(capacity),
            capacity.map_or(String::new(), |c| held_for(record, c)),
            if capacity == Some(DEFAULT_MAX) {
                " (the default ceiling, --max)"
            } else {
                ""
            }
        )),
        Ended::BelowMin => out.push(format!(
            "No capacity: not even the lowest rate tried met {objectives} (tipping point at or below {}{}). Search from a lower --start, or fix what broke.",
            rate(tipping),
            broke.map(|b| format!(": {b}")).unwrap_or_default()
        )),
        Ended::GeneratorBound => {
            let bound = record.probes.iter().rev().find(|p| p.generator_bound);
            out.push(format!(
                "The generator, not the server, was the limit: it could not offer {}{}.",
                rate(ceiling),
                bound
                    .map(|p| format!(" ({})", generator_evidence(p)))
                    .unwrap_or_default(),
            ));
            out.push(format!(
                "The server met {objectives} at {} (confirmed, and {}), the most this generator could offer: its capacity is at least that. Run headroom from a stronger machine, or several, to find more.",
                rate(capacity),
                capacity.map_or(String::new(), |c| held_for(record, c))
            ));
        }
        Ended::Unconfirmed => out.push(format!(
            "No rate held on repetition: the boundary is unstable below {}. The server's answers vary more than the probes can settle: lengthen --window, or look at what else runs on the server.",
            rate(tipping)
        )),
        Ended::OutOfProbes => out.push(format!(
            "The search ran out of probes (--max-probes): capacity between {} and {}. Raise --max-probes, or start nearer (--start) to narrow it.",
            rate(capacity),
            rate(tipping)
        )),
        Ended::Interrupted => out.push(format!(
            "Interrupted: capacity at least {}, tipping point at most {}.",
            rate(capacity),
            rate(tipping)
        )),
        Ended::ChangedWithTime => out.push(match &record.clock {
            Some(c) => format!(
                "No capacity: the server changed with time. Through probes {} (at {}), its median latency rose {} to {} every second while it answered all it was sent (no queue), from {} to {}: latency followed the clock, not the rate, and a longer window makes it worse. Find what grows in the server (a leak, a cache or table filling) and search again, or measure the drift with a long attack at one rate.",
                c.probes.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(", "),
                c.rates.iter().map(|r| fmt_level(*r)).collect::<Vec<_>>().join(", ") + " req/s",
                fmt_us_f(c.slowest_us_per_sec),
                fmt_us_f(c.fastest_us_per_sec),
                fmt_us(c.first_p50_us),
                fmt_us(c.last_p50_us)
            ),
            None => "No capacity: the server changed with time while the search ran.".into(),
        }),
        Ended::NeverHeld => out.push(format!(
            "No rate held for the {} confirmation: rates passed their probes but broke during the hold (lowest tried {}). The server's limit shows only after a while: search with a longer --window, or hold a low rate with a long attack.",
            fmt_span(record.confirm_secs),
            rate(tipping)
        )),
    }
    // Each rate that passed its probes but not the hold: what short probes cannot see.
    for p in record
        .probes
        .iter()
        .filter(|p| p.phase == Phase::Hold && !p.met && p.generator_bound)
    {
        out.push(format!(
            "The generator could not hold {} req/s for the {} confirmation ({}): the search went on below it.",
            fmt_level(p.rate),
            fmt_span(p.window_secs),
            generator_evidence(p)
        ));
    }
    for p in record
        .probes
        .iter()
        .filter(|p| p.phase == Phase::Hold && !p.met && !p.generator_bound)
    {
        out.push(format!(
            "{} req/s passed its {} probes but not the {} hold: {}{}{}. A limit short probes cannot see (burst credits running out, a cache filling, a leak); the search went on below it, with holds only.",
            fmt_level(p.rate),
            fmt_span(record.window_secs),
            fmt_span(p.window_secs),
            what_broke(p),
            p.broke_after_secs
                .map(|s| if s == 0.0 {
                    ", from its first second".to_string()
                } else {
                    format!(", from second {} of the hold", fmt_num(s + 1.0, 0))
                })
                .unwrap_or_default(),
            p.served_after_break
                .map(|s| format!(
                    ", while it still answered {} req/s successfully (more than that is not sustained)",
                    fmt_num(s, 0)
                ))
                .unwrap_or_default()
        ));
    }
    match &record.knee {
        Some(Knee::Found {
            rate: at,
            p99_us,
            r2,
            rms_us,
        }) => out.push(format!(
            "Knee: p99 turns upward at about {} (p99 {} there; two lines through it explain {:.0} % of the p99's variance, RMS error {}).",
            rate(Some(*at)),
            fmt_us(*p99_us),
            100.0 * r2,
            fmt_us_f(*rms_us)
        )),
        Some(Knee::None { why }) => out.push(format!("Knee: none estimated ({why}).")),
        None => {}
    }
    out
}

/// Why a probe's window was not steady, in words that name the server: a probe the
/// generator could not offer is reported as the generator's, never through these.
pub fn unsteady(u: &Unsteady) -> String {
    match u {
        Unsteady::ThroughputShort { offered, completed } => format!(
            "the server completed {completed:.1} of the {} req/s offered ({:.1} %)",
            fmt_level(*offered),
            100.0 * completed / offered
        ),
        Unsteady::BacklogGrowing { per_sec, allowed } => format!(
            "requests in flight grew by {per_sec:.1} per second: a queue at the server ({allowed:.1} allowed)"
        ),
        Unsteady::LatencyClimbing {
            us_per_sec,
            first_p50_us,
            last_p50_us,
        } => format!(
            "the server's latency climbed {} per second through the window (median {} to {}): a queue building",
            fmt_us_f(*us_per_sec),
            fmt_us(*first_p50_us),
            fmt_us(*last_p50_us)
        ),
        Unsteady::LatencyDrifting {
            us_per_sec,
            first_p50_us,
            last_p50_us,
        } => format!(
            "the server's latency rose {} per second through the window while it answered every request (median {} to {}): the server changed as the probe ran",
            fmt_us_f(*us_per_sec),
            fmt_us(*first_p50_us),
            fmt_us(*last_p50_us)
        ),
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
            Cell::Duration(p.p50_us as f64),
            Cell::Duration(p.p95_us as f64),
            p99(p),
            Cell::Duration(p.max_us as f64),
            Cell::Duration(p.stdev_us),
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
mod tests {
    use super::*;
    use crate::capacity::search::SearchSettings;
    use crate::summary::SloVerdict;

    fn probe(rate: f64, phase: Phase, met: bool, p99_us: u64) -> ProbeRecord {
        let stored = format!(
            r#"{{"rate": {rate}, "phase": "{}", "run": "p", "met": {met},
            "generator_bound": false, "throughput": {rate}, "p50_us": 2000, "p95_us": 9000,
            "p99_us": {p99_us}, "max_us": 15000, "failure_ratio": 0.0, "verdicts": [],
            "generator_cpu_percent": 12.0, "window_secs": 10.0, "started_secs": 0.0}}"#,
            phase.name()
        );
        let mut p: ProbeRecord = serde_json::from_str(&stored).unwrap();
        p.verdicts = vec![SloVerdict {
            objective: "p99 < 250ms".into(),
            request: None,
            measured: fmt_us(p99_us),
            value: None,
            met,
            ci: None,
        }];
        p
    }

    fn record(probes: Vec<ProbeRecord>, outcome: Option<Outcome>, max: f64) -> CapacityRecord {
        CapacityRecord {
            command: vec!["headroom".into(), "capacity".into()],
            target: "http://127.0.0.1/".into(),
            objectives: vec!["p99 < 250ms".into()],
            settings: SearchSettings {
                start: 1000.0,
                max,
                growth: 2.0,
                precision: 0.05,
                max_probes: 20,
                hold: false,
            },
            window_secs: 10.0,
            warmup_secs: 2.0,
            confirm_secs: 0.0,
            probes,
            knee: None,
            clock: None,
            outcome,
        }
    }

    fn found() -> CapacityRecord {
        let mut p = probe(2000.0, Phase::Grow, false, 400_000);
        p.started_secs = 12.0;
        record(
            vec![probe(1000.0, Phase::Grow, true, 12_301), p],
            Some(Outcome {
                verdict: Ended::Found,
                capacity: Some(1000.0),
                tipping: Some(2000.0),
                ceiling: None,
                held: false,
                served: None,
            }),
            5000.0,
        )
    }

    #[test]
    fn a_probe_shows_its_p99_with_its_interval_and_an_older_record_without() {
        let old = probe(1000.0, Phase::Grow, true, 12_301);
        assert_eq!(old.p99_ci_us, None);
        assert!(
            probe_line(&old).contains("p99 12.301ms  errors"),
            "{}",
            probe_line(&old)
        );
        let mut new = old.clone();
        new.p99_ci_us = Some(crate::summary::Interval {
            lo: Some(11_900),
            hi: None,
        });
        assert!(
            probe_line(&new).contains("p99 12.301ms (≥11.900ms)  errors"),
            "{}",
            probe_line(&new)
        );
        let t = probes(&record(vec![old, new], None, 2000.0));
        let col = t.header.iter().position(|h| h == "99% (95% CI)").unwrap();
        assert_eq!(t.rows[0][col].to_text(), "12.301ms");
        assert_eq!(t.rows[1][col].to_text(), "12.301ms (≥11.900ms)");
    }

    #[test]
    fn a_search_that_reached_the_default_ceiling_says_so() {
        let at = |max: f64| {
            record(
                vec![],
                Some(Outcome {
                    verdict: Ended::AboveMax,
                    capacity: Some(max),
                    tipping: None,
                    ceiling: None,
                    held: false,
                    served: None,
                }),
                max,
            )
        };
        let at_default = answer(&at(DEFAULT_MAX)).join(" ");
        assert!(
            at_default.contains("the default ceiling, --max"),
            "{at_default}"
        );
        assert!(at_default.contains("Raise --max"), "{at_default}");
        let asked = answer(&at(5_000.0)).join(" ");
        assert!(!asked.contains("default"), "{asked}");
    }

    #[test]
    fn the_answer_leads_with_the_capacity_its_objectives_and_numbers() {
        let doc = build(&found());
        let v = doc.answer.verdict.as_ref().unwrap();
        assert_eq!(v.tone, Tone::Good);
        assert!(
            v.sentence.starts_with("Sustainable capacity: 1000 req/s"),
            "{}",
            v.sentence
        );
        assert!(
            v.evidence[0].starts_with("Tipping point: 2000 req/s (p99 < 250ms measured 400.000ms"),
            "{:?}",
            v.evidence
        );
        assert_eq!(doc.answer.objectives.len(), 1);
        assert_eq!(doc.answer.objectives[0].text, "p99 < 250ms at 1000 req/s");
        assert!(doc.answer.objectives[0].met);
        let labels: Vec<&str> = doc
            .answer
            .numbers
            .iter()
            .map(|f| f.label.as_str())
            .collect();
        assert_eq!(
            labels,
            [
                "capacity (req/s)",
                "tipping point (req/s)",
                "throughput there",
                "p50",
                "p99",
                "errors",
                "probes",
                "search took"
            ]
        );
        // Warm-up, then the last window's start and its length.
        assert_eq!(doc.answer.numbers[7].value.to_text(), "24 s");
        let text = crate::report::write::text::write(&doc);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "Capacity of http://127.0.0.1/  (against p99 < 250ms, 2 probes)"
        );
        assert!(lines[1].starts_with("Sustainable capacity"), "{text}");
        assert!(
            lines
                .iter()
                .take(12)
                .any(|l| l.starts_with("capacity (req/s) 1,000 · tipping point (req/s) 2,000")),
            "{text}"
        );
        let probes_at = lines.iter().position(|l| *l == "Probes:").unwrap();
        assert!(probes_at > 3, "{text}");
        assert_eq!(doc.figures.shown.len(), 2);
    }

    #[test]
    fn a_search_that_found_nothing_fails_its_check_with_the_answer() {
        let mut r = found();
        r.outcome = Some(Outcome {
            verdict: Ended::BelowMin,
            capacity: None,
            tipping: Some(2000.0),
            ceiling: None,
            held: false,
            served: None,
        });
        r.probes.remove(0);
        let doc = build(&r);
        assert_eq!(doc.answer.verdict.as_ref().unwrap().tone, Tone::Bad);
        assert!(doc
            .answer
            .verdict
            .as_ref()
            .unwrap()
            .sentence
            .starts_with("No capacity: not even the lowest rate"));
        // The objectives are those the tipping probe broke.
        assert!(!doc.answer.objectives[0].met);
        assert_eq!(doc.checks.len(), 1);
        let f = doc.checks[0].failure.as_ref().unwrap();
        assert_eq!(f.kind, "no capacity found");
        assert!(
            f.message.contains("not even the lowest rate"),
            "{}",
            f.message
        );
        let ok = build(&found());
        assert!(ok.checks[0].failure.is_none());
        assert_eq!(ok.checks[1].name, "p99 < 250ms at 1000 req/s");
        assert_eq!(ok.checks[1].group, "headroom.objectives");
    }

    #[test]
    fn a_rate_keeps_its_decimals_so_a_capacity_never_reads_higher() {
        assert_eq!(level(59.5).to_text(), "59.5");
        assert_eq!(level(1500.0).to_text(), "1,500");
        assert_eq!(level(70.71).to_text(), "70.71");
        assert_eq!(level(0.125).to_text(), "0.125");
    }

    #[test]
    fn the_step_summary_is_the_answer_without_the_tables() {
        let md = crate::report::write::step_summary::write(&build(&found()));
        assert!(
            md.starts_with(
                "### headroom: Capacity of http://127.0.0.1/  (against p99 < 250ms, 2 probes)\n"
            ),
            "{md}"
        );
        assert!(
            md.contains("**Verdict: Sustainable capacity: 1000 req/s"),
            "{md}"
        );
        assert!(
            md.contains("| ✅ | `p99 < 250ms at 1000 req/s` | 12.301ms |"),
            "{md}"
        );
        assert!(!md.contains("Probes") && !md.contains("| # |"), "{md}");
    }
}
