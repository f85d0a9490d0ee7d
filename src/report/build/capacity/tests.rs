use super::*;
use crate::capacity::search::SearchSettings;
use crate::capacity::search::{Phase, DEFAULT_MAX};
use crate::summary::SloVerdict;
use crate::units::fmt_us;

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

#[test]
fn a_probe_without_an_answer_shows_no_latency_in_any_view() {
    let mut wall = probe(50.0, Phase::Grow, false, 0);
    wall.throughput = 0.0;
    wall.failure_ratio = 1.0;
    wall.p50_us = 0;
    wall.p95_us = 0;
    wall.max_us = 0;
    // As the objective's measure words it when nothing was answered.
    wall.verdicts[0].measured = "no answered requests".into();
    let mut r = found();
    r.probes = vec![wall.clone()];
    r.outcome = Some(Outcome {
        verdict: Ended::BelowMin,
        capacity: None,
        tipping: Some(50.0),
        ceiling: None,
        held: false,
        served: None,
    });
    assert!(probe_line(&wall).contains("p99 —"), "{}", probe_line(&wall));
    let text = crate::report::write::text::write(&build(&r));
    assert!(text.contains("p50 — · p99 —"), "{text}");
    assert!(!text.contains("0µs"), "{text}");
    let json = crate::report::write::json::write(&build(&r));
    assert!(!json.contains(r#""value":0.0,"unit":"ms""#), "{json}");
}

#[test]
fn an_interrupted_search_names_only_the_bounds_it_found_and_its_command_pastes_back() {
    let interrupted = |capacity, tipping| {
        let mut r = found();
        r.outcome = Some(Outcome {
            verdict: Ended::Interrupted,
            capacity,
            tipping,
            ceiling: None,
            held: false,
            served: None,
        });
        answer(&r).join(" ")
    };
    let both = interrupted(Some(1000.0), Some(2000.0));
    assert!(
        both.contains("capacity at least 1000 req/s, tipping point at most 2000 req/s"),
        "{both}"
    );
    let low = interrupted(Some(1000.0), None);
    assert!(
        low.contains("no rate tried broke the objectives yet"),
        "{low}"
    );
    let high = interrupted(None, Some(2000.0));
    assert!(
        high.contains("no rate tried met the objectives yet"),
        "{high}"
    );
    for text in [both, low, high, interrupted(None, None)] {
        assert!(
            !text.contains(" -"),
            "a bound not found shown as a dash: {text}"
        );
    }
    let mut r = found();
    r.command = ["headroom", "capacity", "--slo", "p99 < 100ms"]
        .map(String::from)
        .to_vec();
    let doc = build(&r);
    let shown = doc
        .sections
        .iter()
        .find(|s| s.id == "command")
        .map(|s| format!("{:?}", s.blocks))
        .unwrap();
    assert!(shown.contains(r#"--slo 'p99 < 100ms'"#), "{shown}");
}
