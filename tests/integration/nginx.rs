//! Against a real nginx: counts, TLS, client certificates, HTTP/2, and a frozen server.

use crate::support::certs;
use crate::support::nginx::{Nginx, Tls};
use crate::support::{attack, open_plan};
use headroom::plan::{ClientIdentity, HttpVersion, Load};
use std::time::Duration;

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn nginx_sees_exactly_the_requests_asked_for() {
    let nginx = Nginx::start(Tls::None);
    let (summary, _, _dir) = attack(&open_plan(&nginx.url("http", "/count"), 400.0, 600));
    let log = nginx.access_log();
    assert_eq!(log.len(), 600, "nginx access log lines");
    let odd: Vec<_> = log
        .iter()
        .filter(|l| !l.starts_with("HTTP/1.1 200 - /count "))
        .collect();
    assert!(odd.is_empty(), "{odd:?}");
    assert_eq!(summary.requests.total, 600);
    assert_eq!(summary.status_codes.get(&200), Some(&600));
    assert!(summary.errors.is_empty(), "{:?}", summary.errors);
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn closed_model_sends_the_request_budget_and_no_more() {
    let nginx = Nginx::start(Tls::None);
    let mut plan = open_plan(&nginx.url("http", "/closed"), 1.0, 500);
    plan.load = Load::Closed { concurrency: 8 };
    plan.threads = 2;
    let (summary, _, _dir) = attack(&plan);
    assert_eq!(nginx.access_log().len(), 500);
    assert_eq!(summary.requests.total, 500);
    let connects = summary.connect.expect("connections were opened").count;
    assert!(
        (1..=8).contains(&connects),
        "8 workers keep their connections: {connects}"
    );
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn kernels_without_epoll_pwait2_send_the_same_requests() {
    // HEADROOM_EPOLL_WAIT=1 makes the direct driver sleep as it does on kernels older than
    // 5.11: epoll_wait woken by a timerfd. Both models, as a user runs them.
    let nginx = Nginx::start(Tls::None);
    let url = nginx.url("http", "/fallback");
    let dir = tempfile::tempdir().unwrap();
    for (i, load) in [["--rate", "400"], ["--concurrency", "4"]]
        .iter()
        .enumerate()
    {
        let out = dir.path().join(format!("run{i}"));
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_headroom"))
            .args([
                "attack", &url, load[0], load[1], "-n", "300", "-q", "--format", "json",
            ])
            .arg("--out")
            .arg(&out)
            .env("HEADROOM_EPOLL_WAIT", "1")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(report["status_codes"]["200"], 300, "{load:?}: {report}");
    }
    assert_eq!(nginx.access_log().len(), 600);
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn https_with_a_ca_bundle_and_session_reuse() {
    let dir = tempfile::tempdir().unwrap();
    let certs = certs::make(dir.path());
    let nginx = Nginx::start(Tls::Server(&certs));
    let mut plan = open_plan(&nginx.url("https", "/tls"), 200.0, 200);
    plan.tls.ca = Some(certs.ca.clone());
    plan.connection.http = HttpVersion::Http1;
    let (summary, _, _dir) = attack(&plan);
    assert_eq!(nginx.access_log().len(), 200);
    assert_eq!(summary.status_codes.get(&200), Some(&200));
    assert!(
        summary.tls_handshake.is_some(),
        "TLS handshake times are recorded"
    );
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn an_untrusted_server_certificate_is_a_clear_error_before_any_request() {
    let dir = tempfile::tempdir().unwrap();
    let certs = certs::make(dir.path());
    let nginx = Nginx::start(Tls::Server(&certs));
    let plan = open_plan(&nginx.url("https", "/"), 100.0, 10);
    // The system store does not trust the test CA.
    let err = crate::support::attack_error(&plan);
    assert!(
        err.contains("unknown CA") && err.contains("--cacert"),
        "{err}"
    );
    assert!(nginx.access_log().is_empty());
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn no_keepalive_opens_a_connection_and_handshake_per_request() {
    let dir = tempfile::tempdir().unwrap();
    let certs = certs::make(dir.path());
    let nginx = Nginx::start(Tls::Server(&certs));
    let mut plan = open_plan(&nginx.url("https", "/fresh"), 100.0, 50);
    plan.tls.ca = Some(certs.ca.clone());
    plan.connection.keepalive = false;
    let (summary, _, _dir) = attack(&plan);
    let log = nginx.access_log();
    assert_eq!(log.len(), 50);
    assert_eq!(summary.connect.unwrap().count, 50);
    assert_eq!(summary.tls_handshake.unwrap().count, 50);
    // Session resumption is on by default: after the first, handshakes resume ("r").
    let resumed = log.iter().filter(|l| l.ends_with(" r")).count();
    assert!(resumed >= 45, "{resumed} of 50 resumed: {:?}", &log[..3]);

    plan.tls.session_resumption = false;
    let before = nginx.access_log().len();
    attack(&plan);
    let log = nginx.access_log();
    assert!(
        log[before..].iter().all(|l| l.ends_with(" .")),
        "{:?}",
        &log[before..before + 3]
    );
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn a_client_certificate_is_presented_when_given() {
    let dir = tempfile::tempdir().unwrap();
    let certs = certs::make(dir.path());
    let nginx = Nginx::start(Tls::ClientCert(&certs));
    let mut plan = open_plan(&nginx.url("https", "/mtls"), 200.0, 100);
    plan.tls.ca = Some(certs.ca.clone());
    plan.tls.identity = Some(ClientIdentity {
        cert: certs.client_cert.clone(),
        key: certs.client_key.clone(),
    });
    let (summary, stored, run) = attack(&plan);
    let log = nginx.access_log();
    assert_eq!(log.len(), 100);
    assert!(
        log.iter().all(|l| l.contains(" 200 SUCCESS ")),
        "{:?}",
        &log[..2]
    );
    assert_eq!(summary.status_codes.get(&200), Some(&100));
    // The key file is referred to by path; its content never reaches the run directory.
    let key_pem = std::fs::read_to_string(&certs.client_key).unwrap();
    let body = key_pem.lines().nth(1).unwrap();
    assert!(!crate::support::all_text_under(run.path()).contains(body));
    assert!(stored.meta.tls.identity.is_some());
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn without_a_client_certificate_the_refusal_is_a_clear_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let certs = certs::make(dir.path());
    let nginx = Nginx::start(Tls::ClientCert(&certs));
    let mut plan = open_plan(&nginx.url("https", "/mtls"), 200.0, 40);
    plan.tls.ca = Some(certs.ca.clone());
    let (summary, _, _dir) = attack(&plan);
    // nginx completes the handshake and answers 400 "No required SSL certificate was sent".
    let log = nginx.access_log();
    assert!(log.iter().all(|l| l.contains(" 400 NONE ")), "{log:?}");
    assert_eq!(summary.status_codes.get(&400), Some(&40));
    assert_eq!(summary.success_ratio, 0.0);
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn http2_is_really_used_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let certs = certs::make(dir.path());
    let nginx = Nginx::start(Tls::Server(&certs));
    for version in [HttpVersion::Http2, HttpVersion::Http1] {
        let mut plan = open_plan(&nginx.url("https", "/proto"), 300.0, 150);
        plan.tls.ca = Some(certs.ca.clone());
        plan.connection.http = version;
        let (summary, _, _dir) = attack(&plan);
        assert_eq!(summary.status_codes.get(&200), Some(&150), "{version:?}");
        let spoken = if version == HttpVersion::Http2 {
            "HTTP/2"
        } else {
            "HTTP/1.1"
        };
        assert_eq!(summary.protocol, spoken);
    }
    let log = nginx.access_log();
    assert_eq!(
        log.iter().filter(|l| l.starts_with("HTTP/2.0 200")).count(),
        150,
        "{:?}",
        &log[..2]
    );
    assert_eq!(
        log.iter().filter(|l| l.starts_with("HTTP/1.1 200")).count(),
        150
    );
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn a_frozen_server_shows_as_the_latency_spike_of_an_open_model() {
    // The coordinated-omission test: 200 req/s for 4 s, nginx frozen for 1 s in the middle.
    let nginx = Nginx::start(Tls::None);
    let plan = open_plan(&nginx.url("http", "/frozen"), 200.0, 800);
    let pid = nginx.pid();
    let freezer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        rustix::process::kill_process(pid, rustix::process::Signal::STOP).unwrap();
        std::thread::sleep(Duration::from_millis(1000));
        rustix::process::kill_process(pid, rustix::process::Signal::CONT).unwrap();
    });
    let (summary, _, _dir) = attack(&plan);
    freezer.join().unwrap();
    assert_eq!(summary.requests.total, 800, "no request is lost");
    assert_eq!(nginx.access_log().len(), 800);
    // ~200 requests were due during the freeze; they waited between 0 and 1 s. A closed-model
    // tool would record one slow request; here about a quarter of all requests are slow.
    let lat = &summary.latency;
    assert!(lat.max_us >= 900_000, "max {} µs", lat.max_us);
    assert!(lat.p90_us >= 200_000, "p90 {} µs", lat.p90_us);
    assert!(
        lat.p50_us < 100_000,
        "p50 {} µs: most requests were not affected",
        lat.p50_us
    );
    assert!(
        !summary.verdict.generator_limited(),
        "{:?}",
        summary.verdict
    );
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn http2_streams_refused_by_goaway_are_retried_and_processed_once() {
    // nginx says GOAWAY after 50 requests per connection; streams it refused are sent again
    // on a new connection, and its access log proves none was processed twice.
    let dir = tempfile::tempdir().unwrap();
    let certs = certs::make(dir.path());
    let nginx = Nginx::start_with(Tls::Server(&certs), "keepalive_requests 50;");
    let mut plan = open_plan(&nginx.url("https", "/goaway"), 1.0, 1000);
    plan.load = Load::Closed { concurrency: 20 };
    plan.connection.http = HttpVersion::Http2;
    plan.tls.ca = Some(certs.ca.clone());
    let (summary, _, _dir) = attack(&plan);
    assert_eq!(
        summary.status_codes.get(&200),
        Some(&1000),
        "{:?}",
        summary.errors
    );
    assert_eq!(nginx.access_log().len(), 1000);
    assert!(
        summary.connect.unwrap().count >= 20,
        "a new connection every 50 requests"
    );
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn an_idle_keepalive_close_is_retried_not_blamed_on_the_server() {
    // nginx closes connections idle for 100 ms; requests come every 250 ms on the same one.
    let nginx = Nginx::start_with(Tls::None, "keepalive_timeout 100ms;");
    let (summary, _, _dir) = attack(&open_plan(&nginx.url("http", "/idle"), 4.0, 6));
    assert_eq!(
        summary.status_codes.get(&200),
        Some(&6),
        "{:?}",
        summary.errors
    );
    assert_eq!(nginx.access_log().len(), 6);
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn request_bodies_larger_than_a_socket_buffer_are_sent_whole() {
    let dir = tempfile::tempdir().unwrap();
    let certs = certs::make(dir.path());
    let nginx = Nginx::start_with(Tls::Server(&certs), "client_max_body_size 16m;");
    let http = Nginx::start_with(Tls::None, "client_max_body_size 16m;");
    let body = bytes::Bytes::from(vec![b'b'; 8 * 1024 * 1024]);
    for (server, url) in [
        (&http, http.url("http", "/upload")),
        (&nginx, nginx.url("https", "/upload")),
    ] {
        let mut plan = open_plan(&url, 20.0, 10);
        plan.requests[0].spec =
            headroom::plan::RequestSpec::parse("POST", &[], body.clone()).unwrap();
        plan.tls.ca = Some(certs.ca.clone());
        plan.connection.http = HttpVersion::Http1;
        let (summary, _, _dir) = attack(&plan);
        assert_eq!(
            summary.status_codes.get(&200),
            Some(&10),
            "{url}: {:?}",
            summary.errors
        );
        assert_eq!(summary.bytes.out_total, 10 * 8 * 1024 * 1024);
        assert_eq!(server.access_log().len(), 10);
    }
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn hundreds_of_users_on_one_thread_are_all_served() {
    let _one = crate::support::one_heavy_at_a_time();
    // More sockets ready at once than one epoll wait takes (256): those left over must be
    // read, not waited for again and again.
    let nginx = Nginx::start(Tls::None);
    let mut plan = open_plan(&nginx.url("http", "/many"), 1.0, 3000);
    plan.load = Load::Closed { concurrency: 300 };
    plan.threads = 1;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(attack(&plan));
    });
    let (summary, _, _dir) = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("the run ends");
    assert_eq!(
        summary.status_codes.get(&200),
        Some(&3000),
        "{:?}",
        summary.errors
    );
    assert_eq!(nginx.access_log().len(), 3000);
}

/// `--monitor-pid` takes nginx's master and finds its workers; given twice (or as a list) it
/// watches each tree and says how much each used, and the CPU is bounded by the cores the
/// watched threads could run on.
#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn watched_pids_are_process_trees_with_their_own_lines() {
    let _one = crate::support::one_heavy_at_a_time();
    let served = Nginx::with_workers(2);
    let other = Nginx::start(Tls::None);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let pid = |n: &Nginx| n.pid().as_raw_nonzero().get().to_string();
    let pids = format!("{},{}", pid(&served), pid(&other));
    let o = crate::support::headroom(&[
        "attack",
        &served.url("http", "/"),
        "--rate",
        "1000",
        "-d",
        "3s",
        "-q",
        "--monitor-pid",
        &pids,
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("of a core (at most "), "{text}");
    assert!(text.contains("[pid name, cpu mean, processes]"), "{text}");
    let o = crate::support::headroom(&["report", out.to_str().unwrap(), "--format", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let server = &json["server"];
    let trees = server["trees"].as_array().unwrap();
    assert_eq!(trees.len(), 2, "{server}");
    assert_eq!(trees[0]["pid"].to_string(), pid(&served));
    // The master and its two workers.
    assert!(trees[0]["processes_max"].as_u64().unwrap() >= 3, "{server}");
    assert_eq!(trees[1]["processes_max"], 1, "{server}");
    assert!(
        trees[0]["cpu_mean_percent"].as_f64().unwrap() > 0.0,
        "{server}"
    );
    let bound = server["cpu_bound_percent"].as_f64().unwrap();
    let cores = headroom::monitor::cores_online() as f64;
    let threads = server["threads_max"].as_f64().unwrap();
    assert_eq!(bound, 100.0 * cores.min(threads), "{server}");
    assert!(
        server["cpu_max_percent"].as_f64().unwrap() <= bound,
        "{server}"
    );
}
