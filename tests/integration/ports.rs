//! Running out of ephemeral ports (in a network namespace of the test's own with a port range
//! of eight, so the host is untouched) or of descriptors. The report must blame the generator,
//! and the generator must not spin on the shortage.

use crate::support::netns::Netns;
use std::process::{Child, Command, Stdio};

/// A private network namespace with loopback up and a tiny ephemeral port range.
fn small_netns() -> Netns {
    let ns = Netns::new();
    let o = ns
        .command("sysctl")
        .args(["-q", "-w", "net.ipv4.ip_local_port_range=40000 40007"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    ns
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
#[cfg_attr(
    not(feature = "lab"),
    ignore = "needs root (network namespaces): run tests/run"
)]
fn running_out_of_ports_is_blamed_on_the_generator() {
    let _one = crate::support::one_heavy_at_a_time();
    let ns = small_netns();
    let bin = env!("CARGO_BIN_EXE_headroom");
    let _target = Killed(
        ns.command(bin)
            .args([
                "target",
                "--listen",
                "127.0.0.1:18080",
                "--latency",
                "300ms",
                "--threads",
                "1",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    ns.wait_listening("127.0.0.1:18080".parse().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    // 100 req/s at 300 ms needs about 30 connections; the namespace has 8 local ports.
    let o = ns
        .command(bin)
        .args([
            "attack",
            "http://127.0.0.1:18080/",
            "--rate",
            "100",
            "-n",
            "60",
            "-q",
            "--format",
            "json",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let errors = v["errors"].as_array().unwrap();
    let ports = errors
        .iter()
        .find(|e| e["key"] == "port_exhaustion")
        .unwrap_or_else(|| panic!("{errors:?}"));
    assert_eq!(ports["side"], "client");
    let verdict = &v["verdict"];
    assert!(
        ["generator", "both"].contains(&verdict["limit"].as_str().unwrap()),
        "{verdict}"
    );
    assert!(
        verdict["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["finding"] == "shortage" && f["error"] == "port_exhaustion"),
        "{verdict}"
    );
    assert_eq!(v["requests"]["total"], 60, "every request is accounted for");
}

/// Connections beyond what the open-files limit lets the process hold are refused before
/// anything is sent (a closed model over HTTP/1.1 holds a connection per user), and the
/// default cap is lowered to fit, so a run never fails on its own descriptors.
#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn connections_past_the_open_files_limit_are_refused_or_fitted_before_the_run() {
    use crate::support::certs;
    use crate::support::nginx::{Nginx, Tls};
    let dir = tempfile::tempdir().unwrap();
    let c = certs::make(dir.path());
    let plain = Nginx::start(Tls::None);
    let tls = Nginx::start(Tls::Server(&c));
    let ca = c.ca.display().to_string();
    let limited = |args: &[&str], out: &std::path::Path| {
        Command::new("sh")
            .args(["-c", "ulimit -n 64 && exec \"$0\" \"$@\""])
            .arg(env!("CARGO_BIN_EXE_headroom"))
            .args(args)
            .args(["--threads", "2", "-q", "--format", "json", "--out"])
            .arg(out)
            .output()
            .unwrap()
    };
    // 200 users over HTTP/1.1 need 200 connections; 64 descriptors hold 24 once 40 are kept.
    let out = dir.path().join("run-http1");
    let url = plain.url("http", "/");
    let o = limited(&["attack", &url, "-c", "200", "-d", "2s", "--http1"], &out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(
        err.trim_end(),
        format!("headroom: attack on {url} failed: the run needs 200 connections (200 users, a connection each), but this process may open 64 files (ulimit -n) and keeps 40 for itself; lower the users, or set a connection cap (--max-connections, or max_connections: in a scenario) for users beyond it to wait for, or raise the hard limit (ulimit -Hn, or LimitNOFILE= for a service)")
    );
    assert!(
        !out.exists(),
        "nothing is stored for a run that never started"
    );
    assert!(plain.access_log().is_empty(), "nothing was sent");

    // Users beyond a cap that fits wait for a connection instead.
    let o = limited(
        &[
            "attack",
            &url,
            "-c",
            "200",
            "-d",
            "1s",
            "--http1",
            "--max-connections",
            "20",
        ],
        &dir.path().join("run-capped"),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["errors"].as_array().map(Vec::len), Some(0), "{v}");
    assert!(v["connect"]["count"].as_u64().unwrap() <= 20, "{v}");

    // Over HTTP/2 the users share connections: the default cap of 10,000 is lowered to the
    // 24 that fit, said before the run and in its notes, and nothing fails for want of one.
    let o = limited(
        &[
            "attack",
            &tls.url("https", "/"),
            "-c",
            "200",
            "-d",
            "1s",
            "--http2",
            "--max-streams",
            "2",
            "--cacert",
            &ca,
        ],
        &dir.path().join("run-http2"),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let lowered = "at most 24 connections, not 10000: this process may open 64 files (ulimit -n)";
    assert!(err.contains(lowered), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["notices"],
        serde_json::json!([{"connections_lowered": {"from": 10000, "to": 24, "open_files": 64}}])
    );
    assert_eq!(v["errors"].as_array().map(Vec::len), Some(0), "{v}");
    let answered = v["status_codes"]["200"].as_u64().unwrap_or(0);
    assert!(answered > 0, "{v}");
    assert_eq!(tls.access_log().len() as u64, answered);
    // Connections kept alive: the 24 allowed are opened once each.
    assert!(v["connect"]["count"].as_u64().unwrap() <= 24, "{v}");
}
