//! Breakdowns: the Failures table, status codes and the Error Set per step and per request,
//! the request × stage table, flows and logins in rows of their own, and `compare` per step
//! and per request. Golden files come from stored runs built sample by sample; runs against
//! the built-in target check what a user sees, with counts that do not depend on timing.
//! Set UPDATE_GOLDEN=1 to rewrite the golden files after an intended change.

use crate::support::golden::check as check_golden;
use crate::support::{attack, headroom, start_target};
use headroom::monitor::{CpuTime, Health};
use headroom::plan::scenario;
use headroom::record::IntervalRecord;
use headroom::report::build::compare::Compared;
use headroom::report::{plot, render_json, render_markdown, render_text, Format};
use headroom::sample::{ErrorKind, Iteration, Outcome, Sample};
use headroom::store::{EndStatus, IntervalLine, RunDir, RunEnd, RunMeta};
use headroom::summary::{Reason, Summary};
use std::path::Path;
use std::time::Duration;

const FIXTURE: &str = r#"
target: {url: "http://127.0.0.1:8080"}
requests:
  - {name: login, method: POST, path: /login, capture: {token: {header: x-token}}}
  - {name: create key, method: POST, path: /keys, expect: {status: [201]}}
  - {name: read key, path: /keys/1, expect: {body: active}}
flows:
  - {name: lifecycle, steps: [create key, read key]}
login: {request: login}
load:
  stages:
    - {name: warm, users: 1, duration: 1s, warmup: true}
    - {name: 10 users, users: 10, duration: 1s}
    - {name: 30 users, users: 30, duration: 1s}
"#;

fn sample(request: u16, stage: u16, outcome: Outcome, expected: bool, us: u64) -> Sample {
    Sample {
        outcome,
        latency: Duration::from_micros(us),
        service: Duration::from_micros(us),
        lag: Duration::ZERO,
        connect: None,
        tls_handshake: None,
        first_byte: Some(Duration::from_micros(us / 2)),
        bytes_in: 20,
        bytes_out: 10,
        retried: false,
        request,
        stage: Some(stage),
        expected,
        iteration: None,
    }
}

fn ended(s: Sample, stage: u16, took_us: u64, ok: bool) -> Sample {
    s.ending(Iteration {
        flow: 0,
        stage: Some(stage),
        took: Duration::from_micros(took_us),
        ok,
    })
}

/// Three one-second stages (a warm-up, then 10 and 30 users), one per interval: a login
/// in the warm-up and in the last stage; 20 iterations of create-then-read per stage, some
/// answered with a status `create key` does not expect (409, 503), some reads answered 200
/// without the body they expect, one reset. Latency grows with the stage (`slower` µs per
/// stage more).
fn stored_run(dir: &Path, slower: u64) -> RunDir {
    let plan = scenario::parse(FIXTURE, Path::new("fixture.yaml"), 1).unwrap();
    let mut meta = RunMeta::describe(
        &plan,
        &["headroom".into(), "run".into(), "fixture.yaml".into()],
        Some(1024),
        "HTTP/1.1",
        &[],
    );
    meta.host = "golden".into();
    meta.started_at = "2026-11-21T00:00:00.000Z".into();
    let run = RunDir::at(dir.join("run"));
    let mut writer = run.create(&meta).unwrap();
    for stage in 0..3u16 {
        let i = u64::from(stage);
        let mut record = IntervalRecord::new(i);
        let mut add = |s: &Sample, at_ms: u64| {
            record.sent += 1;
            record.sent_for(stage);
            record.scheduled += 1;
            record.record(s);
            record.record_step(stage, s, Duration::from_millis(1000 * i + at_ms));
        };
        if stage != 1 {
            let login = sample(0, stage, Outcome::Status(200), true, 3_000 + i * slower);
            add(&login, 5);
        }
        for k in 0..20u64 {
            let create_us = 2_000 + 100 * k + i * slower;
            let status = match k {
                4 if stage == 2 => 503,
                9 | 19 => 409,
                _ => 201,
            };
            let created = status == 201;
            let create = sample(1, stage, Outcome::Status(status), created, create_us);
            let create = if created {
                create
            } else {
                ended(create, stage, create_us, false)
            };
            add(&create, 10 + 40 * k);
            if !created {
                continue;
            }
            let read_us = 1_000 + 50 * k + i * slower / 2;
            let (outcome, ok) = match k {
                3 | 10 => (Outcome::Status(200), false),
                6 => (Outcome::Error(ErrorKind::Reset), false),
                _ => (Outcome::Status(200), true),
            };
            let read = sample(2, stage, outcome, ok, read_us);
            add(
                &ended(read, stage, create_us + read_us + 1_000, ok),
                30 + 40 * k,
            );
        }
        let health = Health {
            cpu: CpuTime {
                total: Duration::from_millis(10),
                ..CpuTime::default()
            },
            open_fds: 40,
        };
        writer
            .append(&IntervalLine {
                record,
                health,
                stage: Some(stage),
                server: None,
                shards: Vec::new(),
            })
            .unwrap();
    }
    run.finish(&RunEnd {
        status: EndStatus::Completed,
        ended_at: "2026-11-21T00:00:03.000Z".into(),
        ended_unix: None,
        attack_secs: 3.0,
        wait_secs: 0.002,
        cpu: CpuTime {
            total: Duration::from_millis(30),
            ..CpuTime::default()
        },
        peak_open_fds: 40,
        peak_rss_bytes: Some(8 * 1024 * 1024),
        reason: None,
        aborted: None,
    })
    .unwrap();
    run
}

#[test]
fn the_breakdown_tables_match_their_golden_files() {
    let dir = tempfile::tempdir().unwrap();
    let run = stored_run(dir.path(), 1_000);
    let summary = Summary::of(&crate::support::counts::check_dir(run.path()));
    check_golden("breakdowns-report.txt", &render_text(&summary));
    check_golden("breakdowns-report.md", &render_markdown(&summary));
}

#[test]
fn failures_have_reasons_and_each_step_its_status_codes_and_error_set() {
    let dir = tempfile::tempdir().unwrap();
    let stored = crate::support::counts::check_dir(stored_run(dir.path(), 1_000).path());
    let summary = Summary::of(&stored);
    // Measured stages only (the warm-up is left out): per stage 20 creates, 2 (3 in the
    // last) answered 409/503, and of the reads 2 without their body and 1 reset.
    let failures: Vec<(&str, Reason, u64)> = summary
        .failures
        .iter()
        .map(|f| (f.request.as_str(), f.reason, f.count))
        .collect();
    assert_eq!(
        failures,
        [
            ("create key", Reason::Status { code: 409 }, 4),
            ("read key", Reason::Expectation { code: 200 }, 4),
            (
                "read key",
                Reason::Error {
                    error: headroom::record::ErrorKindKey(ErrorKind::Reset)
                },
                2
            ),
            ("create key", Reason::Status { code: 503 }, 1),
        ]
    );
    let set: Vec<(&str, u64)> = summary
        .errors
        .iter()
        .map(|e| (e.key.as_str(), e.count))
        .collect();
    assert_eq!(
        set,
        [
            ("expectation_failed", 4),
            ("status_409", 4),
            ("reset", 2),
            ("status_503", 1)
        ]
    );
    let last = &summary.stages[2];
    assert_eq!(
        last.status_codes
            .iter()
            .map(|(c, n)| (*c, *n))
            .collect::<Vec<_>>(),
        [(200, 17), (201, 17), (409, 2), (503, 1)]
    );
    let rows: Vec<(&str, u64, u64)> = last
        .requests
        .iter()
        .map(|r| (r.name.as_str(), r.count, r.failures))
        .collect();
    assert_eq!(
        rows,
        [("login", 1, 0), ("create key", 20, 3), ("read key", 17, 3)]
    );
    // Logins in a row of their own, the warm-up's (where connections open) said beside the
    // measured ones, as every row leaves the warm-up out.
    let login = &summary.by_request[0];
    assert!(login.login && !summary.by_request[1].login);
    assert_eq!((login.count, login.warmup_logins), (1, 1));
    assert_eq!(summary.by_request[1].method, "POST");
    // Flows in rows of their own: 20 iterations a stage, those that failed at either step.
    let flow = &summary.flows[0];
    assert_eq!((flow.count, flow.failures), (40, 11));
    let warm = &summary.stages[0].flows[0];
    assert_eq!((warm.count, warm.failures), (20, 5));
    // The JSON carries the same.
    let json: serde_json::Value = serde_json::from_str(&render_json(&summary)).unwrap();
    assert_eq!(json["failures"][0]["reason"]["kind"], "status");
    assert_eq!(json["failures"][2]["reason"]["error"], "reset");
    assert_eq!(json["stages"][2]["status_codes"]["503"], 1);
    assert_eq!(
        json["stages"][2]["error_set"][0]["key"],
        "expectation_failed"
    );
    assert_eq!(json["stages"][1]["requests"][1]["status_codes"]["409"], 2);
    assert_eq!(json["flows"][0]["name"], "lifecycle");
    assert_eq!(json["by_request"][0]["login"], true);
    // The HTML report has the tables too.
    let figures = plot::for_run(&plot::RunView {
        label: "all requests".into(),
        run: &stored,
        summary: &summary,
        scatter: None,
    });
    let html = headroom::report::render_run(
        &summary,
        Format::Html,
        headroom::report::Extras {
            figures: Some(figures),
            ..Default::default()
        },
    )
    .unwrap();
    for table in [
        "Failures",
        "Flows",
        "Status codes by request",
        "Requests by stage",
        "Steps",
    ] {
        assert!(html.contains(&format!("<h2>{table}</h2>\n")), "{table}");
    }
    // Each step with its status codes and Error Set.
    assert!(
        html.contains("<h3>Step 1 of 2: 10 users, 1.000s</h3>"),
        "{html}"
    );
    assert!(html.contains(">HTTP 200, body without what it expects (expect: body/json)</td>"));
}

#[test]
fn a_run_stored_before_the_breakdowns_still_renders() {
    let dir = tempfile::tempdir().unwrap();
    let run = stored_run(dir.path(), 1_000);
    // Take out what older versions did not record: statuses, errors and unmet answers per
    // request, requests and flows per step, flows, the login mark.
    let log = dir.path().join("run/intervals.jsonl");
    let old: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|line| {
            let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
            let r = &mut v["record"];
            for q in r["requests"].as_array_mut().unwrap() {
                for k in ["status", "errors", "unmet"] {
                    q.as_object_mut().unwrap().remove(k);
                }
            }
            for (_, step) in r["steps"].as_object_mut().unwrap() {
                step.as_object_mut().unwrap().remove("requests");
                step.as_object_mut().unwrap().remove("flows");
            }
            r.as_object_mut().unwrap().remove("flows");
            v.to_string()
        })
        .collect();
    std::fs::write(&log, old.join("\n") + "\n").unwrap();
    let summary = Summary::of(&crate::support::counts::check_dir(run.path()));
    assert!(summary.failures.is_empty() && summary.flows.is_empty());
    assert!(summary.stages.iter().all(|s| s.status_codes.is_empty()));
    let text = render_text(&summary);
    assert!(
        text.contains("Requests by name:") && text.contains("Steps:"),
        "{text}"
    );
    assert!(!text.contains("Requests by stage:"), "{text}");
    render_markdown(&summary);
}

#[test]
fn compare_puts_runs_side_by_side_per_step_and_per_request() {
    let dir = tempfile::tempdir().unwrap();
    let stored: Vec<_> = [0, 5_000]
        .iter()
        .enumerate()
        .map(|(i, &slower)| {
            let sub = dir.path().join(i.to_string());
            std::fs::create_dir(&sub).unwrap();
            crate::support::counts::check_dir(stored_run(&sub, slower).path())
        })
        .collect();
    let summaries: Vec<Summary> = stored.iter().map(Summary::of).collect();
    let views: Vec<plot::RunView<'_>> = stored
        .iter()
        .zip(&summaries)
        .zip(["flat", "slower"])
        .map(|((run, summary), label)| plot::RunView {
            label: label.into(),
            run,
            summary,
            scatter: None,
        })
        .collect();
    let runs: Vec<Compared<'_>> = views
        .iter()
        .map(|v| Compared {
            label: &v.label,
            summary: v.summary,
        })
        .collect();
    let figures = plot::for_comparison(&views);
    // Two steps each: a small figure per measure, a line per run.
    let multiples: Vec<&str> = figures
        .shown
        .iter()
        .filter(|f| f.name.starts_with("compare-step-"))
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(
        multiples,
        [
            "compare-step-p50",
            "compare-step-p99",
            "compare-step-throughput",
            "compare-step-errors"
        ]
    );
    for f in figures
        .shown
        .iter()
        .filter(|f| f.name.starts_with("compare-step-"))
    {
        assert!(f.distinct, "{}: runs told apart by dash and marker", f.name);
        assert_eq!(f.series.len(), 2, "{}", f.name);
        assert!(f.series.iter().all(|s| s.points.len() == 2), "{}", f.name);
    }
    let text = headroom::report::compare(&runs, figures.clone(), Format::Text).unwrap();
    check_golden("breakdowns-compare.txt", &text);
    // The answer first: which run was slower, beyond noise, and which side limited each,
    // within the first 12 lines.
    let head: Vec<&str> = text.lines().take(12).collect();
    assert!(
        head[1].starts_with(
            "slower against flat: slower in median latency (3.5×, beyond noise) and no clear \
             difference in p99 latency (within noise)"
        ),
        "{text}"
    );
    assert!(
        head.iter()
            .any(|l| l.starts_with("  - flat: the server was the limit")),
        "{text}"
    );
    check_golden(
        "breakdowns-compare.md",
        &headroom::report::compare(&runs, figures, Format::Markdown).unwrap(),
    );
}

/// A scenario against the built-in target whose expectations fail: a 404 the request does
/// not expect, a body without what it expects, and flows that fail at their second step.
const FAILING: &str = r#"
target: {url: "URL", http: HTTP}
requests:
  - {name: fine, path: /}
  - {name: missing, path: /status/404}
  - {name: wrong body, path: /bytes/10, expect: {body: "not in it"}}
flows:
  - {name: good, steps: [fine, fine]}
  - {name: lost, steps: [fine, missing]}
  - {name: misread, steps: [fine, wrong body]}
load: {users: 1, requests: 30}
"#;

#[test]
fn failed_expectations_fill_the_failures_table_and_the_error_set() {
    let target = start_target(Duration::ZERO);
    // Both drivers: the flows' iterations are judged where answers are, the same for both.
    for http in ["http1", "http2"] {
        let source = FAILING
            .replace("URL", &format!("http://{}/", target.addr()))
            .replace("HTTP", http);
        let plan = scenario::parse(&source, Path::new("failing.yaml"), 1).unwrap();
        let (summary, _, _dir) = attack(&plan);
        assert_eq!(
            summary.protocol,
            if http == "http1" {
                "HTTP/1.1"
            } else {
                "HTTP/2"
            }
        );
        check_failing(&summary);
    }
}

fn check_failing(summary: &Summary) {
    // 30 iterations, 10 of each flow: 40 answers to `fine`, 10 of each other.
    assert_eq!(summary.requests.total, 60);
    assert!((summary.success_ratio - 40.0 / 60.0).abs() < 1e-9);
    let set: Vec<(&str, u64)> = summary
        .errors
        .iter()
        .map(|e| (e.key.as_str(), e.count))
        .collect();
    assert_eq!(set, [("expectation_failed", 10), ("status_404", 10)]);
    let flows: Vec<(&str, u64, u64)> = summary
        .flows
        .iter()
        .map(|f| (f.name.as_str(), f.count, f.failures))
        .collect();
    assert_eq!(
        flows,
        [("good", 10, 0), ("lost", 10, 10), ("misread", 10, 10)]
    );
    assert_eq!(summary.flows[0].took.count, 10);
    let text = render_text(summary);
    let failures: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "Failures:")
        .skip(2)
        .take(2)
        .collect();
    assert!(
        failures[0].contains("missing") && failures[0].contains("HTTP 404 (not expected)"),
        "{text}"
    );
    assert!(
        failures[1].contains("wrong body") && failures[1].contains("HTTP 200, body without"),
        "{text}"
    );
    assert!(text.contains("Status codes by request:"), "{text}");
    assert!(
        text.contains("server expectation_failed          10"),
        "{text}"
    );
}

#[test]
fn a_sweep_gives_each_step_its_status_codes_and_compare_lines_them_up() {
    let target = start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let scenario_path = dir.path().join("mix.yaml");
    std::fs::write(
        &scenario_path,
        format!(
            "target: {{url: \"http://{}/\"}}\nrequests:\n  - {{name: ok, path: /}}\n  - {{name: busy, path: /status/503}}\nload: {{users: 1, requests: 1}}\n",
            target.addr()
        ),
    )
    .unwrap();
    let mut runs = Vec::new();
    for name in ["a", "b"] {
        let out = dir.path().join(name);
        let o = headroom(&[
            "sweep",
            "--scenario",
            scenario_path.to_str().unwrap(),
            "--concurrency",
            "1,2",
            "--step-requests",
            "20",
            "-q",
            "--out",
            out.to_str().unwrap(),
        ]);
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(
            o.status.success(),
            "{text}\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        // Each step is its own vegeta block, with its status codes and Error Set.
        let blocks: Vec<&str> = text
            .lines()
            .filter(|l| l.trim_start().starts_with("Status Codes"))
            .collect();
        assert_eq!(blocks.len(), 3, "the run's line and one per step\n{text}");
        for line in &blocks[1..] {
            assert!(line.ends_with("200:10  503:10"), "{line}\n{text}");
        }
        assert!(
            text.contains("      server status_503                  10  HTTP 503 from the server"),
            "{text}"
        );
        runs.push(out);
    }
    let o = headroom(&[
        "compare",
        runs[0].to_str().unwrap(),
        runs[1].to_str().unwrap(),
    ]);
    let table = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{table}");
    let by_step = table.split("By step:\n").nth(1).expect("a by-step table");
    let codes: Vec<&str> = by_step
        .lines()
        .filter(|l| l.contains("status codes"))
        .collect();
    assert_eq!(codes.len(), 2, "{table}");
    for line in codes {
        assert_eq!(line.matches("200:10  503:10").count(), 2, "{line}");
    }
    let by_request = table
        .split("By request:\n")
        .nth(1)
        .expect("a by-request table");
    let busy = by_request
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("busy"))
        .find(|l| l.contains("fails"))
        .unwrap();
    assert_eq!(busy.matches("20 (100.00%)").count(), 2, "{busy}");
}
