//! `--push influxdb=URL` against a real InfluxDB 1.6 (Debian's), what a run does when
//! InfluxDB is down, and the InfluxDB 2 write's shape (recorded by a small server here:
//! Debian has no InfluxDB 2).

use crate::support::{self, influxdb::Influxdb};
use headroom::store::{DropReason, OutputKind, RunDir};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The `headroom` binary run with `args` and the environment variables `env` added.
fn headroom_with(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_headroom"));
    cmd.args(args).stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("the binary runs")
}

/// Whether `secret` is in any file under `dir` (the stored run).
fn stored_anywhere(dir: &Path, secret: &str) -> Option<String> {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if let Some(found) = stored_anywhere(&path, secret) {
                return Some(found);
            }
        } else if String::from_utf8_lossy(&std::fs::read(&path).unwrap()).contains(secret) {
            return Some(path.display().to_string());
        }
    }
    None
}

fn started_ms(started_at: &str) -> i64 {
    humantime::parse_rfc3339(started_at)
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

#[test]
fn influxdb_gives_back_the_stored_counts_and_p99_second_for_second() {
    let influx = Influxdb::start(true);
    influx.query_post("CREATE DATABASE loadtest");
    // A user that may only write, for the run: its password comes from the environment.
    influx.query_post("CREATE USER writer WITH PASSWORD 'wr1ter-s3cret'");
    influx.query_post("GRANT WRITE ON loadtest TO writer");
    let target = support::start_target(Duration::from_millis(5));
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("influx-run");
    let write_url = format!("http://127.0.0.1:{}/write?db=loadtest", influx.port);
    let result = headroom_with(
        &[
            "attack",
            &format!("http://{}/", target.addr()),
            "--rate",
            "200",
            "-d",
            "4s",
            "-q",
            "--push",
            &format!("influxdb={write_url}"),
            "--out",
            out.to_str().unwrap(),
        ],
        &[
            ("HEADROOM_INFLUXDB_USER", "writer"),
            ("HEADROOM_INFLUXDB_PASSWORD", "wr1ter-s3cret"),
        ],
    );
    let stdout = String::from_utf8_lossy(&result.stdout);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(result.status.success(), "{stdout}\n{stderr}");

    let stored = RunDir::at(&out).load().unwrap();
    let seconds = stored.intervals.len();
    assert!(seconds >= 4, "{seconds}");
    let [output] = stored.outputs.as_slice() else {
        panic!("{:?}", stored.outputs)
    };
    assert_eq!(output.kind, OutputKind::Influxdb);
    assert_eq!(output.url, write_url);
    // One request: one point a second, every one accepted.
    assert_eq!(output.sent, seconds as u64, "{output:?}\n{}", influx.log());
    assert!(output.dropped.is_empty(), "{output:?}");
    assert!(
        stdout.contains(&format!(
            "InfluxDB line protocol to {write_url}: {seconds} points sent, none dropped"
        )),
        "{stdout}"
    );

    // One point per second per request name.
    let per_request = influx.select(
        "loadtest",
        r#"SELECT count("count") FROM http_client_requests WHERE run_id = 'influx-run' GROUP BY request, method"#,
    );
    assert_eq!(per_request.as_array().unwrap().len(), 1, "{per_request}");
    assert_eq!(per_request[0]["tags"]["request"], "GET /");
    assert_eq!(per_request[0]["tags"]["method"], "GET");
    assert_eq!(per_request[0]["values"][0][1], seconds, "{per_request}");

    // Second for second: the count and p99 InfluxDB holds are the stored interval's, at the
    // end of that second on the wall clock. Columns: time, then the fields as selected.
    let points = influx.select(
        "loadtest",
        "SELECT \"count\", ok, status_2xx, errors, p99_us, max_us FROM http_client_requests WHERE run_id = 'influx-run'",
    );
    let rows = points[0]["values"].as_array().unwrap();
    assert_eq!(rows.len(), seconds, "{points}");
    let start = started_ms(&stored.meta.started_at);
    let mut total = 0;
    for (row, interval) in rows.iter().zip(&stored.intervals) {
        let at = start + (interval.index as i64 + 1) * 1000;
        assert_eq!(row[0], at, "second {}: {row}", interval.index);
        assert_eq!(
            row[1], interval.completed,
            "second {}: {row}",
            interval.index
        );
        // Every answer was the expected 200.
        assert_eq!(row[2], interval.completed, "{row}");
        assert_eq!(row[3], interval.completed, "{row}");
        assert_eq!(row[4], 0, "{row}");
        if interval.completed > 0 {
            assert_eq!(row[5], interval.p99_us, "second {}: {row}", interval.index);
            assert_eq!(row[6], interval.max_us, "second {}: {row}", interval.index);
            // The target's latency, in microseconds.
            assert!(row[5].as_u64().unwrap() >= 5_000, "{row}");
        } else {
            assert!(row[5].is_null(), "{row}");
        }
        total += interval.completed;
    }
    assert_eq!(total, stored.total.completed());

    // The password went as Basic auth only: not in the output, nor in the stored run.
    for text in [&stdout, &stderr] {
        assert!(!text.contains("wr1ter-s3cret"), "{text}");
    }
    assert_eq!(stored_anywhere(&out, "wr1ter-s3cret"), None);
    assert_eq!(stored_anywhere(&out, "d3IxdGVyLXMzY3JldA"), None); // its base64

    // A wrong password: InfluxDB refuses each write (401), which is not retried, and the
    // report says so.
    let out = tmp.path().join("refused-run");
    let result = headroom_with(
        &[
            "attack",
            &format!("http://{}/", target.addr()),
            "--rate",
            "50",
            "-d",
            "2s",
            "-q",
            "--push",
            &format!("influxdb={write_url}"),
            "--out",
            out.to_str().unwrap(),
        ],
        &[
            ("HEADROOM_INFLUXDB_USER", "writer"),
            ("HEADROOM_INFLUXDB_PASSWORD", "wrong-pw"),
        ],
    );
    let stdout = String::from_utf8_lossy(&result.stdout);
    assert!(result.status.success(), "{stdout}");
    let stored = RunDir::at(&out).load().unwrap();
    let seconds = stored.intervals.len() as u64;
    assert_eq!(stored.outputs[0].sent, 0);
    assert_eq!(stored.outputs[0].dropped[&DropReason::Rejected], seconds);
    assert_eq!(stored.outputs[0].last_status, Some(401));
    // InfluxDB's own reason is kept and shown; the password never is.
    let answer = stored.outputs[0].last_answer.clone().unwrap_or_default();
    assert!(answer.contains("authorization failed"), "{answer}");
    assert!(
        stdout.contains(&format!(
            "0 points sent, {seconds} dropped (refused by the backend: HTTP 401: "
        )) && stdout.contains("authorization failed"),
        "{stdout}"
    );
    assert!(!stdout.contains("wrong-pw"), "{stdout}");
    let outputs = std::fs::read_to_string(out.join("outputs.json")).unwrap();
    assert!(!outputs.contains("wrong-pw"), "{outputs}");
}

#[test]
fn influxdb_down_costs_the_run_nothing_and_the_report_says_what_was_dropped() {
    let target = support::start_target(Duration::from_millis(2));
    let down = support::pushing::port_with_nothing_listening();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let url = format!("http://127.0.0.1:{down}/write?db=loadtest");
    let stdout = support::pushing::attack_pushing(
        &format!("http://{}/", target.addr()),
        &[format!("influxdb={url}")],
        &out,
    );
    let stored = RunDir::at(&out).load().unwrap();
    let seconds = stored.intervals.len() as u64;
    assert!(stored.total.completed() > 0);
    let output = &stored.outputs[0];
    assert_eq!(output.sent, 0);
    assert_eq!(output.dropped[&DropReason::Refused], seconds, "{output:?}");
    assert!(
        stdout.contains(&format!(
            "InfluxDB line protocol to {url}: 0 points sent, {seconds} dropped (connection refused)"
        )),
        "{stdout}"
    );
}

/// What the recording server saw of one write.
#[derive(Debug, Clone)]
struct Write2 {
    request_line: String,
    authorization: Option<String>,
    content_type: Option<String>,
    body: String,
}

/// An HTTP server that records each request and answers 204, as InfluxDB 2 answers a write.
struct Recorder {
    port: u16,
    writes: Arc<Mutex<Vec<Write2>>>,
    stop: Arc<AtomicBool>,
}

impl Recorder {
    fn start() -> Recorder {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let writes = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (w, s) = (writes.clone(), stop.clone());
        std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                let Ok((conn, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                conn.set_nonblocking(false).unwrap();
                conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                let mut reader = BufReader::new(conn);
                let mut request_line = String::new();
                let _ = reader.read_line(&mut request_line);
                let (mut length, mut authorization, mut content_type) = (0usize, None, None);
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                    if let Some((name, value)) = line.split_once(':') {
                        let value = value.trim().to_string();
                        match name.to_ascii_lowercase().as_str() {
                            "content-length" => length = value.parse().unwrap_or(0),
                            "authorization" => authorization = Some(value),
                            "content-type" => content_type = Some(value),
                            _ => {}
                        }
                    }
                    line.clear();
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                w.lock().unwrap().push(Write2 {
                    request_line: request_line.trim_end().to_string(),
                    authorization,
                    content_type,
                    body: String::from_utf8_lossy(&body).into_owned(),
                });
                let _ = reader
                    .get_mut()
                    .write_all(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
            }
        });
        Recorder { port, writes, stop }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[test]
fn an_influxdb_2_write_has_the_token_from_the_environment_and_one_point_a_second() {
    let target = support::start_target(Duration::from_millis(2));
    let recorder = Recorder::start();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("v2-run");
    let url = format!(
        "http://127.0.0.1:{}/api/v2/write?org=acme&bucket=load",
        recorder.port
    );
    let result = headroom_with(
        &[
            "attack",
            &format!("http://{}/", target.addr()),
            "--rate",
            "100",
            "-d",
            "3s",
            "-q",
            "--push",
            &format!("influxdb={url}"),
            "--out",
            out.to_str().unwrap(),
        ],
        &[("HEADROOM_INFLUXDB_TOKEN", "t0ken-s3cret")],
    );
    let stdout = String::from_utf8_lossy(&result.stdout);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(result.status.success(), "{stdout}\n{stderr}");
    let stored = RunDir::at(&out).load().unwrap();
    let writes = recorder.writes.lock().unwrap().clone();
    // One write a second, each with one point (one request).
    assert_eq!(writes.len(), stored.intervals.len(), "{writes:?}");
    assert_eq!(stored.outputs[0].sent, writes.len() as u64);
    let start = started_ms(&stored.meta.started_at);
    for (w, interval) in writes.iter().zip(&stored.intervals) {
        assert_eq!(
            w.request_line,
            "POST /api/v2/write?org=acme&bucket=load&precision=ms HTTP/1.1"
        );
        assert_eq!(w.authorization.as_deref(), Some("Token t0ken-s3cret"));
        assert_eq!(w.content_type.as_deref(), Some("text/plain; charset=utf-8"));
        let lines: Vec<&str> = w.body.lines().collect();
        assert_eq!(lines.len(), 1, "{}", w.body);
        let expected_head = format!(
            "http_client_requests,method=GET,request=GET\\ /,run_id=v2-run count={}i,ok={}i,failed=0i,",
            interval.completed, interval.completed
        );
        assert!(lines[0].starts_with(&expected_head), "{}", lines[0]);
        assert!(
            lines[0].ends_with(&format!(" {}", start + (interval.index as i64 + 1) * 1000)),
            "{}",
            lines[0]
        );
        if interval.completed > 0 {
            assert!(
                lines[0].contains(&format!(",p99_us={}i,", interval.p99_us)),
                "{}",
                lines[0]
            );
        }
    }
    // The token is never shown nor stored.
    for text in [&stdout, &stderr] {
        assert!(!text.contains("t0ken-s3cret"), "{text}");
    }
    assert_eq!(stored_anywhere(&out, "t0ken-s3cret"), None);
}

#[test]
fn a_wrong_influxdb_push_is_one_line_saying_what_to_do_and_never_shows_a_credential() {
    for (given, env, says) in [
        (
            "influxdb=http://127.0.0.1:8086/write?db=x&u=bob&p=s3cret",
            None,
            "leave out u= and set HEADROOM_INFLUXDB_USER and HEADROOM_INFLUXDB_PASSWORD",
        ),
        (
            "influxdb=http://127.0.0.1:8086/write?db=x&p=s3cret",
            None,
            "leave out p=",
        ),
        (
            "influxdb=http://bob:s3cret@127.0.0.1:8086/write?db=x",
            None,
            "leave out user:password@",
        ),
        ("influxdb=http://127.0.0.1:8086/write", None, "/write?db=DB"),
        (
            "influxdb=http://127.0.0.1:8086/api/v2/write?org=o&bucket=b",
            None,
            "set HEADROOM_INFLUXDB_TOKEN",
        ),
        (
            "influxdb=http://127.0.0.1:8086/write?db=x",
            Some(("HEADROOM_INFLUXDB_PASSWORD", "s3cret")),
            "set HEADROOM_INFLUXDB_USER too",
        ),
    ] {
        let out = headroom_with(
            &[
                "attack",
                "http://127.0.0.1:9/",
                "--rate",
                "10",
                "-d",
                "1s",
                "--push",
                given,
            ],
            env.as_slice(),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{given}: {stderr}");
        assert!(stderr.contains(says), "{given}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{given}: {stderr}");
        assert!(!stderr.contains("s3cret"), "{stderr}");
    }
}

#[test]
fn a_sweep_writes_a_point_per_second_per_stage_its_requests_were_sent_for() {
    let influx = Influxdb::start(false);
    influx.query_post("CREATE DATABASE sweeps");
    let target = support::start_target(Duration::from_millis(2));
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sweep-run");
    let result = support::headroom(&[
        "sweep",
        &format!("http://{}/", target.addr()),
        "--rate",
        "50,100",
        "--step-duration",
        "2s",
        "-q",
        "--push",
        &format!("influxdb=http://127.0.0.1:{}/write?db=sweeps", influx.port),
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&result.stdout);
    assert!(
        result.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let stored = RunDir::at(&out).load().unwrap();
    // Each second's points, from the stored log: (second's end, stage) → completed.
    let start = started_ms(&stored.meta.started_at);
    let mut expected = std::collections::BTreeMap::new();
    let log = std::fs::read_to_string(out.join("intervals.jsonl")).unwrap();
    for line in log.lines() {
        let line: serde_json::Value = serde_json::from_str(line).unwrap();
        let record = &line["record"];
        let at = start + (record["index"].as_i64().unwrap() + 1) * 1000;
        for (stage, step) in record["steps"].as_object().into_iter().flatten() {
            // A request that completed nothing in a stage's second is left out of the record.
            let count = step["requests"][0]["count"].as_u64().unwrap_or(0);
            expected.insert((at, stage.clone()), count);
        }
    }
    assert!(
        expected.keys().any(|(_, s)| s == "0") && expected.keys().any(|(_, s)| s == "1"),
        "{expected:?}"
    );
    assert_eq!(
        stored.outputs[0].sent,
        expected.len() as u64,
        "{:?}",
        stored.outputs
    );

    let series = influx.select(
        "sweeps",
        "SELECT \"count\" FROM http_client_requests WHERE run_id = 'sweep-run' GROUP BY stage",
    );
    let mut written = std::collections::BTreeMap::new();
    for s in series.as_array().unwrap() {
        let stage = s["tags"]["stage"].as_str().unwrap().to_string();
        for row in s["values"].as_array().unwrap() {
            let at = row[0].as_i64().unwrap();
            written.insert((at, stage.clone()), row[1].as_u64().unwrap());
        }
    }
    assert_eq!(written, expected);
    assert_eq!(written.values().sum::<u64>(), stored.all.completed());
}
