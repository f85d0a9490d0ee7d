//! How sure a number is, against a real server with a fixed latency distribution: nginx
//! (Lua) sleeps each request for a delay drawn in advance from a log-normal distribution
//! (median 50 ms, sigma 0.5, so a p99 near 160 ms), so each run's samples are known before
//! it starts. Two runs of it whose p99s differ by more than the 10 % a gate allows, as
//! 500-request runs of one server do, pass "within noise"; the same server twice as slow
//! fails "regressed".
//!
//! The delays are tens to hundreds of milliseconds and each verdict has a margin of at least
//! 20 ms in the drawn samples (checked below), so the milliseconds a busy machine adds to a
//! request cannot turn either verdict.

use crate::ci::{assert_valid_junit, testcase};
use crate::support::headroom;
use crate::support::nginx::{Nginx, Tls};
use headroom::record::Histogram;
use headroom::summary::confidence;
use std::path::Path;
use std::time::Duration;

/// Requests per run: seed 003's 500 a step, whose p99 rests on its 5 slowest.
const N: usize = 500;
/// The draws' seed: one whose second 500 samples have a p99 35 % above the first 500's
/// while their intervals overlap: two runs of one server that a gate without intervals
/// would call a regression.
const SEED: u64 = 466;

/// splitmix64: a seeded, portable stream of uniform numbers.
struct Draws(u64);

impl Draws {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// A log-normal draw, ms: exp(mu + sigma × N(0, 1)), N by Box-Muller.
    fn log_normal(&mut self, median_ms: f64, sigma: f64) -> f64 {
        let (u1, u2) = (self.uniform(), self.uniform());
        let n = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        median_ms * (sigma * n).exp()
    }
}

/// The server's delays in the order it serves them, ms: the baseline run's 500, the
/// candidate's 500 (the same distribution), then the baseline's again, twice as long.
fn delays() -> Vec<f64> {
    let mut d = Draws(SEED);
    let mut out: Vec<f64> = (0..2 * N).map(|_| d.log_normal(50.0, 0.5)).collect();
    out.extend_from_within(..N);
    for slow in &mut out[2 * N..] {
        *slow *= 2.0;
    }
    out
}

fn histogram(ms: &[f64]) -> Histogram {
    let mut h = Histogram::new();
    for &d in ms {
        h.record(Duration::from_secs_f64(d / 1e3));
    }
    h
}

fn p99(ms: &[f64]) -> f64 {
    histogram(ms).inner().value_at_quantile(0.99) as f64 / 1e3
}

/// The p99's interval, ms.
fn p99_ci(ms: &[f64]) -> (f64, f64) {
    let i = confidence::quantile(&histogram(ms), 0.99).as_f64();
    (i.lo.unwrap() / 1e3, i.hi.unwrap() / 1e3)
}

/// A closed-model run of `N` requests to `url`, stored in `dir`.
fn run(url: &str, dir: &Path) {
    let out = headroom(&[
        "attack",
        url,
        "--concurrency",
        "25",
        "-n",
        &N.to_string(),
        "-q",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn gate(base: &Path, cand: &Path, format: &str) -> std::process::Output {
    headroom(&[
        "compare",
        "--baseline",
        base.to_str().unwrap(),
        cand.to_str().unwrap(),
        "--fail-on",
        "p99 +10%",
        "--format",
        format,
    ])
}

#[test]
#[cfg_attr(
    not(feature = "lab"),
    ignore = "needs nginx, xmllint and the JUnit schema: run tests/run"
)]
fn two_runs_of_one_server_differ_within_noise_and_the_server_twice_as_slow_regressed() {
    let delays = delays();
    let (base, cand, slow) = (&delays[..N], &delays[N..2 * N], &delays[2 * N..]);
    // The drawn samples alone, with margins a busy machine's milliseconds cannot eat: the
    // candidate's p99 is more than 10 % + 20 ms above the baseline's, yet its interval
    // reaches 20 ms or more into the baseline's; the slow run's starts 20 ms or more above.
    let (b, c) = (p99(base), p99(cand));
    assert!(c > b * 1.1 + 20.0, "p99 {b:.1} ms then {c:.1} ms");
    let ((_, b_hi), (c_lo, _), (s_lo, _)) = (p99_ci(base), p99_ci(cand), p99_ci(slow));
    assert!(c_lo + 20.0 < b_hi, "intervals ..{b_hi:.1} and {c_lo:.1}..");
    assert!(s_lo > b_hi + 20.0, "intervals ..{b_hi:.1} and {s_lo:.1}..");

    // The table is a file of its own: nginx refuses a Lua block this long in its config.
    let dir = tempfile::tempdir().unwrap();
    let table: Vec<String> = delays.iter().map(|ms| format!("{:.4}", ms / 1e3)).collect();
    let lua = dir.path().join("delays.lua");
    std::fs::write(&lua, format!("DELAYS = {{ {} }}\n", table.join(", "))).unwrap();
    let mut server = Nginx::with_modules(
        Tls::None,
        &["lua"],
        &format!(
            "lua_shared_dict served 1m;\n  init_by_lua_file {};",
            lua.display()
        ),
        r#"location / {
      content_by_lua_block {
        local n = ngx.shared.served:incr("n", 1, 0)
        ngx.sleep(DELAYS[(n - 1) % #DELAYS + 1])
        ngx.say("ok")
      }
    }"#,
    );
    let url = server.url("http", "/");
    let [a, b, s] = ["baseline", "candidate", "slower"].map(|name| dir.path().join(name));
    for run_dir in [&a, &b, &s] {
        run(&url, run_dir);
    }
    // Each run took its own 500 delays, in order: no request more or less.
    assert_eq!(server.stop().len(), 3 * N);

    let same = gate(&a, &b, "text");
    let text = String::from_utf8_lossy(&same.stdout);
    assert_eq!(
        same.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&same.stderr)
    );
    let row = text.lines().find(|l| l.starts_with("p99 +10%")).unwrap();
    assert!(row.ends_with("within noise"), "{text}");
    assert!(
        text.contains("no regression: all 1 rules held (1 within noise)"),
        "{text}"
    );
    assert!(
        text.contains("confidence intervals overlap: within noise, not a regression"),
        "{text}"
    );

    let json: serde_json::Value = serde_json::from_slice(&gate(&a, &b, "json").stdout).unwrap();
    let rule = &json["rules"][0];
    assert_eq!(rule["outcome"], "within_noise", "{json}");
    assert_eq!(rule["ci_method"], "order_statistics", "{json}");
    assert_eq!(json["passed"], true, "{json}");
    let (b_hi, c_lo) = (
        rule["baseline_ci"]["hi"].as_f64().unwrap(),
        rule["candidate_ci"]["lo"].as_f64().unwrap(),
    );
    assert!(c_lo <= b_hi, "{json}");
    assert!(
        rule["candidate"].as_f64().unwrap() > rule["limit"].as_f64().unwrap(),
        "{json}"
    );

    let markdown = gate(&a, &b, "markdown");
    let md = String::from_utf8_lossy(&markdown.stdout);
    assert!(md.contains(" | within noise |"), "{md}");
    assert!(
        md.contains("\n- p99 +10%: candidate ")
            && md.contains("**no regression: all 1 rules held (1 within noise)**"),
        "{md}"
    );

    let junit = gate(&a, &b, "junit");
    let xml = String::from_utf8_lossy(&junit.stdout);
    assert_valid_junit(&xml, dir.path());
    assert!(xml.contains(r#" tests="1" failures="0" "#), "{xml}");
    let case = testcase(&xml, "p99 +10%");
    assert!(
        case.contains("<system-out>p99 +10%: candidate ") && case.contains("within noise"),
        "{case}"
    );

    let slower = gate(&a, &s, "text");
    let text = String::from_utf8_lossy(&slower.stdout);
    assert_eq!(slower.status.code(), Some(4), "{text}");
    let row = text.lines().find(|l| l.starts_with("p99 +10%")).unwrap();
    assert!(row.ends_with("REGRESSED"), "{text}");
    let err = String::from_utf8_lossy(&slower.stderr);
    assert!(
        err.contains("their 95% confidence intervals do not overlap"),
        "{err}"
    );
}
