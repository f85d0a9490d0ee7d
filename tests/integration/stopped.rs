//! Requests in flight when a run is stopped (`--abort-when`, Ctrl-C), against real nginx
//! servers that hold requests without answering: those still unanswered when the grace
//! after the stop ends are failed as `unanswered_at_stop`, so every request sent is
//! counted, in the stored run and in every report, on HTTP/1.1 and HTTP/2, in the open and
//! the closed model.
//!
//! No assertion rests on how fast the machine is: the servers never answer the requests
//! they hold, so however late the stop comes, what was sent and held is unanswered.

use crate::support::certs;
use crate::support::nginx::{Nginx, Tls};
use crate::support::{headroom, stderr, stdout};
use headroom::sample::ErrorKind;
use headroom::store::{RunDir, StoredRun};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The documented status of an aborted run (docs/ci.md).
const ABORTED: i32 = 5;
/// The status of a run stopped by Ctrl-C (128 + SIGINT).
const INTERRUPTED: i32 = 130;
/// What never answering is, to nginx: an hour.
const HANG: &str = "location / { echo_sleep 3600; echo ok; }";

/// The run stored at `out`, with its counts checked: every request sent ended, answered or
/// failed, in the whole run and in its seconds; returns the run and how many ended
/// `unanswered_at_stop`.
fn every_sent_request_counted(out: &Path) -> (StoredRun, u64) {
    let stored = RunDir::at(out).load().unwrap();
    let all = &stored.all;
    assert!(all.sent > 0, "nothing was sent");
    assert_eq!(all.retried, 0, "no request was sent twice");
    assert_eq!(
        all.sent,
        all.completed(),
        "sent = answered + failed in the stored run: {:?}",
        all.errors
    );
    let seconds_sent: u64 = stored.intervals.iter().map(|d| d.sent).sum();
    let seconds_done: u64 = stored.intervals.iter().map(|d| d.completed).sum();
    assert_eq!((seconds_sent, seconds_done), (all.sent, all.sent));
    let unanswered = all
        .errors
        .iter()
        .find(|(k, _)| k.0 == ErrorKind::Unanswered)
        .map_or(0, |(_, n)| *n);
    (stored, unanswered)
}

/// `report --format json` of the run at `out`: the same count sent and completed, and the
/// Failures table's `unanswered_at_stop` row; returns the JSON.
fn report_counts_them(out: &Path, sent: u64, unanswered: u64) -> serde_json::Value {
    let o = headroom(&["report", out.to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["requests"]["sent"], sent, "{}", v["requests"]);
    assert_eq!(v["requests"]["total"], sent, "{}", v["requests"]);
    let row = v["failures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["reason"]["error"] == "unanswered_at_stop")
        .unwrap_or_else(|| panic!("no unanswered_at_stop row: {}", v["failures"]));
    assert_eq!(row["count"], unanswered);
    v
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx with Lua: run tests/run")]
fn requests_a_server_holds_when_a_run_is_aborted_are_failed_not_lost() {
    let nginx = Nginx::hanging_after(2, 3600);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = headroom(&[
        "attack",
        &nginx.url("http", "/"),
        "--rate",
        "20",
        "-d",
        "60s",
        "--abort-when",
        "rps < 10 for 2s",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(ABORTED), "{text}\n{}", stderr(&o));
    let (stored, unanswered) = every_sent_request_counted(&out);
    let answered: u64 = stored.all.status.values().sum();
    assert!(answered > 0, "the first two seconds were answered: {text}");
    assert!(unanswered > 0, "{text}");
    assert_eq!(
        answered + unanswered,
        stored.all.sent,
        "{:?}",
        stored.all.errors
    );
    let v = report_counts_them(&out, stored.all.sent, unanswered);
    let ratio = v["success_ratio"].as_f64().unwrap();
    assert!(
        (ratio - answered as f64 / stored.all.sent as f64).abs() < 1e-9,
        "success is the answered share of all sent: {ratio}"
    );
    // The report says the requests failed, and does not say the server kept up.
    assert!(
        text.contains("no answer when the run was stopped"),
        "{text}"
    );
    assert!(!text.contains("the server kept up"), "{text}");
    // The diagnosis names the server's silence (whatever else a busy machine adds to it).
    let silent = v["verdict"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["finding"] == "server_failed" && f["error"] == "unanswered_at_stop");
    assert_eq!(
        silent.map(|f| f["count"].clone()),
        Some(unanswered.into()),
        "{}",
        v["verdict"]
    );
}

#[test]
#[cfg_attr(
    not(feature = "lab"),
    ignore = "needs nginx with the echo module: run tests/run"
)]
fn a_closed_model_aborted_against_a_silent_server_counts_its_users_requests() {
    let nginx = Nginx::with_echo(HANG);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = headroom(&[
        "attack",
        &nginx.url("http", "/"),
        "--concurrency",
        "4",
        "-d",
        "60s",
        "--abort-when",
        "rps < 1 for 2s",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(ABORTED), "{text}\n{}", stderr(&o));
    let (stored, unanswered) = every_sent_request_counted(&out);
    // Each user sent one request and waited for it until the stop.
    assert_eq!((stored.all.sent, unanswered), (4, 4), "{text}");
    report_counts_them(&out, 4, 4);
    assert!(text.contains("NOTHING SUCCEEDED"), "{text}");
    assert!(text.contains("unanswered_at_stop"), "{text}");
}

#[test]
#[cfg_attr(
    not(feature = "lab"),
    ignore = "needs nginx with the echo module: run tests/run"
)]
fn ctrl_c_on_http2_against_a_silent_server_says_no_request_was_answered_in_either_model() {
    let dir = tempfile::tempdir().unwrap();
    let c = certs::make(dir.path());
    let nginx = Nginx::with_modules(
        Tls::Server(&c),
        &["echo"],
        "keepalive_requests 1000000;",
        HANG,
    );
    // The open model at a rate, and the closed model's users, each one sending and waiting.
    for (load, n) in [("--rate", "20"), ("--concurrency", "3")] {
        let out = dir.path().join(load.trim_start_matches('-'));
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_headroom"))
            .args([
                "attack",
                &nginx.url("https", "/"),
                load,
                n,
                "-d",
                "60s",
                "--http2",
                "--cacert",
                c.ca.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Two seconds on disk: requests were sent and are held (none is ever answered).
        let deadline = Instant::now() + Duration::from_secs(60);
        let seconds = || {
            std::fs::read_to_string(out.join("intervals.jsonl")).map_or(0, |s| s.lines().count())
        };
        while seconds() < 2 {
            assert!(Instant::now() < deadline, "{load}: the run never began");
            std::thread::sleep(Duration::from_millis(50));
        }
        rustix::process::kill_process(
            rustix::process::Pid::from_child(&child),
            rustix::process::Signal::INT,
        )
        .unwrap();
        let o = child.wait_with_output().unwrap();
        let text = stdout(&o);
        assert_eq!(
            o.status.code(),
            Some(INTERRUPTED),
            "{load}: {text}\n{}",
            stderr(&o)
        );
        crate::support::counts::check_dir(&out);
        let (stored, unanswered) = every_sent_request_counted(&out);
        assert_eq!(
            unanswered, stored.all.sent,
            "{load}: {:?}",
            stored.all.errors
        );
        if load == "--concurrency" {
            assert_eq!(stored.all.sent, 3, "{load}: one request per user");
        }
        report_counts_them(&out, stored.all.sent, unanswered);
        // It says the server never answered, not only that the run was too short to judge.
        assert!(text.contains("NOTHING SUCCEEDED"), "{load}: {text}");
        assert!(
            text.contains("no answer when the run was stopped"),
            "{load}: {text}"
        );
    }
}
