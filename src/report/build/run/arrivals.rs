//! The arrivals line every report of a run carries: how the open model's requests were
//! spaced, and for Poisson arrivals whether the sends were checked and found Poisson.

use crate::plan::{ArrivalKind, Load};
use crate::summary::{Fit, SendCheck, SendFinding, Summary};
use crate::units::{fmt_count, fmt_us};

/// How the run's arrivals were spaced, in words; `None` for the closed model (no arrivals).
pub fn words(s: &Summary) -> Option<String> {
    if !matches!(s.load, Load::Open { .. }) {
        return None;
    }
    let a = &s.arrivals;
    Some(match a.kind {
        ArrivalKind::Even => "evenly spaced".to_string(),
        ArrivalKind::Poisson => {
            let seed = a.seed.map(|s| format!(", seed {s}")).unwrap_or_default();
            match &a.check {
                Some(check) => format!("Poisson{seed} ({})", checked(check)),
                None => format!("Poisson{seed} (sends not checked)"),
            }
        }
    })
}

/// What the check of the sends found.
fn checked(c: &SendCheck) -> String {
    let gaps = match c.arrivals_per_gap {
        1 => "exponential gaps".to_string(),
        k => format!("gaps of {k} arrivals"),
    };
    let gaps = fit(&gaps, "gaps", &c.gaps);
    let spans = fit(
        &format!("spans of {} arrivals", fmt_count(c.arrivals_per_span)),
        "spans",
        &c.spans,
    );
    match c.finding {
        SendFinding::Poisson => format!("sends checked: {gaps}, and {spans}"),
        SendFinding::NotPoisson => {
            let why = if c.lagged() {
                format!(
                    "the generator fell behind its schedule (lag p99 {}) and sent late requests together",
                    fmt_us(c.lag_p99_us)
                )
            } else {
                "their gaps were not those of a Poisson process".to_string()
            };
            let failed: Vec<String> = [(&c.gaps, gaps), (&c.spans, spans)]
                .into_iter()
                .filter(|(f, _)| !f.holds())
                .map(|(_, words)| words)
                .collect();
            format!(
                "the sends were NOT Poisson: {why} ({}); the server did not get the load asked",
                failed.join("; ")
            )
        }
        SendFinding::TooFew => format!(
            "sends not checked: {} spans of {} arrivals are too few to tell (at least {}); a longer run tells",
            fmt_count(c.spans.samples),
            fmt_count(c.arrivals_per_span),
            crate::summary::MIN_SPANS
        ),
    }
}

/// One test in words: "exponential gaps, KS D=0.0053 < 0.0105 over 19,974 gaps".
fn fit(what: &str, unit: &str, f: &Fit) -> String {
    let op = if f.holds() { "<" } else { "≥" };
    format!(
        "{what}, KS D={:.4} {op} {:.4} over {} {unit}",
        f.statistic,
        f.critical,
        fmt_count(f.samples)
    )
}
