//! Every scenario in `examples/` runs, in a short version, against the real servers it was
//! written for (nginx with TLS and client certificates, etcd), started here on free ports.

use crate::support::attack;
use crate::support::certs;
use crate::support::etcd::Etcd;
use crate::support::nginx::{Nginx, Tls};
use headroom::plan::scenario;
use headroom::summary::Reason;
use headroom::summary::Summary;
use std::path::Path;

/// Loads `examples/NAME` with each `(from, to)` replaced: the servers' addresses and
/// certificates, and shorter stages.
fn example(name: &str, replace: &[(&str, &str)]) -> headroom::plan::AttackPlan {
    let path = examples_dir().join(name);
    let mut text = crate::support::example_text(name);
    for (from, to) in replace {
        assert!(text.contains(from), "{name} has {from:?}");
        text = text.replace(from, to);
    }
    scenario::parse(&text, &path, 2).unwrap_or_else(|e| panic!("{e}"))
}

fn examples_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples")
}

fn assert_clean(name: &str, s: &Summary) {
    assert!(s.requests.total > 0, "{name}: nothing completed");
    // Seed 004's users race to destroy the key they all listed, as the seed's did: those
    // that find it gone fail its `deleted: 1` expectation, and nothing else fails.
    let raced = |request: &str| name.starts_with("004") && request == "destroy key";
    let failed: Vec<_> = s
        .by_request
        .iter()
        .filter(|r| r.failures > 0 && !raced(&r.name))
        .collect();
    assert!(failed.is_empty(), "{name}: {failed:?}");
    let others: Vec<_> = s
        .failures
        .iter()
        .filter(|f| !(raced(&f.request) && matches!(f.reason, Reason::Expectation { code: 200 })))
        .collect();
    assert!(others.is_empty(), "{name}: {others:?}");
    let unexpected: Vec<_> = s
        .errors
        .iter()
        .filter(|e| !(name.starts_with("004") && e.key == "expectation_failed"))
        .collect();
    assert!(unexpected.is_empty(), "{name}: {:?}", s.errors);
}

fn tls_paths(c: &certs::Certs) -> Vec<(String, String)> {
    vec![
        (".run/certs/ca.pem".into(), c.ca.display().to_string()),
        (
            ".run/certs/client.pem".into(),
            c.client_cert.display().to_string(),
        ),
        (
            ".run/certs/client.key".into(),
            c.client_key.display().to_string(),
        ),
    ]
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn seed_001_tls_termination_with_and_without_client_certificates() {
    let dir = tempfile::tempdir().unwrap();
    let c = certs::make(dir.path());
    let tls = Nginx::start(Tls::Server(&c));
    let mtls = Nginx::start(Tls::ClientCert(&c));
    for (name, nginx, port) in [
        ("001-tls-termination.yaml", &tls, "18443"),
        ("001-mtls-termination.yaml", &mtls, "18444"),
    ] {
        let url = format!("https://127.0.0.1:{port}/");
        let mut replace: Vec<(String, String)> = tls_paths(&c);
        replace.retain(|(from, _)| name.contains("mtls") || from.ends_with("ca.pem"));
        replace.push((url, nginx.url("https", "/")));
        replace.push(("duration: 20s".into(), "duration: 500ms".into()));
        let replace: Vec<(&str, &str)> = replace
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let (summary, _, _d) = attack(&example(name, &replace));
        assert_clean(name, &summary);
        assert_eq!(summary.stages.len(), 3, "{name}");
        assert_eq!(
            nginx.access_log().len() as u64,
            summary.requests.total,
            "{name}"
        );
        if name.contains("mtls") {
            assert!(
                nginx.access_log().iter().all(|l| l.contains(" SUCCESS ")),
                "{name}"
            );
        }
    }
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn seed_003_mutual_tls_with_concurrency_steps() {
    let dir = tempfile::tempdir().unwrap();
    let c = certs::make(dir.path());
    let mtls = Nginx::start(Tls::ClientCert(&c));
    let url = mtls.url("https", "/");
    let mut replace: Vec<(String, String)> = tls_paths(&c);
    replace.push(("https://127.0.0.1:18444/".into(), url));
    replace.push(("duration: 10s".into(), "duration: 300ms".into()));
    let replace: Vec<(&str, &str)> = replace
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let (summary, _, _d) = attack(&example("003-mtls-concurrency.yaml", &replace));
    assert_clean("003", &summary);
    let steps: Vec<&str> = summary.stages.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        steps,
        ["1 user", "10 users", "30 users", "60 users", "120 users"]
    );
    let handshakes = summary.tls_handshake.expect("TLS was used").count;
    assert_eq!(
        handshakes, 120,
        "one connection per user at the widest step"
    );
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs etcd: run tests/run")]
fn seed_002_key_value_data_sets_written_then_read_one_and_many() {
    let etcd = Etcd::start();
    let url = format!("{}/v3", etcd.url());
    let fill = example(
        "002-kv-fill.yaml",
        &[
            ("http://127.0.0.1:23790/v3", &url),
            ("keys: 10000", "keys: 300"),
            ("requests: 10000", "requests: 300"),
        ],
    );
    let (summary, _, _d) = attack(&fill);
    assert_clean("002-fill", &summary);
    assert_eq!(summary.requests.total, 300);
    let read = example(
        "002-kv-read.yaml",
        &[
            ("http://127.0.0.1:23790/v3", &url),
            ("keys: 10000", "keys: 300"),
            ("duration: 1m", "duration: 500ms"),
        ],
    );
    let (summary, _, _d) = attack(&read);
    assert_clean("002-read", &summary);
    let one = &summary.by_request[0];
    let many = &summary.by_request[1];
    // A 256-byte value is 344 characters of base64: "get many" returns five of them.
    assert!(one.mean_bytes > 344.0, "get one: {}", one.mean_bytes);
    assert!(
        many.mean_bytes > 4.5 * 344.0,
        "get many: {}",
        many.mean_bytes
    );
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx and etcd: run tests/run")]
fn seed_000_secrets_mix_behind_token_auth_with_invalid_auth_traffic() {
    let etcd = Etcd::start();
    let gate = Nginx::token_gate(&etcd.url());
    let url = gate.url("http", "/v3");
    let plan = example(
        "000-secrets-service.yaml",
        &[
            ("http://127.0.0.1:18081/v3", &url),
            ("duration: 1m", "duration: 500ms"),
            ("duration: 5m", "duration: 1s"),
        ],
    );
    let (summary, _, _d) = attack(&plan);
    assert_clean("000", &summary);
    // Each connection logged in once, on its own row.
    let logins = summary.by_request[0].count;
    let connections = summary.connect.as_ref().map_or(0, |c| c.count);
    assert!(
        logins >= 1 && logins == connections,
        "{logins} logins, {connections} connections"
    );
    let rows: Vec<(&str, u64)> = summary.by_request[1..]
        .iter()
        .map(|r| (r.name.as_str(), r.count))
        .collect();
    let total: u64 = rows.iter().map(|r| r.1).sum();
    // 95 reads : 5 writes : 10 invalid; a smooth mix is within one request of it at any point.
    for (row, weight) in rows.iter().zip([95.0, 5.0, 10.0]) {
        let exact = total as f64 * weight / 110.0;
        assert!((row.1 as f64 - exact).abs() <= 1.0, "{rows:?}");
    }
    assert!(
        summary
            .status_codes
            .get(&401)
            .is_some_and(|&n| n == rows[2].1),
        "{:?}",
        summary.status_codes
    );
    assert_eq!(
        summary.slo.len(),
        3,
        "every objective judged: {:?}",
        summary.slo
    );
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn seed_003_over_several_instances_keeps_a_connection_per_user_and_instance() {
    let dir = tempfile::tempdir().unwrap();
    let c = certs::make(dir.path());
    let a = Nginx::start(Tls::ClientCert(&c));
    let b = Nginx::start(Tls::ClientCert(&c));
    let mut replace: Vec<(String, String)> = tls_paths(&c);
    // Four instances in the file; two servers here, each standing for two of them.
    for (port, nginx) in [("18444", &a), ("18445", &a), ("18446", &b), ("18447", &b)] {
        replace.push((
            format!("https://127.0.0.1:{port}/"),
            nginx.url("https", "/"),
        ));
    }
    replace.push(("duration: 10s".into(), "duration: 300ms".into()));
    let replace: Vec<(&str, &str)> = replace
        .iter()
        .map(|(x, y)| (x.as_str(), y.as_str()))
        .collect();
    let (summary, _, _d) = attack(&example("003-mtls-instances.yaml", &replace));
    assert_clean("003-instances", &summary);
    let (seen_a, seen_b) = (a.access_log().len() as i64, b.access_log().len() as i64);
    assert_eq!((seen_a + seen_b) as u64, summary.requests.total);
    assert!(
        (seen_a - seen_b).abs() <= 120,
        "round-robin halves: {seen_a} vs {seen_b}"
    );
    let handshakes = summary.tls_handshake.expect("TLS was used").count;
    assert!(
        handshakes <= 120 * 4,
        "a connection per user and instance at most: {handshakes}"
    );
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs etcd: run tests/run")]
fn seed_004_key_lifecycle_flows_on_etcd() {
    let etcd = Etcd::start();
    let url = format!("{}/v3", etcd.url());
    let plan = example(
        "004-key-lifecycle.yaml",
        &[
            ("http://127.0.0.1:23790/v3", &url),
            ("duration: 3m", "duration: 500ms"),
            ("think: 50ms", "think: 5ms"),
        ],
    );
    let (summary, _, _d) = attack(&plan);
    assert_clean("004", &summary);
    let counts: Vec<u64> = summary.by_request.iter().map(|r| r.count).collect();
    // Every step follows the one before it: a later step never outnumbers an earlier one.
    assert!(
        counts[0] > 0 && counts.windows(2).all(|w| w[1] <= w[0]),
        "{counts:?}"
    );
    assert!(counts[4] > 0, "some iterations ran to the end: {counts:?}");
    // Every destroy either deleted the listed key or found it gone (the race), and the
    // Failures table says which by its reason: none of them is a status or transport error.
    let destroy = &summary.by_request[4];
    let raced: u64 = summary
        .failures
        .iter()
        .filter(|f| f.request == "destroy key")
        .map(|f| f.count)
        .sum();
    assert_eq!(raced, destroy.failures, "{:?}", summary.failures);
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn the_capacity_study_scenarios_sweep_against_their_servers() {
    let _one = crate::support::one_heavy_at_a_time();
    use headroom::capacity::{Axis, Ladder, StepLength, Sweep};
    let dir = tempfile::tempdir().unwrap();
    let c = certs::make(dir.path());
    let plain = Nginx::start(Tls::None);
    let tls = Nginx::start(Tls::Server(&c));
    let mtls = Nginx::start(Tls::ClientCert(&c));
    let rate = Sweep {
        axis: Axis::Rate,
        ladder: Ladder(vec![200.0, 400.0]),
        length: StepLength::Time {
            duration: std::time::Duration::from_secs(1),
            warmup: std::time::Duration::ZERO,
        },
    };
    let users = Sweep {
        axis: Axis::Concurrency,
        ladder: Ladder(vec![1.0, 2.0]),
        length: StepLength::Requests(50),
    };
    let cases: [(&str, &Nginx, &[&str], &Sweep); 5] = [
        (
            "001-capacity-balancer.yaml",
            &plain,
            &["http://127.0.0.1:18080/"],
            &rate,
        ),
        (
            "001-capacity-tls.yaml",
            &tls,
            &["https://127.0.0.1:18443/"],
            &rate,
        ),
        (
            "001-capacity-mtls.yaml",
            &mtls,
            &["https://127.0.0.1:18444/"],
            &rate,
        ),
        (
            "003-capacity-1-instance.yaml",
            &mtls,
            &["https://127.0.0.1:18448/"],
            &users,
        ),
        (
            "003-capacity-2-instances.yaml",
            &mtls,
            &["https://127.0.0.1:18448/", "https://127.0.0.1:18449/"],
            &users,
        ),
    ];
    for (name, nginx, urls, sweep) in cases {
        let scheme = if urls[0].starts_with("https") {
            "https"
        } else {
            "http"
        };
        let mut replace: Vec<(String, String)> = tls_paths(&c);
        replace.retain(|(from, _)| {
            name.contains("mtls") || name.starts_with("003") || from.ends_with("ca.pem")
        });
        if scheme == "http" {
            replace.clear();
        }
        for url in urls {
            replace.push((url.to_string(), nginx.url(scheme, "/")));
        }
        let replace: Vec<(&str, &str)> = replace
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let mut plan = example(name, &replace);
        sweep.apply(&mut plan).unwrap();
        let before = nginx.access_log().len();
        let (summary, _, _d) = attack(&plan);
        assert_clean(name, &summary);
        let counts: Vec<u64> = summary.stages.iter().map(|s| s.count).collect();
        match sweep.length {
            StepLength::Requests(n) => assert_eq!(counts, [n, n], "{name}"),
            StepLength::Time { .. } => {
                assert!(counts.iter().all(|&n| n >= 150), "{name}: {counts:?}")
            }
        }
        assert_eq!(
            (nginx.access_log().len() - before) as u64,
            summary.requests.total,
            "{name}"
        );
    }
}

/// Text of a scenario file and what replaces it in the test.
type Replace = Vec<(String, String)>;

/// Every scenario again over HTTP/2, against an HTTP/2 server in front of the same backend:
/// nginx itself for the TLS seeds, nginx proxying to etcd for the key-value ones.
#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx and etcd: run tests/run")]
fn every_example_scenario_runs_over_http2_in_front_of_its_backend() {
    let _one = crate::support::one_heavy_at_a_time();
    use headroom::plan::HttpVersion;
    let dir = tempfile::tempdir().unwrap();
    let c = certs::make(dir.path());
    let etcd = Etcd::start();
    let proxy = |extra: &str| {
        format!(
            r#"{extra}
    location / {{
      proxy_pass {}; proxy_http_version 1.1; proxy_set_header Connection "";
    }}"#,
            etcd.url()
        )
    };
    let tls = Nginx::start(Tls::Server(&c));
    let mtls = Nginx::start(Tls::ClientCert(&c));
    let front = Nginx::with_locations(Tls::Server(&c), &proxy(""));
    let gate = Nginx::with_locations(
        Tls::Server(&c),
        &proxy(
            r#"location = /v3/login { return 200 '{"token":"example-token"}'; }
    location /v3/kv/ {
      if ($http_authorization != "Bearer example-token") { return 401; }
      proxy_pass ETCD; proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_set_header Authorization "";
    }"#,
        )
        .replace("ETCD", &etcd.url()),
    );
    let etcd_url = "http://127.0.0.1:23790/v3";
    let front_url = front.url("https", "/v3");
    let gate_url = gate.url("https", "/v3");
    let cases: Vec<(&str, &Nginx, Replace)> = vec![
        (
            "001-tls-termination.yaml",
            &tls,
            vec![
                ("https://127.0.0.1:18443/".into(), tls.url("https", "/")),
                ("duration: 20s".into(), "duration: 300ms".into()),
            ],
        ),
        (
            "001-mtls-termination.yaml",
            &mtls,
            vec![
                ("https://127.0.0.1:18444/".into(), mtls.url("https", "/")),
                ("duration: 20s".into(), "duration: 300ms".into()),
            ],
        ),
        (
            "003-mtls-concurrency.yaml",
            &mtls,
            vec![
                ("https://127.0.0.1:18444/".into(), mtls.url("https", "/")),
                ("duration: 10s".into(), "duration: 200ms".into()),
            ],
        ),
        (
            "003-mtls-instances.yaml",
            &mtls,
            ["18444", "18445", "18446", "18447"]
                .iter()
                .map(|p| (format!("https://127.0.0.1:{p}/"), mtls.url("https", "/")))
                .chain([("duration: 10s".into(), "duration: 200ms".into())])
                .collect(),
        ),
        (
            "002-kv-fill.yaml",
            &front,
            vec![
                (etcd_url.into(), front_url.clone()),
                ("keys: 10000".into(), "keys: 200".into()),
                ("requests: 10000".into(), "requests: 200".into()),
            ],
        ),
        (
            "002-kv-read.yaml",
            &front,
            vec![
                (etcd_url.into(), front_url.clone()),
                ("keys: 10000".into(), "keys: 200".into()),
                ("duration: 1m".into(), "duration: 300ms".into()),
            ],
        ),
        (
            "004-key-lifecycle.yaml",
            &front,
            vec![
                (etcd_url.into(), front_url.clone()),
                ("duration: 3m".into(), "duration: 500ms".into()),
                ("think: 50ms".into(), "think: 5ms".into()),
            ],
        ),
        (
            "000-secrets-service.yaml",
            &gate,
            vec![
                ("http://127.0.0.1:18081/v3".into(), gate_url.clone()),
                ("duration: 1m".into(), "duration: 300ms".into()),
                ("duration: 5m".into(), "duration: 500ms".into()),
            ],
        ),
    ];
    for (name, server, mut replace) in cases {
        let text = std::fs::read_to_string(examples_dir().join(name)).unwrap();
        replace.extend(
            tls_paths(&c)
                .into_iter()
                .filter(|(from, _)| text.contains(from)),
        );
        let replace: Vec<(&str, &str)> = replace
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let mut plan = example(name, &replace);
        plan.connection.http = HttpVersion::Http2;
        plan.tls.ca = Some(c.ca.clone());
        let before = server.access_log().len();
        let (summary, _, _d) = attack(&plan);
        assert_eq!(summary.protocol, "HTTP/2", "{name}");
        assert_clean(name, &summary);
        let log = server.access_log();
        let seen = &log[before..];
        assert_eq!(seen.len() as u64, summary.requests.total, "{name}");
        assert!(
            seen.iter().all(|l| l.starts_with("HTTP/2.0 ")),
            "{name}: {:?}",
            &seen[..seen.len().min(3)]
        );
    }
}
