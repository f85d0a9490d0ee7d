//! Each answer of the diagnosis against the real server built to make it wrong: a wall of
//! 401s, a body expectation never met, a closed-model sweep past a server's capacity,
//! connections slow to open under TLS with client certificates, an API gateway's burst
//! credits, a server that slows with time. Each test asserts the typed diagnosis (the JSON),
//! not the English.

use crate::support::certs;
use crate::support::nginx::{Nginx, Tls};
use crate::support::{headroom, json_file, stderr, stdout};
use serde_json::Value;
use std::path::Path;

/// Runs `args` (a command writing its run to `out`, JSON on stdout) and returns its exit
/// status, its JSON summary and the text report of the stored run.
fn summary_of(args: &[&str], out: &Path) -> (Option<i32>, Value, String) {
    let mut all = args.to_vec();
    all.extend(["-q", "--format", "json", "--out", out.to_str().unwrap()]);
    let o = headroom(&all);
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(&o), stderr(&o)));
    let text = headroom(&["report", out.to_str().unwrap()]);
    (o.status.code(), v, stdout(&text))
}

fn findings(verdict: &Value) -> &Vec<Value> {
    verdict["findings"].as_array().unwrap()
}

fn finding<'a>(verdict: &'a Value, kind: &str) -> Option<&'a Value> {
    findings(verdict).iter().find(|f| f["finding"] == kind)
}

/// Every request answered 401 (a wrong token): the first line says nothing succeeded, with
/// the reason and its count; latencies are dashes, not 0 µs; the run exits 3 without any
/// objective. The same for a body expectation that no answer meets.
#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn a_wall_of_401s_or_a_body_never_expected_is_nothing_succeeded_with_the_reason() {
    let nginx = Nginx::launch_with(
        Tls::None,
        "worker_connections 1024;",
        "keepalive_requests 1000000;",
        r#"location /wall { return 401; } location / { return 200 "ok\n"; }"#,
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("wall");
    let (code, v, text) = summary_of(
        &[
            "attack",
            &nginx.url("http", "/wall"),
            "--rate",
            "100",
            "-d",
            "2s",
        ],
        &out,
    );
    assert_eq!(code, Some(3), "{text}");
    let verdict = &v["verdict"];
    assert_eq!(verdict["limit"], "nothing_succeeded", "{verdict}");
    let nothing = finding(verdict, "nothing_succeeded").unwrap();
    let total = v["requests"]["total"].as_u64().unwrap();
    assert!(total >= 150, "{v}");
    assert_eq!(nothing["completed"].as_u64(), Some(total));
    assert_eq!(
        nothing["reasons"],
        serde_json::json!([{"reason": {"kind": "status", "code": 401}, "count": total}])
    );
    // What ran, then at once that nothing succeeded and why, before any number.
    assert!(
        text.lines().next().unwrap().starts_with("GET http://"),
        "{text}"
    );
    assert!(
        text.lines()
            .nth(1)
            .unwrap()
            .starts_with("NOTHING SUCCEEDED"),
        "{text}"
    );
    assert!(
        text.lines().nth(2).unwrap().contains("× HTTP 401"),
        "{text}"
    );
    let latencies = text.lines().find(|l| l.starts_with("Latencies")).unwrap();
    assert!(
        latencies.contains("—") && !latencies.contains("0µs"),
        "{text}"
    );
    // The per-request table too, in every format that shows it: no answer, no latency.
    assert_no_latency_in_rows(&text, "Requests by name:", &text);
    let md = stdout(&headroom(&[
        "report",
        out.to_str().unwrap(),
        "--format",
        "markdown",
    ]));
    assert_no_latency_in_rows(&md, "Requests by name", &md);
    let html = stdout(&headroom(&[
        "report",
        out.to_str().unwrap(),
        "--format",
        "html",
    ]));
    assert!(html.contains("<td>—</td>"), "no dash in the HTML report");
    assert!(!html.contains(">0µs<"), "a 0µs cell in the HTML report");
    for row in v["by_request"]
        .as_array()
        .unwrap()
        .iter()
        .chain([&v["aggregated"]])
    {
        assert!(row["percentiles_us"].is_null(), "{row}");
    }

    // Answered 200 every time, but never with the body the scenario expects.
    let scenario = dir.path().join("expects.yaml");
    std::fs::write(
        &scenario,
        format!(
            "target: {{url: '{}'}}\nrequests:\n  - {{name: home, path: /, expect: {{body: welcome}}}}\nload: {{rate: 100, duration: 2s}}\n",
            nginx.url("http", "")
        ),
    )
    .unwrap();
    let (code, v, text) = summary_of(
        &["run", scenario.to_str().unwrap()],
        &dir.path().join("expects"),
    );
    assert_eq!(code, Some(3), "{text}");
    assert_eq!(
        v["verdict"]["limit"], "nothing_succeeded",
        "{}",
        v["verdict"]
    );
    let nothing = finding(&v["verdict"], "nothing_succeeded").unwrap();
    assert_eq!(
        nothing["reasons"][0]["reason"],
        serde_json::json!({"kind": "expectation", "code": 200})
    );
    assert!(
        text.lines()
            .nth(1)
            .unwrap()
            .starts_with("NOTHING SUCCEEDED"),
        "{text}"
    );
}

/// The rows after `title` up to the next blank or section line: each row for `GET /` or
/// `Aggregated` shows dashes for its latencies, not one 0 µs.
fn assert_no_latency_in_rows(report: &str, title: &str, all: &str) {
    let rows: Vec<&str> = report
        .lines()
        .skip_while(|l| !l.starts_with(title) && !l.contains(&format!("# {title}")))
        .filter(|l| l.contains("GET /") || l.contains("Aggregated"))
        .take(2)
        .collect();
    assert_eq!(rows.len(), 2, "{all}");
    for row in rows {
        let cells: Vec<&str> = row.split(|c: char| c.is_whitespace() || c == '|').collect();
        assert!(!cells.contains(&"0µs"), "{row}\n{all}");
        assert!(cells.iter().filter(|c| **c == "—").count() >= 13, "{row}");
    }
}

/// A capacity search against a wall of 401s finds no rate that meets the objectives: it exits
/// 3 (as a run that missed one), its probe lines and headline show no latency ("—", not
/// 0 µs), and it reads no knee off latencies that do not exist.
#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn a_capacity_search_against_a_wall_of_401s_finds_none_and_exits_3() {
    let nginx = Nginx::launch_with(
        Tls::None,
        "worker_connections 1024;",
        "keepalive_requests 1000000;",
        r#"location /wall { return 401; } location / { return 200 "ok\n"; }"#,
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("search");
    let o = headroom(&[
        "capacity",
        &nginx.url("http", "/wall"),
        "--slo",
        "p99 < 50ms",
        // The shortest window a 50 ms bound allows; from 2 req/s the search reaches its
        // lowest rate (1 req/s) in two probes and ends with none found.
        "--window",
        "5s",
        "--warmup",
        "1s",
        "--confirm",
        "0",
        "--start",
        "2",
        "--max-probes",
        "4",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (text, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(3), "{text}\n{err}");
    assert!(
        err.contains("not one request succeeded at any rate tried"),
        "{err}"
    );
    assert!(text.starts_with("Capacity of"), "{text}");
    assert!(text.contains("No capacity"), "{text}");
    let probes: Vec<&str> = err.lines().filter(|l| l.starts_with("probe ")).collect();
    assert_eq!(probes.len(), 2, "{err}");
    for p in probes {
        assert!(p.contains("p99 —") && !p.contains("0µs"), "{p}");
    }
    let headline = text
        .lines()
        .find(|l| l.starts_with("tipping point"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(headline.contains("p50 — · p99 —"), "{headline}");
    assert!(!text.contains("latency did not change"), "{text}");
    assert!(text.contains("no probe got an answer it expects"), "{text}");
    assert!(!text.contains(" 0µs"), "{text}");
}

/// nginx taking 10 ms per request behind a limit of 400 req/s that queues the rest: one user
/// gets about 100 req/s, the knee is at about 4 users (400 × 10 ms), and past it more users
/// only wait in line. The closed sweep names the server's saturation at every step past the
/// knee, with the knee by Little's law, and the run's verdict is the first such step's.
#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn a_closed_sweep_past_the_knee_is_the_servers_saturation() {
    let _one = crate::support::one_heavy_at_a_time();
    let nginx = Nginx::with_modules(
        Tls::None,
        &["echo"],
        "keepalive_requests 1000000;\n  limit_req_zone $server_port zone=capped:1m rate=400r/s;",
        "location / { limit_req zone=capped burst=100000; echo_sleep 0.01; echo ok; }",
    );
    let dir = tempfile::tempdir().unwrap();
    let (code, v, text) = summary_of(
        &[
            "sweep",
            &nginx.url("http", "/"),
            "--concurrency",
            "1,2,4,8,16,32",
            "--step-requests",
            "320",
        ],
        &dir.path().join("sweep"),
    );
    assert_eq!(code, Some(0), "{text}");
    let stages = v["stages"].as_array().unwrap();
    let users = |s: &Value| s["from"].as_f64().unwrap();
    for s in stages {
        let limit = &s["verdict"]["limit"];
        let saturated = finding(&s["verdict"], "saturated");
        if users(s) <= 2.0 {
            // Each user adds its own 100 req/s: nothing is saturated.
            assert_eq!(limit, "neither", "{}: {}", users(s), s["verdict"]);
        }
        if users(s) >= 16.0 {
            assert_eq!(limit, "server", "{}: {}", users(s), s["verdict"]);
            let f = saturated.unwrap_or_else(|| panic!("{}", s["verdict"]));
            let knee = f["knee_users"].as_f64().unwrap();
            let plateau = f["throughput"].as_f64().unwrap();
            assert!((2.5..=6.0).contains(&knee), "knee at {knee} users: {f}");
            assert!((300.0..=440.0).contains(&plateau), "plateau {plateau}: {f}");
        }
    }
    // The run's verdict is the first saturated step's (8 users, or 16 on a slow machine).
    let run = &v["verdict"];
    assert_eq!(run["limit"], "server", "{run}");
    let at = finding(run, "at_step").unwrap();
    assert!(at["name"] == "8 users" || at["name"] == "16 users", "{run}");
    assert!(finding(run, "saturated").is_some(), "{run}");
    assert!(
        text.contains("the server saturated: throughput stayed at about"),
        "{text}"
    );
}

/// The same capped server (nginx delaying what passes 400 req/s: a queue that serves 400 a
/// second) stepped in 3-second steps, too short for a trend: the step at 1,000 req/s piles
/// up requests and its latency climbs, which is the server's queue, never "kept up". (Under
/// a busy machine the generator may share the blame; it is never called fine.)
#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn a_short_open_step_past_capacity_is_the_servers_queue() {
    let _one = crate::support::one_heavy_at_a_time();
    let nginx = Nginx::with_modules(
        Tls::None,
        &["echo"],
        "keepalive_requests 1000000;\n  limit_req_zone $server_port zone=capped:1m rate=400r/s;",
        "location / { limit_req zone=capped burst=100000; echo ok; }",
    );
    let dir = tempfile::tempdir().unwrap();
    let (code, v, text) = summary_of(
        &[
            "sweep",
            &nginx.url("http", "/"),
            "--rate",
            "200,1000",
            "--step-duration",
            "3s",
            "--stop-when",
            "none",
        ],
        &dir.path().join("sweep"),
    );
    assert_eq!(code, Some(0), "{text}");
    let stages = v["stages"].as_array().unwrap();
    let step = |rate: f64| {
        stages
            .iter()
            .find(|s| s["from"].as_f64() == Some(rate) && s["warmup"] != true)
            .unwrap_or_else(|| panic!("no step at {rate}: {v}"))
    };
    let past = &step(1000.0)["verdict"];
    assert!(
        ["server", "both"].contains(&past["limit"].as_str().unwrap()),
        "{past}\n{text}"
    );
    if past["limit"] == "server" {
        assert!(finding(past, "latency_rising").is_some(), "{past}");
    }
    assert_ne!(v["verdict"]["limit"], "neither", "{text}");
    assert!(!text.contains("neither side was the limit"), "{text}");
    assert_ne!(step(200.0)["verdict"]["limit"], "server", "{text}");
}

/// TLS with client certificates whose every handshake the server holds 50 ms (Lua, before
/// the certificate is chosen): the first second's requests wait for connections being
/// opened and leave late, then every one leaves on time. With the rate held that is a
/// transient, never "the server was the limit", in the run and in `compare`'s row.
#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn connections_opening_under_mtls_are_a_transient_not_the_server() {
    let _one = crate::support::one_heavy_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let c = certs::make(dir.path());
    let nginx = Nginx::with_modules(
        Tls::ClientCert(&c),
        &["lua"],
        "keepalive_requests 1000000;",
        r#"ssl_certificate_by_lua_block { ngx.sleep(0.05) }
    location / { return 200 "ok\n"; }"#,
    );
    let out = dir.path().join("run");
    let (code, v, text) = summary_of(
        &[
            "attack",
            &nginx.url("https", "/"),
            "--rate",
            "200",
            "-d",
            "4s",
            "--cacert",
            c.ca.to_str().unwrap(),
            "--cert",
            c.client_cert.to_str().unwrap(),
            "--key",
            c.client_key.to_str().unwrap(),
            "--http1",
        ],
        &out,
    );
    assert_eq!(code, Some(0), "{text}");
    let verdict = &v["verdict"];
    eprintln!("the handshakes' run: {verdict}");
    assert_ne!(verdict["limit"], "server", "{verdict}\n{text}");
    // The generator starved of its CPU on a busy machine is late throughout, on its own
    // evidence; otherwise the lateness was the handshakes', and only theirs.
    let starved = ["cpu_starved", "cpu_busy"]
        .iter()
        .any(|k| finding(verdict, k).is_some());
    if !starved {
        assert_eq!(verdict["limit"], "transient", "{verdict}\n{text}");
        let t = finding(verdict, "transient").unwrap();
        assert_eq!(t["cause"], "connection_opening", "{t}");
        assert!(t["tls_p99_us"].as_u64().unwrap() >= 50_000, "{t}");
        assert!(
            t["seconds"]
                .as_array()
                .unwrap()
                .iter()
                .all(|s| s.as_u64() < Some(2)),
            "{t}"
        );
        assert!(
            text.contains("only while connections were being opened"),
            "{text}"
        );
        let compare = headroom(&["compare", out.to_str().unwrap(), out.to_str().unwrap()]);
        let table = stdout(&compare);
        let row = table
            .lines()
            .find(|l| l.trim_start().starts_with("limit"))
            .unwrap();
        assert!(
            row.contains("ok (transient: connections opening"),
            "{table}"
        );
    }
}

/// An API gateway's burst credits: nginx `limit_req rate=200r/s burst=6000 nodelay` lets
/// every short probe through up to the highest rate tried (500 req/s spends 300 credits a
/// second), then refuses all above 200 req/s once the credits are spent. The search's answer
/// is held for 15 s before it is given: the hold at 500 breaks while the server still
/// serves 200 req/s, and the search goes on below, with holds, to an answer it held.
#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn burst_credits_do_not_pass_for_capacity() {
    let _one = crate::support::one_heavy_at_a_time();
    let nginx = Nginx::launch_with(
        Tls::None,
        "worker_connections 4096;",
        "keepalive_requests 1000000;\n  limit_req_zone $server_port zone=credits:1m rate=200r/s;",
        "location / { limit_req zone=credits burst=6000 nodelay; empty_gif; }",
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("search");
    let o = headroom(&[
        "capacity",
        &nginx.url("http", "/"),
        "--slo",
        "p99 < 100ms, errors < 1%",
        "--window",
        "5s",
        "--warmup",
        "1s",
        "--max",
        "500",
        "--confirm",
        "15s",
        "-q",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = stdout(&o);
    assert!(o.status.success(), "{text}\n{}", stderr(&o));
    let record = json_file(&out.join("capacity.json"));
    let outcome = &record["outcome"];
    let capacity = outcome["capacity"].as_f64().unwrap();
    assert!(capacity <= 200.0 * 1.02, "{text}");
    if outcome["verdict"] == "generator_bound" {
        // A machine too busy to offer the load says so; its lower bound still never
        // passes the credits off as capacity.
        eprintln!("the machine could not offer the load; the search said so:\n{text}");
        return;
    }
    assert!(
        capacity >= 150.0,
        "answered {capacity} for 200 req/s sustained\n{text}"
    );
    assert_eq!(outcome["held"], true, "{text}");
    let probes = record["probes"].as_array().unwrap();
    let broken_hold = probes
        .iter()
        .find(|p| p["phase"] == "hold" && p["met"] == false)
        .unwrap_or_else(|| panic!("no hold broke:\n{text}"));
    let served = broken_hold["served_after_break"].as_f64().unwrap();
    assert!((180.0..=220.0).contains(&served), "{broken_hold}");
    assert!(
        text.contains("passed its 5 s probes but not the 15 s hold"),
        "{text}"
    );
    // The answer is a rate that held, and the highest that did: a hold the search tried
    // above it (bisecting toward what the server served) broke.
    let holds = || probes.iter().filter(|p| p["phase"] == "hold");
    assert!(
        holds().any(|p| p["rate"].as_f64() == Some(capacity) && p["met"] == true),
        "{text}"
    );
    assert!(
        holds()
            .filter(|p| p["rate"].as_f64().unwrap() > capacity)
            .all(|p| p["met"] == false),
        "{text}"
    );
}

/// nginx whose every answer waits 2 ms more for each second it has been up, whatever the
/// load (Lua). An attack at one rate sees latency drift while every request sent was
/// answered, and says it cannot tell a server slowing with time from a queue at the edge of
/// its capacity (one load cannot), with what would settle it; a sweep at two rates, or a
/// capacity search, can: the server changed with time, and the search stops instead of
/// reporting an unstable boundary, its chart drawing latency through the search.
#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn a_server_slowing_with_time_is_named_and_no_capacity_is_given() {
    let _one = crate::support::one_heavy_at_a_time();
    let nginx = Nginx::with_modules(
        Tls::None,
        &["lua"],
        "keepalive_requests 1000000;\n  init_by_lua_block { started = ngx.now() }",
        r#"location / { content_by_lua_block { ngx.sleep((ngx.now() - started) * 0.002); ngx.print("ok") } }"#,
    );
    let dir = tempfile::tempdir().unwrap();
    let (code, v, text) = summary_of(
        &[
            "attack",
            &nginx.url("http", "/"),
            "--rate",
            "50",
            "-d",
            "8s",
        ],
        &dir.path().join("attack"),
    );
    assert_eq!(code, Some(0), "{text}");
    let verdict = &v["verdict"];
    assert_eq!(verdict["limit"], "cannot_tell", "{verdict}\n{text}");
    let drift = finding(verdict, "latency_drifting").unwrap();
    let speed = drift["us_per_sec"].as_f64().unwrap();
    assert!((1_400.0..=2_600.0).contains(&speed), "{drift}");
    assert!(text.contains("run again at a clearly lower load"), "{text}");

    // Two rates, one drift: the clock.
    let (code, v, text) = summary_of(
        &[
            "sweep",
            &nginx.url("http", "/"),
            "--rate",
            "20,60",
            "--step-duration",
            "8s",
            "--warmup",
            "1s",
        ],
        &dir.path().join("sweep"),
    );
    assert_eq!(code, Some(0), "{text}");
    let verdict = &v["verdict"];
    assert_eq!(verdict["limit"], "changed_with_time", "{verdict}\n{text}");
    let clock = finding(verdict, "clock_drift").unwrap();
    assert_eq!(clock["steps"].as_array().unwrap().len(), 2, "{clock}");

    let out = dir.path().join("search");
    let o = headroom(&[
        "capacity",
        &nginx.url("http", "/"),
        "--slo",
        "p99 < 250ms",
        "--window",
        "6s",
        "--warmup",
        "1s",
        "--start",
        "50",
        "--confirm",
        "10s",
        "-q",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = stdout(&o);
    assert!(o.status.success(), "{text}\n{}", stderr(&o));
    let record = json_file(&out.join("capacity.json"));
    assert_eq!(record["outcome"]["verdict"], "changed_with_time", "{text}");
    assert!(record["outcome"]["capacity"].is_null(), "{text}");
    let clock = &record["clock"];
    assert!(clock["probes"].as_array().unwrap().len() >= 3, "{clock}");
    assert!(clock["rates"].as_array().unwrap().len() >= 2, "{clock}");
    assert!(
        text.contains("No capacity: the server changed with time") && !text.contains("unstable"),
        "{text}"
    );
    // No bound stands on a server that changed: no tipping point either.
    assert!(record["outcome"]["tipping"].is_null(), "{text}");
    // Each probe is named with its own rate.
    let first = &record["probes"][0];
    let named = format!(
        "Through probes 1 ({} req/s)",
        first["rate"].as_f64().unwrap()
    );
    assert!(text.contains(&named), "{named}\n{text}");
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("it followed the clock, not the rate"));
}
