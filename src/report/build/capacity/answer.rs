//! A capacity search's answer in words: the capacity or why there is none, the tipping point
//! and what broke it, the holds, and one line per probe for the progress on stderr.

use super::super::{objectives, verdict};
use crate::capacity::fmt_level;
use crate::capacity::knee::Knee;
use crate::capacity::search::{Outcome, Phase, Verdict as Ended, DEFAULT_MAX};
use crate::capacity::steady::Unsteady;
use crate::capacity::study::{CapacityRecord, ProbeRecord};
use crate::report::document::interval;
use crate::summary::{Blame, Diagnosis, Limit};
use crate::units::{fmt_num, fmt_span, fmt_us, fmt_us_f};

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
        if p.measured() {
            interval::us_with(p.p99_us, p.p99_ci_us.as_ref())
        } else {
            "—".into()
        },
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
pub(super) fn steady(p: &ProbeRecord) -> String {
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
        // Only what the probes so far showed: a bound not found yet is not a figure.
        Ended::Interrupted => out.push(match (capacity, tipping) {
            (Some(_), Some(_)) => format!(
                "Interrupted: capacity at least {}, tipping point at most {}.",
                rate(capacity),
                rate(tipping)
            ),
            (Some(_), None) => format!(
                "Interrupted: capacity at least {}; no rate tried broke the objectives yet.",
                rate(capacity)
            ),
            (None, Some(_)) => format!(
                "Interrupted: no rate tried met the objectives yet; tipping point at most {}.",
                rate(tipping)
            ),
            (None, None) => "Interrupted before any probe was judged: no capacity yet.".into(),
        }),
        Ended::ChangedWithTime => out.push(match &record.clock {
            Some(c) => format!(
                "No capacity: the server changed with time. Through probes {}, its median latency rose {} to {} every second while it answered all it was sent (no queue), from {} to {}: latency followed the clock, not the rate, and a longer window makes it worse. Find what grows in the server (a leak, a cache or table filling) and search again, or measure the drift with a long attack at one rate.",
                // Each probe with its own rate, in the order they ran.
                c.probes
                    .iter()
                    .map(|&n| match record.probes.get(n.wrapping_sub(1)) {
                        Some(p) => format!("{n} ({} req/s)", fmt_level(p.rate)),
                        None => n.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
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
