//! A short attack writing live to metrics backends that fail, shared by the Prometheus and
//! InfluxDB failure tests: the run must end on time whatever its outputs do.

use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

/// A loopback port nothing listens on (one just freed).
pub fn port_with_nothing_listening() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// A 3 s attack at 100 req/s on `url`, pushing to each `--push` value of `pushes`, stored in
/// `out`; asserts it succeeded and ended on time, and returns its stdout.
pub fn attack_pushing(url: &str, pushes: &[String], out: &Path) -> String {
    let mut args = vec!["attack", url, "--rate", "100", "-d", "3s", "-q"];
    for p in pushes {
        args.extend(["--push", p.as_str()]);
    }
    args.extend(["--out", out.to_str().unwrap()]);
    let started = Instant::now();
    let result = super::headroom(&args);
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&result.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(result.status.success(), "{stdout}\n{stderr}");
    // On time: the 3 s attack plus at most the 5 s flush, with room for a busy machine's
    // start-up; a run waiting on its outputs' retries without a bound would exceed it.
    assert!(took < Duration::from_secs(20), "{took:?}");
    stdout
}
