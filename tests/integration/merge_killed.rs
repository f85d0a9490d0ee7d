//! A sharded test with one shard killed mid-run (SIGKILL by PID: no `end.json`) and one
//! started late, merged and watched: the killed shard must not hide that the load did not
//! leave as asked, and its own row must say what its own run says.

use crate::support::{headroom, start_target};
use headroom::store::merge::follow::{Follow, Settings};
use headroom::summary::{Finding, Limit, Summary};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Shard `shard` of a 300 req/s test of 4 s starting at `start_at` (Unix seconds), into `out`.
fn spawn_shard(url: &str, shard: &str, start_at: u64, out: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(["attack", url, "--rate", "300", "-d", "4s", "--shard", shard])
        .args(["--start-at", &start_at.to_string(), "-q", "--out"])
        .arg(out)
        .env_remove("HEADROOM_SHARDS")
        .env_remove("JOB_COMPLETION_INDEX")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs")
}

fn unix_now() -> Duration {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap()
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

fn succeed(child: Child, what: &str) {
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// What the merged test must say: the load fell short, the late shard and the killed one
/// named, and not that the load left as asked.
fn assert_says_the_load_fell_short(s: &Summary, what: &str) {
    let f = &s.verdict.findings;
    assert!(
        f.iter()
            .any(|f| matches!(f, Finding::RateShort { asked, .. } if *asked == 300.0)),
        "{what}: {:?}",
        s.verdict
    );
    assert!(
        f.iter()
            .any(|f| matches!(f, Finding::ShardLate { shard: 2, .. })),
        "{what}: {:?}",
        s.verdict
    );
    assert!(
        f.iter().any(|f| matches!(
            f,
            Finding::ShardsIncomplete { cut_short, .. } if cut_short == &[1]
        )),
        "{what}: {:?}",
        s.verdict
    );
    assert_ne!(s.verdict.limit, Limit::Neither, "{what}");
}

#[test]
fn a_killed_shard_neither_hides_the_shortfall_nor_loses_its_own_seconds() {
    let target = start_target(Duration::from_millis(1));
    let url = format!("http://{}/", target.addr());
    let work = tempfile::tempdir().unwrap();
    let dirs: Vec<_> = (0..3).map(|i| work.path().join(format!("s{i}"))).collect();
    let start = unix_now().as_secs() + 3;
    let s0 = spawn_shard(&url, "0/3", start, &dirs[0]);
    let mut s1 = spawn_shard(&url, "1/3", start, &dirs[1]);
    // Shard 2 comes up two seconds after the common start: it starts at once, late, and
    // its share of the first seconds is never sent.
    let late_from = Duration::from_secs(start + 2);
    std::thread::sleep(late_from.saturating_sub(unix_now()));
    let s2 = spawn_shard(&url, "2/3", start, &dirs[2]);
    // Shard 1 is killed once it has written two seconds: it writes no end.json.
    let log = dirs[1].join("intervals.jsonl");
    let deadline = Instant::now() + Duration::from_secs(60);
    while lines(&log) < 2 {
        assert!(Instant::now() < deadline, "shard 1 wrote no second");
        std::thread::sleep(Duration::from_millis(20));
    }
    s1.kill().unwrap();
    let o = s1.wait_with_output().unwrap();
    assert!(!o.status.success(), "shard 1 was killed");
    succeed(s0, "shard 0");
    succeed(s2, "shard 2");
    assert!(!dirs[1].join("end.json").exists());

    let arg = |p: &Path| p.to_str().unwrap().to_string();
    let merged = work.path().join("merged");
    let o = headroom(&[
        "merge",
        &arg(&dirs[0]),
        &arg(&dirs[1]),
        &arg(&dirs[2]),
        "--out",
        &arg(&merged),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let run = crate::support::counts::check_dir(&merged);
    assert!(
        run.end.is_none(),
        "a shard without its end: the merge is partial"
    );
    let summary = Summary::of(&run);
    assert_says_the_load_fell_short(&summary, "merge");
    let text = String::from_utf8(headroom(&["report", &arg(&merged)]).stdout).unwrap();
    assert!(!text.contains("the load left as asked"), "{text}");
    assert!(
        text.contains("PARTIAL RUN: shard 1 did not finish (killed or crashed)"),
        "{text}"
    );
    assert!(
        text.contains("shard 1 stopped before their end"),
        "the verdict names the killed shard: {text}"
    );

    // The killed shard's row is its own run's: its seconds, its verdict.
    let own = Summary::of(&crate::support::counts::check_dir(&dirs[1]));
    let seconds = run.meta.merged.as_ref().unwrap().shards[1].intervals;
    assert!(seconds >= 2, "{seconds}");
    assert_eq!(own.duration.attack_secs, seconds as f64);
    let row = &summary.shards.as_ref().unwrap().rows[1];
    assert!(!row.finished);
    assert!(
        !row.verdict
            .findings
            .iter()
            .any(|f| matches!(f, Finding::TooShort { .. })),
        "{seconds} s are not too short: {:?}",
        row.verdict
    );
    // The row is judged on the shard's totals; its own report reads its seconds too, which
    // on a loaded machine can excuse a moment of send lag (a transient) or show a trend: only
    // then may the two differ (as for any shard's row, killed or not).
    let by_second = own.verdict.findings.iter().any(|f| {
        matches!(
            f,
            Finding::Transient { .. }
                | Finding::LatencyDrifting { .. }
                | Finding::LatencyRising { .. }
        )
    });
    if !by_second {
        assert_eq!(
            row.verdict.limit, own.verdict.limit,
            "row {:?}, own {:?}",
            row.verdict, own.verdict
        );
    }
    assert_eq!(row.generator.cpu_secs, own.generator.cpu_secs);
    assert_eq!(row.generator.peak_open_fds, own.generator.peak_open_fds);

    // `watch` says the same once shard 1 has stopped writing, and holds its tongue while
    // it might still send (its last line just read).
    let settings = Settings {
        partial: false,
        stall: Duration::from_secs(10),
    };
    let now = Instant::now();
    let mut follow = Follow::start(&dirs, settings, &[], now).unwrap();
    follow.poll(now);
    let going = Summary::of(&follow.run().unwrap());
    assert!(
        !going
            .verdict
            .findings
            .iter()
            .any(|f| matches!(f, Finding::RateShort { .. })),
        "shard 1 may still be sending: {:?}",
        going.verdict
    );
    // The clock is passed in: a minute later shard 1 has been silent past the stall.
    follow.poll(now + Duration::from_secs(60));
    let stopped = Summary::of(&follow.run().unwrap());
    assert_says_the_load_fell_short(&stopped, "watch");
    assert_eq!(stopped.verdict, summary.verdict, "watch and merge agree");
}
