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
    stored_run_held_to(dir, complete, &[])
}

/// The run, held to `objectives`.
fn stored_run_held_to(dir: &Path, complete: bool, objectives: &[&str]) -> RunDir {
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
    meta.slo = objectives.iter().map(|o| o.to_string()).collect();
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
            aborted: None,
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

#[test]
fn the_text_report_leads_with_the_verdict_and_the_numbers_however_many_objectives() {
    let dir = tempfile::tempdir().unwrap();
    // Eleven objectives: the verdict and the headline numbers still come first.
    let objectives = [
        "p50 < 10ms",
        "p90 < 10ms",
        "p95 < 10ms",
        "p99 < 4ms",
        "p99.9 < 10ms",
        "mean < 10ms",
        "max < 10ms",
        "error_rate < 1%",
        "error_rate < 50%",
        "rps > 10",
        "rps > 1000",
    ];
    let run = stored_run_held_to(dir.path(), true, &objectives);
    let summary = Summary::of(&crate::support::counts::check_dir(run.path()));
    let text = render_text(&summary);
    let first: Vec<&str> = text.lines().take(12).collect();
    assert_eq!(
        first[0],
        "GET http://127.0.0.1:8080/status  (open model, 100 req/s, HTTP/1.1, started 2026-11-21T00:00:00.000Z)"
    );
    assert_eq!(first[1], "the server was the limit:", "{text}");
    let numbers = first
        .iter()
        .position(|l| {
            l.starts_with("requests 200 · throughput 90.27/s · success 90.00% · p50 2.889ms (")
        })
        .unwrap_or_else(|| panic!("no headline numbers in the first 12 lines:\n{text}"));
    // Then every objective, each with its verdict and its typed measure in words.
    let listed: Vec<&str> = text
        .lines()
        .skip(numbers + 1)
        .take(objectives.len())
        .collect();
    assert!(listed[3].starts_with("  NOT MET  p99 < 4ms "), "{text}");
    assert!(
        listed[3].contains("measured 4.763ms (95% CI ≥4.608ms)"),
        "{text}"
    );
    assert!(
        listed[7].starts_with("  NOT MET  error_rate < 1% "),
        "{text}"
    );
    assert!(listed[7].contains("measured 10.00% (95% CI "), "{text}");
    // Throughput, as the headline counts it: the answers that succeeded.
    assert!(listed[9].contains("measured 90.3 req/s"), "{text}");
    // vegeta's block follows, as vegeta lays it out.
    let target = text
        .lines()
        .position(|l| l.starts_with("Target  "))
        .unwrap();
    assert_eq!(target, numbers + 1 + objectives.len(), "{text}");
}

#[test]
fn the_json_answer_and_objectives_keep_numbers_with_their_units() {
    let dir = tempfile::tempdir().unwrap();
    let run = stored_run_held_to(dir.path(), true, &["p99 < 4ms", "error_rate < 20%"]);
    let summary = Summary::of(&crate::support::counts::check_dir(run.path()));
    let json: serde_json::Value = serde_json::from_str(&render_json(&summary)).unwrap();
    // The objective as judged: the words, and the number with its unit.
    assert_eq!(json["slo"][0]["measured"], "4.763ms");
    assert_eq!(json["slo"][0]["value"]["value"], 4763.0);
    assert_eq!(json["slo"][0]["value"]["unit"], "micros");
    assert_eq!(json["slo"][1]["value"]["unit"], "ratio");
    // The answer: typed cells, never words to parse.
    let answer = &json["answer"];
    assert_eq!(answer["verdict"]["sentence"], "the server was the limit:");
    assert_eq!(answer["objectives"][0]["met"], false);
    assert_eq!(answer["objectives"][0]["measured"]["value"], 4.763);
    assert_eq!(answer["objectives"][0]["measured"]["unit"], "ms");
    assert_eq!(answer["objectives"][1]["measured"]["unit"], "%");
    assert_eq!(answer["objectives"][1]["met"], true);
    let p99 = answer["numbers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["label"] == "p99")
        .unwrap();
    assert_eq!(p99["value"]["value"], 4.763);
    assert_eq!(p99["value"]["unit"], "ms");
    // A summary written before the value was kept still reads (its words only).
    let mut old = json.clone();
    old["slo"][0].as_object_mut().unwrap().remove("value");
    let back: Summary = serde_json::from_value(old).unwrap();
    assert!(back.slo[0].value.is_none());
    assert_eq!(back.slo[0].measured, "4.763ms");
}

/// A sweep of `url` at 20 then 40 req/s, 1 s steps each after a 1 s warm-up, kept in `out`.
fn sweep_with_warm_ups(url: &str, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "sweep",
        url,
        "--rate",
        "20,40",
        "--step-duration",
        "1s",
        "--warmup",
        "1s",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    crate::support::headroom(&args)
}

/// A sweep warms up each step: its warm-ups are not steps (the progress line numbers the
/// steps as the report does), and the report does not say they came first.
#[test]
fn a_sweeps_warm_ups_are_named_for_their_steps_and_not_said_to_come_first() {
    let target = crate::support::start_target(Duration::from_millis(1));
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://{}/", target.addr());
    let o = sweep_with_warm_ups(&url, &dir.path().join("run"), &[]);
    let (text, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{err}");
    assert!(
        text.contains("Warm-up: the requests sent in its 2 warm-up stages (2.000s in all, each before the step it warms up)"),
        "{text}"
    );
    assert!(!text.contains("in the first 2.000s"), "{text}");
    // The last progress line is the last step's (or its drain's), numbered of 2.
    let last = err.lines().rfind(|l| l.starts_with('[')).unwrap();
    assert!(last.contains(" step 2/2 "), "{err}");
}

/// A 401 wall in a sweep with warm-ups: "nothing succeeded" counts the measured requests,
/// as the headline beside it does, never the warm-ups' failures with them.
#[test]
fn nothing_succeeded_counts_the_measured_requests_as_the_headline_does() {
    let target = crate::support::start_target(Duration::from_millis(1));
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://{}/status/401", target.addr());
    let o = sweep_with_warm_ups(&url, &dir.path().join("run"), &["-q", "--format", "json"]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["verdict"]["limit"], "nothing_succeeded",
        "{}",
        v["verdict"]
    );
    let said = v["verdict"]["findings"][0]["completed"].as_u64().unwrap();
    assert_eq!(
        said,
        v["requests"]["total"].as_u64().unwrap(),
        "{}",
        v["verdict"]
    );
    assert!(v["warmup_secs"].as_f64().unwrap() > 0.0);
    // The sweep stopped after its first step (nothing succeeds): it was asked what its
    // plan sends in the seconds it ran (about 27 req/s with the warm-ups), which it sent,
    // not the plan's mean over the steps it never reached (40 req/s).
    assert!(!v["stopped_early"].is_null(), "{}", v["stopped_early"]);
    let asked = v["generator"]["rate_asked"].as_f64().unwrap();
    let held = v["generator"]["rate_held"].as_f64().unwrap();
    assert!(
        (asked - held).abs() <= asked * 0.1,
        "asked {asked}, held {held}"
    );
}
