//! Rendered reports against golden files, from a stored run with known samples.
//! Set UPDATE_GOLDEN=1 to rewrite the golden files after an intended change.

use crate::support::golden::check as check_golden;
use crate::support::open_plan;
use headroom::monitor::{CpuTime, Health};
use headroom::record::IntervalRecord;
use headroom::report::{render_json, render_text};
use headroom::sample::{ErrorKind, Outcome, Sample};
use headroom::store::{EndStatus, IntervalLine, RunDir, RunEnd, RunMeta};
use headroom::summary::Summary;
use std::path::Path;
use std::time::Duration;

fn sample(outcome: Outcome, latency_us: u64, lag_us: u64) -> Sample {
    Sample {
        outcome,
        latency: Duration::from_micros(latency_us + lag_us),
        service: Duration::from_micros(latency_us),
        lag: Duration::from_micros(lag_us),
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

/// Two seconds at 100 req/s: mostly fast 200s, a slow tail, some 503s and resets.
fn stored_run(dir: &Path, complete: bool) -> RunDir {
    let plan = open_plan("http://127.0.0.1:8080/status", 100.0, 200);
    let mut meta = RunMeta::describe(
        &plan,
        &["headroom".into(), "attack".into()],
        Some(1024),
        "HTTP/1.1",
        &[],
    );
    meta.host = "golden".into();
    meta.started_at = "2026-11-21T00:00:00.000Z".into();
    let run = RunDir::at(dir.join("run"));
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
            let mut s = sample(outcome, 1_000 + i * 37 + index * 500, i % 7);
            if i == 0 {
                s.connect = Some(Duration::from_micros(150));
            }
            record.record(&s);
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
            peak_rss_bytes: Some(6 * 1024 * 1024),
            reason: None,
        })
        .unwrap();
    }
    run
}

#[test]
fn the_text_report_matches_its_golden_file() {
    let dir = tempfile::tempdir().unwrap();
    let run = stored_run(dir.path(), true);
    let summary = Summary::of(&crate::support::counts::check_dir(run.path()));
    check_golden("attack-report.txt", &render_text(&summary));
}

#[test]
fn a_partial_run_says_so_in_text_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let run = stored_run(dir.path(), false);
    let summary = Summary::of(&crate::support::counts::check_dir(run.path()));
    check_golden("partial-report.txt", &render_text(&summary));
    let json: serde_json::Value = serde_json::from_str(&render_json(&summary)).unwrap();
    assert_eq!(json["requests"]["total"], 200);
    assert!(json["partial"].as_str().unwrap().contains("did not finish"));
    assert_eq!(json["status_codes"]["503"], 14);
    let timeline = json["timeline"].as_array().unwrap();
    assert_eq!(timeline.len(), 2);
    assert_eq!(
        (timeline[1]["index"].as_u64(), timeline[1]["sent"].as_u64()),
        (Some(1), Some(100))
    );
    assert_eq!(timeline[1]["failed"], 10);
    let reset = json["errors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["key"] == "reset")
        .unwrap();
    assert_eq!(
        (reset["count"].as_u64(), reset["side"].as_str()),
        (Some(6), Some("server"))
    );
}
