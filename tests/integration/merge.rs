//! `headroom merge` on real runs: two ordinary attacks made into the shards of one test
//! (a test fixture: their meta.json is given a `shard` by hand, as `--shard I/N` would
//! write it), merged, and the merged run read by every renderer.

use crate::support::buckets;
use crate::support::{attack, headroom, open_plan, start_target};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Makes the run in `dir` shard `index` of a 2-shard test of 200 req/s.
fn make_shard(dir: &Path, index: u32) {
    let path = dir.join("meta.json");
    let mut meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    meta["shard"] = serde_json::json!({
        "index": index,
        "count": 2,
        "plan": "f1x7",
        "whole_load": {"open": {"rate": 200.0}},
    });
    std::fs::write(&path, serde_json::to_string_pretty(&meta).unwrap()).unwrap();
}

fn text(o: &std::process::Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn failure(o: &std::process::Output) -> String {
    assert!(!o.status.success());
    let e = String::from_utf8(o.stderr.clone()).unwrap();
    assert_eq!(e.trim_end().lines().count(), 1, "one line: {e}");
    e
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs Chromium: run tests/run")]
fn two_shard_runs_merge_into_one_run_every_renderer_reads() {
    let target = start_target(Duration::from_millis(2));
    let url = format!("http://{}/", target.addr());
    let plan = open_plan(&url, 100.0, 150);
    let (_, _, a) = attack(&plan);
    let (_, _, b) = attack(&plan);
    let shards: Vec<PathBuf> = [&a, &b].iter().map(|d| d.path().join("run")).collect();
    make_shard(&shards[0], 0);
    make_shard(&shards[1], 1);
    let work = tempfile::tempdir().unwrap();
    let merged = work.path().join("merged");
    let arg = |p: &Path| p.to_str().unwrap().to_string();
    let o = headroom(&[
        "merge",
        &arg(&shards[0]),
        &arg(&shards[1]),
        "--out",
        &arg(&merged),
    ]);
    text(&o);

    // Exact: the merged histograms are the shards' added up, bucket for bucket.
    let run = crate::support::counts::check_dir(&merged);
    let mut sum = crate::support::counts::check_dir(&shards[0]).total;
    sum.merge(&crate::support::counts::check_dir(&shards[1]).total);
    assert_eq!(run.total.completed(), 300);
    assert_eq!(
        buckets(&run.total.latency_ok()),
        buckets(&sum.latency_ok()),
        "bucket for bucket"
    );
    assert_eq!(run.total.status, sum.status);

    let report = text(&headroom(&["report", &arg(&merged)]));
    assert!(
        report.contains("Requests      [total, rate, throughput]  "),
        "{report}"
    );
    assert!(report.contains("300, "), "{report}");
    assert!(
        report.contains("(open model, 200 req/s, HTTP/1.1)"),
        "{report}"
    );
    assert!(report.contains("2 of 2 shards"), "{report}");
    // The fixture's shards ran one after the other: the second is named as late.
    assert!(
        report.contains("shard 1 (on ") && report.contains("after the test's common start"),
        "{report}"
    );
    let p99 = headroom::units::fmt_us(sum.latency_ok().quantile(0.99).as_micros() as u64);
    assert!(report.contains(&p99), "{p99} in {report}");
    for (format, shards) in [
        ("markdown", "### Shards"),
        ("json", "\"shards\""),
        ("html", "Shards"),
    ] {
        let out = work.path().join(format!("report.{format}"));
        text(&headroom(&[
            "report",
            &arg(&merged),
            "--format",
            format,
            "-o",
            &arg(&out),
        ]));
        assert!(
            std::fs::read_to_string(&out).unwrap().contains(shards),
            "{format}"
        );
    }
    let page = work.path().join("report.html");
    let rendered = crate::support::chromium::render(&page, work.path());
    rendered.assert_fits(1);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("HISTF"), "no histogram among the options");
    let plots = work.path().join("plots");
    text(&headroom(&[
        "report",
        &arg(&merged),
        "--plots",
        &arg(&plots),
    ]));
    assert!(std::fs::read_dir(&plots).unwrap().count() > 0);
    let compared = text(&headroom(&["compare", &arg(&shards[0]), &arg(&merged)]));
    assert!(compared.contains("300"), "{compared}");

    // Refused, each with a line.
    let e = failure(&headroom(&["merge", &arg(&shards[0])]));
    assert!(e.contains("shard 1 of 2 missing"), "{e}");
    let e = failure(&headroom(&["merge", &arg(&shards[0]), &arg(&shards[0])]));
    assert!(e.contains("shard 0 is given twice"), "{e}");
    let e = failure(&headroom(&["merge", &arg(&merged), &arg(&shards[1])]));
    assert!(e.contains("is already a merged run"), "{e}");
    let partial = work.path().join("partial");
    let o = headroom(&[
        "merge",
        &arg(&shards[1]),
        "--partial",
        "--out",
        &arg(&partial),
    ]);
    text(&o);
    let report = text(&headroom(&["report", &arg(&partial)]));
    assert!(
        report.contains("PARTIAL RUN: merged from 1 of 2 shards; missing: shard 0"),
        "{report}"
    );
}

/// Shard `shard` of a 100 req/s test of 200 requests, starting at `start_at`, into `out`.
fn spawn_shard(url: &str, shard: &str, start_at: &str, out: &Path) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args([
            "attack",
            url,
            "--rate",
            "100",
            "-n",
            "200",
            "--shard",
            shard,
            "--start-at",
            start_at,
            "-q",
            "--out",
        ])
        .arg(out)
        .env_remove("HEADROOM_SHARDS")
        .env_remove("JOB_COMPLETION_INDEX")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary runs")
}

#[test]
fn real_shards_at_a_common_start_merge_into_the_whole_test_exactly() {
    let target = start_target(Duration::from_millis(1));
    let url = format!("http://{}/", target.addr());
    let work = tempfile::tempdir().unwrap();
    // Whole seconds ahead: both processes are up and waiting well before then (a shard
    // that comes up late starts at once and says so; the merge is exact either way).
    let start = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3;
    let start_at = start.to_string();
    let shards = [work.path().join("s0"), work.path().join("s1")];
    let children: Vec<_> = ["0/2", "1/2"]
        .iter()
        .zip(&shards)
        .map(|(shard, out)| spawn_shard(&url, shard, &start_at, out))
        .collect();
    for child in children {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let merged = work.path().join("merged");
    let arg = |p: &Path| p.to_str().unwrap().to_string();
    text(&headroom(&[
        "merge",
        &arg(&shards[1]),
        &arg(&shards[0]),
        "--out",
        &arg(&merged),
    ]));

    let run = crate::support::counts::check_dir(&merged);
    let mut sum = crate::support::counts::check_dir(&shards[0]).all;
    sum.merge(&crate::support::counts::check_dir(&shards[1]).all);
    assert_eq!(run.all.completed(), 200);
    assert_eq!(run.all.sent, sum.sent);
    for (merged, summed) in [
        (run.all.latency_ok(), sum.latency_ok()),
        (run.all.service_ok(), sum.service_ok()),
        (run.all.lag.clone(), sum.lag.clone()),
    ] {
        assert_eq!(buckets(&merged), buckets(&summed), "bucket for bucket");
    }
    let meta = run.meta.merged.as_ref().unwrap();
    let origin = humantime::parse_rfc3339(&meta.set.origin).unwrap();
    assert_eq!(
        origin,
        std::time::UNIX_EPOCH + Duration::from_secs(start),
        "the common start"
    );

    let summary: serde_json::Value = serde_json::from_str(&text(&headroom(&[
        "report",
        &arg(&merged),
        "--format",
        "json",
    ])))
    .unwrap();
    assert_eq!(summary["requests"]["total"], 200);
    assert_eq!(
        summary["load"]["open"]["rate"], 100.0,
        "the whole test's rate"
    );
    let p = |q: f64| sum.latency_ok().quantile(q).as_micros() as u64;
    assert_eq!(summary["latency"]["p50_us"], p(0.5));
    assert_eq!(summary["latency"]["p99_us"], p(0.99));
    assert_eq!(summary["latency"]["max_us"], p(1.0));
    let report = text(&headroom(&["report", &arg(&merged)]));
    assert!(report.contains("2 of 2 shards"), "{report}");
    assert!(
        !report.contains("Shard   "),
        "a merged run is no shard: {report}"
    );
    assert!(
        report.contains("(open model, 100 req/s, HTTP/1.1)"),
        "{report}"
    );
}
