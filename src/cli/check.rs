//! `run --check`: what a scenario would run, read and rendered as the run would, without
//! sending anything.

use headroom::plan::{AttackPlan, Load};
use headroom::units::{fmt_count, fmt_num, plural};
use std::path::Path;
use std::time::Duration;

/// Checks the files the run reads (TLS) and prints the scenario's target, load, requests,
/// flows, objectives and its first request as it would be sent, each line passed through
/// `scrub` (which puts the scenario's `${VARIABLES}` back where their values, possibly
/// secrets, were filled in).
pub fn print(
    scenario: &Path,
    plan: &AttackPlan,
    scrub: &dyn Fn(&str) -> String,
) -> anyhow::Result<()> {
    headroom::engine::preview::check_tls(plan)?;
    let first = first_sent(plan);
    let preview = headroom::engine::preview::request(plan, first)?;
    let mut out = Vec::new();
    lines(scenario, plan, first, &preview, scrub, &mut out);
    for line in out {
        println!("{}", scrub(&line));
    }
    Ok(())
}

fn lines(
    scenario: &Path,
    plan: &AttackPlan,
    first: usize,
    preview: &headroom::engine::preview::Preview,
    scrub: &dyn Fn(&str) -> String,
    out: &mut Vec<String>,
) {
    out.push(format!("{}: ok", scenario.display()));
    let more = match plan.instances.len() {
        0 => String::new(),
        n => format!(" and {}", count(n as u64, "more instance")),
    };
    out.push(format!("  target  {}{more}", plan.target.url));
    for line in load(plan) {
        out.push(format!("  load    {line}"));
    }
    for r in &plan.requests {
        out.push(format!(
            "  request {:<24} weight {:<5} {} {}",
            r.name,
            r.weight,
            r.spec.method,
            // A token written in the path's query is sent, never shown; one from a variable
            // is shown as its reference.
            headroom::plan::secret_names::redact_query(&scrub(
                r.spec.path.as_deref().unwrap_or("")
            ))
        ));
    }
    for f in &plan.flows {
        let steps: Vec<&str> = f
            .steps
            .iter()
            .map(|&i| plan.requests[usize::from(i)].name.as_str())
            .collect();
        out.push(format!(
            "  flow    {:?} (weight {}): {}",
            f.name,
            f.weight,
            steps.join(" → ")
        ));
    }
    for s in &plan.slo {
        out.push(format!("  SLO     {s}"));
    }
    for a in &plan.abort {
        out.push(format!("  abort   when {a}"));
    }
    out.push(format!("  first send of {:?}:", plan.requests[first].name));
    for line in &preview.head {
        out.push(format!("    {line}"));
    }
    if preview.body_bytes > 0 {
        out.push(format!(
            "    ({} of body, not shown)",
            count(preview.body_bytes, "byte")
        ));
    }
}

/// The request a run sends first: a login, else the first flow's first step, else the
/// first of the mix.
fn first_sent(plan: &AttackPlan) -> usize {
    if let Some(login) = &plan.login {
        return usize::from(login.request);
    }
    plan.flows
        .first()
        .and_then(|f| f.steps.first())
        .map_or(0, |&i| usize::from(i))
}

/// The load in words: the model, its level and what stops it, then each stage.
pub(super) fn load(plan: &AttackPlan) -> Vec<String> {
    let unit = |level: f64| match plan.load {
        Load::Open { .. } => format!("{} req/s", number(level)),
        Load::Closed { .. } => count(level as u64, "user"),
    };
    let counted = if plan.flows.is_empty() {
        ""
    } else {
        " (counted in flow iterations)"
    };
    let mut lines = Vec::new();
    let model = match plan.load {
        Load::Open { rate } if plan.stages.is_empty() => {
            format!("open model, {}{counted}", unit(rate.per_second()))
        }
        Load::Closed { concurrency } if plan.stages.is_empty() => {
            format!("closed model, {}", unit(f64::from(concurrency)))
        }
        Load::Open { .. } => format!("open model{counted}, in stages"),
        Load::Closed { .. } => "closed model, in stages".to_string(),
    };
    let stop = match (plan.stop.duration, plan.stop.requests) {
        (Some(d), Some(n)) => format!(
            " for {} or {}, whichever comes first",
            span(d),
            count(n, "request")
        ),
        (Some(d), None) => format!(" for {}", span(d)),
        (None, Some(n)) => format!(" for {}", count(n, "request")),
        (None, None) => String::new(),
    };
    lines.push(format!("{model}{stop}"));
    for s in &plan.stages {
        let level = if s.from == s.to {
            unit(s.from)
        } else {
            format!("{} → {}", number(s.from), unit(s.to))
        };
        let end = match s.requests {
            Some(n) => count(n, "request"),
            None => span(s.duration),
        };
        let warmup = if s.warmup {
            " (warm-up, not reported)"
        } else {
            ""
        };
        lines.push(format!("  {:?}: {level} for {end}{warmup}", s.name));
    }
    lines
}

/// `1 user`, `12,000 requests`.
fn count(n: u64, noun: &str) -> String {
    plural(fmt_count(n), noun)
}

/// A level as the scenario would write it, grouped: `2,666.67`, `50` (no `.00`).
fn number(x: f64) -> String {
    let text = fmt_num(x, 2);
    match text.strip_suffix(".00") {
        Some(whole) => whole.to_string(),
        None => text.trim_end_matches('0').to_string(),
    }
}

/// A duration as the scenario would write it: `5m`, `1h 30m`, `250ms`.
fn span(d: Duration) -> String {
    humantime::format_duration(d).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_counts_read_as_people_write_them() {
        assert_eq!(number(2666.666), "2,666.67");
        assert_eq!(number(50.0), "50");
        assert_eq!(number(1234567.5), "1,234,567.5");
        assert_eq!(number(999.0), "999");
        assert_eq!(count(1, "user"), "1 user");
        assert_eq!(count(12_000, "request"), "12,000 requests");
        assert_eq!(span(Duration::from_secs(5400)), "1h 30m");
    }
}
