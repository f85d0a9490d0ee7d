//! The matrix scenarios of `examples/seed.sh`: seed 000's and seed 002's tables come out of one
//! command each, with the seed's columns and rows, run here in a very short form (the stages'
//! durations from the environment variables the scenarios read) against servers started here.

use crate::support::etcd::Etcd;
use crate::support::headroom_env;
use crate::support::nginx::Nginx;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::process::Output;

/// `examples/NAME` copied into `dir` with the servers' address put in.
fn example(dir: &Path, name: &str, from: &str, to: &str) -> PathBuf {
    let text = crate::support::example_text(name);
    assert!(text.contains(from), "{name} has {from:?}");
    let copy = dir.join(name);
    std::fs::write(&copy, text.replace(from, to)).unwrap();
    copy
}

/// The matrix table a run printed as JSON; an unmet objective (exit 3) still prints it.
fn table(o: &Output) -> Json {
    assert!(
        o.status.success() || o.status.code() == Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

fn strings(v: &Json) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect()
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx and etcd: run tests/run")]
fn seed_000_matrix_gives_the_seeds_whole_table_with_gate_and_store_cpu() {
    let _heavy = crate::support::one_heavy_at_a_time();
    let etcd = Etcd::start();
    let gate = Nginx::token_gate(&etcd.url());
    let dir = tempfile::tempdir().unwrap();
    let scenario = example(
        dir.path(),
        "000-secrets-service-matrix.yaml",
        "http://127.0.0.1:18081/v3",
        &gate.url("http", "/v3"),
    );
    let pids = format!("{},{}", gate.pid().as_raw_nonzero(), etcd.pid());
    let out = dir.path().join("matrix");
    let o = headroom_env(
        &[
            "run",
            scenario.to_str().unwrap(),
            "-q",
            "--format",
            "json",
            "--monitor-pid",
            &pids,
            "--out",
            out.to_str().unwrap(),
        ],
        &[
            ("RAMP", "1s"),
            ("STEADY_5", "300ms"),
            ("STEADY_30", "300ms"),
            ("STEADY_120", "300ms"),
        ],
    );
    let t = table(&o);
    assert_eq!(
        strings(&t["columns"]),
        [
            "Category",
            "Operation Performed",
            "%Reads",
            "%Writes",
            "Ramp time",
            "Steady state",
            "Requests Per Second"
        ]
    );
    assert_eq!(strings(&t["cpu_columns"]), ["nginx CPU", "etcd CPU"]);
    // The seed's table: category, operation, reads, writes, steady state, RPS, row by row.
    let (b, c, w, d) = (
        "Burst Load",
        "Continuous Load Increase",
        "Write Heavy Load",
        "DDoS",
    );
    let (rw, sdb, bad) = ("IamReadWrite", "Viewing SDB", "Invalid IamReadWrite");
    let mut seed: Vec<(&str, &str, &str, &str, &str, &str)> = Vec::new();
    for rps in ["10", "10", "20", "30", "40", "50"] {
        seed.push((b, rw, "95%", "5%", "5m", rps));
    }
    for rps in ["10", "20", "30", "40", "50"] {
        seed.push((b, sdb, "95%", "5%", "5m", rps));
    }
    seed.push((c, rw, "95%", "5%", "120m", "20"));
    seed.push((b, rw, "90%", "10%", "5m", "10"));
    seed.push((b, rw, "90%", "10%", "5m", "20"));
    seed.push((b, rw, "90%", "10%", "120m", "10"));
    for rps in ["10", "20", "20"] {
        seed.push((w, rw, "50%", "50%", "5m", rps));
    }
    for rps in ["10", "20"] {
        seed.push((w, rw, "50%", "50%", "30m", rps));
    }
    for (steady, rps) in [("5m", "10"), ("5m", "20"), ("30m", "10"), ("30m", "20")] {
        seed.push((d, bad, "90%", "10%", steady, rps));
    }
    let rows = t["rows"].as_array().unwrap();
    assert_eq!(rows.len(), seed.len(), "one row per row of the seed");
    let short = |steady: &str| match steady {
        "5m" | "30m" | "120m" => "300ms".to_string(),
        other => other.to_string(),
    };
    for (i, (row, s)) in rows.iter().zip(&seed).enumerate() {
        let cells = strings(&row["cells"]);
        assert_eq!(
            cells,
            [s.0, s.1, s.2, s.3, "1s", &short(s.4), s.5],
            "row {}",
            i + 1
        );
        assert!(row["requests"].as_u64().unwrap() > 0, "row {}", i + 1);
        // The DDoS rows' 401s are what their requests expect: no row has errors.
        assert_eq!(row["error_rate"], 0.0, "row {}: {row}", i + 1);
        assert!(row["latency"]["p95_us"].is_number(), "row {}", i + 1);
        assert_eq!(row["server_cpu"].as_array().unwrap().len(), 2);
    }
    // Each operation sends what it names: reads, listings or invalid requests, never the others.
    let sent = |name: &str| -> Vec<String> {
        t["by_request"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["request"] == name)
            .map(|r| {
                r["rows"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| strings(&v["cells"])[1].clone())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert!(sent("read secret").iter().all(|op| op == rw));
    assert!(sent("list secrets").iter().all(|op| op == sdb));
    assert!(sent("invalid read").iter().all(|op| op == bad));
    assert!(!sent("list secrets").is_empty() && !sent("invalid write").is_empty());
    // The markdown table is the one the seed's page quotes.
    let md = headroom_env(
        &["report", out.to_str().unwrap(), "--format", "markdown"],
        &[],
    );
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(
        md.contains("| Category | Operation Performed | %Reads | %Writes | Ramp time | Steady state | Requests Per Second | requests | req/s | errors | p50 | p95 |"),
        "{md}"
    );
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs etcd: run tests/run")]
fn seed_002_matrix_gives_the_rate_payload_request_table_after_both_fills() {
    let _heavy = crate::support::one_heavy_at_a_time();
    let etcd = Etcd::start();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("{}/v3", etcd.url());
    let fill = example(
        dir.path(),
        "002-kv-fill.yaml",
        "http://127.0.0.1:23790/v3",
        &url,
    );
    let size = [
        "--set",
        "data.perf256.generate.keys=200",
        "--set",
        "load.requests=200",
    ];
    for (n, extra) in [
        (1, vec![]),
        (
            2,
            vec![
                "--set",
                "data.perf256.generate.value_bytes=5120",
                "--set",
                "data.perf256.generate.prefix=perf5k-",
            ],
        ),
    ] {
        let out = dir.path().join(format!("fill-{n}"));
        let mut args = vec!["run", fill.to_str().unwrap(), "-q", "--out"];
        args.push(out.to_str().unwrap());
        args.extend(size);
        args.extend(extra);
        let o = headroom_env(&args, &[]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let scenario = example(
        dir.path(),
        "002-kv-matrix.yaml",
        "http://127.0.0.1:23790/v3",
        &url,
    );
    let out = dir.path().join("matrix");
    let o = headroom_env(
        &[
            "run",
            scenario.to_str().unwrap(),
            "-q",
            "--format",
            "json",
            "--out",
            out.to_str().unwrap(),
        ],
        &[("KEYS", "200"), ("RAMP", "1s"), ("STEADY", "400ms")],
    );
    let t = table(&o);
    assert_eq!(
        strings(&t["columns"]),
        ["Req Throughput (rps)", "Payload size"]
    );
    let seed = [
        ["100", "256B"],
        ["250", "256B"],
        ["100", "5KB"],
        ["250", "5KB"],
    ];
    for request in ["get one", "get many (5)"] {
        let r = t["by_request"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["request"] == request)
            .unwrap_or_else(|| panic!("no table for {request}: {t}"));
        let rows = r["rows"].as_array().unwrap();
        let cells: Vec<Vec<String>> = rows.iter().map(|v| strings(&v["cells"])).collect();
        assert_eq!(cells, seed, "{request}");
        for v in rows {
            assert_eq!(v["error_rate"], 0.0, "{request}: {v}");
            for stat in ["min_us", "p50_us", "p99_us", "max_us", "stdev_us"] {
                assert!(v["latency"][stat].is_number(), "{request}: {stat} in {v}");
            }
        }
    }
    // Each payload's rows read their own set, written by its fill: a 5 KB value is about
    // 6,830 characters of base64, a 256-byte one 344.
    for (row, least, most) in [(0, 344.0, 2_000.0), (2, 6_800.0, 8_000.0)] {
        let run = out.join(t["rows"][row]["run"].as_str().unwrap());
        let one = headroom_env(&["report", run.to_str().unwrap(), "--format", "json"], &[]);
        let s: Json = serde_json::from_slice(&one.stdout).unwrap();
        let bytes = s["by_request"][0]["mean_bytes"].as_f64().unwrap();
        assert!(
            (least..most).contains(&bytes),
            "variant {row}: get one read {bytes} bytes"
        );
    }
}
