//! `--push influxdb=URL` against real InfluxDBs: the 1.x write API against InfluxDB 1.6
//! (Debian's), the InfluxDB 2 write API against InfluxDB 1.8's implementation of it (built by
//! `tests/run`: Debian has no InfluxDB 2, nor 1.8); what a run does when InfluxDB is down, and
//! wrong URLs.

use crate::support::{self, influxdb::Influxdb};
use headroom::store::{DropReason, OutputKind};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// The `headroom` binary run with `args` and the environment variables `env` added.
fn headroom_with(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_headroom"));
    cmd.args(args).stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the binary runs");
    crate::support::counts::check_out(args);
    out
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

/// The password of the user `writer` that [`with_a_writer`] makes.
const WRITER_PW: &str = "wr1ter-s3cret";

/// `influx` (started with authentication) with the database `loadtest` and the user `writer`,
/// which may only write to it, for the runs: its password comes from the environment.
fn with_a_writer(influx: Influxdb) -> Influxdb {
    influx.query_post("CREATE DATABASE loadtest");
    influx.query_post(&format!("CREATE USER writer WITH PASSWORD '{WRITER_PW}'"));
    influx.query_post("GRANT WRITE ON loadtest TO writer");
    influx
}

/// A `headroom attack` on `target` at `rate` req/s for `duration`, pushing to `write_url`
/// with the credentials `env`, stored in `out`; asserts it succeeded and returns its stdout
/// and stderr.
fn attack_pushing_to(
    target: &str,
    rate: &str,
    duration: &str,
    write_url: &str,
    env: &[(&str, &str)],
    out: &Path,
) -> (String, String) {
    let result = headroom_with(
        &[
            "attack",
            target,
            "--rate",
            rate,
            "-d",
            duration,
            "-q",
            "--push",
            &format!("influxdb={write_url}"),
            "--out",
            out.to_str().unwrap(),
        ],
        env,
    );
    let stdout = String::from_utf8_lossy(&result.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&result.stderr).into_owned();
    assert!(result.status.success(), "{stdout}\n{stderr}");
    (stdout, stderr)
}

/// Asserts that the run stored in `out` (a 200 req/s attack on a target answering 200 after
/// 5 ms, `stdout` its output), pushed to `write_url`, had every point accepted, and that
/// `influx` gives back, from the database `loadtest`, one point a second whose count and p99
/// are the stored interval's, at the end of that second.
fn assert_given_back_second_for_second(
    influx: &Influxdb,
    write_url: &str,
    out: &Path,
    stdout: &str,
) {
    let stored = crate::support::counts::check_dir(out);
    let run_id = out.file_name().unwrap().to_str().unwrap();
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
        &format!(
            r#"SELECT count("count") FROM http_client_requests WHERE run_id = '{run_id}' GROUP BY request, method"#
        ),
    );
    assert_eq!(per_request.as_array().unwrap().len(), 1, "{per_request}");
    assert_eq!(per_request[0]["tags"]["request"], "GET /");
    assert_eq!(per_request[0]["tags"]["method"], "GET");
    assert_eq!(per_request[0]["values"][0][1], seconds, "{per_request}");

    // Second for second: the count and p99 InfluxDB holds are the stored interval's, at the
    // end of that second on the wall clock. Columns: time, then the fields as selected.
    let points = influx.select(
        "loadtest",
        &format!(
            "SELECT \"count\", ok, status_2xx, errors, p99_us, max_us FROM http_client_requests WHERE run_id = '{run_id}'"
        ),
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
}

/// Asserts that InfluxDB refused every write of the run stored in `out` (`stdout` its output)
/// as unauthorized (401, which is not retried), and that the report says so with InfluxDB's
/// own reason.
fn assert_refused_as_unauthorized(out: &Path, stdout: &str) {
    let stored = crate::support::counts::check_dir(out);
    let seconds = stored.intervals.len() as u64;
    assert_eq!(stored.outputs[0].sent, 0);
    assert_eq!(stored.outputs[0].dropped[&DropReason::Rejected], seconds);
    assert_eq!(stored.outputs[0].last_status, Some(401));
    let answer = stored.outputs[0].last_answer.clone().unwrap_or_default();
    assert!(answer.contains("authorization failed"), "{answer}");
    assert!(
        stdout.contains(&format!(
            "0 points sent, {seconds} dropped (HTTP 401 from the backend: "
        )) && stdout.contains("authorization failed"),
        "{stdout}"
    );
}

/// Asserts that none of `secrets` is in `texts` (a run's output) nor in any file of the run
/// stored in `out`.
fn assert_never_shown(secrets: &[&str], texts: &[&str], out: &Path) {
    for secret in secrets {
        for text in texts {
            assert!(!text.contains(secret), "{secret}: {text}");
        }
        assert_eq!(stored_anywhere(out, secret), None, "{secret}");
    }
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs InfluxDB: run tests/run")]
fn influxdb_gives_back_the_stored_counts_and_p99_second_for_second() {
    let influx = with_a_writer(Influxdb::start(true));
    let running = support::start_target(Duration::from_millis(5));
    let target = format!("http://{}/", running.addr());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("influx-run");
    let write_url = format!("http://127.0.0.1:{}/write?db=loadtest", influx.port);
    let (stdout, stderr) = attack_pushing_to(
        &target,
        "200",
        "4s",
        &write_url,
        &[
            ("HEADROOM_INFLUXDB_USER", "writer"),
            ("HEADROOM_INFLUXDB_PASSWORD", WRITER_PW),
        ],
        &out,
    );
    assert_given_back_second_for_second(&influx, &write_url, &out, &stdout);
    // The password went as Basic auth only: not in the output, nor in the stored run, nor
    // its base64, nor the header's (base64 of `writer:PASSWORD`).
    assert_never_shown(
        &[
            WRITER_PW,
            "d3IxdGVyLXMzY3JldA",
            "d3JpdGVyOndyMXRlci1zM2NyZXQ",
        ],
        &[&stdout, &stderr],
        &out,
    );

    // A wrong password: InfluxDB refuses each write, and the report says so; the password
    // is never shown.
    let out = tmp.path().join("refused-run");
    let (stdout, stderr) = attack_pushing_to(
        &target,
        "50",
        "2s",
        &write_url,
        &[
            ("HEADROOM_INFLUXDB_USER", "writer"),
            ("HEADROOM_INFLUXDB_PASSWORD", "wrong-pw"),
        ],
        &out,
    );
    assert_refused_as_unauthorized(&out, &stdout);
    assert_never_shown(&["wrong-pw"], &[&stdout, &stderr], &out);
}

/// The InfluxDB 2 write API (`/api/v2/write?org=…&bucket=…`, `Authorization: Token …`)
/// against InfluxDB 1.8's implementation of it, the nearest to a real InfluxDB 2 these tests
/// can start (Debian has no InfluxDB 2): the bucket is `DB/RETENTION_POLICY` (or `DB`), the
/// org is ignored, and the token is `USER:PASSWORD`.
#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs InfluxDB 1.8: run tests/run")]
fn an_influxdb_2_write_is_given_back_second_for_second_by_influxdb_1_8() {
    let influx = with_a_writer(Influxdb::start_1_8(true));
    let running = support::start_target(Duration::from_millis(5));
    let target = format!("http://{}/", running.addr());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("v2-run");
    let write_url = format!(
        "http://127.0.0.1:{}/api/v2/write?org=acme&bucket=loadtest/autogen",
        influx.port
    );
    let token = format!("writer:{WRITER_PW}");
    let (stdout, stderr) = attack_pushing_to(
        &target,
        "200",
        "4s",
        &write_url,
        &[("HEADROOM_INFLUXDB_TOKEN", &token)],
        &out,
    );
    assert_given_back_second_for_second(&influx, &write_url, &out, &stdout);
    assert_never_shown(&[&token, WRITER_PW], &[&stdout, &stderr], &out);

    // A wrong token: refused like a wrong password, and never shown.
    let out = tmp.path().join("refused-v2-run");
    let (stdout, stderr) = attack_pushing_to(
        &target,
        "50",
        "2s",
        &write_url,
        &[("HEADROOM_INFLUXDB_TOKEN", "writer:wr0ng-t0ken")],
        &out,
    );
    assert_refused_as_unauthorized(&out, &stdout);
    assert_never_shown(&["wr0ng-t0ken"], &[&stdout, &stderr], &out);
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
    let stored = crate::support::counts::check_dir(&out);
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
#[cfg_attr(not(feature = "lab"), ignore = "needs InfluxDB: run tests/run")]
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
    let stored = crate::support::counts::check_dir(&out);
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
