//! Hostile servers: garbage, endless headers, an endless body, an early close. Each yields a
//! classified outcome, never a panic or unbounded memory.

use crate::support::{attack, open_plan};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

/// Serves each connection with `behave` on its own thread until the test ends.
fn serve(behave: fn(std::net::TcpStream)) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || behave(stream));
        }
    });
    format!("http://{addr}/")
}

fn read_request(s: &mut std::net::TcpStream) -> bool {
    let mut buf = [0u8; 4096];
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    matches!(s.read(&mut buf), Ok(n) if n > 0)
}

fn error_keys(summary: &headroom::summary::Summary) -> Vec<String> {
    summary.errors.iter().map(|e| e.key.clone()).collect()
}

#[test]
fn garbage_is_a_protocol_error() {
    let url = serve(|mut s| {
        while read_request(&mut s) {
            let _ = s.write_all(b"\x00\x01garbage that is not HTTP\r\n\r\n");
        }
    });
    let (summary, _, _dir) = attack(&open_plan(&url, 50.0, 20));
    assert_eq!(summary.requests.total, 20);
    assert_eq!(error_keys(&summary), vec!["protocol"]);
}

#[test]
fn endless_headers_are_cut_off() {
    let url = serve(|mut s| {
        if read_request(&mut s) {
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\n");
            let line = b"X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n";
            for _ in 0..1_000_000 {
                if s.write_all(line).is_err() {
                    return;
                }
            }
        }
    });
    let (summary, _, _dir) = attack(&open_plan(&url, 20.0, 5));
    assert_eq!(summary.requests.total, 5);
    assert_eq!(error_keys(&summary), vec!["header_too_large"]);
}

#[test]
fn an_endless_body_ends_at_the_timeout_without_growing_memory() {
    let url = serve(|mut s| {
        if read_request(&mut s) {
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
            let chunk = format!("{:x}\r\n{}\r\n", 65536, "z".repeat(65536));
            while s.write_all(chunk.as_bytes()).is_ok() {}
        }
    });
    // Run as a process of its own, so its peak memory is its own and not the test suite's.
    let dir = tempfile::tempdir().unwrap();
    let o = crate::support::headroom(&[
        "attack",
        &url,
        "--rate",
        "10",
        "-n",
        "3",
        "--timeout",
        "1s",
        "-q",
        "--format",
        "json",
        "--out",
        dir.path().join("run").to_str().unwrap(),
    ]);
    // Every request timed out: the run completes, and says nothing succeeded (status 3).
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["verdict"]["limit"], "nothing_succeeded",
        "{}",
        v["verdict"]
    );
    let keys: Vec<&str> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["key"].as_str())
        .collect();
    assert_eq!(keys, ["timeout"]);
    // Gigabytes may stream in before the timeout; the body is counted, never kept.
    let rss = v["generator"]["peak_rss_bytes"].as_u64().unwrap();
    assert!(rss < 200 * 1024 * 1024, "peak RSS {rss}");
}

#[test]
fn an_early_close_is_classified() {
    let url = serve(|mut s| {
        if read_request(&mut s) {
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort");
        }
    });
    let (summary, _, _dir) = attack(&open_plan(&url, 50.0, 10));
    assert_eq!(summary.requests.total, 10);
    assert_eq!(error_keys(&summary), vec!["closed"]);
}

/// A server that answers the first request of each connection and closes the connection on
/// the next without a byte (as a server shedding load does): each such request is one the
/// retry rule may send again, but no more retries go out than a tenth of what was sent (plus
/// the small reserve), and the rate leaves them out.
#[test]
fn retries_of_unprocessed_requests_stay_within_their_budget() {
    let url = serve(|mut s| {
        if read_request(&mut s) {
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
            // The next request is read and dropped with the connection.
            read_request(&mut s);
        }
    });
    let (summary, stored, _dir) = attack(&open_plan(&url, 400.0, 800));
    assert_eq!(summary.requests.total, 800, "each request ends once");
    let retried = summary.requests.retried;
    let sent = stored.all.sent;
    assert_eq!(
        sent,
        800 + retried,
        "sends are the requests and their retries"
    );
    assert!(retried > 0, "the reserve allows the first retries");
    assert!(
        retried as f64 <= 10.0 + 0.1 * sent as f64,
        "{retried} retries for {sent} sends"
    );
    // What the budget did not retry is a failure the report names.
    assert!(
        error_keys(&summary).contains(&"closed".to_string()),
        "{:?}",
        summary.errors
    );
    assert!(
        summary.requests.rate <= 400.0 * 1.05,
        "the rate leaves retries out: {}",
        summary.requests.rate
    );
}
