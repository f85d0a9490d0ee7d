//! The report of a capacity search: the answer, the tipping point, and the probes as
//! evidence, in text, markdown or JSON.

use super::table::{aligned, markdown};
use super::Format;
use crate::capacity::fmt_level;
use crate::capacity::knee::Knee;
use crate::capacity::search::{Outcome, Phase, Verdict, DEFAULT_MAX};
use crate::capacity::steady::Unsteady;
use crate::capacity::study::{CapacityRecord, ProbeRecord};
use crate::units::{fmt_num, fmt_us, fmt_us_f};
use std::fmt::Write as _;

/// Renders the search in `format`.
pub fn render(record: &CapacityRecord, format: Format) -> Result<String, super::RenderError> {
    Ok(match format {
        Format::Json => {
            serde_json::to_string_pretty(record).expect("a capacity record serializes") + "\n"
        }
        Format::Markdown => render_markdown(record),
        Format::Text => render_text(record),
        Format::Html => super::html::capacity_page(record)?,
        Format::Junit => super::junit::capacity(record),
    })
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
        super::interval::us_with(p.p99_us, p.p99_ci_us.as_ref()),
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

/// What broke a probe that did not pass: each objective missed with its measure, each way
/// its window was not steady, and the server limit its own diagnosis named.
fn what_broke(p: &ProbeRecord) -> String {
    let limit = matches!(
        p.verdict.limit,
        crate::summary::Limit::Server | crate::summary::Limit::NothingSucceeded
    )
    .then(|| super::build::verdict::cell(&p.verdict));
    let missed: Vec<String> = p
        .verdicts
        .iter()
        .filter(|v| !v.met)
        .map(|v| {
            format!(
                "{} measured {}",
                v.objective,
                super::build::objectives::cell(v).to_text()
            )
        })
        .chain(p.unsteady.iter().map(unsteady))
        .chain(limit)
        .collect();
    missed.join("; ")
}

/// "for 60 s (p99 1.204ms, errors 0.00 %)": what the hold of `rate` measured.
fn held_for(record: &CapacityRecord, rate: f64) -> String {
    match record
        .probes
        .iter()
        .rev()
        .find(|p| p.phase == Phase::Hold && p.met && p.rate == rate)
    {
        Some(p) => format!(
            "held it for {} (p99 {}, errors {:.2} %)",
            crate::units::fmt_span(p.window_secs),
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

/// The answer in one paragraph: capacity, how it was confirmed and held, the tipping point,
/// the rates that passed their probes but not the hold, and how sure.
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
            "The search did not finish ({} probes recorded); the bracket so far is in the table.",
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
        Verdict::Found => {
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
        Verdict::AboveMax => out.push(format!(
            "Capacity is above the highest rate tried: {} met {objectives} and {}{}. Raise --max to search further.",
            rate(capacity),
            capacity.map_or(String::new(), |c| held_for(record, c)),
            if capacity == Some(DEFAULT_MAX) {
                " (the default ceiling, --max)"
            } else {
                ""
            }
        )),
        Verdict::BelowMin => out.push(format!(
            "Not even the lowest rate tried met {objectives} (tipping point at or below {}).",
            rate(tipping)
        )),
        Verdict::GeneratorBound => {
            let bound = record.probes.iter().rev().find(|p| p.generator_bound);
            out.push(format!(
                "The generator, not the server, was the limit: it could not offer {}{}.",
                rate(ceiling),
                bound
                    .map(|p| {
                        let evidence: Vec<String> = p
                            .verdict
                            .on(crate::summary::Blame::Generator)
                            .map(super::build::verdict::sentence)
                            .collect();
                        format!(" ({})", evidence.join("; "))
                    })
                    .unwrap_or_default(),
            ));
            out.push(format!(
                "The server met {objectives} at {} (confirmed, and {}), the most this generator could offer: its capacity is at least that. Run headroom from a stronger machine, or several, to find more.",
                rate(capacity),
                capacity.map_or(String::new(), |c| held_for(record, c))
            ));
        }
        Verdict::Unconfirmed => out.push(format!(
            "No rate held on repetition: the boundary is unstable below {}. The server's answers vary more than the probes can settle: lengthen --window, or look at what else runs on the server.",
            rate(tipping)
        )),
        Verdict::OutOfProbes => out.push(format!(
            "The search ran out of probes (--max-probes): capacity between {} and {}.",
            rate(capacity),
            rate(tipping)
        )),
        Verdict::Interrupted => out.push(format!(
            "Interrupted: capacity at least {}, tipping point at most {}.",
            rate(capacity),
            rate(tipping)
        )),
        Verdict::ChangedWithTime => out.push(match &record.clock {
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
        Verdict::NeverHeld => out.push(format!(
            "No rate held for the {} confirmation: rates passed their probes but broke during the hold (lowest tried {}). The server's limit shows only after a while: search with a longer --window, or hold a low rate with a long attack.",
            crate::units::fmt_span(record.confirm_secs),
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
            crate::units::fmt_span(p.window_secs),
            p.verdict
                .on(crate::summary::Blame::Generator)
                .map(super::build::verdict::sentence)
                .collect::<Vec<_>>()
                .join("; ")
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
            crate::units::fmt_span(record.window_secs),
            crate::units::fmt_span(p.window_secs),
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
            crate::units::fmt_us_f(*rms_us)
        )),
        Some(Knee::None { why }) => out.push(format!("Knee: none estimated ({why}).")),
        None => {}
    }
    out
}

/// Why a probe's window was not steady, in words.
pub fn unsteady(u: &Unsteady) -> String {
    match u {
        Unsteady::ThroughputShort { offered, completed } => format!(
            "completed {completed:.1} of the {} req/s offered ({:.1} %)",
            fmt_level(*offered),
            100.0 * completed / offered
        ),
        Unsteady::BacklogGrowing { per_sec, allowed } => format!(
            "requests in flight grew by {per_sec:.1} per second (a queue; {allowed:.1} allowed)"
        ),
        Unsteady::LatencyClimbing {
            us_per_sec,
            first_p50_us,
            last_p50_us,
        } => format!(
            "latency climbed {} per second through the window (median {} to {})",
            crate::units::fmt_us_f(*us_per_sec),
            fmt_us(*first_p50_us),
            fmt_us(*last_p50_us)
        ),
        Unsteady::LatencyDrifting {
            us_per_sec,
            first_p50_us,
            last_p50_us,
        } => format!(
            "latency rose {} per second through the window while every request was answered (median {} to {}): the server changed as the probe ran",
            crate::units::fmt_us_f(*us_per_sec),
            fmt_us(*first_p50_us),
            fmt_us(*last_p50_us)
        ),
    }
}

/// The probes as table rows (header first).
pub fn rows(record: &CapacityRecord) -> Vec<Vec<String>> {
    let watched = record.probes.iter().any(|p| p.server_cpu_percent.is_some());
    let mut header: Vec<String> = [
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
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if watched {
        header.push("server CPU".into());
    }
    let mut rows = vec![header];
    for (i, p) in record.probes.iter().enumerate() {
        let mut row = vec![
            (i + 1).to_string(),
            p.phase.name().into(),
            fmt_level(p.rate),
            fmt_num(p.throughput, 1),
            fmt_us(p.p50_us),
            fmt_us(p.p95_us),
            super::interval::us_with(p.p99_us, p.p99_ci_us.as_ref()),
            fmt_us(p.max_us),
            fmt_us_f(p.stdev_us),
            format!("{:.2}%", 100.0 * p.failure_ratio),
            if p.verdicts.iter().all(|v| v.met) {
                "met"
            } else {
                "broken"
            }
            .into(),
            steady(p),
            if p.generator_bound {
                "bound".into()
            } else {
                format!("ok ({:.0}% cpu)", p.generator_cpu_percent)
            },
        ];
        if watched {
            row.push(
                p.server_cpu_percent
                    .map_or("-".into(), |c| format!("{c:.0}%")),
            );
        }
        rows.push(row);
    }
    rows
}

/// How each probe and the hold were run, in one sentence.
pub fn method(record: &CapacityRecord) -> String {
    format!(
        "Each probe: {} of warm-up, then a {} window judged against the objectives and for a steady rate (throughput, requests in flight, latency trends); {}.",
        crate::units::fmt_span(record.warmup_secs),
        crate::units::fmt_span(record.window_secs),
        if record.confirm_secs > 0.0 {
            format!(
                "the answer is then held for {} (--confirm) to see what a short probe cannot",
                crate::units::fmt_span(record.confirm_secs)
            )
        } else {
            "the answer was not held longer (--confirm 0)".to_string()
        }
    )
}

fn render_text(record: &CapacityRecord) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Capacity search on {} against {}",
        record.target,
        record.objectives.join(", ")
    );
    let _ = writeln!(out, "{}\n", method(record));
    for line in answer(record) {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out);
    out.push_str(&aligned(&rows(record)));
    out
}

fn render_markdown(record: &CapacityRecord) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Capacity of {} against `{}`\n",
        record.target,
        record.objectives.join(", ")
    );
    for line in answer(record) {
        let _ = writeln!(out, "**{line}**\n");
    }
    let _ = writeln!(out, "{}\n", method(record));
    out.push_str(&markdown(&rows(record)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::search::SearchSettings;

    #[test]
    fn a_probe_shows_its_p99_with_its_interval_and_an_older_record_without() {
        let stored = r#"{"rate": 1000.0, "phase": "grow", "run": "01-grow-1000rps", "met": true,
            "generator_bound": false, "throughput": 999.5, "p50_us": 2000, "p95_us": 9000,
            "p99_us": 12301, "max_us": 15000, "failure_ratio": 0.0, "verdicts": [],
            "generator_cpu_percent": 12.0}"#;
        let old: ProbeRecord = serde_json::from_str(stored).unwrap();
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
        let record = CapacityRecord {
            command: vec![],
            target: "http://127.0.0.1/".into(),
            objectives: vec!["p99 < 250ms".into()],
            settings: SearchSettings {
                start: 1000.0,
                max: 2000.0,
                growth: 2.0,
                precision: 0.05,
                max_probes: 20,
                hold: false,
            },
            window_secs: 10.0,
            warmup_secs: 2.0,
            confirm_secs: 0.0,
            probes: vec![old, new],
            knee: None,
            clock: None,
            outcome: None,
        };
        let rows = rows(&record);
        let col = rows[0].iter().position(|h| h == "99% (95% CI)").unwrap();
        assert_eq!(rows[1][col], "12.301ms");
        assert_eq!(rows[2][col], "12.301ms (≥11.900ms)");
    }

    #[test]
    fn a_search_that_reached_the_default_ceiling_says_so() {
        let record = |max: f64| CapacityRecord {
            command: vec![],
            target: "http://127.0.0.1/".into(),
            objectives: vec!["p99 < 250ms".into()],
            settings: SearchSettings {
                start: 100.0,
                max,
                growth: 2.0,
                precision: 0.05,
                max_probes: 20,
                hold: false,
            },
            window_secs: 10.0,
            warmup_secs: 2.0,
            confirm_secs: 0.0,
            probes: vec![],
            knee: None,
            clock: None,
            outcome: Some(Outcome {
                verdict: Verdict::AboveMax,
                capacity: Some(max),
                tipping: None,
                ceiling: None,
                held: false,
                served: None,
            }),
        };
        let at_default = answer(&record(DEFAULT_MAX)).join(" ");
        assert!(
            at_default.contains("the default ceiling, --max"),
            "{at_default}"
        );
        assert!(at_default.contains("Raise --max"), "{at_default}");
        let asked = answer(&record(5_000.0)).join(" ");
        assert!(!asked.contains("default"), "{asked}");
    }
}
