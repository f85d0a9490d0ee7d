//! Against the built-in target: a known fixed delay, status classes, TLS with client
//! certificates, and an unreachable port.

use crate::support::certs;
use crate::support::{attack, free_port, open_plan};
use headroom::plan::{ClientIdentity, HttpVersion, Load};
use headroom::sample::Side;
use headroom::target::{self, RunningTarget, TargetConfig, TargetTls};
use std::time::Duration;

fn start(tls: Option<TargetTls>, latency: Duration) -> RunningTarget {
    if tls.is_none() {
        return crate::support::start_target(latency);
    }
    target::spawn(TargetConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        tls,
        latency,
        threads: 1,
        capacity: None,
    })
    .unwrap()
}

#[test]
fn a_known_fixed_delay_yields_matching_percentiles() {
    let server = start(None, Duration::ZERO);
    let url = format!("http://{}/delay/50", server.addr());
    let (summary, _, _dir) = attack(&open_plan(&url, 100.0, 300));
    assert_eq!(summary.status_codes.get(&200), Some(&300));
    // The server sleeps 50 ms on a timerfd; loopback adds little. Nothing can be faster.
    for (name, us) in [
        ("min", summary.latency.min_us),
        ("p50", summary.latency.p50_us),
    ] {
        assert!(
            (50_000..60_000).contains(&us),
            "{name} = {us} µs, expected about 50 ms"
        );
    }
    assert!(summary.service_time.p50_us <= summary.latency.p50_us);
    // The tail is bounded loosely: tests run in parallel on two cores.
    assert!(
        summary.latency.p90_us < 70_000,
        "p90 {} µs",
        summary.latency.p90_us
    );
    assert!(
        summary.latency.p99_us < 150_000,
        "p99 {} µs",
        summary.latency.p99_us
    );
}

#[test]
fn statuses_are_counted_and_5xx_is_blamed_on_the_server() {
    let server = start(None, Duration::ZERO);
    let url = format!("http://{}/status/503", server.addr());
    let (summary, _, _dir) = attack(&open_plan(&url, 200.0, 50));
    assert_eq!(summary.status_codes.get(&503), Some(&50));
    assert_eq!(summary.success_ratio, 0.0);
    let e = summary
        .errors
        .iter()
        .find(|e| e.key == "status_503")
        .expect("503 in the error set");
    assert_eq!((e.count, e.side), (50, Side::Server));
}

#[test]
fn mutual_tls_over_http2_with_the_built_in_target() {
    let dir = tempfile::tempdir().unwrap();
    let certs = certs::make(dir.path());
    let server = start(
        Some(TargetTls {
            cert: certs.server_cert.clone(),
            key: certs.server_key.clone(),
            client_ca: Some(certs.ca.clone()),
        }),
        Duration::ZERO,
    );
    let url = format!("https://{}/", server.addr());
    let mut plan = open_plan(&url, 1.0, 400);
    plan.load = Load::Closed { concurrency: 20 };
    plan.connection.http = HttpVersion::Http2;
    plan.tls.ca = Some(certs.ca.clone());
    plan.tls.identity = Some(ClientIdentity {
        cert: certs.client_cert.clone(),
        key: certs.client_key.clone(),
    });
    let (summary, _, _dir) = attack(&plan);
    assert_eq!(summary.status_codes.get(&200), Some(&400));
    // 20 streams share one HTTP/2 connection per engine thread.
    assert!(summary.connect.unwrap().count <= 2);

    // Without the client certificate the server rejects the handshake; the preflight hears
    // the alert and says so before any request is recorded.
    plan.tls.identity = None;
    let err = crate::support::attack_error(&plan);
    assert!(
        err.contains("requires a client certificate") && err.contains("--cert"),
        "{err}"
    );
}

#[test]
fn an_unreachable_port_is_one_clear_error() {
    let port = free_port();
    let err =
        crate::support::attack_error(&open_plan(&format!("http://127.0.0.1:{port}/"), 10.0, 10));
    assert!(
        err.contains("cannot connect") && err.contains("refused"),
        "{err}"
    );
}

#[test]
fn interval_log_has_one_line_per_second() {
    let server = start(None, Duration::ZERO);
    let url = format!("http://{}/", server.addr());
    let mut plan = open_plan(&url, 500.0, 1_000_000);
    plan.stop.duration = Some(Duration::from_millis(3500));
    let (summary, stored, _dir) = attack(&plan);
    assert_eq!(summary.requests.total, 1750);
    let indices: Vec<u64> = stored.intervals.iter().map(|d| d.index).collect();
    assert_eq!(indices, vec![0, 1, 2, 3]);
    // Requests may leave up to the coalescing window (1 ms) early, so one due exactly on a
    // second boundary can count in the interval before it.
    let sent = stored.intervals[1].sent;
    assert!((498..=502).contains(&sent), "interval 1 sent {sent}");
    assert_eq!(stored.intervals.iter().map(|d| d.sent).sum::<u64>(), 1750);
    assert!(stored.end.is_some());
}

#[test]
fn a_generator_short_of_connections_says_so() {
    // 500 req/s at a server taking 50 ms needs ~25 connections; allow 2. Requests queue in
    // the generator, so the report must blame the generator, not the server.
    let server = crate::support::start_target(Duration::from_millis(50));
    let mut plan = open_plan(&format!("http://{}/", server.addr()), 500.0, 120);
    plan.connection.max_connections = 2;
    let (summary, _, _dir) = attack(&plan);
    assert_eq!(
        summary.requests.total, 120,
        "every request is still sent and counted"
    );
    // The evidence is the cap: 500 req/s at 50 ms need ~25 connections by Little's law.
    let v = &summary.verdict;
    assert_eq!(v.limit, headroom::summary::Limit::Generator, "{v:?}");
    assert!(
        v.findings.iter().any(|f| matches!(
            f,
            headroom::summary::Finding::ConnectionCap { max_connections: 2, needed, .. }
                if *needed > 20.0
        )),
        "{v:?}"
    );
    assert!(
        v.findings
            .iter()
            .any(|f| matches!(f, headroom::summary::Finding::SentLate { .. })),
        "{v:?}"
    );
    // Latency from the intended time shows the queueing a user would have seen.
    assert!(
        summary.latency.p99_us > 1_000_000,
        "p99 {} µs",
        summary.latency.p99_us
    );
    assert!(
        summary.service_time.p99_us < 200_000,
        "service p99 {} µs",
        summary.service_time.p99_us
    );
}
