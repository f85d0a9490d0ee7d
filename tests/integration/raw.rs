//! `--raw` and `headroom export`: one record per request, agreeing with the summary, read
//! back as CSV and JSON lines, and damaged files refused where the damage is.

use crate::support::{headroom, start_target};
use headroom::summary::Summary;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// A scenario against the built-in target at `addr`: answers, 503s and timeouts.
fn mixed_scenario(dir: &Path, addr: std::net::SocketAddr) -> std::path::PathBuf {
    let path = dir.join("mixed.yaml");
    std::fs::write(
        &path,
        format!(
            r#"
target:
  url: http://{addr}/
  timeout: 1s
requests:
  - name: ok, "quoted"
    path: /bytes/10
    weight: 2
  - name: unavailable
    method: POST
    path: /status/503
    body: "0123456789"
  - name: slow
    path: /delay/5000
load:
  rate: 400
  requests: 400
"#
        ),
    )
    .unwrap();
    path
}

/// `headroom export RUN` in `format`, as text; the export must succeed.
fn export(run: &Path, format: &str) -> String {
    let o = headroom(&["export", run.to_str().unwrap(), "--format", format]);
    assert!(
        o.status.success(),
        "export failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// The CSV export as the JSON lines would say it: empty fields are nulls, numbers and
/// booleans typed by their column.
fn csv_rows(text: &str) -> Vec<Value> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers().unwrap().clone();
    assert_eq!(
        headers.iter().collect::<Vec<_>>(),
        headroom::store::export::COLUMNS
    );
    reader
        .records()
        .map(|row| {
            let row = row.unwrap();
            let object = headers
                .iter()
                .zip(row.iter())
                .map(|(column, field)| {
                    let value = match column {
                        _ if field.is_empty() && matches!(column, "stage" | "status" | "error") => {
                            Value::Null
                        }
                        "retried" | "expected" => Value::Bool(field.parse().unwrap()),
                        "request" | "method" | "stage" | "error" => Value::String(field.into()),
                        _ => Value::from(field.parse::<u64>().unwrap()),
                    };
                    (column.to_string(), value)
                })
                .collect();
            Value::Object(object)
        })
        .collect()
}

#[test]
fn a_raw_run_keeps_one_record_per_request_as_the_summary_counts_them() {
    let target = start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let scenario = mixed_scenario(dir.path(), target.addr());
    let run = dir.path().join("run");
    let o = headroom(&[
        "run",
        scenario.to_str().unwrap(),
        "--raw",
        "--format",
        "json",
        "-q",
        "--out",
        run.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("400 request record(s) kept in") && err.contains("raw.bin"),
        "{err}"
    );
    let summary: Summary = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary.requests.total, 400);

    let lines = export(&run, "jsonl");
    let records: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len() as u64, summary.requests.total);

    // Per request: completions and failures as the summary's table has them.
    let mut by_name: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut statuses: BTreeMap<u16, u64> = BTreeMap::new();
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for r in &records {
        let row = by_name
            .entry(r["request"].as_str().unwrap().to_string())
            .or_default();
        row.0 += 1;
        row.1 += u64::from(!r["expected"].as_bool().unwrap());
        match (r["status"].as_u64(), r["error"].as_str()) {
            (Some(status), None) => *statuses.entry(status as u16).or_default() += 1,
            (None, Some(kind)) => *errors.entry(kind.to_string()).or_default() += 1,
            other => panic!("a record with both or neither status and error: {other:?}"),
        }
        let ns = |c: &str| r[c].as_u64().unwrap();
        assert!(ns("intended_ns") <= ns("sent_ns"), "{r}");
        assert_eq!(
            ns("latency_ns") - ns("service_ns"),
            ns("sent_ns") - ns("intended_ns"),
            "{r}"
        );
    }
    let table: BTreeMap<String, (u64, u64)> = summary
        .by_request
        .iter()
        .map(|r| (r.name.clone(), (r.count, r.failures)))
        .collect();
    assert_eq!(by_name, table);
    assert_eq!(statuses, summary.status_codes);
    let summary_errors: BTreeMap<String, u64> = summary
        .errors
        .iter()
        .filter(|e| !e.key.starts_with("status_"))
        .map(|e| (e.key.clone(), e.count))
        .collect();
    assert_eq!(errors, summary_errors);
    // Each kind of outcome is there, under its own request, with what it carried.
    assert!(records
        .iter()
        .any(|r| r["request"] == "slow" && r["error"] == "timeout"));
    assert!(records
        .iter()
        .all(|r| (r["request"] == "slow") == (r["error"] == "timeout")));
    assert!(records.iter().any(|r| r["request"] == "unavailable"
        && r["status"] == 503
        && r["method"] == "POST"
        && r["bytes_out"] == 10));
    assert!(records
        .iter()
        .any(|r| r["request"] == "ok, \"quoted\"" && r["status"] == 200 && r["bytes_in"] == 10));

    // The CSV export says the same, field for field, names with commas and quotes included.
    assert_eq!(csv_rows(&export(&run, "csv")), records);
    // Written to a file, the same bytes.
    let file = dir.path().join("raw.csv");
    let o = headroom(&[
        "export",
        run.to_str().unwrap(),
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), export(&run, "csv"));
}

#[test]
fn a_sweep_keeps_each_record_under_its_step() {
    let target = start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let o = headroom(&[
        "sweep",
        &format!("http://{}/", target.addr()),
        "--rate",
        "50,100",
        "--step-duration",
        "1s",
        "--raw",
        "--format",
        "json",
        "-q",
        "--out",
        run.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: Summary = serde_json::from_slice(&o.stdout).unwrap();
    let records: Vec<Value> = export(&run, "jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Every request of the run, warm-up included, each under the step it was sent for.
    let steps: BTreeMap<String, u64> = summary
        .stages
        .iter()
        .map(|s| (s.name.clone(), s.count))
        .collect();
    let mut seen: BTreeMap<String, u64> = BTreeMap::new();
    for r in &records {
        *seen
            .entry(r["stage"].as_str().expect("a step").to_string())
            .or_default() += 1;
    }
    for (name, count) in &steps {
        assert_eq!(seen.get(name), Some(count), "step {name}: {seen:?}");
    }
}

/// `headroom attack` on the built-in target at `addr`, storing in `run`, with `load` (the
/// rate and when to stop) and `--raw` when asked.
fn attack(
    addr: std::net::SocketAddr,
    run: &Path,
    load: &[&str],
    raw: bool,
) -> std::process::Output {
    let url = format!("http://{addr}/");
    let mut args = vec!["attack", url.as_str()];
    args.extend_from_slice(load);
    if raw {
        args.push("--raw");
    }
    args.extend_from_slice(&["-q", "--out", run.to_str().unwrap()]);
    headroom(&args)
}

/// A run with `--raw` whose records are damaged after it ended.
fn damaged_run() -> (tempfile::TempDir, std::path::PathBuf, Vec<u8>) {
    let target = start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let o = attack(target.addr(), &run, &["--rate", "200", "-n", "100"], true);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(run.join("raw.bin")).unwrap();
    (dir, run, bytes)
}

#[test]
fn a_damaged_raw_file_is_read_up_to_the_damage_and_named_there() {
    let (_dir, run, whole) = damaged_run();
    let raw = run.join("raw.bin");
    let export_of = |bytes: &[u8]| {
        std::fs::write(&raw, bytes).unwrap();
        let o = headroom(&["export", run.to_str().unwrap(), "--format", "jsonl"]);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(!err.contains("panicked"), "{err}");
        let rows = String::from_utf8(o.stdout).unwrap().lines().count();
        (o.status.code(), rows, err)
    };
    // 52 bytes a record: cut inside the last one, as a kill mid-write leaves it (no
    // raw.json), it is left out with a warning.
    let end = std::fs::read(run.join("raw.json")).unwrap();
    std::fs::remove_file(run.join("raw.json")).unwrap();
    let (code, rows, err) = export_of(&whole[..whole.len() - 30]);
    assert_eq!((code, rows), (Some(0), 99), "{err}");
    assert!(err.contains("the last record was cut short"), "{err}");
    // The same cut after the run ended (raw.json says 100): a record is missing.
    std::fs::write(run.join("raw.json"), &end).unwrap();
    let (code, rows, err) = export_of(&whole[..whole.len() - 30]);
    assert_eq!((code, rows), (Some(1), 99), "{err}");
    assert!(
        err.contains("holds 99 record(s), but raw.json says the run wrote 100: 1 missing"),
        "{err}"
    );
    // A byte changed in the 41st record: the 40 before it are exported, then it is named.
    let mut damaged = whole.clone();
    let header = whole.len() - 100 * 52;
    damaged[header + 40 * 52 + 3] ^= 0x10;
    let (code, rows, err) = export_of(&damaged);
    assert_eq!((code, rows), (Some(1), 40), "{err}");
    assert!(
        err.contains("raw.bin: record 41: checksum mismatch")
            && err.contains("the 40 record(s) before it were exported"),
        "{err}"
    );
    // Not a raw file at all, or a header claiming gigabytes: refused before any allocation.
    let (code, rows, err) = export_of(b"request,stage\nread,\n");
    assert_eq!((code, rows), (Some(1), 0));
    assert!(err.contains("not a headroom raw file"), "{err}");
    let mut huge = whole[..8].to_vec();
    huge.extend_from_slice(&u32::MAX.to_le_bytes());
    let (code, _, err) = export_of(&huge);
    assert_eq!(code, Some(1));
    assert!(err.contains("more than headroom writes"), "{err}");
}

#[test]
fn an_export_of_more_or_fewer_records_than_the_run_wrote_fails_and_says_which() {
    // Found trying `export` as an attacker would: a raw.bin cut at a record boundary gave 25
    // of 100 rows, and one with its last record appended twice 101, both with exit status 0
    // and no word (raw.json's count was never read).
    let (_dir, run, whole) = damaged_run();
    let end: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("raw.json")).unwrap()).unwrap();
    assert_eq!(end["records"], 100, "{end}");
    let raw = run.join("raw.bin");
    let header = whole.len() - 100 * 52;
    let export_of = |bytes: &[u8], format: &str| {
        std::fs::write(&raw, bytes).unwrap();
        let o = headroom(&["export", run.to_str().unwrap(), "--format", format]);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(!err.contains("panicked"), "{err}");
        (o.status.code(), String::from_utf8(o.stdout).unwrap(), err)
    };
    let (code, out, err) = export_of(&whole[..header + 25 * 52], "jsonl");
    assert_eq!((code, out.lines().count()), (Some(1), 25), "{err}");
    assert!(
        err.contains(
            "raw.bin: holds 25 record(s), but raw.json says the run wrote 100: 75 missing"
        ) && err.contains("the export is not the whole run"),
        "{err}"
    );
    let mut doubled = whole.clone();
    doubled.extend_from_slice(&whole[whole.len() - 52..]);
    let (code, out, err) = export_of(&doubled, "csv");
    // A header row and 101 records.
    assert_eq!((code, out.lines().count()), (Some(1), 102), "{err}");
    assert!(
        err.contains("holds 101 record(s), but raw.json says the run wrote 100: 1 too many (record 101 repeats record 100 byte for byte"),
        "{err}"
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[100], lines[101]);
    // Whole, it exports with exit status 0 and no warning.
    let (code, out, err) = export_of(&whole, "csv");
    assert_eq!((code, out.lines().count()), (Some(0), 101), "{err}");
    assert!(err.is_empty(), "{err}");
}

#[test]
fn a_run_without_raw_records_says_how_to_get_them() {
    let target = start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let o = attack(target.addr(), &run, &["--rate", "100", "-n", "10"], false);
    assert!(o.status.success());
    assert!(!run.join("raw.bin").exists());
    let o = headroom(&["export", run.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err.contains("holds no per-request records: run with --raw"),
        "{err}"
    );
}

/// Like the interval log, a raw file that cannot be written (/dev/full fails every write
/// with ENOSPC) stops the attack and says so, rather than sending on unrecorded.
#[test]
fn a_full_disk_under_the_raw_file_stops_the_attack_and_says_so() {
    let target = start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::os::unix::fs::symlink("/dev/full", run.join("raw.bin")).unwrap();
    let started = std::time::Instant::now();
    let o = attack(target.addr(), &run, &["--rate", "100", "-d", "60s"], true);
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("raw.bin: No space left on device")
            && err.contains("the attack was stopped within a second"),
        "{err}"
    );
    // Not the minute asked for.
    assert!(took < Duration::from_secs(45), "took {took:?}");
}

#[test]
fn a_capacity_search_refuses_raw_and_says_what_to_do_instead() {
    let o = headroom(&[
        "capacity",
        "http://127.0.0.1:9/",
        "--slo",
        "p99 < 10ms",
        "--raw",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--raw is for attack, run and sweep") && err.contains("headroom attack --raw"),
        "{err}"
    );
}
