//! Shard runs built on disk with the store's own writers, then merged.

use super::*;
use crate::monitor::Health;
use crate::plan::{AttackPlan, Load, NamedRequest, Rate, RequestSpec, Stage, Stop, Target};
use crate::record::{ErrorKindKey, Histogram, IntervalRecord};
use crate::sample::{ErrorKind, Outcome, Sample};
use crate::store::{IntervalLine, ShardMeta};
use crate::summary::{Finding, Summary};
use std::path::Path;
use std::time::Duration;

fn meta(rate: f64) -> RunMeta {
    let target = Target::parse("http://127.0.0.1:9/").unwrap();
    let request = NamedRequest::single(
        RequestSpec::parse("GET", &[], bytes::Bytes::new()).unwrap(),
        &target,
    );
    let plan = AttackPlan::new(
        target,
        vec![request],
        Load::Open { rate: Rate(rate) },
        Stop {
            duration: Some(Duration::from_secs(3)),
            requests: None,
        },
    );
    RunMeta::describe(&plan, &[], Some(1024), "HTTP/1.1", &[])
}

fn sample(outcome: Outcome, latency_us: u64) -> Sample {
    Sample {
        outcome,
        latency: Duration::from_micros(latency_us),
        service: Duration::from_micros(latency_us),
        lag: Duration::from_micros(latency_us / 100),
        connect: None,
        tls_handshake: None,
        first_byte: Some(Duration::from_micros(latency_us / 2)),
        bytes_in: 100,
        bytes_out: 0,
        retried: false,
        request: 0,
        stage: None,
        expected: outcome.is_success(),
        iteration: None,
    }
}

/// A deterministic spread of latencies, from 100 µs to about 2 s.
pub(super) fn latencies(seed: u64, n: usize) -> Vec<u64> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            100 + (x >> 33) % 2_000_000
        })
        .collect()
}

/// Each bucket's value and count: two histograms of one content over different ranges
/// (grown in another order) encode differently, and hold the same buckets.
fn buckets(h: &Histogram) -> Vec<(u64, u64)> {
    h.inner()
        .iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect()
}

/// What one shard is made of.
pub(super) struct Spec {
    pub(super) index: u32,
    pub(super) count: u32,
    pub(super) plan: &'static str,
    pub(super) started_at: &'static str,
    pub(super) start_at: Option<&'static str>,
    /// Per second: its latencies.
    pub(super) seconds: Vec<Vec<u64>>,
    /// CPU seconds it used over its 3-second run.
    pub(super) cpu_secs: f64,
    /// Two stages, the first two seconds and the third (each request in its second's).
    pub(super) staged: bool,
}

pub(super) fn spec(index: u32, started_at: &'static str, seconds: Vec<Vec<u64>>) -> Spec {
    Spec {
        index,
        count: 2,
        plan: "ab12",
        started_at,
        start_at: None,
        seconds,
        cpu_secs: 0.1,
        staged: false,
    }
}

/// Writes the shard run `s` under `root`; returns its directory.
pub(super) fn write(root: &Path, s: &Spec) -> PathBuf {
    let path = root.join(format!(
        "shard-{}-{}",
        s.index,
        s.started_at.replace(':', "")
    ));
    let run = RunDir::at(&path);
    let mut m = meta(50.0);
    m.started_at = s.started_at.into();
    m.host = format!("gen-{}", s.index);
    let stages = |rate| {
        vec![
            Stage::constant("a", rate, Duration::from_secs(2)),
            Stage::constant("b", rate, Duration::from_secs(1)),
        ]
    };
    if s.staged {
        m.stages = stages(50.0);
    }
    m.shard = Some(ShardMeta {
        index: s.index,
        count: s.count,
        plan: s.plan.into(),
        whole_load: Load::Open { rate: Rate(100.0) },
        whole_stages: if s.staged { stages(100.0) } else { Vec::new() },
        start_at: s.start_at.map(Into::into),
        late_secs: s.start_at.map(|_| 0.0),
    });
    let mut log = run.create(&m).unwrap();
    let mut sent = 0;
    for (i, second) in s.seconds.iter().enumerate() {
        let mut r = IntervalRecord::new(i as u64);
        let stage = s.staged.then_some(u16::from(i >= 2));
        for (j, &us) in second.iter().enumerate() {
            let outcome = match j % 10 {
                7 => Outcome::Status(503),
                9 => Outcome::Error(ErrorKind::Reset),
                _ => Outcome::Status(200),
            };
            r.record(&sample(outcome, us));
            if let Some(stage) = stage {
                // Each answer half a second into its second.
                let done = Duration::from_millis(i as u64 * 1000 + 500);
                r.record_step(stage, &sample(outcome, us.min(400_000)), done);
            }
        }
        r.sent = second.len() as u64;
        r.scheduled = r.sent;
        sent += r.sent;
        log.append(&IntervalLine {
            record: r,
            health: Health {
                cpu: CpuTime {
                    total: Duration::from_secs_f64(s.cpu_secs / 3.0),
                    ..Default::default()
                },
                open_fds: 10,
            },
            stage,
            // The one server, as each shard read it (a different reading each).
            server: Some(crate::monitor::TargetHealth {
                cpu_percent: 10.0 * f64::from(s.index + 1),
                rss_bytes: 1 << 20,
                threads: 4,
                open_fds: Some(20),
                wall_secs: 1.0,
                cores: 4,
                trees: Vec::new(),
            }),
            shards: Vec::new(),
        })
        .unwrap();
    }
    assert!(sent > 0);
    run.finish(&RunEnd {
        status: EndStatus::Completed,
        ended_at: s.started_at.into(),
        ended_unix: None,
        attack_secs: s.seconds.len() as f64,
        wait_secs: 0.1,
        cpu: CpuTime {
            total: Duration::from_secs_f64(s.cpu_secs),
            ..Default::default()
        },
        peak_open_fds: 10 + u64::from(s.index),
        peak_rss_bytes: Some(1 << 20),
        reason: None,
        aborted: None,
    })
    .unwrap();
    path
}

pub(super) fn merge_into(
    root: &Path,
    dirs: &[PathBuf],
    partial: bool,
) -> Result<RunDir, MergeError> {
    let out = RunDir::at(root.join("merged"));
    merge(dirs, &out, partial, &["headroom".into(), "merge".into()]).map(|_| out)
}

fn refusal(root: &Path, dirs: &[PathBuf]) -> String {
    let e = merge_into(root, dirs, false).unwrap_err().to_string();
    assert!(!e.contains('\n'), "one line: {e}");
    assert_eq!(
        left_beside(root, "merged"),
        Vec::<String>::new(),
        "nothing left behind"
    );
    e
}

/// What is in `root` under the name `name` or its staging directory's (`.NAME.merging-…`).
fn left_beside(root: &Path, name: &str) -> Vec<String> {
    let mut left: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n == name || n.starts_with(&format!(".{name}.")))
        .collect();
    left.sort();
    left
}

#[test]
fn the_merged_histograms_are_those_of_every_sample_recorded_in_one() {
    let dir = tempfile::tempdir().unwrap();
    let a: Vec<Vec<u64>> = (0..3).map(|i| latencies(i, 400)).collect();
    let b: Vec<Vec<u64>> = (0..3).map(|i| latencies(100 + i, 300)).collect();
    let dirs = [
        write(dir.path(), &spec(0, "2026-11-25T10:00:00.000Z", a.clone())),
        write(dir.path(), &spec(1, "2026-11-25T10:00:00.200Z", b.clone())),
    ];
    let out = merge_into(dir.path(), &dirs, false).unwrap();
    let run = out.load().unwrap();

    // Everything recorded by one generator, second by second.
    let mut one = IntervalRecord::new(0);
    for second in a.iter().chain(&b) {
        let mut r = IntervalRecord::new(0);
        for (j, &us) in second.iter().enumerate() {
            let outcome = match j % 10 {
                7 => Outcome::Status(503),
                9 => Outcome::Error(ErrorKind::Reset),
                _ => Outcome::Status(200),
            };
            r.record(&sample(outcome, us));
        }
        one.merge(&r);
    }
    let quantiles = [0.0, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 0.9999, 1.0];
    let same = |x: &Histogram, y: &Histogram| {
        assert_eq!(x.len(), y.len());
        for q in quantiles {
            assert_eq!(x.quantile(q), y.quantile(q), "quantile {q}");
        }
        assert_eq!(x.inner().mean(), y.inner().mean());
        assert_eq!(buckets(x), buckets(y), "bucket for bucket");
    };
    same(&run.total.latency_ok(), &one.latency_ok());
    same(&run.total.latency_failed(), &one.latency_failed());
    same(&run.total.lag, &one.lag);
    same(&run.total.first_byte, &one.first_byte);
    assert_eq!(run.total.status, one.status);
    assert_eq!(run.total.errors, one.errors);
    assert_eq!(run.total.errors[&ErrorKindKey(ErrorKind::Reset)], 210);
    assert_eq!(run.total.sent, 2100);
    assert_eq!(run.total.bytes_in, one.bytes_in);
    assert_eq!(run.intervals.len(), 3, "0.2 s apart: the same seconds");

    let s = Summary::of(&run);
    assert_eq!(s.requests.total, 2100);
    assert_eq!(
        s.latency.p99_us,
        one.latency_ok().quantile(0.99).as_micros() as u64
    );
    let errors: u64 = s.errors.iter().map(|e| e.count).sum();
    assert_eq!(errors, 420, "resets and 503s, summed");
    // The whole test's load, not a shard's share of it.
    assert_eq!(run.meta.load, Load::Open { rate: Rate(100.0) });
    assert!(run.meta.shard.is_none());
    assert_eq!(run.meta.host, "gen-0, gen-1");
    assert_eq!(run.meta.threads, 2);
    // Each shard's connection ceiling is its share: the whole test's is their sum.
    let ceiling = crate::plan::ConnectionOptions::default().max_connections;
    assert_eq!(run.meta.connection.max_connections, 2 * ceiling);
    let shards = s.shards.as_ref().unwrap();
    assert_eq!(shards.rows.len(), 2);
    assert_eq!(shards.rows[1].sent, 900);
    assert!((shards.set.start_spread_secs - 0.2).abs() < 1e-9);
    assert!(s.partial.is_none());
    let end = run.end.as_ref().unwrap();
    assert!((end.attack_secs - 3.2).abs() < 1e-9, "{}", end.attack_secs);
    assert_eq!(end.peak_open_fds, 11);
    assert!((end.cpu.total.as_secs_f64() - 0.2).abs() < 1e-9);
    // The server is one: its readings are kept from one shard, not added up.
    assert_eq!(run.meta.merged.as_ref().unwrap().set.server_from, Some(0));
    assert!(run
        .intervals
        .iter()
        .all(|d| d.server.as_ref().unwrap().cpu_percent == 10.0));
    assert_eq!(s.server.as_ref().unwrap().cpu_max_percent, 10.0);
    // Each second keeps each generator's health, and their sum.
    let text = std::fs::read_to_string(out.path().join("intervals.jsonl")).unwrap();
    let first: IntervalLine = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first.shards.len(), 2);
    assert_eq!(first.health.open_fds, 20);
    // Every renderer takes it.
    let report = crate::report::render_text(&s);
    assert!(
        report.contains("2 of 2 shards, starts 0.200s apart"),
        "{report}"
    );
    assert!(report.contains("Shards:"), "{report}");
    assert!(crate::report::render_markdown(&s).contains("### Shards"));
}

#[test]
fn shards_that_started_apart_are_placed_on_the_common_clock() {
    let dir = tempfile::tempdir().unwrap();
    let one = |n| vec![latencies(n, 10)];
    let dirs = [
        write(
            dir.path(),
            &spec(0, "2026-11-25T10:00:00.000Z", vec![latencies(1, 10); 3]),
        ),
        // 2.4 s later: its second 0 is the test's second 2.
        write(dir.path(), &spec(1, "2026-11-25T10:00:02.400Z", one(2))),
    ];
    let out = merge_into(dir.path(), &dirs, false).unwrap();
    let run = out.load().unwrap();
    let sent: Vec<(u64, u64)> = run.intervals.iter().map(|d| (d.index, d.sent)).collect();
    assert_eq!(sent, [(0, 10), (1, 10), (2, 20)]);
    let merged = run.meta.merged.as_ref().unwrap();
    assert_eq!(merged.set.origin, "2026-11-25T10:00:00.000Z");
    assert_eq!(merged.shards[1].shift_secs, 2);
    assert!((merged.set.start_spread_secs - 2.4).abs() < 1e-9);
    // The last request left at 2.4 + 1 s of the test.
    assert!((run.end.as_ref().unwrap().attack_secs - 3.4).abs() < 1e-9);
    // The test fell short, and the late shard is named.
    let verdict = Summary::of(&run).verdict;
    assert!(
        verdict.findings.contains(&Finding::ShardLate {
            shard: 1,
            host: "gen-1".into(),
            late_us: 2_400_000
        }),
        "{verdict:?}"
    );
    assert!(verdict.generator_limited());

    // A shared --start-at is the origin, however late the shards began.
    let dir = tempfile::tempdir().unwrap();
    let late = |index, started_at| Spec {
        start_at: Some("2026-11-25T09:59:59.000Z"),
        ..spec(index, started_at, one(3))
    };
    let dirs = [
        write(dir.path(), &late(0, "2026-11-25T10:00:00.000Z")),
        write(dir.path(), &late(1, "2026-11-25T10:00:00.600Z")),
    ];
    let run = merge_into(dir.path(), &dirs, false)
        .unwrap()
        .load()
        .unwrap();
    let at: Vec<u64> = run.intervals.iter().map(|d| d.index).collect();
    assert_eq!(
        at,
        [1, 2],
        "1 s and 1.6 s after the start asked: seconds 1 and 2"
    );
    assert_eq!(run.meta.started_at, "2026-11-25T09:59:59.000Z");
}

#[test]
fn a_generator_that_could_not_keep_up_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let busy = Spec {
        // Its one thread busy the whole run.
        cpu_secs: 3.1,
        ..spec(1, "2026-11-25T10:00:00.000Z", vec![latencies(5, 10); 3])
    };
    let dirs = [
        write(
            dir.path(),
            &spec(0, "2026-11-25T10:00:00.000Z", vec![latencies(4, 10); 3]),
        ),
        write(dir.path(), &busy),
    ];
    let run = merge_into(dir.path(), &dirs, false)
        .unwrap()
        .load()
        .unwrap();
    let s = Summary::of(&run);
    let rows = &s.shards.as_ref().unwrap().rows;
    assert!(!rows[0].verdict.generator_limited());
    assert!(rows[1].verdict.generator_limited());
    let named: Vec<u32> = s
        .verdict
        .findings
        .iter()
        .filter_map(|f| match f {
            Finding::ShardLimited {
                shard, findings, ..
            } => {
                assert!(findings
                    .iter()
                    .any(|f| matches!(f, Finding::CpuBusy { .. })));
                Some(*shard)
            }
            _ => None,
        })
        .collect();
    assert_eq!(named, [1]);
    assert!(s.verdict.generator_limited());
    let report = crate::report::render_text(&s);
    let line = report
        .lines()
        .find(|l| l.contains("shard 1 (on gen-1) could not keep up: "))
        .unwrap_or_else(|| panic!("{report}"));
    assert!(
        line.contains("the generator used 100.0 % of its 1 core(s)"),
        "{line}"
    );
}

#[test]
fn stages_keep_their_place_and_their_times_move_to_the_common_clock() {
    let dir = tempfile::tempdir().unwrap();
    let staged = |index, started_at, seed| Spec {
        staged: true,
        ..spec(index, started_at, vec![latencies(seed, 10); 3])
    };
    let dirs = [
        write(dir.path(), &staged(0, "2026-11-25T10:00:00.000Z", 1)),
        // 1.3 s later: its seconds are the test's 1 to 3.
        write(dir.path(), &staged(1, "2026-11-25T10:00:01.300Z", 2)),
    ];
    let run = merge_into(dir.path(), &dirs, false)
        .unwrap()
        .load()
        .unwrap();
    let stages: Vec<(u64, Option<u16>, u64)> = run
        .intervals
        .iter()
        .map(|d| (d.index, d.stage, d.sent))
        .collect();
    // Second 2 is shard 0's third (stage b) and shard 1's second (stage a): the stage of
    // the shard nearest the origin is kept.
    assert_eq!(
        stages,
        [
            (0, Some(0), 10),
            (1, Some(0), 20),
            (2, Some(1), 20),
            (3, Some(1), 10)
        ]
    );
    assert_eq!(run.meta.stages[0].from, 100.0, "the whole test's stages");
    // Shard 1's last answer, at 2.5 s of its run, is at 3.8 s of the test.
    assert_eq!(run.all.steps[&1].last_us, 3_800_000);
    assert_eq!(run.all.steps[&0].count, 40);
    let s = Summary::of(&run);
    assert_eq!(s.stages.len(), 2);

    // A shard that did not write its end leaves the merged run partial, and says which.
    std::fs::remove_file(dirs[1].join("end.json")).unwrap();
    std::fs::remove_dir_all(dir.path().join("merged")).unwrap();
    let run = merge_into(dir.path(), &dirs, false)
        .unwrap()
        .load()
        .unwrap();
    assert!(run.end.is_none());
    assert_eq!(
        Summary::of(&run).partial.as_deref(),
        Some("shard 1 did not finish (killed or crashed)")
    );
}

mod partial;
mod refusals;

#[test]
fn a_shard_aborted_by_its_safety_stop_aborts_the_merged_run_on_the_common_clock() {
    let dir = tempfile::tempdir().unwrap();
    let dirs = [
        write(
            dir.path(),
            &spec(0, "2026-11-25T10:00:00.000Z", vec![latencies(1, 10); 3]),
        ),
        // 2.4 s later: its second 0 is the test's second 2.
        write(
            dir.path(),
            &spec(1, "2026-11-25T10:00:02.400Z", vec![latencies(2, 10)]),
        ),
    ];
    let end = dirs[1].join("end.json");
    let mut e: RunEnd = serde_json::from_str(&std::fs::read_to_string(&end).unwrap()).unwrap();
    e.status = EndStatus::Aborted;
    e.aborted = Some(crate::store::Aborted {
        condition: "errors > 5%".into(),
        window_secs: 0,
        from_second: 0,
        held_secs: 1,
        at_second: 1,
        last: "20.00%".into(),
    });
    std::fs::write(&end, serde_json::to_string(&e).unwrap()).unwrap();
    let run = merge_into(dir.path(), &dirs, false)
        .unwrap()
        .load()
        .unwrap();
    let end = run.end.clone().unwrap();
    assert_eq!(end.status, EndStatus::Aborted);
    let a = end.aborted.unwrap();
    assert_eq!((a.from_second, a.at_second), (2, 3));
    let s = Summary::of(&run);
    assert_eq!(s.aborted, Some(a));
    // Not a partial run: every shard ended, and what they sent is all there.
    assert_eq!(s.partial, None);
}
