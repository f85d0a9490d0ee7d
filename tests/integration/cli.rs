//! The `headroom` binary as a user runs it: bad input, secrets, a killed run.

use crate::support::{headroom, stderr};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A 60 s attack on `url` stored in `out`, to be stopped by the test.
fn spawn_long_attack(url: &str, rate: u32, out: &std::path::Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args([
            "attack",
            url,
            "--rate",
            &rate.to_string(),
            "-d",
            "60s",
            "-q",
        ])
        .arg("--out")
        .arg(out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn bad_input_is_one_clear_line_never_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let certs = crate::support::certs::make(dir.path());
    let other = tempfile::tempdir().unwrap();
    let mismatched = crate::support::certs::make(other.path());
    let cert = certs.client_cert.to_str().unwrap();
    let wrong_key = mismatched.client_key.to_str().unwrap();
    let out = dir.path().join("run");
    let out = out.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["attack", "not a url", "--rate", "10", "-d", "1s"],
            "invalid URL",
        ),
        (
            vec!["attack", "ftp://127.0.0.1/", "--rate", "10", "-d", "1s"],
            "not http or https",
        ),
        (
            vec!["attack", "http://127.0.0.1:9/", "--rate", "0", "-d", "1s"],
            "--rate must be a positive",
        ),
        (
            vec!["attack", "http://127.0.0.1:9/", "--rate", "-5", "-d", "1s"],
            "--rate must be a positive",
        ),
        (
            vec!["attack", "http://127.0.0.1:9/", "--rate", "10", "-d", "-5s"],
            "duration",
        ),
        (
            vec!["attack", "http://127.0.0.1:9/", "--rate", "10"],
            "--duration or --requests",
        ),
        (
            vec!["attack", "http://127.0.0.1:9/", "-c", "0", "-d", "1s"],
            "--concurrency",
        ),
        (
            vec![
                "attack",
                "http://127.0.0.1:9/",
                "--rate",
                "10",
                "-d",
                "1s",
                "-H",
                "nocolon",
            ],
            "invalid header",
        ),
        (
            vec![
                "attack",
                "https://127.0.0.1:9/",
                "--rate",
                "10",
                "-d",
                "1s",
                "--cert",
                "/nonexistent.pem",
                "--key",
                "/nonexistent.key",
            ],
            "no such file",
        ),
        (
            vec![
                "attack",
                "https://127.0.0.1:9/",
                "--rate",
                "10",
                "-d",
                "1s",
                "--cert",
                cert,
                "--key",
                wrong_key,
            ],
            "cannot be used together",
        ),
        (
            vec![
                "attack",
                "http://127.0.0.1:9/",
                "--rate",
                "10",
                "-d",
                "1s",
                "--out",
                out,
            ],
            "cannot connect",
        ),
        (
            vec![
                "attack",
                "http://no-such-host.invalid/",
                "--rate",
                "10",
                "-d",
                "1s",
            ],
            "cannot resolve",
        ),
        (vec!["report", "/nonexistent-run"], "not a headroom run"),
        (
            vec![
                "attack",
                "http://127.0.0.1:9/",
                "--rate",
                "10",
                "-d",
                "1s",
                "--coalesce",
                "10s",
            ],
            "--coalesce",
        ),
    ];
    for (args, expected) in cases {
        let o = headroom(&args);
        let err = stderr(&o);
        assert!(!o.status.success(), "{args:?} should fail");
        assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
        assert!(
            err.contains(expected),
            "{args:?}: expected {expected:?} in {err:?}"
        );
        assert!(
            err.trim().lines().count() <= 3,
            "{args:?}: not short: {err}"
        );
    }
}

#[test]
fn secrets_never_reach_the_run_or_the_report() {
    let server = crate::support::start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let url = format!("http://{}/", server.addr());
    let o = headroom(&[
        "attack",
        &url,
        "--rate",
        "50",
        "-n",
        "20",
        "-q",
        "--out",
        out.to_str().unwrap(),
        "-H",
        "Authorization: Bearer SECRET-TOKEN-123",
        "--header=X-Api-Key: SECRET-KEY-456",
        "-H",
        "X-Visible: shown",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let stored = crate::support::all_text_under(&out);
    let report = String::from_utf8_lossy(&o.stdout);
    for secret in ["SECRET-TOKEN-123", "SECRET-KEY-456"] {
        assert!(!stored.contains(secret), "{secret} stored");
        assert!(!report.contains(secret), "{secret} reported");
    }
    assert!(stored.contains("X-Visible: shown") || stored.contains("x-visible: shown"));
    let json = headroom(&["report", out.to_str().unwrap(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["requests"]["total"], 20);
}

#[test]
fn a_token_in_a_query_string_never_reaches_the_run_or_the_report() {
    // Sent as asked (the server sees it); shown and stored as `<redacted>`: the URL on the
    // command line, the target and request paths in meta.json, every report.
    let server = crate::support::start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let url = format!(
        "http://{}/items?limit=10&access_token=QUERY-TOKEN-789",
        server.addr()
    );
    let o = headroom(&[
        "attack",
        &url,
        "--rate",
        "50",
        "-n",
        "10",
        "-q",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = headroom(&["report", out.to_str().unwrap(), "--format", "html"]);
    let md = headroom(&["report", out.to_str().unwrap(), "--format", "markdown"]);
    let stored = crate::support::all_text_under(&out);
    for (what, text) in [
        ("stored", stored.clone()),
        ("printed", String::from_utf8_lossy(&o.stdout).into_owned()),
        ("errors", stderr(&o)),
        ("html", String::from_utf8_lossy(&html.stdout).into_owned()),
        ("markdown", String::from_utf8_lossy(&md.stdout).into_owned()),
    ] {
        assert!(!text.contains("QUERY-TOKEN-789"), "{what}: {text}");
    }
    assert!(
        stored.contains("limit=10&access_token=<redacted>"),
        "{stored}"
    );
    // A server that is not there: the error names the URL without its token.
    let o = headroom(&[
        "attack",
        "http://127.0.0.1:9/x?api_key=KEY-IN-ERROR",
        "--rate",
        "1",
        "-n",
        "1",
    ]);
    let err = stderr(&o);
    assert!(
        !o.status.success() && !err.contains("KEY-IN-ERROR"),
        "{err}"
    );
}

#[test]
fn a_killed_attack_leaves_a_run_that_report_renders() {
    let server = crate::support::start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let url = format!("http://{}/", server.addr());
    let mut child = spawn_long_attack(&url, 200, &out);
    // Wait for at least two whole intervals on disk, then kill -9.
    let log = out.join("intervals.jsonl");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::fs::read_to_string(&log)
        .map(|t| t.lines().count())
        .unwrap_or(0)
        < 2
    {
        assert!(std::time::Instant::now() < deadline, "no intervals written");
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!out.join("end.json").exists());
    let o = headroom(&["report", out.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(text.contains("PARTIAL RUN"), "{text}");
    let total: u64 = text
        .lines()
        .find(|l| l.starts_with("Requests"))
        .and_then(|l| l.split_whitespace().nth(4))
        .and_then(|n| n.trim_end_matches(',').parse().ok())
        .unwrap();
    assert!(total >= 400, "two seconds at 200/s: {total}\n{text}");
}

#[test]
fn a_stop_signal_keeps_the_results() {
    use rustix::process::Signal;
    let server = crate::support::start_target(Duration::ZERO);
    // Ctrl-C, what `timeout`, CI runners, Kubernetes and systemd send, and a closed terminal.
    for (signal, status) in [(Signal::INT, 130), (Signal::TERM, 143), (Signal::HUP, 129)] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run");
        let url = format!("http://{}/", server.addr());
        let child = spawn_long_attack(&url, 100, &out);
        // The first interval on disk says the run is under way, signal handlers and all.
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while std::fs::metadata(out.join("intervals.jsonl")).map_or(true, |m| m.len() == 0) {
            assert!(std::time::Instant::now() < deadline, "the run never began");
            std::thread::sleep(Duration::from_millis(50));
        }
        rustix::process::kill_process(rustix::process::Pid::from_child(&child), signal).unwrap();
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(status), "{signal:?}: {}", stderr(&o));
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.contains("interrupted"), "{signal:?}: {text}");
        let end = std::fs::read_to_string(out.join("end.json")).unwrap();
        assert!(end.contains("\"interrupted\""), "{end}");
        let again = headroom(&["report", out.to_str().unwrap()]);
        assert!(again.status.success(), "{}", stderr(&again));
    }
}

/// A sweep stopped by Ctrl-C in its first step: the steps it never reached say "not run" in
/// every view (text, markdown, the JSON's `not_run`), never a row of 0 µs and 0.00 % errors
/// that reads as a step that ran clean.
#[test]
fn a_sweep_interrupted_before_its_last_steps_says_they_were_not_run() {
    use rustix::process::Signal;
    let server = crate::support::start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    let url = format!("http://{}/", server.addr());
    let child = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args([
            "sweep",
            &url,
            "--rate",
            "100..300",
            "--step",
            "100",
            // Long steps: the signal lands in the first whatever the machine's speed.
            "--step-duration",
            "60s",
            "-q",
        ])
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::fs::metadata(out.join("intervals.jsonl")).map_or(true, |m| m.len() == 0) {
        assert!(
            std::time::Instant::now() < deadline,
            "the sweep never began"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    rustix::process::kill_process(rustix::process::Pid::from_child(&child), Signal::INT).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let json = headroom(&["report", out.to_str().unwrap(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let stages = v["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 3, "{v}");
    assert!(stages[0]["count"].as_u64().unwrap() > 0, "{v}");
    assert!(stages[0].get("not_run").is_none(), "{}", stages[0]);
    for st in &stages[1..] {
        assert_eq!(st["not_run"], true, "{st}");
    }
    for format in ["text", "markdown"] {
        let o = headroom(&["report", out.to_str().unwrap(), "--format", format]);
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        for step in ["200 req/s", "300 req/s"] {
            let row = text
                .lines()
                .find(|l| l.contains(step) && l.contains("not run"))
                .unwrap_or_else(|| panic!("{format}: no 'not run' row for {step}\n{text}"));
            assert!(!row.contains("0µs") && !row.contains("0.00%"), "{row}");
        }
    }
}

#[test]
fn the_demo_runs_and_stores_its_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("demo");
    let o = headroom(&[
        "demo",
        // Three seconds: a time axis (a run under three gets a note instead).
        "--duration",
        "3s",
        "--rate",
        "200",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("200:600"), "{text}");
    assert!(out.join("end.json").exists());
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("id=\"headroom-figures\"") && page.contains("Latency by percentile"));
    assert!(out.join("plots/latency-over-time.png").exists());
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn a_watched_server_process_shows_in_the_run_and_its_reports() {
    let nginx = crate::support::nginx::Nginx::start(crate::support::nginx::Tls::None);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let pid = nginx.pid().as_raw_nonzero().get().to_string();
    let url = nginx.url("http", "/");
    let o = headroom(&[
        "attack",
        &url,
        "--rate",
        "300",
        "-d",
        "2s",
        "-q",
        "--monitor-pid",
        &pid,
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}\n{}", stderr(&o));
    assert!(stdout.contains("Server  "), "{stdout}");
    let o = headroom(&["report", out.to_str().unwrap(), "--format", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let server = &json["server"];
    assert!(server["samples"].as_u64().unwrap() >= 1, "{server}");
    assert!(server["rss_max_bytes"].as_u64().unwrap() > 0, "{server}");
    assert!(server["threads_max"].as_u64().unwrap() >= 1, "{server}");

    // A PID that is not running is one clear line before anything is sent.
    let o = headroom(&[
        "attack",
        &url,
        "--rate",
        "10",
        "-d",
        "1s",
        "--monitor-pid",
        "4294967295",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("cannot watch process 4294967295"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_attacks_objectives_may_be_a_comma_list_as_capacitys_are() {
    let server = crate::support::start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://{}/", server.addr());
    let o = headroom(&[
        "attack",
        &url,
        "--rate",
        "50",
        "-n",
        "10",
        "-q",
        "--format",
        "json",
        "--out",
        dir.path().join("run").to_str().unwrap(),
        "--slo",
        "p99 < 10s, errors < 50%",
        "--slo",
        "rps > 1000000",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let slo = v["slo"].as_array().unwrap();
    assert_eq!(slo.len(), 3, "{slo:?}");
    assert_eq!(
        slo.iter().filter(|s| s["met"] == true).count(),
        2,
        "{slo:?}"
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
}

/// Output piped into a reader that is gone (`headroom … | head -1`, a closed terminal):
/// the run is still stored whole, its report files written, and the exit status is the
/// run's, not a panic's.
#[test]
fn a_closed_output_pipe_loses_nothing_and_keeps_the_exit_status() {
    let target = crate::support::start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let mut child = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args([
            "attack",
            &format!("http://{}/", target.addr()),
            "--rate",
            "20",
            "-d",
            "2s",
            "--slo",
            "p99 < 10s",
        ])
        .arg("--out")
        .arg(&out)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Both readers gone before the run prints a line: every write it makes fails (EPIPE).
    drop(child.stdout.take());
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
    let end = crate::support::json_file(&out.join("end.json"));
    assert_eq!(end["status"], "completed", "{end}");
    let report = headroom(&["report", out.to_str().unwrap(), "--format", "json"]);
    assert!(report.status.success(), "{}", stderr(&report));
}
