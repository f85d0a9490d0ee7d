//! `headroom run`: scenario files against real servers — weighted mixes, per-request rows,
//! expectations and objectives.

use crate::support::nginx::{Nginx, Tls};
use crate::support::{attack, headroom, start_target};
use headroom::plan::scenario;
use headroom::plan::HttpVersion;
use std::path::Path;

/// Each request's row: its name, completions and failures.
fn rows_of(summary: &headroom::summary::Summary) -> Vec<(&str, u64, u64)> {
    summary
        .by_request
        .iter()
        .map(|r| (r.name.as_str(), r.count, r.failures))
        .collect()
}

/// nginx as a key-value API: /kv/ needs "Bearer good", anything else is 404.
pub(crate) fn kv_nginx() -> Nginx {
    Nginx::with_locations(
        Tls::None,
        r#"location /kv/ { if ($http_authorization != "Bearer good") { return 401; } return 200 "value\n"; }
    location / { return 404; }"#,
    )
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn a_weighted_mix_reaches_the_server_in_its_proportions_with_a_row_per_request() {
    let nginx = kv_nginx();
    let source = format!(
        r#"
target:
  url: {}
  headers:
    Authorization: Bearer good
requests:
  - name: read
    path: /kv/a
    weight: 3
  - name: write
    method: PUT
    path: /kv/a
    json: {{value: 1}}
  - name: bad credentials
    path: /kv/a
    headers:
      Authorization: Bearer wrong
    expect:
      status: [401, 403]
  - name: missing
    path: /nope
load:
  rate: 600
  requests: 600
threads: 2
"#,
        nginx.url("http", "")
    );
    let plan = scenario::parse(&source, Path::new("mix.yaml"), 1).unwrap();
    let (summary, _, _dir) = attack(&plan);

    let log = nginx.access_log();
    let count = |prefix: &str| log.iter().filter(|l| l.starts_with(prefix)).count();
    assert_eq!(count("HTTP/1.1 200 - /kv/a "), 400, "reads and writes");
    assert_eq!(count("HTTP/1.1 401 - /kv/a "), 100, "bad credentials");
    assert_eq!(count("HTTP/1.1 404 - /nope "), 100, "missing");

    let rows = rows_of(&summary);
    assert_eq!(
        rows,
        vec![
            ("read", 300, 0),
            ("write", 100, 0),
            ("bad credentials", 100, 0),
            ("missing", 100, 100)
        ]
    );
    let all = summary.aggregated.as_ref().unwrap();
    assert_eq!((all.count, all.failures), (600, 100));
    assert!((summary.success_ratio - 500.0 / 600.0).abs() < 1e-9);
    assert!(summary.method.is_none());
}

#[test]
fn objectives_decide_the_exit_status_and_the_markdown_has_the_table() {
    let target = start_target(std::time::Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, slo: &str| {
        let path = dir.path().join(name);
        std::fs::write(
            &path,
            format!(
                "target: {{url: 'http://{}'}}\nrequests:\n  - {{name: fast, path: /}}\n  - {{name: teapot, path: /status/418, expect: {{status: [418]}}}}\nload: {{users: 2, requests: 200}}\nslo: [{slo}]\n",
                target.addr()
            ),
        )
        .unwrap();
        path
    };
    let met = write("met.yaml", "'error_rate < 1%', 'fast: p100 < 10s'");
    let out = dir.path().join("run-met");
    let o = headroom(&[
        "run",
        met.to_str().unwrap(),
        "-q",
        "--format",
        "markdown",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout.contains("| Name | # reqs | # fails |"), "{stdout}");
    assert!(stdout.contains("| teapot | 100 | 0 (0.00%) |"), "{stdout}");
    assert!(stdout.contains("| `error_rate < 1%` |"), "{stdout}");

    let missed = write("missed.yaml", "'p50 < 1us'");
    let o = headroom(&[
        "run",
        missed.to_str().unwrap(),
        "-q",
        "--out",
        dir.path().join("run-missed").to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(3), "{stdout}");
    assert!(stdout.contains("NOT MET  p50 < 1us"), "{stdout}");

    // The stored run re-renders with the same verdicts.
    let o = headroom(&["report", out.to_str().unwrap(), "--format", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["slo"][0]["met"], true);
    assert_eq!(json["by_request"][1]["name"], "teapot");
}

#[test]
fn a_broken_scenario_is_one_line_naming_the_place_and_nothing_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.yaml");
    std::fs::write(
        &path,
        "target: {url: 'http://127.0.0.1:9'}\nrequests:\n  - name: a\n    path: /\n    wieght: 2\nload: {rate: 10, duration: 1s}\n",
    )
    .unwrap();
    let o = headroom(&[
        "run",
        path.to_str().unwrap(),
        "--out",
        dir.path().join("run").to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("broken.yaml:5:5: "), "{stderr}");
    assert!(stderr.contains("unknown field `wieght`"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!dir.path().join("run").exists(), "nothing was stored");

    let o = headroom(&["schema"]);
    let schema: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(schema["properties"]["requests"].is_object(), "{schema}");
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn open_model_stages_send_exactly_their_profile_and_report_each_stage() {
    let nginx = Nginx::start(Tls::None);
    let source = format!(
        r#"
target: {{url: "{}"}}
requests: [{{name: get, path: /staged}}]
load:
  stages:
    - {{name: steady, rate: 300, duration: 1s}}
    - {{name: ramp, rate: [300, 900], duration: 1s}}
    - {{name: pause, rate: 0, duration: 500ms}}
"#,
        nginx.url("http", "")
    );
    let plan = scenario::parse(&source, Path::new("stages.yaml"), 2).unwrap();
    assert_eq!(
        plan.stop.duration,
        Some(std::time::Duration::from_millis(2500))
    );
    let (summary, run, _dir) = attack(&plan);
    assert_eq!(nginx.access_log().len(), 900, "300 + (300+900)/2");
    assert_eq!(summary.requests.total, 900);
    let names: Vec<&str> = summary.stages.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["steady", "ramp", "pause"]);
    // Intervals are filed under the stage they began in: one second each here.
    let per_stage: Vec<u64> = summary.stages.iter().map(|s| s.count).collect();
    assert_eq!(per_stage.iter().sum::<u64>(), 900, "{per_stage:?}");
    assert!(
        per_stage[1] > per_stage[0],
        "the ramp sends more: {per_stage:?}"
    );
    assert_eq!(run.intervals[0].stage, Some(0));
}

#[test]
fn closed_model_stages_change_the_users_at_each_stage() {
    // 10 ms per request: one user completes at most 100 requests a second, four at most 400.
    let target = start_target(std::time::Duration::from_millis(10));
    let source = format!(
        r#"
target: {{url: "http://{}"}}
requests: [{{name: slow, path: /}}]
load:
  stages:
    - {{name: one, users: 1, duration: 1s}}
    - {{name: four, users: 4, duration: 1s}}
"#,
        target.addr()
    );
    let plan = scenario::parse(&source, Path::new("users.yaml"), 2).unwrap();
    let (summary, _, _dir) = attack(&plan);
    let one = &summary.stages[0];
    let four = &summary.stages[1];
    assert!(one.count <= 105, "one user at 10 ms each: {}", one.count);
    assert!(
        four.count > 2 * one.count,
        "four users do more: {} vs {}",
        four.count,
        one.count
    );
    let connects = summary.connect.expect("connections were opened").count;
    assert_eq!(connects, 4, "one connection per user, kept");
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn several_instances_share_each_request_name_in_turn() {
    let a = Nginx::start(Tls::None);
    let b = Nginx::start(Tls::None);
    for load in ["{rate: 400, requests: 400}", "{users: 3, requests: 400}"] {
        let source = format!(
            r#"
target: {{urls: ["{}", "{}"]}}
requests:
  - {{name: read, path: /read, weight: 3}}
  - {{name: write, method: PUT, path: /write}}
load: {load}
"#,
            a.url("http", ""),
            b.url("http", "")
        );
        let plan = scenario::parse(&source, Path::new("two.yaml"), 2).unwrap();
        let (summary, _, _dir) = attack(&plan);
        assert_eq!(summary.requests.total, 400);
        assert!(summary.errors.is_empty(), "{:?}", summary.errors);
    }
    for nginx in [&a, &b] {
        let log = nginx.access_log();
        let count = |path: &str| log.iter().filter(|l| l.contains(path)).count();
        // Each run sends 300 reads and 100 writes; each instance gets half of each, twice.
        assert_eq!(
            (count(" /read "), count(" /write ")),
            (300, 100),
            "{}",
            nginx.url("http", "")
        );
    }
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn warm_up_stages_are_sent_but_left_out_of_the_numbers() {
    let nginx = Nginx::start(Tls::None);
    let source = format!(
        r#"
target: {{url: "{}"}}
requests: [{{name: get, path: /}}]
load:
  stages:
    - {{name: warm, rate: 200, duration: 1s, warmup: true}}
    - {{name: measured, rate: 100, duration: 1s}}
"#,
        nginx.url("http", "")
    );
    let plan = scenario::parse(&source, Path::new("warm.yaml"), 1).unwrap();
    let (summary, run, _dir) = attack(&plan);
    assert_eq!(nginx.access_log().len(), 300, "the warm-up was sent");
    assert_eq!(run.all.sent, 300);
    // Replies are filed by when they complete: a warm-up reply may land just after 1 s, and
    // a measured request sent early (coalescing) may complete just before it.
    let measured = summary.requests.total;
    assert!((95..=110).contains(&measured), "{measured}");
    assert_eq!(summary.by_request[0].count, measured);
    assert!(summary.stages[0].warmup && !summary.stages[1].warmup);
    assert_eq!(summary.warmup_secs, 1.0);
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn flows_pass_captured_values_to_later_steps_and_stop_when_a_capture_fails() {
    let nginx = Nginx::with_locations(
        Tls::None,
        r#"location = /keys { add_header X-Version "v$arg_n" always; return 201 '{"id":"$arg_n"}'; }
    location /keys/ { return 200 "ok\n"; }"#,
    );
    let source = format!(
        r#"
target: {{url: "{}"}}
requests:
  - name: create
    method: POST
    path: "/keys?n={{{{ seq }}}}"
    capture: {{id: {{json: id}}, version: {{header: x-version}}}}
  - {{name: get, path: "/keys/{{{{ id }}}}"}}
  - {{name: versions, path: "/keys/{{{{ id }}}}/versions/{{{{ version }}}}"}}
  - name: broken
    method: POST
    path: "/keys?n=b{{{{ seq }}}}"
    capture: {{missing: {{json: nothing.here}}}}
  - {{name: after broken, path: "/keys/{{{{ missing }}}}"}}
flows:
  - {{name: lifecycle, steps: [create, get, versions], weight: 3, think: 2ms}}
  - {{name: doomed, steps: [broken, after broken]}}
load: LOAD
"#,
        nginx.url("http", "")
    );
    // The open model starts iterations at a rate; the closed model keeps four users busy.
    for load in ["{rate: 200, requests: 40}", "{users: 4, requests: 40}"] {
        let source = source.replace("LOAD", load);
        let plan = scenario::parse(&source, Path::new("flows.yaml"), 2).unwrap();
        let (summary, _, _dir) = attack(&plan);
        let rows = rows_of(&summary);
        assert_eq!(
            rows,
            [
                ("create", 30, 0),
                ("get", 30, 0),
                ("versions", 30, 0),
                ("broken", 10, 10),
                ("after broken", 0, 0)
            ]
        );
        let failed = summary
            .errors
            .iter()
            .find(|e| e.key == "capture_failed")
            .unwrap();
        assert_eq!(failed.count, 10);
    }
    let log = nginx.access_log();
    for x in 0..30 {
        for uri in [format!(" /keys/{x} "), format!(" /keys/{x}/versions/v{x} ")] {
            assert_eq!(
                log.iter().filter(|l| l.contains(&uri)).count(),
                2,
                "{uri}\n{log:?}"
            );
        }
    }
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn a_login_runs_once_per_identity_and_again_after_a_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let certs = crate::support::certs::make(dir.path());
    let locations = r#"location = /login { return 200 '{"token":"t$connection"}'; }
    location = /revoked { return 401; }
    location /api/ { if ($http_authorization !~ "^Bearer t[0-9]+$") { return 401; } return 200 "ok\n"; }"#;
    // The same on both protocols: over HTTP/2 a connection's streams share its login.
    let plain = Nginx::with_locations(Tls::None, locations);
    let h2 = Nginx::with_locations(Tls::Server(&certs), locations);
    for (nginx, scheme, http) in [
        (&plain, "http", HttpVersion::Http1),
        (&h2, "https", HttpVersion::Http2),
    ] {
        let scenario_with = |load: &str, requests: &str| {
            format!(
                r#"
target: {{url: "{}"}}
requests:
  - {{name: login, method: POST, path: /login, capture: {{token: {{json: token}}}}}}
  - {{name: api, path: /api/x, headers: {{Authorization: "Bearer {{{{ token }}}}"}}, expect: {{status: [200]}}}}
{requests}
login: {{request: login}}
load: {load}
"#,
                nginx.url(scheme, "")
            )
        };
        let plan_of = |source: &str, threads| {
            let mut plan = scenario::parse(source, Path::new("login.yaml"), threads).unwrap();
            plan.connection.http = http;
            plan.tls.ca = Some(certs.ca.clone());
            plan
        };
        let plan = plan_of(&scenario_with("{rate: 300, requests: 300}", ""), 2);
        let (summary, _, _dir) = attack(&plan);
        let api = &summary.by_request[1];
        assert_eq!(
            (api.count, api.failures),
            (300, 0),
            "{http:?}: every request carried a valid token"
        );
        let logins = summary.by_request[0].count;
        let connections = summary.connect.as_ref().unwrap().count;
        match http {
            // Over HTTP/1.1 the open model logs in once per worker thread, whatever the
            // connections.
            HttpVersion::Http1 => assert!(
                (1..=2).contains(&logins),
                "{http:?}: one login per thread, not {logins}"
            ),
            // Over HTTP/2 each pooled connection logs in once; one opened again in its place
            // keeps its login.
            _ => assert!(
                (1..=connections).contains(&logins),
                "{http:?}: {logins} logins for {connections} connections"
            ),
        }

        // Without keep-alive each request has a connection of its own, and a closed
        // connection is not a new login: at a rate over HTTP/1.1 a thread logs in once,
        // over HTTP/2 a lane (a stream at a time) once.
        let mut plan = plan_of(&scenario_with("{rate: 100, requests: 50}", ""), 2);
        plan.connection.keepalive = false;
        let (summary, _, _dir) = attack(&plan);
        let rows: Vec<(&str, u64)> = summary
            .by_request
            .iter()
            .map(|r| (r.name.as_str(), r.failures))
            .collect();
        assert_eq!(rows, [("login", 0), ("api", 0)], "{http:?}");
        assert_eq!(summary.by_request[1].count, 50, "{http:?}");
        let logins = summary.by_request[0].count;
        let connections = summary.connect.as_ref().unwrap().count;
        match http {
            HttpVersion::Http1 => assert!((1..=2).contains(&logins), "{http:?}: {logins} logins"),
            // As many lanes as were busy at once, however slow the handshakes: fewer than
            // the requests (a login each before).
            _ => assert!(
                (1..50).contains(&logins),
                "{http:?}: {logins} logins for {connections} connections"
            ),
        }
        // The login's connection may carry its waiting request or close after it.
        assert!(
            (50..=50 + logins).contains(&connections),
            "{http:?}: {connections}"
        );

        // With users, each user logs in once, whatever the connections it opens.
        let mut plan = plan_of(&scenario_with("{users: 3, requests: 60}", ""), 2);
        plan.connection.keepalive = false;
        let (summary, _, _dir) = attack(&plan);
        let rows = rows_of(&summary);
        assert_eq!(rows, [("login", 3, 0), ("api", 60, 0)], "{http:?}");
        assert!(
            summary.connect.as_ref().unwrap().count >= 60,
            "{http:?}: a connection per request"
        );

        // A server that closes its connections after a few requests (over HTTP/1.1 after
        // each, the login's too): the token stays good, and the request that waited goes on
        // the user's (or the pooled slot's) next connection with it.
        let (per_connection, users) = match http {
            HttpVersion::Http1 => (1, 2),
            _ => (5, 1),
        };
        let closing = Nginx::launch_with(
            if http == HttpVersion::Http1 {
                Tls::None
            } else {
                Tls::Server(&certs)
            },
            "worker_connections 4096;",
            &format!("keepalive_requests {per_connection};"),
            locations,
        );
        let source = scenario_with(&format!("{{users: {users}, requests: 20}}"), "")
            .replace(&nginx.url(scheme, ""), &closing.url(scheme, ""));
        let (summary, _, _dir) = attack(&plan_of(&source, 1));
        let rows = rows_of(&summary);
        assert_eq!(
            rows,
            [("login", users, 0), ("api", 20, 0)],
            "{http:?}: {:?}",
            summary.errors
        );
        assert!(
            summary.connect.as_ref().unwrap().count >= 21 / per_connection,
            "{http:?}: the server closed its connections"
        );
        // A token stale before the next connection opens still carries the request that
        // waited for it, once: a login per request, not a login loop.
        let source = source.replace(
            "login: {request: login}",
            "login: {request: login, refresh_after: 1us}",
        );
        let (summary, _, _dir) = attack(&plan_of(&source, 1));
        let api = &summary.by_request[1];
        assert_eq!((api.count, api.failures), (20, 0), "{http:?}");
        // A login per attempt at most (over HTTP/2 a stream the server's GOAWAY passed over
        // is sent again, after a login of its own).
        let most = if http == HttpVersion::Http1 { 21 } else { 40 };
        let logins = summary.by_request[0].count;
        assert!(logins <= most, "{http:?}: {logins} logins");

        // A refused token (401) makes the connection log in again before its next request.
        let source = scenario_with(
            "{users: 1, requests: 10}",
            "  - {name: revoked, path: /revoked, headers: {Authorization: \"Bearer {{ token }}\"}}",
        );
        let (summary, _, _dir) = attack(&plan_of(&source, 1));
        let rows: Vec<(&str, u64)> = summary
            .by_request
            .iter()
            .map(|r| (r.name.as_str(), r.count))
            .collect();
        assert_eq!(rows, [("login", 5), ("api", 5), ("revoked", 5)], "{http:?}");
        // The refusals are failures of their request (unlike a 401 a request expects, which
        // says nothing about the token and triggers no new login).
        assert_eq!(summary.aggregated.as_ref().unwrap().failures, 5, "{http:?}");
    }
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn body_and_json_expectations_fail_the_answers_that_miss_them() {
    let nginx = Nginx::with_locations(
        Tls::None,
        r#"location = /a { return 200 '{"state":"active","n":2}'; }
    location = /b { return 200 '{"state":"gone"}'; }
    location = /c { return 200 'not json at all'; }"#,
    );
    let source = format!(
        r#"
target: {{url: "{}"}}
requests:
  - {{name: a, path: /a, expect: {{json: {{state: active, n: 2}}, body: '"active"'}}}}
  - {{name: b, path: /b, expect: {{json: {{state: active}}}}}}
  - {{name: c, path: /c, expect: {{body: json}}}}
  - {{name: d, path: /c, expect: {{json: {{state: active}}}}}}
load: {{users: 2, requests: 40}}
"#,
        nginx.url("http", "")
    );
    let plan = scenario::parse(&source, Path::new("expect.yaml"), 1).unwrap();
    let (summary, _, _dir) = attack(&plan);
    let rows = rows_of(&summary);
    assert_eq!(
        rows,
        [("a", 10, 0), ("b", 10, 10), ("c", 10, 0), ("d", 10, 10)]
    );
    assert_eq!(
        summary.status_codes.get(&200),
        Some(&40),
        "the statuses are still counted"
    );
}
