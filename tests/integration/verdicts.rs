//! What the numbers are said to mean: the headline latency is the answered requests', and
//! failures keep their own counts and latencies.

use crate::support::held::Held;
use std::process::Command;

/// With too few descriptors for its users, requests fail in microseconds while every answer
/// takes the server's 300 ms: the headline latency is the answers', never pulled down by the
/// failures, which are reported apart.
#[test]
fn failed_requests_do_not_pull_the_latency_down() {
    let _one = crate::support::one_heavy_at_a_time();
    let server = Held::start();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("{}/hold/300000", server.url());
    // 100 users need 100 connections; 40 descriptors hold fewer than 30 of them.
    let o = Command::new("sh")
        .args(["-c", "ulimit -n 40 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_headroom"))
        .args([
            "attack",
            &url,
            "-c",
            "100",
            "-d",
            "2s",
            "--threads",
            "1",
            "--http1",
        ])
        .args(["-q", "--format", "json", "--out"])
        .arg(dir.path().join("run"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let answered = v["status_codes"]["200"].as_u64().unwrap_or(0);
    let failed: u64 = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["count"].as_u64().unwrap())
        .sum();
    assert!(
        answered > 0 && failed > 0,
        "{answered} answered, {failed} failed"
    );

    let held_us = 300_000;
    let latency = &v["latency"];
    assert_eq!(latency["count"].as_u64(), Some(answered), "{latency}");
    for key in ["min_us", "p50_us", "p99_us"] {
        let us = latency[key].as_u64().unwrap();
        assert!(
            us >= held_us,
            "latency {key} = {us} µs, under the 300 ms hold"
        );
    }
    let service_min = v["service_time"]["min_us"].as_u64().unwrap();
    assert!(service_min >= held_us, "service time min {service_min} µs");
    let failed_latency = &v["failed_latency"];
    assert_eq!(
        failed_latency["count"].as_u64(),
        Some(failed),
        "{failed_latency}"
    );
    let row = &v["aggregated"];
    assert_eq!(row["failures"].as_u64(), Some(failed));
    assert!(
        row["latency"]["min_us"].as_u64().unwrap() >= held_us,
        "{row}"
    );

    // The text report says both.
    let text = crate::support::headroom(&["report", dir.path().join("run").to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    let line = |label: &str| {
        text.lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label} line in:\n{text}"))
            .to_string()
    };
    // Every answer took the 300 ms hold, so each latency figure is in milliseconds and none
    // is the microseconds a refused descriptor takes.
    let latencies = line("Latencies");
    let figures = latencies.split_whitespace().skip(9).collect::<Vec<_>>();
    assert!(
        figures.len() == 8
            && figures
                .iter()
                .all(|f| f.trim_end_matches(',').ends_with("ms")),
        "{text}"
    );
    assert!(line("Failed ").contains(&failed.to_string()), "{text}");
}
