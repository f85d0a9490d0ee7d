//! Shared test helpers: the binary's launchers, certificates, the servers the lab tests
//! start, and running attacks in-process.

pub mod binary;
pub mod cdp;
pub mod certs;
pub mod chromium;
pub mod counts;
pub mod etcd;
pub mod golden;
pub mod held;
pub mod influxdb;
pub mod loopback_http;
pub mod netns;
pub mod nginx;
pub mod prometheus;
pub mod pushing;
pub mod pyyaml;

pub use binary::{headroom, headroom_env, headroom_stdin, json_file, stderr, stdout, succeeded};

use headroom::engine::CancellationToken;
use headroom::plan::{AttackPlan, Load, NamedRequest, Rate, RequestSpec, Stop, Target};
use headroom::store::{RunDir, StoredRun};
use headroom::summary::Summary;
use std::time::Duration;

/// Held by the tests that load the machine hardest or time a server whose latency depends
/// on the CPU it gets (the known-capacity searches and sweeps): none of them runs beside
/// another, so their timing-sensitive assertions do not see each other's load. (Making every
/// assertion hold on a machine as busy as it gets is issue 13's.)
pub fn one_heavy_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static HEAVY: std::sync::Mutex<()> = std::sync::Mutex::new(());
    HEAVY.lock().unwrap_or_else(|p| p.into_inner())
}

/// A plan for `url` at `rate` req/s, stopping after `requests`.
pub fn open_plan(url: &str, rate: f64, requests: u64) -> AttackPlan {
    let target = Target::parse(url).unwrap();
    let spec = RequestSpec::parse("GET", &[], bytes::Bytes::new()).unwrap();
    let request = NamedRequest::single(spec, &target);
    AttackPlan::new(
        target,
        vec![request],
        Load::Open { rate: Rate(rate) },
        Stop {
            duration: Some(Duration::from_secs(60)),
            requests: Some(requests),
        },
    )
}

/// Runs `plan` in-process into a fresh temporary run directory.
pub fn attack(plan: &AttackPlan) -> (Summary, StoredRun, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = RunDir::at(dir.path().join("run"));
    let stored = headroom::run::attack(
        plan,
        &["test".into()],
        &run_dir,
        CancellationToken::new(),
        &mut (),
    )
    .unwrap_or_else(|e| panic!("attack on {} failed: {e}", plan.target.url));
    let summary = Summary::of(&stored);
    counts::check_summary(&stored, &summary, &plan.target.url);
    (summary, stored, dir)
}

/// Runs `plan` in-process expecting it to fail before any request; returns the error text
/// and checks that nothing was stored.
pub fn attack_error(plan: &AttackPlan) -> String {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = RunDir::at(dir.path().join("run"));
    let err = headroom::run::attack(plan, &[], &run_dir, CancellationToken::new(), &mut ())
        .expect_err("the attack should not start")
        .to_string();
    assert!(
        !run_dir.path().exists(),
        "nothing is stored for a run that never started"
    );
    err
}

/// The built-in target on a free loopback port, plain HTTP, answering after `latency`.
pub fn start_target(latency: Duration) -> headroom::target::RunningTarget {
    headroom::target::spawn(headroom::target::TargetConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        tls: None,
        latency,
        threads: 1,
        capacity: None,
    })
    .unwrap()
}

/// A free loopback port for a server a test starts.
///
/// Taken below the kernel's ephemeral range (32768 and up) and never the same twice in a
/// run: a port the kernel hands out for `bind(0)` can be taken by any outgoing connection of
/// the load tests running beside it before the server binds it, which made etcd and nginx
/// fail to start now and then.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    const FIRST: u32 = 20_000;
    const SPAN: u32 = 12_000;
    static NEXT: AtomicU32 = AtomicU32::new(u32::MAX);
    // Each test binary starts at its own place so two running at once rarely meet.
    let _ = NEXT.compare_exchange(
        u32::MAX,
        std::process::id() % SPAN,
        Ordering::Relaxed,
        Ordering::Relaxed,
    );
    for _ in 0..SPAN {
        let port = (FIRST + NEXT.fetch_add(1, Ordering::Relaxed) % SPAN) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port between {FIRST} and {}", FIRST + SPAN);
}

/// Each bucket of `h`, its value and count: two histograms of one content over different
/// ranges (grown in another order) encode differently, and hold the same buckets.
pub fn buckets(h: &headroom::record::Histogram) -> Vec<(u64, u64)> {
    h.inner()
        .iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect()
}

/// Every byte of every file under `dir`, as lossy text.
pub fn all_text_under(dir: &std::path::Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.push_str(&all_text_under(&path));
        } else {
            out.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
        }
    }
    out
}

/// The text of `examples/NAME` with each server port it reads from the environment
/// (`${PORT_TLS:-18443}`, set by examples/servers.sh) at its default, so that the tests
/// replace the servers' addresses as written there (`https://127.0.0.1:18443/`).
pub fn example_text(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let port = regex::Regex::new(r"\$\{PORT_[A-Z0-9_]+:-(\d+)\}").unwrap();
    port.replace_all(&text, "$1").into_owned()
}
