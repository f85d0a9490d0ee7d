//! Protocol edges against real servers: servers that close after every response, a refused
//! client certificate, server certificates that fail in three different ways, HTTP/2 asked of
//! a server without it, a login and a flow over HTTP/2, and recorded times that can never be
//! shorter than the exchange they time.
//!
//! Every assertion holds by counting or by causality, never by speed: the suite passes on a
//! busy machine.

use crate::support::certs::{self, Certs};
use crate::support::held::Held;
use crate::support::nginx::{Nginx, Tls};
use crate::support::{attack, attack_error, headroom, open_plan};
use headroom::plan::{scenario, AttackPlan, HttpVersion, Load};
use headroom::summary::Summary;
use std::path::Path;
use std::time::Duration;

/// Checks that every one of `requests` got a 200, nothing failed, and nginx logged each once.
fn assert_all_answered_200(nginx: &Nginx, summary: &Summary, requests: u64, what: &str) {
    assert!(
        summary.errors.is_empty(),
        "{what}: every request should get its 200, but some failed: {:?} (status codes {:?})",
        summary.errors,
        summary.status_codes
    );
    assert_eq!(
        summary.status_codes,
        [(200, requests)].into(),
        "{what}: status codes"
    );
    assert_eq!(
        summary.requests.total, requests,
        "{what}: requests completed"
    );
    let log = nginx.access_log();
    assert_eq!(log.len() as u64, requests, "{what}: nginx access log lines");
}

/// An HTTP/1.1 plan for `url` at 200 req/s, 200 requests, trusting `certs`'s CA.
fn http1_plan(url: &str, certs: &Certs) -> AttackPlan {
    let mut plan = open_plan(url, 200.0, 200);
    plan.connection.http = HttpVersion::Http1;
    plan.tls.ca = Some(certs.ca.clone());
    plan
}

// 1. A server that closes after every response ---------------------------------------------

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn http1_server_closing_after_every_response_plain() {
    let dir = tempfile::tempdir().unwrap();
    let certs = certs::make(dir.path());
    let nginx = Nginx::start_with(Tls::None, "keepalive_requests 1;");
    let plan = http1_plan(&nginx.url("http", "/one-per-conn"), &certs);
    let (summary, _, _run) = attack(&plan);
    assert_all_answered_200(&nginx, &summary, 200, "http://, keepalive_requests 1");
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn http1_server_closing_after_every_response_tls() {
    let dir = tempfile::tempdir().unwrap();
    let certs = certs::make(dir.path());
    let nginx = Nginx::start_with(Tls::Server(&certs), "keepalive_requests 1;");
    let plan = http1_plan(&nginx.url("https", "/one-per-conn"), &certs);
    let (summary, _, _run) = attack(&plan);
    assert_all_answered_200(&nginx, &summary, 200, "https://, keepalive_requests 1");
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn http1_server_closing_after_every_response_tls_closed_model() {
    let dir = tempfile::tempdir().unwrap();
    let certs = certs::make(dir.path());
    let nginx = Nginx::start_with(Tls::Server(&certs), "keepalive_requests 1;");
    let mut plan = http1_plan(&nginx.url("https", "/one-per-conn"), &certs);
    plan.load = Load::Closed { concurrency: 4 };
    let (summary, _, _run) = attack(&plan);
    assert_all_answered_200(
        &nginx,
        &summary,
        200,
        "https://, keepalive_requests 1, 4 users",
    );
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn http1_without_keepalive_plain() {
    let dir = tempfile::tempdir().unwrap();
    let certs = certs::make(dir.path());
    let nginx = Nginx::start(Tls::None);
    let mut plan = http1_plan(&nginx.url("http", "/no-keepalive"), &certs);
    plan.connection.keepalive = false;
    let (summary, _, _run) = attack(&plan);
    assert_all_answered_200(&nginx, &summary, 200, "http://, no keep-alive");
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn http1_without_keepalive_tls() {
    let dir = tempfile::tempdir().unwrap();
    let certs = certs::make(dir.path());
    let nginx = Nginx::start(Tls::Server(&certs));
    let mut plan = http1_plan(&nginx.url("https", "/no-keepalive"), &certs);
    plan.connection.keepalive = false;
    let (summary, _, _run) = attack(&plan);
    assert_all_answered_200(&nginx, &summary, 200, "https://, no keep-alive");
}

// 2. A server that wants a client certificate, over HTTP/1.1 -------------------------------

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn http1_without_the_required_client_certificate_counts_the_400s() {
    // nginx completes the handshake, then answers every request 400 ("No required SSL
    // certificate was sent") with Connection: close.
    let dir = tempfile::tempdir().unwrap();
    let certs = certs::make(dir.path());
    let nginx = Nginx::start(Tls::ClientCert(&certs));
    let mut plan = open_plan(&nginx.url("https", "/mtls"), 100.0, 40);
    plan.connection.http = HttpVersion::Http1;
    plan.tls.ca = Some(certs.ca.clone());
    let (summary, _, _run) = attack(&plan);
    // Each 400 is an answer, not a transport error: the Error Set has them as the status
    // the request does not expect, and nothing else.
    let set: Vec<(&str, u64)> = summary
        .errors
        .iter()
        .map(|e| (e.key.as_str(), e.count))
        .collect();
    assert_eq!(
        set,
        [("status_400", 40)],
        "status codes {:?}",
        summary.status_codes
    );
    assert_eq!(summary.status_codes, [(400, 40)].into(), "status codes");
    let log = nginx.access_log();
    assert_eq!(log.len(), 40, "nginx access log lines: {log:?}");
    assert!(log.iter().all(|l| l.contains(" 400 NONE ")), "{log:?}");
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn http1_without_the_required_client_certificate_the_cli_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let certs = certs::make(dir.path());
    let nginx = Nginx::start(Tls::ClientCert(&certs));
    let out = dir.path().join("run");
    let url = nginx.url("https", "/mtls");
    let o = headroom(&[
        "attack",
        &url,
        "--http1",
        "--cacert",
        certs.ca.to_str().unwrap(),
        "--rate",
        "50",
        "-n",
        "20",
        "-q",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr
            .lines()
            .any(|l| l.to_lowercase().contains("client certificate")),
        "stderr should have a line naming the missing client certificate:\n{stderr}"
    );
    // The run completes, and says that not one request succeeded (status 3): every answer
    // was nginx's 400 for the missing certificate.
    assert_eq!(o.status.code(), Some(3), "the run completes:\n{stderr}");
    let summary = Summary::of(&crate::support::counts::check_dir(&out));
    assert!(summary.nothing_succeeded(), "{:?}", summary.verdict);
    assert_eq!(
        summary.status_codes,
        [(400, 20)].into(),
        "stored status codes; errors {:?}",
        summary.errors
    );
    assert_eq!(nginx.access_log().len(), 20);
}

// 3. Three server-certificate failures, three messages -------------------------------------

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn expired_mismatched_and_unknown_ca_certificates_give_three_clear_messages() {
    let dir = tempfile::tempdir().unwrap();
    let certs = certs::make(dir.path());
    let expired_dir = tempfile::tempdir().unwrap();
    let expired = certs::make_expired(expired_dir.path());
    let good = Nginx::start(Tls::Server(&certs));
    let stale = Nginx::start(Tls::Server(&expired));

    // Each message without its URL and address, so only what it says is compared.
    let error_of = |plan: &AttackPlan, nginx: &Nginx| {
        attack_error(plan)
            .replace(&plan.target.url, "URL")
            .replace(&format!("127.0.0.1:{}", nginx.port), "ADDR")
    };

    // The right CA, a certificate past its not-after date.
    let mut plan = open_plan(&stale.url("https", "/"), 100.0, 10);
    plan.tls.ca = Some(expired.ca.clone());
    let expired_err = error_of(&plan, &stale);

    // The right CA, another name than the certificate's (it is for 127.0.0.1 and localhost).
    let mut plan = open_plan(&good.url("https", "/"), 100.0, 10);
    plan.tls.ca = Some(certs.ca.clone());
    plan.tls.server_name = Some("example.com".into());
    let mismatch_err = error_of(&plan, &good);

    // No --cacert: the system store does not trust the test CA.
    let plan = open_plan(&good.url("https", "/"), 100.0, 10);
    let unknown_err = error_of(&plan, &good);

    assert!(stale.access_log().is_empty(), "nothing reached nginx");
    assert!(good.access_log().is_empty(), "nothing reached nginx");

    let mut problems = Vec::new();
    if !expired_err.contains("expired") {
        problems.push("the expired certificate's message should say \"expired\"");
    }
    if !mismatch_err.contains("name") {
        problems
            .push("the name mismatch's message should say \"name\" (and suggest --server-name)");
    }
    if !unknown_err.contains("--cacert") {
        problems.push("the unknown CA's message should suggest \"--cacert\"");
    }
    if expired_err == mismatch_err || expired_err == unknown_err || mismatch_err == unknown_err {
        problems.push("the three messages should differ from each other");
    }
    assert!(
        problems.is_empty(),
        "{}\n  expired:  {expired_err}\n  mismatch: {mismatch_err}\n  unknown:  {unknown_err}",
        problems.join("\n")
    );
}

// 4. HTTP/2 asked of a server that does not offer it ---------------------------------------

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn http2_against_a_server_without_h2_says_alpn() {
    let dir = tempfile::tempdir().unwrap();
    let certs = certs::make(dir.path());
    let nginx = Nginx::start(Tls::ServerHttp1Only(&certs));
    let mut plan = open_plan(&nginx.url("https", "/h2"), 100.0, 10);
    plan.tls.ca = Some(certs.ca.clone());
    plan.connection.http = HttpVersion::Http2;
    let err = attack_error(&plan);
    assert!(
        err.contains("ALPN"),
        "the error should say the server did not agree to h2 in ALPN: {err}"
    );
    assert!(nginx.access_log().is_empty());
}

// 5. A login and a flow with a capture, over HTTP/2 ----------------------------------------

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn a_login_and_a_flow_with_a_capture_run_over_http2() {
    let dir = tempfile::tempdir().unwrap();
    let certs = certs::make(dir.path());
    let nginx = Nginx::with_locations_and_log(
        Tls::Server(&certs),
        r#"default_type application/json;
    location = /login { return 200 '{"token":"t-123"}'; }
    location /keys { return 201 '{"id":"k-7"}'; }
    location /keys/ { return 200 '{"ok":true}'; }"#,
        "$request_method $request_uri $http_authorization $server_protocol",
    );
    let scenario_path = dir.path().join("h2-flow.yaml");
    std::fs::write(
        &scenario_path,
        format!(
            r#"
target:
  url: "{url}"
  http: http2
  tls: {{ca: "{ca}"}}
login: {{request: login}}
requests:
  - {{name: login, method: POST, path: /login, capture: {{token: {{json: token}}}}}}
  - name: create key
    method: POST
    path: /keys
    headers: {{Authorization: "Bearer {{{{ token }}}}"}}
    json: {{name: k}}
    capture: {{id: {{json: id}}}}
  - {{name: get key, path: "/keys/{{{{ id }}}}", headers: {{Authorization: "Bearer {{{{ token }}}}"}}}}
  - {{name: delete key, method: DELETE, path: "/keys/{{{{ id }}}}", headers: {{Authorization: "Bearer {{{{ token }}}}"}}}}
flows:
  - {{name: lifecycle, steps: [create key, get key, delete key]}}
load: {{rate: 30, requests: 30}}
"#,
            url = nginx.url("https", ""),
            ca = certs.ca.display()
        ),
    )
    .unwrap();
    let plan = scenario::load(&scenario_path, 1).unwrap();
    assert_eq!(
        plan.connection.http,
        HttpVersion::Http2,
        "http: http2 is read"
    );
    let (summary, _, _run) = attack(&plan);
    let log = nginx.access_log();

    let not_h2: Vec<_> = log.iter().filter(|l| !l.ends_with(" HTTP/2.0")).collect();
    assert!(
        not_h2.is_empty(),
        "every request went over HTTP/2: {not_h2:?}"
    );
    let (logins, steps): (Vec<&String>, Vec<&String>) =
        log.iter().partition(|l| l.starts_with("POST /login "));
    let no_token: Vec<_> = steps
        .iter()
        .filter(|l| !l.contains(" Bearer t-123 "))
        .collect();
    assert!(
        no_token.is_empty(),
        "every request after the login carried its token: {no_token:?}"
    );
    let count = |prefix: &str| steps.iter().filter(|l| l.starts_with(prefix)).count() as u64;
    let (created, got, deleted) = (
        count("POST /keys "),
        count("GET /keys/k-7 "),
        count("DELETE /keys/k-7 "),
    );
    assert_eq!(
        created + got + deleted,
        steps.len() as u64,
        "only the flow's steps, with the captured id: {steps:?}"
    );

    let row = |name: &str| {
        let r = summary
            .by_request
            .iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("a row for {name:?}"));
        (r.count, r.failures)
    };
    assert_eq!(row("create key"), (30, 0), "errors {:?}", summary.errors);
    assert_eq!(row("get key"), (30, 0));
    assert_eq!(row("delete key"), (30, 0));
    assert_eq!((created, got, deleted), (30, 30, 30), "what nginx saw");
    let (login_count, login_failures) = row("login");
    assert!(login_count >= 1, "at least one login");
    assert_eq!(login_failures, 0);
    assert_eq!(logins.len() as u64, login_count, "logins nginx saw");
    assert!(summary.errors.is_empty(), "{:?}", summary.errors);
}

// 6. Recorded times are never shorter than the exchange ------------------------------------

/// The mix: each request's name and the path that makes the server hold it.
const HOLDS: [(&str, &str); 3] = [
    ("hold 5us", "/hold/5"),
    ("hold 200us", "/hold/200"),
    ("hold 2ms", "/hold/2000"),
];

fn hold_plan(url: &str, rate: u64) -> AttackPlan {
    let requests: String = HOLDS
        .iter()
        .map(|(name, path)| format!("  - {{name: {name}, path: {path}}}\n"))
        .collect();
    let source = format!(
        "target: {{url: \"{url}\"}}\nrequests:\n{requests}load: {{rate: {rate}, requests: {rate}}}\n"
    );
    scenario::parse(&source, Path::new("holds.yaml"), 1).unwrap()
}

/// Whether `recorded_us` (an HDR minimum) can be the record of a time of at least `held`:
/// times are recorded in whole microseconds (rounded down) with 3 significant digits, so a
/// value may read up to 1/1024 below its floor; nothing more is allowed.
fn covers(recorded_us: u64, held: Duration) -> bool {
    let floor_us = held.as_micros() as f64;
    recorded_us as f64 >= floor_us * 0.999
}

/// For HTTP `version` at `rate` req/s for one second, with and without coalescing: the run's
/// service-time and latency minimums cover the shortest hold the server measured, and each
/// request's service-time and latency minimums cover the shortest hold of its path.
fn recorded_times_cover_the_server_holds(version: HttpVersion, rate: u64) {
    let _one = crate::support::one_heavy_at_a_time();
    let server = Held::start();
    let mut problems = Vec::new();
    for coalesce in [Duration::ZERO, Duration::from_millis(1)] {
        let mut plan = hold_plan(&server.url(), rate);
        plan.connection.http = version;
        plan.connection.coalesce = coalesce;
        let (summary, _, _run) = attack(&plan);
        let holds = server.take();
        let run = format!("{version:?}, {rate} req/s, coalesce {coalesce:?}");

        // The run itself: every request answered, so each bound below is over all of them.
        assert!(
            summary.errors.is_empty(),
            "{run}: errors {:?}",
            summary.errors
        );
        assert_eq!(
            summary.status_codes,
            [(200, rate)].into(),
            "{run}: status codes"
        );
        let served: u64 = holds.values().map(|h| h.count).sum();
        assert_eq!(served, rate, "{run}: requests the server held: {holds:?}");

        let shortest = holds.values().map(|h| h.min_held).min().unwrap();
        // Shown with a failure (the test harness keeps it otherwise).
        println!(
            "{run}: service min {} µs, latency min {} µs, server's shortest hold {shortest:?}",
            summary.service_time.min_us, summary.latency.min_us
        );
        for (name, path) in HOLDS {
            let row = summary.by_request.iter().find(|r| r.name == name);
            println!(
                "  {name}: service min {:?} µs, latency min {:?} µs, server's shortest hold {:?}",
                row.map(|r| r.service.min_us),
                row.map(|r| r.latency.min_us),
                holds.get(path).map(|h| h.min_held)
            );
        }
        for (what, min_us) in [
            ("service time", summary.service_time.min_us),
            ("latency", summary.latency.min_us),
        ] {
            if !covers(min_us, shortest) {
                problems.push(format!(
                    "{run}: the run's {what} minimum is {min_us} µs, shorter than the shortest \
                     hold the server measured ({shortest:?})"
                ));
            }
        }
        for (name, path) in HOLDS {
            let held = holds
                .get(path)
                .unwrap_or_else(|| panic!("{run}: the server held no {path}: {holds:?}"))
                .min_held;
            let row = summary
                .by_request
                .iter()
                .find(|r| r.name == name)
                .unwrap_or_else(|| panic!("{run}: no row for {name:?}"));
            for (what, min_us) in [
                ("service time", row.service.min_us),
                ("latency", row.latency.min_us),
            ] {
                if !covers(min_us, held) {
                    problems.push(format!(
                        "{run}: {name:?}'s {what} minimum is {min_us} µs, shorter than the \
                         shortest time the server held {path} ({held:?})"
                    ));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "recorded times shorter than the exchange they time:\n{}",
        problems.join("\n")
    );
}

#[test]
fn recorded_times_cover_the_server_holds_http1_500_per_sec() {
    recorded_times_cover_the_server_holds(HttpVersion::Http1, 500);
}

#[test]
fn recorded_times_cover_the_server_holds_http1_5000_per_sec() {
    recorded_times_cover_the_server_holds(HttpVersion::Http1, 5_000);
}

#[test]
fn recorded_times_cover_the_server_holds_http2_500_per_sec() {
    recorded_times_cover_the_server_holds(HttpVersion::Http2, 500);
}

#[test]
fn recorded_times_cover_the_server_holds_http2_5000_per_sec() {
    recorded_times_cover_the_server_holds(HttpVersion::Http2, 5_000);
}
