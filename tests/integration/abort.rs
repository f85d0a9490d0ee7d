//! The safety stop (`--abort-when`, a scenario's `abort_when`) against real servers: a run
//! stops within its window of the target failing, says which condition and when in every
//! report, exits with its own status; a condition that never holds never stops a run. And
//! the progress a log sees when stderr is not a terminal.
//!
//! Every timing is judged from the stored seconds, not the wall clock, so the tests hold on
//! a busy machine.

use crate::support::nginx::{Nginx, Tls};
use crate::support::{headroom, start_target, stderr, stdout};
use headroom::store::{EndStatus, RunDir, StoredRun};
use std::path::Path;
use std::time::Duration;

/// The documented status of an aborted run (docs/ci.md).
const ABORTED: i32 = 5;

fn stored(dir: &Path) -> StoredRun {
    RunDir::at(dir).load().unwrap()
}

/// nginx answering `ok` for five seconds from its first request, then HTTP 503 to every
/// request (Lua: the first request's time is kept in a shared dictionary).
fn failing_after_five_seconds() -> Nginx {
    Nginx::with_modules(
        Tls::None,
        &["lua"],
        "keepalive_requests 1000000;\n  lua_shared_dict abort_test 1m;",
        r#"location / {
      content_by_lua_block {
        local d = ngx.shared.abort_test
        d:add("first", ngx.now())
        if ngx.now() - d:get("first") >= 5 then
          return ngx.exit(503)
        end
        ngx.say("ok")
      }
    }"#,
    )
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx with Lua: run tests/run")]
fn a_target_that_starts_failing_is_aborted_within_the_window() {
    let _one = crate::support::one_heavy_at_a_time();
    let nginx = failing_after_five_seconds();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = headroom(&[
        "attack",
        &nginx.url("http", "/"),
        "--rate",
        "50",
        "-d",
        "40s",
        "--abort-when",
        "p99 > 30s, errors > 50% for 2s",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (text, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(ABORTED), "{text}\n{err}");
    let run = stored(&out);
    let end = run.end.clone().unwrap();
    assert_eq!(end.status, EndStatus::Aborted, "{end:?}");
    let a = end.aborted.clone().unwrap();
    assert_eq!(a.condition, "errors > 50% for 2s");
    // The failure began in the first second with a failed answer: the window is 2 s, and
    // the second it began in may have been mostly answered.
    let began = run
        .intervals
        .iter()
        .find(|d| d.failed > 0)
        .map(|d| d.index)
        .expect("the target failed");
    assert!(
        a.at_second <= began + 2 + 1,
        "failing from second {began}, stopped at {}: {a:?}",
        a.at_second
    );
    assert!(a.from_second >= began && a.held_secs == 2, "{a:?}");
    // Nothing sent after the stop was asked for (the second it was decided in is whole).
    let sent_after: u64 = run
        .intervals
        .iter()
        .filter(|d| d.index > a.at_second)
        .map(|d| d.sent)
        .sum();
    assert_eq!(sent_after, 0, "sent after the stop");
    assert!(end.attack_secs < 40.0 - 5.0, "{end:?}");
    // The report names the condition and the seconds; stderr says it as it happens.
    let said = format!(
        "aborted at second {}: \"errors > 50% for 2s\" held for 2 s (from second {}",
        a.at_second, a.from_second
    );
    assert!(text.contains(&format!("ABORTED: {said}")), "{text}");
    assert!(
        err.contains(&format!("headroom: stopping: {said}")),
        "{err}"
    );
    assert!(err.contains(&format!("(exit status {ABORTED})")), "{err}");
    // It is no signal's stop, and not a partial run: everything sent is there.
    let json: serde_json::Value = serde_json::from_str(&stdout(&headroom(&[
        "report",
        out.to_str().unwrap(),
        "--format",
        "json",
    ])))
    .unwrap();
    assert_eq!(json["aborted"]["at_second"], a.at_second);
    assert_eq!(
        json["answer"]["aborted"]["condition"],
        "errors > 50% for 2s"
    );
    assert!(json["partial"].is_null(), "{}", json["partial"]);
    let junit = stdout(&headroom(&[
        "report",
        out.to_str().unwrap(),
        "--format",
        "junit",
    ]));
    assert!(
        junit.contains(r#"name="no abort condition held""#),
        "{junit}"
    );
    assert!(junit.contains(r#"type="aborted""#), "{junit}");
    let again = headroom(&["report", out.to_str().unwrap(), "--exit-status"]);
    assert_eq!(again.status.code(), Some(ABORTED), "{}", stderr(&again));
}

#[test]
fn a_condition_that_never_holds_never_stops_a_run() {
    let target = start_target(Duration::from_millis(1));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = headroom(&[
        "attack",
        &format!("http://{}/", target.addr()),
        "--rate",
        "40",
        "-d",
        "4s",
        "-q",
        "--abort-when",
        "errors > 0% for 0s, p99 > 5s, rps < 1 for 3s",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let run = stored(&out);
    let end = run.end.unwrap();
    assert_eq!((end.status, end.aborted), (EndStatus::Completed, None));
    // It went its whole duration: 40 req/s for 4 s.
    assert!(run.all.sent_first() >= 160, "{}", run.all.sent_first());
    assert_eq!(
        run.meta.abort_when,
        ["errors > 0% for 0s", "p99 > 5s", "rps < 1 for 3s"]
    );
    let junit = stdout(&headroom(&[
        "report",
        out.to_str().unwrap(),
        "--format",
        "junit",
    ]));
    assert!(
        junit.contains(r#"<testcase classname="headroom.run" name="no abort condition held"/>"#),
        "{junit}"
    );
}

/// A scenario's `abort_when` stops its run; the flag replaces it; a bad one is refused at
/// its line with a correct example.
#[test]
fn the_scenario_field_aborts_and_the_flag_wins() {
    let target = start_target(Duration::from_millis(1));
    let dir = tempfile::tempdir().unwrap();
    let scenario = |abort: &str| {
        let path = dir.path().join("scenario.yaml");
        std::fs::write(
            &path,
            format!(
                "target:\n  url: http://{}\nrequests:\n  - name: down\n    path: /status/503\nload:\n  rate: 40\n  duration: 3s\nabort_when: \"{abort}\"\n",
                target.addr()
            ),
        )
        .unwrap();
        path
    };
    let out = dir.path().join("aborted");
    let path = scenario("down: errors > 50%");
    // --check shows the conditions the run would be watched with.
    let checked = crate::support::succeeded(headroom(&["run", path.to_str().unwrap(), "--check"]));
    assert!(
        checked.contains("  abort   when down: errors > 50%\n"),
        "{checked}"
    );
    let o = headroom(&[
        "run",
        path.to_str().unwrap(),
        "-q",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(ABORTED), "{}", stderr(&o));
    let a = stored(&out).end.unwrap().aborted.unwrap();
    // Every answer failed from the first second: a window of 0 stops at its end.
    assert_eq!(
        (
            a.condition.as_str(),
            a.from_second,
            a.held_secs,
            a.at_second
        ),
        ("down: errors > 50%", 0, 1, 1)
    );
    assert_eq!(a.last, "100.00%");

    // Each variant of a matrix is watched on its own; the matrix exits as aborted.
    let o = headroom(&[
        "run",
        path.to_str().unwrap(),
        "-q",
        "--matrix",
        "load.rate=20,40",
        "--out",
        dir.path().join("matrix").to_str().unwrap(),
    ]);
    let (text, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(ABORTED), "{text}\n{err}");
    assert_eq!(
        text.matches("was aborted by its safety stop (--abort-when)")
            .count(),
        2,
        "{text}"
    );

    // The flag wins: a latency the failures never have never stops the run, which ends
    // with nothing succeeded (status 3), not aborted.
    let out = dir.path().join("flag");
    let o = headroom(&[
        "run",
        path.to_str().unwrap(),
        "-q",
        "--abort-when",
        "p99 > 10s",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let run = stored(&out);
    assert_eq!(run.end.unwrap().status, EndStatus::Completed);
    assert_eq!(run.meta.abort_when, ["p99 > 10s"]);

    // A sweep of the scenario stops at its own limits: the safety stop left out is said.
    let o = headroom(&[
        "sweep",
        "--scenario",
        path.to_str().unwrap(),
        "--rate",
        "20",
        "--step-duration",
        "1s",
        "-q",
        "--out",
        dir.path().join("sweep").to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_ne!(o.status.code(), Some(ABORTED), "{err}");
    assert!(
        err.contains("the scenario's abort_when is not used here"),
        "{err}"
    );

    for (bad, says) in [
        ("errors 50%", "no comparison"),
        ("errors > 50% for 1.5s", "not a whole number of seconds"),
        ("other: errors > 50%", "which the run does not send"),
    ] {
        let path = scenario(bad);
        let o = headroom(&["run", path.to_str().unwrap(), "-q"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{bad}: {err}");
        assert!(err.contains(says), "{bad}: {err}");
        assert!(!err.contains("panicked"), "{bad}: {err}");
    }
    let o = headroom(&[
        "attack",
        &format!("http://{}/", target.addr()),
        "--rate",
        "10",
        "-d",
        "1s",
        "--abort-when",
        "p99 > 2s for ever",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--abort-when")
            && err.contains("cannot read the window")
            && err.contains("e.g. 'errors > 5% for 30s, p99 > 2s for 1m'"),
        "{err}"
    );
}

/// With stderr not a terminal (a CI log, a pod), progress is one plain line every ten
/// seconds and the last at the end: no carriage return, no escape; the drain says so.
#[test]
fn without_a_terminal_progress_is_a_plain_line_every_ten_seconds() {
    let target = start_target(Duration::from_millis(1));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = headroom(&[
        "attack",
        &format!("http://{}/", target.addr()),
        "--rate",
        "20",
        "-d",
        "11s",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains('\r') && !err.contains('\x1b'), "{err:?}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with('[')).collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(lines[0].starts_with("[  10s/11s, 1s left]  sent"), "{err}");
    // The last: the run's last second, or the drain after it.
    assert!(
        lines[1].starts_with("[  11s/11s, 0s left]  sent")
            || (lines[1].starts_with("[  12s, draining]  done") && !lines[1].contains("sent")),
        "{err}"
    );
    // --quiet: none.
    let o = headroom(&[
        "attack",
        &format!("http://{}/", target.addr()),
        "--rate",
        "20",
        "-d",
        "1s",
        "-q",
        "--out",
        dir.path().join("quiet").to_str().unwrap(),
    ]);
    assert!(o.status.success());
    assert!(
        !stderr(&o).lines().any(|l| l.starts_with('[')),
        "{}",
        stderr(&o)
    );
}

/// A target that hangs after five seconds (Lua: every request then sleeps 20 s): the seconds
/// without one answer neither start nor break a streak; the hung requests count as errors
/// when their timeout fires, and those seconds stop the run.
#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx with Lua: run tests/run")]
fn a_target_that_hangs_is_aborted_once_its_timeouts_fire() {
    let _one = crate::support::one_heavy_at_a_time();
    let nginx = Nginx::hanging_after(5, 20);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = headroom(&[
        "attack",
        &nginx.url("http", "/"),
        "--rate",
        "20",
        "-d",
        "40s",
        "--timeout",
        "2s",
        "-q",
        "--abort-when",
        "errors > 50% for 2s",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(ABORTED), "{}", stderr(&o));
    let run = stored(&out);
    let a = run.end.clone().unwrap().aborted.unwrap();
    let first_failed = run
        .intervals
        .iter()
        .find(|d| d.failed > 0)
        .map(|d| d.index)
        .unwrap();
    // Between the last answer and the first timeout, seconds with nothing completed.
    let last_ok = run
        .intervals
        .iter()
        .filter(|d| d.completed > d.failed && d.index < first_failed)
        .map(|d| d.index)
        .max()
        .unwrap();
    let silent: Vec<u64> = run
        .intervals
        .iter()
        .filter(|d| d.index > last_ok && d.index < first_failed)
        .map(|d| d.completed)
        .collect();
    assert!(
        !silent.is_empty() && silent.iter().all(|&c| c == 0),
        "answered until {last_ok}, failing from {first_failed}: {silent:?}"
    );
    // The streak began with the timeouts, and stopped the run at the end of its window.
    assert_eq!(a.from_second, first_failed, "{a:?}");
    assert!(a.at_second <= first_failed + 2 + 1, "{a:?}");
    assert!(a.last.ends_with('%'), "{a:?}");
}
