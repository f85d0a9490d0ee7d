//! Poisson arrivals (`--arrivals poisson`) against real servers: at 5,000 req/s the
//! inter-send times read back from `--raw` pass an exponential goodness-of-fit test, and the
//! run's own check of its sends agrees with the one computed here from the stored send
//! times; on a machine too busy for the generator to send on time, both say the sends were
//! not Poisson. The seed repeats the schedule exactly, shards walk one schedule, and the
//! flags that cannot go together are refused.

use crate::support::nginx::{Nginx, Tls};
use crate::support::{headroom, one_heavy_at_a_time, start_target};
use headroom::plan::{Rate, Stop};
use headroom::schedule::{ConstantPacer, Pacer, Schedule, Spacing};
use headroom::summary::{SendFinding, Summary};
use std::path::Path;
use std::time::Duration;

const RATE: f64 = 5000.0;
/// A seed whose schedule's own gaps and spans sit well inside the test (D under half the
/// critical value), so that a generator on time passes whatever the draw.
const SEED: u64 = 2;

/// The binary's output, which must have succeeded.
fn ok(args: &[&str]) -> std::process::Output {
    let o = headroom(args);
    assert!(
        o.status.success(),
        "headroom {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Every send's intended and actual time, ns from the start, read back as a user's script
/// would (`headroom export`); retries (a second send of one arrival) left out.
fn sends(run: &Path) -> Vec<(u64, u64)> {
    let csv = ok(&["export", run.to_str().unwrap(), "--format", "csv"]).stdout;
    let mut reader = csv::Reader::from_reader(&csv[..]);
    let headers = reader.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (intended, sent, retried) = (column("intended_ns"), column("sent_ns"), column("retried"));
    reader
        .records()
        .map(Result::unwrap)
        .filter(|r| &r[retried] == "false")
        .map(|r| (r[intended].parse().unwrap(), r[sent].parse().unwrap()))
        .collect()
}

/// P(X ≤ x) for X the sum of `k` Exp(1): written here again, apart from the library's.
fn erlang(k: u64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let (mut term, mut sum) = ((-x).exp(), 0.0);
    for i in 0..k {
        if i > 0 {
            term *= x / i as f64;
        }
        sum += term;
    }
    1.0 - sum
}

/// A Kolmogorov–Smirnov test of `values` against Erlang-k, each value trusted to `band`:
/// the statistic and its critical value at `level`.
fn ks(mut values: Vec<f64>, k: u64, band: f64, level: f64) -> (f64, f64) {
    values.sort_by(f64::total_cmp);
    let n = values.len() as f64;
    let mut d = 0.0f64;
    for (i, &x) in values.iter().enumerate() {
        d = d
            .max(erlang(k, x - band) - i as f64 / n)
            .max((i + 1) as f64 / n - erlang(k, x + band));
    }
    let c = (-(level / 2.0).ln() / 2.0).sqrt();
    (d, c / (n.sqrt() + 0.12 + 0.11 / n.sqrt()))
}

/// Gaps between consecutive times (ns) and spans of `span` of them, in expected arrivals
/// at `rate`.
fn gaps_and_spans(times: &[u64], rate: f64, span: usize) -> (Vec<f64>, Vec<f64>) {
    let count: Vec<f64> = times.iter().map(|&t| t as f64 * rate / 1e9).collect();
    let gaps = count.windows(2).map(|w| w[1] - w[0]).collect();
    let spans = (span..count.len())
        .step_by(span)
        .map(|i| count[i] - count[i - span])
        .collect();
    (gaps, spans)
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn a_poisson_run_at_5000_per_second_sends_poisson_or_says_it_did_not() {
    let _heavy = one_heavy_at_a_time();
    let nginx = Nginx::start(Tls::None);
    let url = nginx.url("http", "/");
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let seed = SEED.to_string();
    let out = ok(&[
        "attack",
        &url,
        "--rate",
        "5000",
        "-d",
        "4s",
        "--arrivals",
        "poisson",
        "--seed",
        &seed,
        "--raw",
        "-q",
        "--format",
        "json",
        "--out",
        run.to_str().unwrap(),
    ]);
    let summary: Summary = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary.arrivals.seed, Some(SEED));
    let check = summary
        .arrivals
        .check
        .clone()
        .expect("a Poisson run checks its sends");
    assert_eq!((check.arrivals_per_gap, check.arrivals_per_span), (1, 10));
    let band = RATE * check.resolution_us / 1e6;

    let mut sends = sends(&run);
    // The seed is the schedule: every request was due when the seeded process has it due,
    // so the run can be repeated exactly.
    let schedule = Schedule {
        pacer: Pacer::Constant(ConstantPacer::new(Rate(RATE))),
        spacing: Spacing::Poisson { seed: SEED },
    };
    let mut walk = schedule.walk();
    let stop = Stop {
        duration: Some(Duration::from_secs(4)),
        requests: None,
    };
    let due: Vec<u64> = (0..)
        .map_while(|n| {
            walk.due(n)
                .filter(|&d| headroom::schedule::within(&stop, n, d))
        })
        .map(|d| d.as_nanos() as u64)
        .collect();
    let mut intended: Vec<u64> = sends.iter().map(|s| s.0).collect();
    intended.sort_unstable();
    assert_eq!(
        intended, due,
        "the stored due times are the seed's schedule"
    );
    // The schedule itself fits well inside the test: what follows is about the sends.
    let (gaps, spans) = gaps_and_spans(&due, RATE, 10);
    let (d, c) = ks(gaps, 1, 0.0, 0.025);
    assert!(d < c / 2.0, "the schedule's gaps: D = {d}, critical {c}");
    let (d, c) = ks(spans, 10, 0.0, 0.025);
    assert!(d < c / 2.0, "the schedule's spans: D = {d}, critical {c}");

    // The inter-send times as they were stored, tested here apart from the run.
    sends.sort_unstable_by_key(|s| s.1);
    let sent: Vec<u64> = sends.iter().map(|s| s.1).collect();
    let (gaps, spans) = gaps_and_spans(&sent, RATE, 10);
    assert_eq!(
        (check.gaps.samples, check.spans.samples),
        (gaps.len() as u64, spans.len() as u64),
        "the run checked every send"
    );
    let (gap_d, gap_c) = ks(gaps, 1, band, 0.025);
    let (span_d, span_c) = ks(spans, 10, band, 0.025);
    // The run's statistics are these, but for its histograms' thousandths.
    assert!(
        (check.gaps.statistic - gap_d).abs() < 2e-3,
        "{check:?} vs {gap_d}"
    );
    assert!(
        (check.spans.statistic - span_d).abs() < 2e-3,
        "{check:?} vs {span_d}"
    );
    let here = gap_d < gap_c && span_d < span_c;
    // Within the histograms' rounding of a critical value, either answer is right.
    let borderline = (gap_d - gap_c).abs() < 2e-3 || (span_d - span_c).abs() < 2e-3;
    let report = String::from_utf8(ok(&["report", run.to_str().unwrap()]).stdout).unwrap();
    let line = report
        .lines()
        .find(|l| l.starts_with("Arrivals"))
        .unwrap_or_else(|| panic!("no arrivals line in\n{report}"));
    if check.passed() {
        // On time: the inter-send times are exponential, as this test finds too.
        assert!(
            here || borderline,
            "the run says Poisson, this test does not: {check:?}"
        );
        assert!(
            line.contains(&format!(
                "Poisson, seed {SEED} (sends checked: exponential gaps, KS D="
            )),
            "{line}"
        );
        eprintln!("the generator sent on time here: {line}");
    } else {
        // Too busy to send on time: the run says so, and the stored send times agree.
        assert_eq!(check.finding, SendFinding::NotPoisson, "{check:?}");
        assert!(
            !here || borderline,
            "the run says not Poisson, this test does: {check:?}"
        );
        assert!(line.contains("the sends were NOT Poisson"), "{line}");
        eprintln!("the generator could not send on time here: {line}");
    }
}

#[test]
fn shards_of_a_poisson_test_walk_its_one_schedule_and_merge() {
    let server = start_target(Duration::ZERO);
    let url = format!("http://{}/", server.addr());
    let dir = tempfile::tempdir().unwrap();
    let mut intended = vec![];
    let mut runs = vec![];
    for shard in ["0/2", "1/2"] {
        let run = dir.path().join(shard.replace('/', "-of-"));
        ok(&[
            "attack",
            &url,
            "--rate",
            "2000",
            "-n",
            "1200",
            "--arrivals",
            "poisson",
            "--seed",
            "3",
            "--shard",
            shard,
            "--raw",
            "-q",
            "--out",
            run.to_str().unwrap(),
        ]);
        intended.extend(sends(&run).into_iter().map(|s| s.0));
        runs.push(run);
    }
    // Each shard's clock starts at its own start: together they are the whole schedule.
    intended.sort_unstable();
    let whole = Schedule {
        pacer: Pacer::Constant(ConstantPacer::new(Rate(2000.0))),
        spacing: Spacing::Poisson { seed: 3 },
    };
    let mut walk = whole.walk();
    let due: Vec<u64> = (0..1200)
        .map(|n| walk.due(n).unwrap().as_nanos() as u64)
        .collect();
    assert_eq!(intended, due);
    // A shard sends every other arrival: its gaps are of two.
    let merged = dir.path().join("merged");
    let mut args = vec!["merge", "--out", merged.to_str().unwrap()];
    args.extend(runs.iter().map(|r| r.to_str().unwrap()));
    ok(&args);
    let json = ok(&["report", merged.to_str().unwrap(), "--format", "json"]).stdout;
    let summary: Summary = serde_json::from_slice(&json).unwrap();
    assert_eq!(summary.arrivals.seed, Some(3));
    let check = summary.arrivals.check.unwrap();
    assert_eq!(
        (check.arrivals_per_gap, check.gaps.samples),
        (2, 1198),
        "{check:?}"
    );
    let report = String::from_utf8(ok(&["report", merged.to_str().unwrap()]).stdout).unwrap();
    assert!(report.contains("gaps of 2 arrivals"), "{report}");
}

#[test]
fn even_arrivals_say_so_and_arrivals_that_cannot_be_are_refused() {
    let server = start_target(Duration::ZERO);
    let url = format!("http://{}/", server.addr());
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("even");
    ok(&[
        "attack",
        &url,
        "--rate",
        "100",
        "-n",
        "20",
        "-q",
        "--out",
        run.to_str().unwrap(),
    ]);
    let report = String::from_utf8(ok(&["report", run.to_str().unwrap()]).stdout).unwrap();
    assert!(
        report
            .lines()
            .any(|l| l.starts_with("Arrivals") && l.ends_with("evenly spaced")),
        "{report}"
    );
    let md =
        String::from_utf8(ok(&["report", run.to_str().unwrap(), "--format", "markdown"]).stdout)
            .unwrap();
    // vegeta's block is a code block in markdown too, laid out as the text report's.
    assert!(
        md.lines()
            .any(|l| l.starts_with("Arrivals") && l.ends_with("evenly spaced")),
        "{md}"
    );
    let meta = std::fs::read_to_string(run.join("meta.json")).unwrap();
    assert!(
        !meta.contains("arrivals"),
        "even is what runs stored before had: {meta}"
    );

    for (args, says) in [
        (
            vec![
                "attack",
                &url,
                "-c",
                "2",
                "-n",
                "5",
                "--arrivals",
                "poisson",
            ],
            "open model",
        ),
        (
            vec!["attack", &url, "--rate", "5", "-n", "5", "--seed", "4"],
            "--arrivals poisson",
        ),
        (
            vec![
                "attack",
                &url,
                "--rate",
                "5",
                "-n",
                "5",
                "--arrivals",
                "bursty",
            ],
            "poisson",
        ),
        (
            vec![
                "attack",
                &url,
                "--rate",
                "50",
                "-n",
                "50",
                "--arrivals",
                "poisson",
                "--shard",
                "0/2",
            ],
            "--seed",
        ),
        (
            vec![
                "sweep",
                &url,
                "-c",
                "1..2",
                "--step",
                "1",
                "--step-requests",
                "5",
                "--arrivals",
                "poisson",
            ],
            "concurrency sweep",
        ),
    ] {
        let o = headroom(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(says), "{args:?}: {err}");
    }
}
