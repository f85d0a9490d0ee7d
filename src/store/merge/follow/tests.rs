//! Shard runs written on disk, copied line by line into the directories followed, as a
//! shard writing its log would.

use super::*;
use crate::store::merge::tests::{latencies, merge_into, spec, write};
use crate::store::IntervalDigest;
use std::io::Write;

/// A shard run written whole in `src`, and the directory followed, which grows from it.
struct Growing {
    src: PathBuf,
    dst: PathBuf,
    lines: Vec<String>,
    copied: usize,
}

impl Growing {
    fn new(src: PathBuf, dst: PathBuf) -> Growing {
        let text = std::fs::read_to_string(src.join("intervals.jsonl")).unwrap();
        Growing {
            src,
            dst,
            lines: text.lines().map(|l| format!("{l}\n")).collect(),
            copied: 0,
        }
    }

    /// The run begins: its meta.json, no line yet.
    fn begin(&self) {
        std::fs::create_dir_all(&self.dst).unwrap();
        std::fs::copy(self.src.join("meta.json"), self.dst.join("meta.json")).unwrap();
    }

    /// Appends its next line (`false` when none is left).
    fn line(&mut self) -> bool {
        let Some(line) = self.lines.get(self.copied) else {
            return false;
        };
        self.append(line);
        self.copied += 1;
        true
    }

    fn append(&self, text: &str) {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dst.join("intervals.jsonl"))
            .unwrap();
        f.write_all(text.as_bytes()).unwrap();
    }

    /// The run ends: its end.json.
    fn end(&self) {
        std::fs::copy(self.src.join("end.json"), self.dst.join("end.json")).unwrap();
    }
}

/// Two shards of one test, 0.2 s apart, of `seconds` seconds each, written whole under
/// `root/src` and to be followed under `root/watched`.
fn two_shards(root: &Path, seconds: u64) -> Vec<Growing> {
    let src = root.join("src");
    let a: Vec<Vec<u64>> = (0..seconds).map(|i| latencies(i, 300)).collect();
    let b: Vec<Vec<u64>> = (0..seconds).map(|i| latencies(100 + i, 200)).collect();
    let made = [
        write(&src, &spec(0, "2026-11-25T10:00:00.000Z", a)),
        write(&src, &spec(1, "2026-11-25T10:00:01.200Z", b)),
    ];
    made.into_iter()
        .enumerate()
        .map(|(i, s)| Growing::new(s, root.join("watched").join(format!("shard-{i}"))))
        .collect()
}

fn dirs(shards: &[Growing]) -> Vec<PathBuf> {
    shards.iter().map(|g| g.dst.clone()).collect()
}

fn settings() -> Settings {
    Settings {
        partial: false,
        stall: Duration::from_secs(10),
    }
}

fn start(shards: &[Growing], now: Instant) -> Follow {
    Follow::start(&dirs(shards), settings(), &["headroom".into()], now).unwrap()
}

fn digests(run: &StoredRun) -> Vec<IntervalDigest> {
    run.intervals.clone()
}

#[test]
fn the_view_grows_by_final_seconds_only_and_ends_as_the_merge() {
    let dir = tempfile::tempdir().unwrap();
    let mut shards = two_shards(dir.path(), 5);
    let t0 = Instant::now();
    let mut follow = start(&shards, t0);
    assert!(follow.run().is_none(), "nothing begun, nothing shown");
    assert!(follow
        .shards(t0)
        .iter()
        .all(|v| v.state == ShardState::Waiting));
    for g in &shards {
        g.begin();
    }
    let mut shown = Vec::new();
    // Shard 0 runs ahead by two lines, then both go on in turn: what is shown is only ever
    // what both wrote (shard 1 starts a second later, its lines one second on).
    let mut now = t0;
    shards[0].line();
    shards[0].line();
    follow.poll(now);
    let views = follow.shards(now);
    assert_eq!(views[0].state, ShardState::Running);
    assert_eq!(views[1].state, ShardState::Late, "{views:?}");
    assert_eq!(
        follow.shown(),
        Some(0),
        "second 0 is final: shard 1's begin at 1"
    );
    shown.push(follow.run().unwrap());
    loop {
        now += Duration::from_secs(1);
        let a = shards[0].line();
        let b = shards[1].line();
        follow.poll(now);
        // Each shard's last second on the common clock (shard 1's shifted by one).
        let last_0 = shards[0].copied as u64 - 1;
        let last_1 = shards[1].copied as u64;
        assert_eq!(
            follow.shown(),
            Some(last_0.min(last_1)),
            "held by the shard behind"
        );
        shown.push(follow.run().unwrap());
        if !a && !b {
            break;
        }
    }
    assert!(!follow.ended(), "no end.json yet");
    for g in &shards {
        g.end();
    }
    // The last lines and end.json read in one pass: ended once a read finds nothing more
    // (a copy of the directory may bring end.json before the log's last lines).
    follow.poll(now);
    follow.poll(now);
    assert!(follow.ended());
    let last = follow.run().unwrap();
    let merged = merge_into(dir.path(), &dirs(&shards), false)
        .unwrap()
        .load()
        .unwrap();
    assert_eq!(digests(&last), digests(&merged));
    assert_eq!(last.total.sent, merged.total.sent);
    assert_eq!(last.total.status, merged.total.status);
    for q in [0.5, 0.9, 0.99, 1.0] {
        assert_eq!(
            last.total.latency_ok().quantile(q),
            merged.total.latency_ok().quantile(q)
        );
    }
    assert_eq!(
        serde_json::to_value(&last.meta).unwrap()["merged"],
        serde_json::to_value(&merged.meta).unwrap()["merged"],
        "the merge's own record of the shards"
    );
    assert_eq!(
        serde_json::to_value(&last.end).unwrap(),
        serde_json::to_value(&merged.end).unwrap()
    );
    // Every second ever shown is the merge's second, never a partial sum.
    for run in &shown {
        let n = run.intervals.len();
        assert_eq!(run.intervals, merged.intervals[..n]);
    }
    assert!(follow.notices().is_empty(), "{:?}", follow.notices());
}

#[test]
fn a_line_being_written_is_not_read_until_it_is_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut shards = two_shards(dir.path(), 3);
    let now = Instant::now();
    for g in &mut shards {
        g.begin();
        g.line();
    }
    let mut follow = start(&shards, now);
    // Half of shard 0's second line: not a line yet, nor damage.
    let half = shards[0].lines[1].len() / 2;
    let line = shards[0].lines[1].clone();
    shards[0].append(&line[..half]);
    follow.poll(now);
    assert_eq!(follow.shards(now)[0].last_second, Some(0));
    assert_eq!(follow.shards(now)[0].state, ShardState::Running);
    shards[0].append(&line[half..]);
    follow.poll(now);
    assert_eq!(follow.shards(now)[0].last_second, Some(1));
    assert!(follow.notices().is_empty());
}

#[test]
fn a_shard_that_stops_writing_is_said_stopped_once_and_no_longer_holds_the_view() {
    let dir = tempfile::tempdir().unwrap();
    let mut shards = two_shards(dir.path(), 5);
    let t0 = Instant::now();
    for g in &mut shards {
        g.begin();
        g.line();
    }
    let mut follow = start(&shards, t0);
    follow.poll(t0);
    // Shard 1 writes on; shard 0 writes nothing more.
    let mut said = Vec::new();
    for s in 1..=4 {
        shards[1].line();
        said.extend(follow.poll(t0 + Duration::from_secs(s)));
    }
    let now = t0 + Duration::from_secs(4);
    let views = follow.shards(now);
    assert_eq!(views[0].state, ShardState::Lagging, "{views:?}");
    assert_eq!(follow.shown(), Some(0), "held by the shard behind");
    assert!(said.is_empty());
    let later = t0 + Duration::from_secs(11);
    said.extend(follow.poll(later));
    said.extend(follow.poll(later + Duration::from_secs(1)));
    assert_eq!(follow.shards(later)[0].state, ShardState::Stopped);
    assert_eq!(said.len(), 1, "said once: {said:?}");
    let text = said[0].to_string();
    assert!(
        text.contains("shard-0 has written no line for 11s and no end.json (stopped?)"),
        "{text}"
    );
    // What merge would make of it now: shard 0's one second, shard 1's five.
    assert_eq!(follow.shown(), Some(5));
    // It writes again, into seconds shown: the view is rebuilt, and is the merge's.
    shards[0].line();
    let said = follow.poll(later + Duration::from_secs(2));
    assert!(
        said.iter().any(|n| matches!(n, Notice::Resumed { .. })),
        "{said:?}"
    );
    while shards[0].line() {}
    while shards[1].line() {}
    for g in &shards {
        g.end();
    }
    follow.poll(later + Duration::from_secs(3));
    follow.poll(later + Duration::from_secs(3));
    assert!(follow.ended());
    let merged = merge_into(dir.path(), &dirs(&shards), false)
        .unwrap()
        .load()
        .unwrap();
    assert_eq!(digests(&follow.run().unwrap()), digests(&merged));
}

#[test]
fn a_damaged_line_is_named_and_nothing_past_the_last_exact_second_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let mut shards = two_shards(dir.path(), 4);
    let now = Instant::now();
    for g in &mut shards {
        g.begin();
        g.line();
        g.line();
    }
    let mut follow = start(&shards, now);
    follow.poll(now);
    assert_eq!(follow.shown(), Some(1));
    shards[0].append("{\"record\": garbage}\n");
    shards[1].line();
    shards[1].line();
    let said = follow.poll(now);
    let views = follow.shards(now);
    assert_eq!(views[0].state, ShardState::Damaged);
    let problem = views[0].problem.clone().unwrap();
    assert!(
        problem.contains("shard-0/intervals.jsonl: line 3:"),
        "{problem}"
    );
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0]
            .to_string()
            .ends_with("; the view stops at second 2, the last exact one"),
        "{}",
        said[0]
    );
    // Shard 1's later seconds are not shown: without shard 0's they are not the test's.
    assert_eq!(follow.shown(), Some(1));
    assert_eq!(follow.run().unwrap().intervals.len(), 2);
    assert!(follow.over());
    assert!(follow.poll(now).is_empty(), "said once");
}

#[test]
fn a_deleted_directory_is_said_gone_and_the_view_stops() {
    let dir = tempfile::tempdir().unwrap();
    let mut shards = two_shards(dir.path(), 4);
    let now = Instant::now();
    for g in &mut shards {
        g.begin();
        g.line();
        g.line();
    }
    let mut follow = start(&shards, now);
    follow.poll(now);
    std::fs::remove_dir_all(&shards[1].dst).unwrap();
    shards[0].line();
    let said = follow.poll(now);
    assert_eq!(follow.shards(now)[1].state, ShardState::Gone);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0]
            .to_string()
            .contains("shard-1 was deleted while watched"),
        "{}",
        said[0]
    );
    // Its seconds read before it went are kept; nothing past them is shown.
    assert_eq!(follow.shown(), Some(2));
    shards[0].line();
    follow.poll(now);
    assert_eq!(follow.shown(), Some(2));
    assert!(follow.over());
}

#[test]
fn shards_of_different_tests_are_refused_in_the_merges_words() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    let mut other = spec(1, "2026-11-25T10:00:00.100Z", vec![latencies(1, 10)]);
    other.plan = "cd34";
    let dirs = vec![
        write(
            &src,
            &spec(0, "2026-11-25T10:00:00.000Z", vec![latencies(0, 10)]),
        ),
        write(&src, &other),
    ];
    let merged = merge_into(dir.path(), &dirs, false)
        .unwrap_err()
        .to_string();
    let watched = Follow::start(&dirs, settings(), &[], Instant::now())
        .unwrap_err()
        .to_string();
    assert_eq!(watched, merged);
    assert!(watched.contains("are shards of different tests (their plan fingerprints differ)"));
    // Shards not all given: refused unless partial, as merge does.
    let one = &dirs[..1];
    let merged = merge_into(dir.path(), one, false).unwrap_err().to_string();
    let watched = Follow::start(one, settings(), &[], Instant::now())
        .unwrap_err()
        .to_string();
    assert_eq!(watched, merged);
    let partial = Settings {
        partial: true,
        ..settings()
    };
    let mut follow = Follow::start(one, partial, &[], Instant::now()).unwrap();
    follow.poll(Instant::now());
    follow.poll(Instant::now());
    assert!(follow.ended());
    assert!(follow.notices()[0]
        .to_string()
        .starts_with("shard 1 of 2 not given"));
}

#[test]
fn a_shard_of_another_test_appearing_later_is_left_out_and_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut shards = two_shards(dir.path(), 3);
    let now = Instant::now();
    shards[0].begin();
    shards[0].line();
    let mut follow = start(&shards, now);
    follow.poll(now);
    let mut other = spec(1, "2026-11-25T10:00:00.100Z", vec![latencies(1, 10)]);
    other.plan = "cd34";
    let made = write(&dir.path().join("other"), &other);
    std::fs::create_dir_all(&shards[1].dst).unwrap();
    std::fs::copy(made.join("meta.json"), shards[1].dst.join("meta.json")).unwrap();
    let said = follow.poll(now);
    assert_eq!(said.len(), 2, "{said:?}");
    let text = said[0].to_string();
    assert!(
        text.starts_with("left out: ") && text.contains("shards of different tests"),
        "{text}"
    );
    // Without it, the test's shard 1 is missing: the view is of shard 0 alone, and says so.
    assert!(matches!(said[1], Notice::Missing { .. }), "{said:?}");
    assert_eq!(follow.shards(now)[1].state, ShardState::Damaged);
    assert!(follow.poll(now).is_empty(), "said once");
}

#[test]
fn one_run_that_is_not_a_shard_is_followed_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let shards = two_shards(dir.path(), 3);
    // A shard's run is still a run: its meta.json made a plain run's by dropping the shard.
    let src = &shards[0].src;
    let mut meta: RunMeta = crate::store::read_json(&src.join("meta.json")).unwrap();
    meta.shard = None;
    crate::store::write_json(&src.join("meta.json"), &meta).unwrap();
    let mut g = Growing::new(src.clone(), dir.path().join("single"));
    let now = Instant::now();
    let mut follow = Follow::start(&[g.dst.clone()], settings(), &[], now).unwrap();
    g.begin();
    g.line();
    follow.poll(now);
    assert!(!follow.is_merged());
    assert_eq!(follow.shown(), Some(0));
    while g.line() {}
    g.end();
    follow.poll(now);
    follow.poll(now);
    assert!(follow.ended());
    let stored = crate::store::RunDir::at(&g.dst).load().unwrap();
    assert_eq!(digests(&follow.run().unwrap()), digests(&stored));
}

#[test]
fn an_end_brought_before_the_last_lines_waits_for_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut shards = two_shards(dir.path(), 3);
    let now = Instant::now();
    for g in &mut shards {
        g.begin();
        g.line();
    }
    let mut follow = start(&shards, now);
    // end.json first, as `kubectl cp` (tar) brings a directory: not the end yet.
    for g in &shards {
        g.end();
    }
    follow.poll(now);
    assert!(!follow.ended());
    for g in &mut shards {
        while g.line() {}
    }
    follow.poll(now);
    follow.poll(now);
    assert!(follow.ended());
    let merged = merge_into(dir.path(), &dirs(&shards), false)
        .unwrap()
        .load()
        .unwrap();
    assert_eq!(digests(&follow.run().unwrap()), digests(&merged));
}

#[test]
fn a_log_copied_in_again_is_read_on_from_where_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let mut shards = two_shards(dir.path(), 4);
    let now = Instant::now();
    for g in &mut shards {
        g.begin();
        g.line();
        g.line();
    }
    let mut follow = start(&shards, now);
    follow.poll(now);
    assert_eq!(follow.shown(), Some(1));
    // Each directory brought in again whole, one more line in each: a new file (a rename
    // over the old, as a copy tool makes it) for shard 0, the same file rewritten from its
    // start for shard 1 (as one that truncates does).
    let log = |g: &Growing, n: usize| g.lines[..n].concat();
    let fresh = shards[0].dst.join("intervals.jsonl.copy");
    std::fs::write(&fresh, log(&shards[0], 3)).unwrap();
    std::fs::rename(&fresh, shards[0].dst.join("intervals.jsonl")).unwrap();
    std::fs::write(shards[1].dst.join("intervals.jsonl"), log(&shards[1], 3)).unwrap();
    for g in &mut shards {
        g.copied = 3;
    }
    follow.poll(now);
    assert_eq!(follow.shown(), Some(2), "{:?}", follow.notices());
    for g in &mut shards {
        while g.line() {}
        g.end();
    }
    follow.poll(now);
    follow.poll(now);
    assert!(follow.ended());
    let merged = merge_into(dir.path(), &dirs(&shards), false)
        .unwrap()
        .load()
        .unwrap();
    assert_eq!(digests(&follow.run().unwrap()), digests(&merged));
    assert!(follow.notices().is_empty(), "{:?}", follow.notices());
}

#[test]
fn shards_missing_from_directories_that_appear_later_are_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut shards = two_shards(dir.path(), 3);
    let now = Instant::now();
    // Only shard 0's directory is given, and it is not there yet: nothing to refuse.
    let one = vec![shards[0].dst.clone()];
    let mut follow = Follow::start(&one, settings(), &[], now).unwrap();
    shards[0].begin();
    shards[0].line();
    let said = follow.poll(now);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0]
        .to_string()
        .starts_with("shard 1 of 2 not given: the view is of the shards given"));
    assert_eq!(follow.shown(), Some(0));
    assert!(follow.poll(now).is_empty(), "said once");
}

#[test]
fn shards_given_out_of_order_are_each_said_of_themselves() {
    let dir = tempfile::tempdir().unwrap();
    let mut shards = two_shards(dir.path(), 5);
    let t0 = Instant::now();
    for g in &mut shards {
        g.begin();
        g.line();
    }
    // Shard 1 first on the command line; the merge orders shards by index.
    let given = vec![shards[1].dst.clone(), shards[0].dst.clone()];
    let mut follow = Follow::start(&given, settings(), &[], t0).unwrap();
    follow.poll(t0);
    let mut said = Vec::new();
    for s in 1..=11 {
        shards[0].line();
        said.extend(follow.poll(t0 + Duration::from_secs(s)));
    }
    let views = follow.shards(t0 + Duration::from_secs(11));
    assert_eq!(views[0].dir, shards[1].dst, "in the order given");
    assert_eq!(views[0].index, Some(1));
    assert_eq!(views[0].state, ShardState::Stopped);
    // Still writing: its five seconds run past its planned 3 s, into the drain.
    assert_eq!(views[1].state, ShardState::Draining);
    assert_eq!(said.len(), 1, "{said:?}");
    let text = said[0].to_string();
    assert!(
        text.contains("shard-1 has written no line for 10s"),
        "its own silence, not the other's: {text}"
    );
}

#[test]
fn the_tests_sending_ends_with_its_last_shards_plan_on_the_merged_clock() {
    let dir = tempfile::tempdir().unwrap();
    let mut shards = two_shards(dir.path(), 5);
    let now = Instant::now();
    let mut follow = start(&shards, now);
    assert_eq!(
        follow.sending_ends(),
        None,
        "nothing known before a run began"
    );
    for g in &mut shards {
        g.begin();
    }
    follow.poll(now);
    // Each planned 3 s; shard 1 began 1.2 s after shard 0, one second later on the clock.
    assert_eq!(follow.sending_ends(), Some(4));
    for _ in 0..4 {
        shards[0].line();
        shards[1].line();
    }
    follow.poll(now);
    let states: Vec<ShardState> = follow.shards(now).iter().map(|v| v.state).collect();
    // Each wrote its own fourth second: past its 3 s, it drains.
    assert_eq!(states, [ShardState::Draining, ShardState::Draining]);
}
