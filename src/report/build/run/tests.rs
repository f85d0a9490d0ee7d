//! The run's document from a run stored on disk: its answer, its sections in order with
//! typed cells, its checks, and the extras (options, figures) only when given.

use super::*;
use crate::monitor::{CpuTime, Health};
use crate::plan::{AttackPlan, Load, NamedRequest, Rate, RequestSpec, Stop, Target};
use crate::record::IntervalRecord;
use crate::sample::{ErrorKind, Outcome, Sample};
use crate::store::{EndStatus, IntervalLine, RunDir, RunEnd, RunMeta};
use std::time::Duration;

fn sample(outcome: Outcome, latency_us: u64) -> Sample {
    Sample {
        outcome,
        latency: Duration::from_micros(latency_us),
        service: Duration::from_micros(latency_us),
        lag: Duration::from_micros(3),
        connect: None,
        tls_handshake: None,
        first_byte: Some(Duration::from_micros(latency_us / 2)),
        bytes_in: 3,
        bytes_out: 0,
        retried: false,
        request: 0,
        stage: None,
        expected: outcome.is_success(),
        iteration: None,
    }
}

/// Two seconds at 100 req/s: 7 % HTTP 503, 3 % resets (the server's doing), held to
/// `objectives`; finished when `complete`.
fn summary(objectives: &[&str], complete: bool) -> Summary {
    let target = Target::parse("http://127.0.0.1:9/status").unwrap();
    let request = NamedRequest::single(
        RequestSpec::parse("GET", &[], bytes::Bytes::new()).unwrap(),
        &target,
    );
    let plan = AttackPlan::new(
        target,
        vec![request],
        Load::Open { rate: Rate(100.0) },
        Stop {
            duration: Some(Duration::from_secs(2)),
            requests: None,
        },
    );
    let mut meta = RunMeta::describe(&plan, &[], Some(1024), "HTTP/1.1", &[]);
    meta.slo = objectives.iter().map(|o| o.to_string()).collect();
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::at(dir.path().join("run"));
    let mut writer = run.create(&meta).unwrap();
    for index in 0..2u64 {
        let mut record = IntervalRecord::new(index);
        record.sent = 100;
        record.scheduled = 100;
        for i in 0..100u64 {
            let outcome = match i {
                0..=89 => Outcome::Status(200),
                90..=96 => Outcome::Status(503),
                _ => Outcome::Error(ErrorKind::Reset),
            };
            record.record(&sample(outcome, 1_000 + i * 37));
        }
        let health = Health {
            cpu: CpuTime {
                total: Duration::from_millis(4),
                ..CpuTime::default()
            },
            open_fds: 12,
        };
        writer
            .append(&IntervalLine {
                record,
                health,
                stage: None,
                server: None,
                shards: Vec::new(),
            })
            .unwrap();
    }
    if complete {
        run.finish(&RunEnd {
            status: EndStatus::Completed,
            ended_at: "2026-11-21T00:00:02.000Z".into(),
            ended_unix: None,
            attack_secs: 1.99,
            wait_secs: 0.004,
            cpu: CpuTime {
                total: Duration::from_millis(8),
                ..CpuTime::default()
            },
            peak_open_fds: 12,
            peak_rss_bytes: None,
            reason: None,
            aborted: None,
        })
        .unwrap();
    }
    Summary::of(&run.load().unwrap())
}

#[test]
fn the_answer_names_the_side_the_numbers_and_the_objectives_typed() {
    let doc = build(
        &summary(&["p99 < 2ms", "error_rate < 20%"], true),
        Extras::default(),
    );
    assert_eq!(doc.title, "GET http://127.0.0.1:9/status");
    assert_eq!(doc.what_ran[0], "open model, 100 req/s");
    let v = doc.answer.verdict.as_ref().unwrap();
    assert_eq!(v.tone, Tone::Bad);
    assert_eq!(v.sentence, "the server was the limit:");
    assert!(v.evidence.iter().any(|e| e.contains("HTTP 503")), "{v:?}");
    let labels: Vec<&str> = doc
        .answer
        .numbers
        .iter()
        .map(|f| f.label.as_str())
        .collect();
    assert_eq!(labels, ["requests", "throughput", "success", "p50", "p99"]);
    assert_eq!(doc.answer.numbers[0].value, Cell::Count(200));
    assert!(matches!(doc.answer.numbers[2].value, Cell::Percent(p) if (p - 90.0).abs() < 1e-9));
    assert!(matches!(
        doc.answer.numbers[4].value,
        Cell::DurationCi { .. }
    ));
    let o = &doc.answer.objectives;
    assert_eq!((o[0].text.as_str(), o[0].met), ("p99 < 2ms", false));
    assert!(matches!(
        o[0].measured,
        Cell::Measured {
            unit: crate::summary::regression::Unit::Micros,
            ..
        }
    ));
    assert!(o[1].met);
    assert!(matches!(o[1].measured, Cell::Measured { value, .. } if (value - 0.1).abs() < 1e-9));
    assert!(doc.answer.notes.is_empty(), "{:?}", doc.answer.notes);
}

#[test]
fn the_sections_come_in_order_with_typed_cells() {
    let doc = build(&summary(&[], true), Extras::default());
    let ids: Vec<&str> = doc.sections.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["summary", "failures", "by-request", "machines"]);
    // vegeta's block: its lines, then the Error Set as vegeta lays it out.
    let Block::Fields(lines) = &doc.sections[0].blocks[0] else {
        panic!("vegeta's lines first")
    };
    let labels: Vec<&str> = lines.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(labels[..3], ["Target", "Arrivals", "Requests"]);
    assert!(labels.contains(&"Status Codes"));
    let Block::Preformatted(errors) = &doc.sections[0].blocks[1] else {
        panic!("the Error Set after them")
    };
    assert!(
        errors.starts_with("Error Set:\n  server status_503"),
        "{errors}"
    );
    // The Failures table: counts and shares as numbers.
    let Block::Table(failures) = &doc.sections[1].blocks[0] else {
        panic!("a table")
    };
    assert_eq!(
        failures.header,
        ["Method", "Request", "Reason", "Count", "Share"]
    );
    assert_eq!(failures.rows[0][3], Cell::Count(14));
    assert!(matches!(failures.rows[0][4], Cell::Percent(p) if (p - 7.0).abs() < 1e-9));
    let Block::Table(by_request) = &doc.sections[2].blocks[0] else {
        panic!("a table")
    };
    assert_eq!(by_request.rows[0][2], Cell::Count(200));
    assert!(matches!(by_request.rows[0][4], Cell::Duration(_)));
}

#[test]
fn a_partial_run_says_so_first_and_fails_its_check() {
    let doc = build(&summary(&["p99 < 1s"], false), Extras::default());
    assert!(
        doc.answer.notes[0].starts_with("PARTIAL RUN: the run did not finish"),
        "{:?}",
        doc.answer.notes
    );
    let names: Vec<&str> = doc.checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "p99 < 1s",
            "requests succeeded",
            "the generator kept up",
            "the run completed"
        ]
    );
    assert!(doc.checks[0].failure.is_none());
    let completed = doc.checks[3]
        .failure
        .as_ref()
        .expect("a partial run fails it");
    assert_eq!(completed.kind, "partial run");
    assert!(doc.checks[1].failure.is_none() && doc.checks[2].failure.is_none());
}

#[test]
fn options_and_figures_only_when_given_and_the_run_id_as_a_property() {
    let s = summary(&[], true);
    let bare = build(&s, Extras::default());
    assert!(bare.sections.iter().all(|x| x.id != "options"));
    assert!(bare.figures.shown.is_empty() && bare.figures.left_out.is_empty());
    assert!(bare.properties.iter().all(|(k, _)| k != "run_id"));
    let full = build(
        &s,
        Extras {
            figures: Some(plot::Figures {
                shown: Vec::new(),
                left_out: vec![plot::LeftOut {
                    title: "Latency over time (per second)".into(),
                    why: plot::Why::NoneAnswered,
                }],
            }),
            options: Some(serde_json::json!({"connection": {"keep_alive": true}})),
            run_id: Some("20260101T000000-attack"),
        },
    );
    let options = full.sections.iter().find(|x| x.id == "options").unwrap();
    assert_eq!(options.title, "Options");
    assert!(full.figures.left_out[0].starts_with("Latency over time (per second): "));
    assert_eq!(
        full.properties[0],
        ("run_id".into(), "20260101T000000-attack".into())
    );
    // The JSON writer's data is the summary itself.
    assert_eq!(full.data["requests"]["total"], 200);
}

#[test]
fn an_aborted_run_says_which_condition_held_and_when_and_fails_its_check() {
    let mut s = summary(&[], true);
    // Watched, not aborted: a passing check.
    s.abort_when = vec!["errors > 50% for 2s".into()];
    let doc = build(&s, Extras::default());
    let check = doc
        .checks
        .iter()
        .find(|c| c.name == "no abort condition held")
        .expect("a run watched by --abort-when has the check");
    assert!(check.failure.is_none());
    assert!(doc.answer.notes.iter().all(|n| !n.contains("ABORTED")));
    s.aborted = Some(crate::store::Aborted {
        condition: "errors > 50% for 2s".into(),
        window_secs: 2,
        from_second: 7,
        held_secs: 2,
        at_second: 9,
        last: "100.00%".into(),
    });
    let doc = build(&s, Extras::default());
    let said = "aborted at second 9: \"errors > 50% for 2s\" held for 2 s (from second 7; 100.00% in its last second)";
    assert!(
        doc.answer
            .notes
            .iter()
            .any(|n| n.starts_with(&format!("ABORTED: {said}"))),
        "{:?}",
        doc.answer.notes
    );
    let failure = doc
        .checks
        .iter()
        .find(|c| c.name == "no abort condition held")
        .and_then(|c| c.failure.as_ref())
        .expect("an aborted run fails it");
    assert_eq!(
        (failure.kind.as_str(), failure.message.as_str()),
        ("aborted", said)
    );
    // Every format says it in its answer; JSON has it typed, in the answer too.
    for format in [crate::report::Format::Text, crate::report::Format::Markdown] {
        let out = crate::report::write(&doc, format).unwrap();
        assert!(out.contains("aborted at second 9"), "{format:?}: {out}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&crate::report::write(&doc, crate::report::Format::Json).unwrap())
            .unwrap();
    assert_eq!(json["aborted"]["at_second"], 9);
    assert_eq!(json["answer"]["aborted"]["from_second"], 7);
    assert_eq!(
        json["answer"]["aborted"]["condition"],
        "errors > 50% for 2s"
    );
    // A run without conditions has no such check.
    let doc = build(&summary(&[], true), Extras::default());
    assert!(doc
        .checks
        .iter()
        .all(|c| c.name != "no abort condition held"));
}
