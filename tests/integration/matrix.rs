//! A matrix of variants from one command: one stored run per variant, one table whose rows
//! are the variants, re-rendered from the matrix directory; and a stopped matrix keeping
//! what it ran. The table's layout is checked against golden files from a fixed fixture.

use super::overrides::scenario;
use crate::support::{headroom, stderr, stdout};
use serde_json::Value as Json;
use std::path::Path;
use std::time::Duration;

#[test]
fn command_line_axes_give_one_run_per_variant_and_one_table() {
    let server = crate::support::start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), &format!("http://{}", server.addr()));
    let out = dir.path().join("matrix");
    let o = headroom(&[
        "run",
        s.to_str().unwrap(),
        "-q",
        "--format",
        "json",
        "--rate",
        "100",
        "--matrix",
        "load.requests=3,5",
        "--matrix",
        "requests.write.weight=1,4",
        "--raw",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table: Json = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        table["columns"],
        serde_json::json!(["load.requests", "requests.write.weight"])
    );
    let rows = table["rows"].as_array().unwrap();
    let cells: Vec<(String, u64)> = rows
        .iter()
        .map(|r| {
            let c: Vec<&str> = r["cells"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap())
                .collect();
            (c.join("/"), r["requests"].as_u64().unwrap())
        })
        .collect();
    assert_eq!(
        cells,
        [
            ("3/1".into(), 3),
            ("3/4".into(), 3),
            ("5/1".into(), 5),
            ("5/4".into(), 5)
        ]
    );
    // Each variant is a normal stored run with its values, which `report` renders.
    for (r, weight) in rows.iter().zip([1, 4, 1, 4]) {
        let run = out.join(r["run"].as_str().unwrap());
        let meta: Json =
            serde_json::from_str(&std::fs::read_to_string(run.join("meta.json")).unwrap()).unwrap();
        assert_eq!(meta["requests"][1]["weight"], weight);
        assert!(run.join("end.json").exists());
        let one = headroom(&["report", run.to_str().unwrap()]);
        assert!(one.status.success(), "{}", stderr(&one));
        // --raw keeps each variant's requests, one record each.
        let csv = headroom(&["export", run.to_str().unwrap(), "--format", "csv"]);
        assert!(csv.status.success(), "{}", stderr(&csv));
        let records = stdout(&csv).lines().count() - 1;
        assert_eq!(Some(records as u64), r["requests"].as_u64());
    }
    // Two requests: a table per request, its rows the variants.
    let by_request: Vec<&str> = table["by_request"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["request"].as_str().unwrap())
        .collect();
    assert_eq!(by_request, ["read", "write"]);
    // The stored matrix re-renders to the same table, in every format.
    let again = headroom(&["report", out.to_str().unwrap(), "--format", "json"]);
    assert_eq!(stdout(&again), stdout(&o));
    let text = headroom(&["report", out.to_str().unwrap()]);
    assert!(text.status.success(), "{}", stderr(&text));
    assert_eq!(
        stdout(&text)
            .lines()
            .map(str::trim_start)
            .filter(|l| l.starts_with("3 ") || l.starts_with("5 "))
            .count(),
        12
    );
    let html = headroom(&["report", out.to_str().unwrap(), "--format", "html"]);
    assert!(stdout(&html).contains("<h2>Request write</h2>"));
    assert!(out.join("report.html").exists());
}

#[test]
fn a_matrix_section_gives_labelled_sets_of_variants() {
    let server = crate::support::start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), &format!("http://{}", server.addr()));
    let mut text = std::fs::read_to_string(&s).unwrap();
    text.push_str(
        "matrix:\n  headings:\n    requests.read.weight: reads %\n  sets:\n    - labels: {category: Read Heavy}\n      set:\n        requests.read.weight: 9\n      vary:\n        load.requests: [2, 4]\n    - labels: {category: Even}\n      set:\n        requests.read.weight: 1\n        load.requests: 6\n",
    );
    std::fs::write(&s, text).unwrap();
    let out = dir.path().join("matrix");
    let o = headroom(&[
        "run",
        s.to_str().unwrap(),
        "-q",
        "--format",
        "markdown",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = stdout(&o);
    assert!(
        md.contains("| category | reads % | load.requests | requests |"),
        "{md}"
    );
    let rows: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("| Read Heavy") || l.starts_with("| Even"))
        .collect();
    assert!(rows[0].starts_with("| Read Heavy | 9 | 2 | 2 |"), "{md}");
    assert!(rows[1].starts_with("| Read Heavy | 9 | 4 | 4 |"), "{md}");
    assert!(rows[2].starts_with("| Even | 1 | 6 | 6 |"), "{md}");
    let dirs = std::fs::read_dir(&out)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().is_dir())
        .count();
    assert_eq!(dirs, 3);
    let again = headroom(&["report", out.to_str().unwrap(), "--format", "markdown"]);
    assert_eq!(stdout(&again), md);
}

#[test]
fn a_stopped_matrix_keeps_the_variants_it_ran() {
    use rustix::process::{kill_process, Pid, Signal};
    let server = crate::support::start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), &format!("http://{}", server.addr()));
    let out = dir.path().join("matrix");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args([
            "run",
            s.to_str().unwrap(),
            "-q",
            "--rate",
            "50",
            "--duration",
            "60s",
        ])
        .args([
            "--set",
            "load.requests=null",
            "--matrix",
            "load.rate=50,60,70",
        ])
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The first variant's first interval on disk: the matrix is under way.
    let first = out.join("01-50").join("intervals.jsonl");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::fs::metadata(&first).map_or(true, |m| m.len() == 0) {
        assert!(
            std::time::Instant::now() < deadline,
            "the matrix never began"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    kill_process(Pid::from_child(&child), Signal::TERM).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("1 variant(s) run, 2 not run"), "{text}");
    assert!(text.contains("01-50 was stopped partway"), "{text}");
    let record: Json =
        serde_json::from_str(&std::fs::read_to_string(out.join("matrix.json")).unwrap()).unwrap();
    let states: Vec<&str> = record["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["interrupted", "pending", "pending"]);
    let again = headroom(&["report", out.to_str().unwrap()]);
    assert_eq!(stdout(&again), text);
}

/// A matrix directory with known samples: two variants of a two-request scenario, the
/// server's process tree watched.
fn fixture(dir: &Path) {
    use headroom::monitor::{CpuTime, Health, TargetHealth, TreeHealth};
    use headroom::record::IntervalRecord;
    use headroom::sample::{Outcome, Sample};
    use headroom::store::matrix::{MatrixColumn, MatrixRecord, VariantEntry, VariantState};
    use headroom::store::{EndStatus, IntervalLine, RunDir, RunEnd, RunMeta};
    let yaml = "target:\n  url: http://127.0.0.1:8080\nrequests:\n  - name: get one\n    path: /one\n  - name: get many\n    path: /many\nload:\n  rate: 100\n  duration: 2s\n";
    let plan = headroom::plan::scenario::parse(yaml, &dir.join("kv.yaml"), 1).unwrap();
    let mut variants = Vec::new();
    for (v, (rate, payload)) in [(100u64, "256B"), (250, "5KB")].into_iter().enumerate() {
        let name = format!("0{}-{rate}-{payload}", v + 1);
        let mut meta = RunMeta::describe(
            &plan,
            &["headroom".into(), "run".into()],
            Some(1024),
            "HTTP/1.1",
            &[],
        );
        meta.host = "golden".into();
        meta.started_at = "2026-11-21T00:00:00.000Z".into();
        let run = RunDir::at(dir.join(&name));
        let mut writer = run.create(&meta).unwrap();
        for index in 0..2u64 {
            let mut record = IntervalRecord::new(index);
            record.sent = rate;
            record.scheduled = rate;
            for i in 0..rate {
                let request = u16::from(i % 4 == 0);
                let us = 2_000 + i * 40 * (v as u64 + 1) + u64::from(request) * 3_000;
                record.record(&Sample {
                    outcome: if i == 7 {
                        Outcome::Status(503)
                    } else {
                        Outcome::Status(200)
                    },
                    latency: Duration::from_micros(us),
                    service: Duration::from_micros(us),
                    lag: Duration::ZERO,
                    connect: None,
                    tls_handshake: None,
                    first_byte: None,
                    bytes_in: 10,
                    bytes_out: 0,
                    retried: false,
                    request,
                    stage: None,
                    expected: i != 7,
                    iteration: None,
                });
            }
            let tree = |pid: u32, name: &str, cpu: f64| TreeHealth {
                pid,
                name: name.into(),
                cpu_percent: cpu,
                processes: 1,
                threads: 4,
            };
            writer
                .append(&IntervalLine {
                    record,
                    health: Health {
                        cpu: CpuTime::default(),
                        open_fds: 12,
                    },
                    stage: None,
                    server: Some(TargetHealth {
                        cpu_percent: 30.0,
                        rss_bytes: 1 << 20,
                        threads: 8,
                        open_fds: Some(20),
                        wall_secs: 1.0,
                        cores: 4,
                        trees: vec![
                            tree(10, "gate", 10.0 * (v as f64 + 1.0)),
                            tree(20, "store", 20.0),
                        ],
                    }),
                    shards: Vec::new(),
                })
                .unwrap();
        }
        run.finish(&RunEnd {
            status: EndStatus::Completed,
            ended_at: "2026-11-21T00:00:02.000Z".into(),
            ended_unix: None,
            attack_secs: 2.0,
            wait_secs: 0.0,
            cpu: CpuTime::default(),
            peak_open_fds: 12,
            peak_rss_bytes: None,
            reason: None,
            aborted: None,
        })
        .unwrap();
        variants.push(VariantEntry {
            run: name,
            cells: vec![rate.to_string(), payload.into()],
            state: VariantState::Completed,
        });
    }
    variants.push(VariantEntry {
        run: "03-250-50KB".into(),
        cells: vec!["250".into(), "50KB".into()],
        state: VariantState::Pending,
    });
    MatrixRecord {
        command: vec!["headroom".into(), "run".into(), "kv.yaml".into()],
        scenario: "kv.yaml".into(),
        columns: vec![
            MatrixColumn {
                key: "load.rate".into(),
                heading: "Req Throughput (rps)".into(),
            },
            MatrixColumn {
                key: "data.kv.generate.value_bytes".into(),
                heading: "Payload size".into(),
            },
        ],
        variants,
    }
    .save(dir)
    .unwrap();
}

#[test]
fn the_matrix_table_matches_its_golden_files() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let table = headroom::summary::matrix::load(dir.path())
        .unwrap()
        .unwrap();
    use headroom::report::{matrix, Format};
    crate::support::golden::check("matrix.txt", &matrix(&table, Format::Text).unwrap());
    crate::support::golden::check("matrix.md", &matrix(&table, Format::Markdown).unwrap());
}

/// Credentials and bodies set or varied from the command line stay out of the table, the
/// variants' directory names and everything stored.
#[test]
fn secrets_set_or_varied_are_never_shown_or_stored() {
    let server = crate::support::start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), &format!("http://{}", server.addr()));
    let out = dir.path().join("matrix");
    let o = headroom(&[
        "run",
        s.to_str().unwrap(),
        "-q",
        "--set",
        "target.headers.X-Api-Key=key-LEAK1",
        "--set=requests.write.body=pw=LEAK2",
        "--set",
        "target.headers.X-Goog-Api-Key=goog-LEAK3",
        "--set",
        "requests.read.path=/?access_token=LEAK4&limit=5",
        "--matrix",
        "target.headers.Authorization=Bearer tok-LEAKA,Bearer tok-LEAKB",
        "--matrix",
        "target.headers.apikey=LEAKC,LEAKD",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let shown = stdout(&o) + &stderr(&o);
    let report = headroom(&["report", out.to_str().unwrap(), "--format", "markdown"]);
    let stored = crate::support::all_text_under(&out);
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for leak in [
        "LEAK1", "LEAK2", "LEAK3", "LEAK4", "LEAKA", "LEAKB", "LEAKC", "LEAKD",
    ] {
        assert!(!shown.contains(leak), "{leak} printed: {shown}");
        assert!(!stored.contains(leak), "{leak} stored");
        assert!(!stdout(&report).contains(leak), "{leak} reported");
        assert!(
            !names.iter().any(|n| n.contains(&leak.to_lowercase())),
            "{names:?}"
        );
    }
    assert!(shown.contains("<redacted>"), "{shown}");
}

/// A damaged or edited matrix record is refused with what is wrong, never trusted to index
/// a table or to lead out of the matrix's directory.
#[test]
fn a_damaged_matrix_record_is_refused() {
    let server = crate::support::start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), &format!("http://{}", server.addr()));
    let out = dir.path().join("matrix");
    let o = headroom(&[
        "run",
        s.to_str().unwrap(),
        "-q",
        "--matrix",
        "load.requests=2,3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let path = out.join("matrix.json");
    let whole: Json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for (field, value, says) in [
        (
            "cells",
            serde_json::json!([]),
            "variant 1: 0 cell(s) for 1 column(s)",
        ),
        (
            "run",
            serde_json::json!("../elsewhere"),
            "is not a directory name in the matrix",
        ),
    ] {
        let mut damaged = whole.clone();
        damaged["variants"][0][field] = value;
        std::fs::write(&path, damaged.to_string()).unwrap();
        let o = headroom(&["report", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
    }
}

/// A variant whose ramp is a warm-up stage is read at the load it held: its row's rate,
/// counts and server CPU leave the ramp out.
#[test]
fn a_variants_warm_up_ramp_is_left_out_of_its_row() {
    use headroom::monitor::{CpuTime, Health, TargetHealth, TreeHealth};
    use headroom::record::IntervalRecord;
    use headroom::sample::{Outcome, Sample};
    use headroom::store::matrix::{MatrixColumn, MatrixRecord, VariantEntry, VariantState};
    use headroom::store::{EndStatus, IntervalLine, RunDir, RunEnd, RunMeta};
    let dir = tempfile::tempdir().unwrap();
    let yaml = "target:\n  url: http://127.0.0.1:8080\nrequests:\n  - name: get\n    path: /\nload:\n  stages:\n    - {name: ramp, rate: [0, 100], duration: 1s, warmup: true}\n    - {name: steady, rate: 100, duration: 2s}\n";
    let plan = headroom::plan::scenario::parse(yaml, &dir.path().join("s.yaml"), 1).unwrap();
    let meta = RunMeta::describe(&plan, &["headroom".into()], Some(1024), "HTTP/1.1", &[]);
    let run = RunDir::at(dir.path().join("01-100"));
    let mut writer = run.create(&meta).unwrap();
    // The ramp: 50 requests, slow, with the server busy warming up.
    for (index, stage, count, us, cpu) in [
        (0u64, 0u16, 50u64, 9_000u64, 90.0),
        (1, 1, 100, 1_000, 10.0),
        (2, 1, 100, 1_000, 10.0),
    ] {
        let mut record = IntervalRecord::new(index);
        record.sent = count;
        record.scheduled = count;
        for _ in 0..count {
            record.record(&Sample {
                outcome: Outcome::Status(200),
                latency: Duration::from_micros(us),
                service: Duration::from_micros(us),
                lag: Duration::ZERO,
                connect: None,
                tls_handshake: None,
                first_byte: None,
                bytes_in: 10,
                bytes_out: 0,
                retried: false,
                request: 0,
                stage: Some(stage),
                expected: true,
                iteration: None,
            });
        }
        writer
            .append(&IntervalLine {
                record,
                health: Health {
                    cpu: CpuTime::default(),
                    open_fds: 12,
                },
                stage: Some(stage),
                server: Some(TargetHealth {
                    cpu_percent: cpu,
                    rss_bytes: 1 << 20,
                    threads: 8,
                    open_fds: Some(20),
                    wall_secs: 1.0,
                    cores: 4,
                    trees: vec![TreeHealth {
                        pid: 10,
                        name: "store".into(),
                        cpu_percent: cpu,
                        processes: 1,
                        threads: 4,
                    }],
                }),
                shards: Vec::new(),
            })
            .unwrap();
    }
    run.finish(&RunEnd {
        status: EndStatus::Completed,
        ended_at: "2026-11-21T00:00:03.000Z".into(),
        ended_unix: None,
        attack_secs: 3.0,
        wait_secs: 0.0,
        cpu: CpuTime::default(),
        peak_open_fds: 12,
        peak_rss_bytes: None,
        reason: None,
        aborted: None,
    })
    .unwrap();
    MatrixRecord {
        command: vec!["headroom".into(), "run".into(), "s.yaml".into()],
        scenario: "s.yaml".into(),
        columns: vec![MatrixColumn {
            key: "load.stages[1].rate".into(),
            heading: "rate".into(),
        }],
        variants: vec![VariantEntry {
            run: "01-100".into(),
            cells: vec!["100".into()],
            state: VariantState::Completed,
        }],
    }
    .save(dir.path())
    .unwrap();
    let table = headroom::summary::matrix::load(dir.path())
        .unwrap()
        .unwrap();
    let row = &table.rows[0];
    assert_eq!(row.requests, 200, "{row:?}");
    assert!((row.rps - 100.0).abs() < 1e-9, "{row:?}");
    assert!(row.latency.max_us < 1_100, "{row:?}");
    assert_eq!(row.server_cpu, vec![Some(10.0)], "{row:?}");
}

/// A matrix runs several plans one after another: `--live`, which follows one run, is
/// refused with what to do instead, before anything is sent, never ignored.
#[test]
fn live_is_refused_for_a_matrix_with_what_to_do_instead() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), "http://127.0.0.1:9");
    let out = dir.path().join("matrix");
    let o = headroom(&[
        "run",
        s.to_str().unwrap(),
        "--matrix",
        "load.requests=3,5",
        "--live",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("--live follows one run") && err.contains("headroom watch DIR/VARIANT"),
        "{err}"
    );
    assert!(!err.contains("live page at"), "{err}");
    assert!(!out.exists());
}
