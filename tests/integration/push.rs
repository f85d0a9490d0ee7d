//! Live outputs (`--push`) against a real Prometheus (remote write, native histograms), and
//! what a run does when its backend is down or failing.

use crate::support::{self, prometheus::Prometheus};
use headroom::engine::CancellationToken;
use headroom::launch::Launch;
use headroom::push::native::SCHEMA;
use headroom::record::StatusClass;
use headroom::store::{DropReason, RunDir};
use headroom::summary::Summary;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs Prometheus: run tests/run")]
fn prometheus_gives_back_headroom_s_count_and_p99_from_the_remote_written_series() {
    let prometheus = Prometheus::start();
    let target = support::start_target(Duration::from_millis(5));
    let url = format!("http://{}/", target.addr());
    // 1,000 requests at 250/s: four seconds and a bit, so several writes per series.
    let plan = support::open_plan(&url, 250.0, 1000);
    let tmp = tempfile::tempdir().unwrap();
    let dir = RunDir::at(tmp.path().join("push-run"));
    let launch = Launch {
        push: vec![format!("prometheus={}", prometheus.write_url())
            .parse()
            .unwrap()],
        ..Launch::default()
    };
    let stored = headroom::run::attack_launched(
        &plan,
        &["test".into()],
        &dir,
        CancellationToken::new(),
        &mut (),
        None,
        &launch,
    )
    .unwrap();
    let summary = Summary::of(&stored);
    assert_eq!(summary.requests.total, 1000);
    let output = &stored.outputs[0];
    assert!(
        output.sent > 0 && output.dropped.is_empty(),
        "{output:?}\n{}",
        prometheus.log()
    );

    // Prometheus 2.42 takes native histograms over remote write with the feature flag: the
    // series comes back as a histogram sample, not as a float.
    let series = prometheus.query(r#"http_client_request_duration_seconds{run_id="push-run"}"#);
    assert_eq!(series.as_array().unwrap().len(), 1, "{series}");
    let sample = &series[0]["histogram"][1];
    assert_eq!(sample["count"], "1000", "{series}");
    assert!(
        !sample["buckets"].as_array().unwrap().is_empty(),
        "{series}"
    );
    assert_eq!(series[0]["metric"]["request"], "GET /");
    assert_eq!(series[0]["metric"]["method"], "GET");
    assert_eq!(series[0]["metric"]["outcome"], "expected");
    assert_eq!(series[0]["metric"]["status_class"], "2xx");
    assert_eq!(series[0]["metric"]["job"], "headroom");

    // The series are cumulative since the run's start, so the latest sample of each (an
    // instant query, within Prometheus's 5-minute look-back) is the whole run.
    let count = prometheus.scalar(r#"sum(headroom_requests_total{run_id="push-run"})"#);
    assert_eq!(count, summary.requests.total as f64);
    let ok =
        prometheus.scalar(r#"sum(headroom_requests_total{run_id="push-run",status_class="2xx"})"#);
    assert_eq!(ok, 1000.0);
    let in_histogram = prometheus.scalar(
        r#"histogram_count(sum(http_client_request_duration_seconds{run_id="push-run",outcome="expected"}))"#,
    );
    assert_eq!(in_histogram, summary.latency.count as f64);

    // histogram_quantile answers within the bucket that holds headroom's own p99 (each HDR
    // bucket goes to the native bucket of its value), so the two differ by less than the
    // bucket's growth factor 2^(2^-schema): 2.2 % at schema 5.
    let p99 = prometheus.scalar(
        r#"histogram_quantile(0.99, sum(http_client_request_duration_seconds{run_id="push-run",outcome="expected"}))"#,
    );
    let ours = summary.latency.p99_us as f64 / 1e6;
    let factor = (-f64::from(SCHEMA)).exp2().exp2();
    assert!(
        p99 <= ours * factor && p99 >= ours / factor,
        "PromQL p99 {p99} s, headroom's {ours} s, bucket factor {factor}"
    );
    // And the latency is the target's: 5 ms and up.
    assert!(p99 >= 0.005 / factor, "{p99}");

    // docs/outputs.md's queries, which keep answering after the 5-minute look-back, give the same.
    let readme_count =
        prometheus.scalar(r#"sum(last_over_time(headroom_requests_total{run_id="push-run"}[1h]))"#);
    assert_eq!(readme_count, summary.requests.total as f64);
    // Prometheus 2.42's last_over_time gives nothing for native histograms: docs/outputs.md
    // evaluates the histogram at the run's end (a minute after it, within the look-back).
    let ended = humantime::parse_rfc3339(&stored.end.as_ref().unwrap().ended_at).unwrap();
    let end = ended
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 60;
    let readme_p99 = prometheus.scalar(&format!(
        r#"histogram_quantile(0.99, sum(http_client_request_duration_seconds{{run_id="push-run", outcome="expected"}} @ {end}))"#
    ));
    assert_eq!(readme_p99, p99);
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs Prometheus: run tests/run")]
fn prometheus_has_one_request_s_latency_per_status_class_as_the_stored_run_has_it() {
    let prometheus = Prometheus::start();
    let target = support::start_target(Duration::from_millis(2));
    let dir = tempfile::tempdir().unwrap();
    // One request whose answers mix classes: rows 200, 200, 200, 503 in turn, so a quarter
    // of its answers are 503s (unexpected) in the same seconds as its 200s.
    std::fs::write(dir.path().join("codes.csv"), "code\n200\n200\n200\n503\n").unwrap();
    let scenario = dir.path().join("mixed.yaml");
    std::fs::write(
        &scenario,
        format!(
            "target: {{url: \"http://{}\"}}\ndata:\n  codes: {{csv: codes.csv}}\nrequests:\n  - {{name: read, path: '/status/{{{{ code }}}}', data: codes}}\nload: {{rate: 200, duration: 2s}}\n",
            target.addr()
        ),
    )
    .unwrap();
    let run = dir.path().join("mixed-run");
    let out = support::headroom(&[
        "run",
        scenario.to_str().unwrap(),
        "--out",
        run.to_str().unwrap(),
        "-q",
        "--push",
        &format!("prometheus={}", prometheus.write_url()),
    ]);
    let stored = crate::support::counts::check_dir(&run);
    assert!(
        stored.outputs[0].dropped.is_empty() && stored.outputs[0].sent > 0,
        "{:?}\n{}",
        stored.outputs,
        String::from_utf8_lossy(&out.stderr)
    );
    let by_class = stored.all.requests[0].by_class().unwrap();
    let ok = &by_class[&StatusClass::Success].expected;
    let failed = &by_class[&StatusClass::ServerError].unexpected;
    assert_eq!(ok.len() + failed.len(), stored.all.completed());
    assert_eq!(failed.len(), stored.all.status[&503]);
    assert!(
        !failed.is_empty() && ok.len() > failed.len(),
        "{by_class:?}"
    );

    let count = |class: &str, outcome: &str| {
        prometheus.scalar(&format!(
            r#"histogram_count(sum(http_client_request_duration_seconds{{run_id="mixed-run",request="read",status_class="{class}",outcome="{outcome}"}}))"#
        ))
    };
    assert_eq!(count("2xx", "expected"), ok.len() as f64);
    assert_eq!(count("5xx", "unexpected"), failed.len() as f64);
    let series = prometheus.query(r#"http_client_request_duration_seconds{run_id="mixed-run"}"#);
    assert_eq!(series.as_array().unwrap().len(), 2, "{series}");
    // Each class's p99 within the bucket factor of the stored run's.
    let factor = (-f64::from(SCHEMA)).exp2().exp2();
    for (class, outcome, ours) in [("2xx", "expected", ok), ("5xx", "unexpected", failed)] {
        let p99 = prometheus.scalar(&format!(
            r#"histogram_quantile(0.99, sum(http_client_request_duration_seconds{{run_id="mixed-run",status_class="{class}",outcome="{outcome}"}}))"#
        ));
        let ours = ours.quantile(0.99).as_secs_f64();
        assert!(
            p99 <= ours * factor && p99 >= ours / factor,
            "{class}: PromQL p99 {p99} s, the stored run's {ours} s"
        );
    }
}

/// A backend that answers its first `good` writes with 204 and every later one with 500.
struct FailingBackend {
    port: u16,
    writes: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl FailingBackend {
    fn start(good: u64) -> FailingBackend {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let writes = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (w, s) = (writes.clone(), stop.clone());
        std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                let Ok((conn, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                conn.set_nonblocking(false).unwrap();
                conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                let mut reader = BufReader::new(conn);
                let mut length = 0usize;
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    line.clear();
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let n = w.fetch_add(1, Ordering::Relaxed);
                let answer = if n < good {
                    "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n".to_string()
                } else {
                    "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbusy".to_string()
                };
                let _ = reader.get_mut().write_all(answer.as_bytes());
            }
        });
        FailingBackend { port, writes, stop }
    }
}

impl Drop for FailingBackend {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[test]
fn a_backend_down_or_failing_mid_run_costs_the_run_nothing_and_the_report_says_what_was_dropped() {
    let target = support::start_target(Duration::from_millis(2));
    let failing = FailingBackend::start(2);
    let down = support::pushing::port_with_nothing_listening();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let stdout = support::pushing::attack_pushing(
        &format!("http://{}/", target.addr()),
        &[
            format!("prometheus=http://127.0.0.1:{}/api/v1/write", failing.port),
            format!("prometheus=http://127.0.0.1:{down}/api/v1/write"),
        ],
        &out,
    );

    let stored = crate::support::counts::check_dir(&out);
    let intervals = stored.intervals.len() as u64;
    // One request, one status class: two series, so two samples a second per output.
    let per_output = 2 * intervals;
    let [failing_out, down_out] = stored.outputs.as_slice() else {
        panic!("{:?}", stored.outputs)
    };
    assert_eq!(failing_out.sent, 4, "{failing_out:?}");
    assert_eq!(failing_out.sent + failing_out.dropped_total(), per_output);
    assert!(failing_out.dropped[&DropReason::ServerError] > 0);
    assert_eq!(failing_out.last_status, Some(500));
    // The answer's body is kept (and said in the report, below).
    assert_eq!(failing_out.last_answer.as_deref(), Some("busy"));
    // Each failed batch was tried three times.
    let failed_batches = failing_out.dropped[&DropReason::ServerError] / 2;
    assert_eq!(
        failing.writes.load(Ordering::Relaxed),
        2 + 3 * failed_batches
    );
    assert_eq!(down_out.sent, 0);
    assert_eq!(
        down_out.dropped[&DropReason::Refused],
        per_output,
        "{down_out:?}"
    );

    assert!(
        stdout.contains(&format!(
            "4 samples sent, {} dropped (HTTP 500 from the backend: \"busy\")",
            per_output - 4
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "0 samples sent, {per_output} dropped (connection refused)"
        )),
        "{stdout}"
    );
}

/// A backend answering every write with a whole 500 (`Content-Length: 4`) and keeping the
/// connection open for the next, `Connection: close` notwithstanding, as keep-alive servers
/// and proxies do.
struct KeptOpenBackend {
    port: u16,
    writes: Arc<AtomicU64>,
}

impl KeptOpenBackend {
    fn start() -> KeptOpenBackend {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let writes = Arc::new(AtomicU64::new(0));
        let w = writes.clone();
        // Ends with the test binary; each connection's thread ends when headroom closes it.
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { return };
                let w = w.clone();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(conn);
                    loop {
                        let mut length = 0usize;
                        let mut line = String::new();
                        loop {
                            line.clear();
                            match reader.read_line(&mut line) {
                                Ok(0) | Err(_) => return,
                                Ok(_) if line == "\r\n" => break,
                                Ok(_) => {}
                            }
                            let lower = line.to_ascii_lowercase();
                            if let Some(v) = lower.strip_prefix("content-length:") {
                                length = v.trim().parse().unwrap_or(0);
                            }
                        }
                        let mut body = vec![0; length];
                        if reader.read_exact(&mut body).is_err() {
                            return;
                        }
                        w.fetch_add(1, Ordering::Relaxed);
                        let answer =
                            b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\nbusy";
                        if reader.get_mut().write_all(answer).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        KeptOpenBackend { port, writes }
    }
}

#[test]
fn a_whole_500_on_a_kept_open_connection_is_dropped_as_such_every_try_made() {
    // Found trying a keep-alive backend: each 500 waited out the 5 s read timeout, so each
    // batch's three tries took 15 s, and at the end the batches were blamed on the flush
    // deadline. Read by its Content-Length, every batch gets its three tries (a second's
    // work at most) and each drop is the backend's 500.
    let target = support::start_target(Duration::from_millis(2));
    let backend = KeptOpenBackend::start();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let stdout = support::pushing::attack_pushing(
        &format!("http://{}/", target.addr()),
        &[format!(
            "prometheus=http://127.0.0.1:{}/api/v1/write",
            backend.port
        )],
        &out,
    );
    let stored = crate::support::counts::check_dir(&out);
    // One request, one status class: two series, so two samples a second.
    let per_output = 2 * stored.intervals.len() as u64;
    let [o] = stored.outputs.as_slice() else {
        panic!("{:?}", stored.outputs)
    };
    assert_eq!(o.sent, 0, "{o:?}");
    assert_eq!(
        o.dropped.iter().map(|(r, n)| (*r, *n)).collect::<Vec<_>>(),
        [(DropReason::ServerError, per_output)],
        "{o:?}"
    );
    assert_eq!(
        (o.last_status, o.last_answer.as_deref()),
        (Some(500), Some("busy"))
    );
    let batches = per_output / 2;
    assert_eq!(backend.writes.load(Ordering::Relaxed), 3 * batches);
    assert!(
        stdout.contains(&format!(
            "0 samples sent, {per_output} dropped (HTTP 500 from the backend: \"busy\")"
        )),
        "{stdout}"
    );
}

#[test]
fn an_outputs_json_with_counts_no_run_makes_is_reported_as_damaged_in_every_format() {
    // Found trying `report` on a damaged run: drops of 2^64 - 1 under two reasons wrapped
    // the total (a panic in this debug build).
    let target = support::start_target(Duration::ZERO);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let run = support::headroom(&[
        "attack",
        &format!("http://{}/", target.addr()),
        "--rate",
        "100",
        "-n",
        "20",
        "-q",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let max = u64::MAX;
    std::fs::write(
        out.join("outputs.json"),
        format!(
            r#"[{{"kind": "prometheus", "url": "http://127.0.0.1:9/api/v1/write", "sent": 3,
                "dropped": {{"refused": {max}, "server_error": {max}}}, "last_status": 500}}]"#
        ),
    )
    .unwrap();
    for format in ["text", "markdown", "html"] {
        let o = support::headroom(&["report", out.to_str().unwrap(), "--format", format]);
        let text = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{format}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            text.contains("what it sent and dropped is unknown (outputs.json is damaged"),
            "{format}: {text}"
        );
        assert!(!text.contains(&max.to_string()), "{format}: {text}");
    }
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs Prometheus: run tests/run")]
fn prometheus_without_native_histograms_says_why_it_refused_in_the_report() {
    // The most likely setup mistake: Prometheus started without the feature flag answers
    // each write with a 500 whose body says why; the report must carry that reason.
    let prometheus = Prometheus::start_without_native_histograms();
    let target = support::start_target(Duration::ZERO);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let result = support::headroom(&[
        "attack",
        &format!("http://{}/", target.addr()),
        "--rate",
        "20",
        "-n",
        "20",
        "--push",
        &format!("prometheus={}", prometheus.write_url()),
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&result.stdout);
    assert!(result.status.success(), "{stdout}\n{}", prometheus.log());
    let stored = crate::support::counts::check_dir(&out);
    let [o] = stored.outputs.as_slice() else {
        panic!("{:?}", stored.outputs)
    };
    assert_eq!(o.sent, 0, "{o:?}");
    assert_eq!(o.last_status, Some(500), "{o:?}");
    let answer = o.last_answer.as_deref().unwrap_or_default();
    assert!(answer.contains("native histograms are disabled"), "{o:?}");
    assert!(
        stdout.contains("HTTP 500 from the backend: \"native histograms are disabled"),
        "{stdout}"
    );
}

#[test]
fn a_wrong_push_is_one_line_saying_what_to_give_and_never_shows_a_credential() {
    for (given, says) in [
        ("prometheus", "give KIND=URL"),
        (
            "graphite=http://127.0.0.1:2003/",
            "unknown output \"graphite\"",
        ),
        (
            "prometheus=https://127.0.0.1:9090/api/v1/write",
            "only http://",
        ),
        (
            "prometheus=http://user:s3cret@127.0.0.1:9090/api/v1/write",
            "user info",
        ),
        (
            "prometheus=https://127.0.0.1:9090/api/v1/write?access_token=s3cret",
            "only http://",
        ),
        (
            "influxdb=http://127.0.0.1:8086/write?db=x&apikey=s3cret",
            "leave out apikey=",
        ),
    ] {
        let out = support::headroom(&[
            "attack",
            "http://127.0.0.1:9/",
            "--rate",
            "10",
            "-d",
            "1s",
            "--push",
            given,
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{given}: {stderr}");
        assert!(stderr.contains(says), "{given}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{given}: {stderr}");
        assert!(!stderr.contains("s3cret"), "{stderr}");
    }
}
