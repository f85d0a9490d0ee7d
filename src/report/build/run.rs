//! The document of one run (an attack, a scenario, a sweep — a run in steps —, a shard, a
//! merged run of shards): the answer first (what ran, which side was the limit and why, the
//! objectives, the headline numbers, what changes how to read them), then vegeta's block,
//! the tables, each step, the generator and the server, the options. Summary in, document
//! out: no layout here, that is the writers'.

pub mod arrivals;
pub mod by_flow;
pub mod by_request;
pub mod by_stage;
pub mod failures;
mod options;
pub mod outputs;
pub mod request_stage;
pub mod request_status;
pub mod shards;
pub mod steps;
pub mod vegeta;

use super::checks::{self, TRUST};
use super::objectives;
use super::verdict;
use super::words;
use crate::report::document::{
    Answer, Block, Cell, Check, CheckFailure, Document, Fact, Figures, Section, Stamp, Tone,
    Verdict,
};
use crate::report::plot;
use crate::summary::{Interval, Limit, PercentileIntervals, Stats, Summary};
use crate::units::{fmt_secs, fmt_us};

/// What a run's document holds besides its summary, when the caller has it.
#[derive(Debug, Default)]
pub struct Extras<'a> {
    /// The figures, already drawn (only the HTML page shows them).
    pub figures: Option<plot::Figures>,
    /// The options stored with the run (secrets already redacted), for the Options table.
    pub options: Option<serde_json::Value>,
    /// The run directory's name, kept as a JUnit property.
    pub run_id: Option<&'a str>,
}

/// The document of the run summarised as `s`.
pub fn build(s: &Summary, extras: Extras<'_>) -> Document {
    let mut sections = vec![Section::new("summary", "", vegeta::block(s))];
    sections.extend(tables(s));
    sections.extend(steps::section(s));
    sections.push(Section::new(
        "machines",
        "",
        vec![Block::Fields(vegeta::machines(s))],
    ));
    if let Some(meta) = extras.options {
        sections.push(Section::new(
            "options",
            "Options",
            vec![
                Block::Paragraph("As stored with the run (secrets redacted).".into()),
                Block::Table(options::table(meta)),
            ],
        ));
    }
    let figures = extras.figures.map_or_else(Figures::default, |f| Figures {
        left_out: f.left_out.iter().map(|l| l.sentence()).collect(),
        shown: f.shown,
    });
    Document {
        title: words::target(s),
        what_ran: vec![
            words::load_words(s),
            s.protocol.clone(),
            format!("started {}", s.started_at),
        ],
        answer: answer(s),
        figures,
        sections,
        checks: checks(s),
        properties: properties(s, extras.run_id),
        stamp: Some(Stamp {
            started: s.started_at.clone(),
            host: s.host.clone(),
            secs: s.duration.total_secs,
        }),
        data: serde_json::to_value(s).unwrap_or_default(),
    }
}

/// The verdict, the objectives, the headline numbers and the notes.
fn answer(s: &Summary) -> Answer {
    Answer {
        verdict: Some(verdict_of(s)),
        objectives: s.slo.iter().map(objectives::objective).collect(),
        numbers: numbers(s),
        notes: notes(s),
    }
}

/// The diagnosis as the answer's verdict: its headline and each piece of evidence.
fn verdict_of(s: &Summary) -> Verdict {
    let mut lines = verdict::lines(&s.verdict, &s.generator).into_iter();
    Verdict {
        tone: match s.verdict.limit {
            Limit::Neither | Limit::Transient => Tone::Good,
            Limit::CannotTell => Tone::Unsure,
            _ => Tone::Bad,
        },
        sentence: lines.next().unwrap_or_default(),
        evidence: lines.collect(),
    }
}

/// A latency with its 95 % confidence interval when there is one.
fn with_interval(point: u64, i: Option<&Interval<u64>>) -> Cell {
    match i {
        Some(i) => Cell::DurationCi {
            us: point as f64,
            lo: i.lo.map(|v| v as f64),
            hi: i.hi.map(|v| v as f64),
        },
        None => Cell::Duration(point as f64),
    }
}

/// A percentile of the answered requests with its interval; nothing when none was answered.
fn percentile(st: &Stats, point: u64, pick: fn(&PercentileIntervals) -> &Interval<u64>) -> Cell {
    if st.count == 0 {
        return by_request::no_latency();
    }
    with_interval(point, st.ci.as_ref().map(pick))
}

/// Requests, throughput, success, p50 and p99 (with their intervals).
fn numbers(s: &Summary) -> Vec<Fact> {
    let fact = |label: &str, value| Fact {
        label: label.into(),
        value,
    };
    vec![
        fact("requests", Cell::Count(s.requests.total)),
        fact("throughput", Cell::Rate(s.requests.throughput)),
        fact("success", Cell::Percent(100.0 * s.success_ratio)),
        fact(
            "p50",
            percentile(&s.latency, s.latency.p50_us, |c| &c.p50_us),
        ),
        fact(
            "p99",
            percentile(&s.latency, s.latency.p99_us, |c| &c.p99_us),
        ),
    ]
}

/// What changes how to read the numbers: a partial run, a stop, a shard, a merge, outputs,
/// notices, a warm-up.
fn notes(s: &Summary) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(why) = &s.partial {
        out.push(format!("PARTIAL RUN: {why}"));
    }
    if let Some(why) = &s.stopped_early {
        out.push(format!("The run stopped early: {why}"));
    }
    if let Some(a) = &s.aborted {
        out.push(format!(
            "ABORTED: {}; the requests sent before are all kept and reported",
            words::aborted(a)
        ));
    }
    if let Some(shard) = words::shard_words(s) {
        out.push(format!("Shard: {shard}"));
    }
    if let Some(merged) = &s.shards {
        out.push(format!("Merged: {}", shards::line(merged)));
    }
    out.extend(
        s.outputs
            .iter()
            .map(|o| format!("Output: {}", outputs::line(o))),
    );
    out.extend(s.notices.iter().map(|n| format!("Note: {n}")));
    if s.warmup_secs > 0.0 {
        // "The first N s" only when the warm-ups lead the run; a sweep warms up each step.
        let warmups = s.stages.iter().filter(|st| st.warmup).count();
        let leading = s.stages.iter().take_while(|st| st.warmup).count();
        let when = if leading < warmups {
            format!(
                "in its {warmups} warm-up stages ({} in all, each before the step it warms up)",
                fmt_secs(s.warmup_secs)
            )
        } else {
            format!("in the first {} (warm-up stages)", fmt_secs(s.warmup_secs))
        };
        out.push(format!(
            "Warm-up: the requests sent {when} are left out of every number but the generator's, wherever their answers fell"
        ));
    }
    out
}

/// The run's tables in order: why requests failed, then by request, by flow, by stage, and
/// for a merged run by shard.
fn tables(s: &Summary) -> Vec<Section> {
    let mut out = Vec::new();
    if !s.failures.is_empty() {
        out.push(Section::table("failures", "Failures", failures::table(s)));
    }
    if !s.by_request.is_empty() {
        out.push(Section::table(
            "by-request",
            "Requests by name",
            by_request::table(s),
        ));
    }
    if s.by_request.len() > 1 {
        if let Some(t) = request_status::table(s) {
            out.push(Section::table(
                "status-by-request",
                "Status codes by request",
                t,
            ));
        }
    }
    if !s.flows.is_empty() {
        out.push(Section::table("flows", "Flows", by_flow::table(&s.flows)));
    }
    if !s.stages.is_empty() {
        out.push(Section::table("stages", "Stages", by_stage::table(s)));
        if let Some(t) = request_stage::table(s) {
            out.push(Section::table("requests-by-stage", "Requests by stage", t));
        }
    }
    if let Some(merged) = &s.shards {
        out.push(Section::table("shards", "Shards", shards::table(merged)));
    }
    out
}

/// The run as checks: one per objective, then that requests succeeded, that the generator
/// kept up (a result measured on a saturated generator must not pass silently) and that the
/// run completed.
fn checks(s: &Summary) -> Vec<Check> {
    let lines = || verdict::lines(&s.verdict, &s.generator);
    let trust = |name: &str, failure: Option<CheckFailure>| Check {
        group: TRUST.into(),
        name: name.into(),
        failure,
        output: None,
    };
    let evidence = |kind: &str| {
        let lines = lines();
        CheckFailure {
            message: lines.join(" "),
            kind: kind.into(),
            detail: lines.join("\n"),
        }
    };
    let mut out: Vec<Check> = s.slo.iter().map(checks::objective).collect();
    out.push(trust(
        "requests succeeded",
        s.nothing_succeeded().then(|| evidence("nothing succeeded")),
    ));
    out.push(trust(
        "the generator kept up",
        s.verdict
            .generator_limited()
            .then(|| evidence("generator limited")),
    ));
    if !s.abort_when.is_empty() || s.aborted.is_some() {
        out.push(trust(
            "no abort condition held",
            s.aborted.as_ref().map(|a| CheckFailure {
                message: words::aborted(a),
                kind: "aborted".into(),
                detail: words::aborted(a),
            }),
        ));
    }
    out.push(trust(
        "the run completed",
        s.partial.as_ref().map(|why| CheckFailure {
            message: format!("partial run: {why}"),
            kind: "partial run".into(),
            detail: why.clone(),
        }),
    ));
    out
}

/// Named facts for machines (JUnit properties).
fn properties(s: &Summary, run_id: Option<&str>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(id) = run_id {
        out.push(("run_id".to_string(), id.to_string()));
    }
    out.extend(
        [
            ("target", s.target.clone()),
            ("load", words::load_words(s)),
            ("protocol", s.protocol.clone()),
            ("requests", s.requests.total.to_string()),
            ("throughput", format!("{:.1} req/s", s.requests.throughput)),
            ("success", format!("{:.2}%", 100.0 * s.success_ratio)),
            ("latency_p99", fmt_us(s.latency.p99_us)),
        ]
        .map(|(k, v)| (k.to_string(), v)),
    );
    out
}

#[cfg(test)]
mod tests;
