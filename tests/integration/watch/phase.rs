//! `headroom watch`'s first line and Shards table against states that hold: copies of real
//! shard runs fed to the watched directories line by line (a late shard mid-sending, a
//! stall past the plan, a safety stop's drain), so no assertion waits on the machine.

use super::*;

/// The page's phase word and its seconds so far, from its first line.
fn phase_and_second(frame: &Json) -> (String, u64) {
    let at = frame["position"].as_str().unwrap();
    let phase = at
        .split("<strong class=\"phase\">")
        .nth(1)
        .and_then(|p| p.split([' ', '<']).next())
        .unwrap_or_else(|| panic!("a phase: {at}"))
        .to_string();
    // The time part: the first part that is a number of seconds ("6s of 30s, 24s left").
    let second = at
        .split(" · ")
        .find_map(|part| part.split_once("s")?.0.parse().ok())
        .unwrap_or_else(|| panic!("a time: {at}"));
    (phase, second)
}

/// Each row of a frame's Shards table: its cells' text.
fn shard_rows(frame: &Json) -> Vec<Vec<String>> {
    let html = frame["shards"].as_str().unwrap();
    html.split("<tr>")
        .skip(2)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|cell| {
                    let text = cell.split_once('>').map_or("", |(_, t)| t);
                    text.split("</td>").next().unwrap_or("").to_string()
                })
                .collect()
        })
        .collect()
}

fn spawn_attack(url: &str, shard: &str, start_at: u64, extra: &[&str], out: &Path) -> Child {
    let start_at = start_at.to_string();
    let mut args = vec![
        "attack",
        url,
        "--shard",
        shard,
        "--start-at",
        &start_at,
        "-q",
        "--out",
        arg(out),
    ];
    args.extend(extra);
    headroom(&args).spawn().expect("the binary runs")
}

/// A shard's run directory copied into the watched one as a copy brought in while it runs
/// would be (docs/distributed.md): its metadata, then its lines as far as the test says,
/// then its end. The test decides what the watch has seen, so what the page must say of
/// it does not hang on how fast anything runs.
struct Copied {
    src: PathBuf,
    dst: PathBuf,
    lines: Vec<String>,
    copied: usize,
}

impl Copied {
    fn begin(src: &Path, dst: &Path) -> Copied {
        std::fs::create_dir_all(dst).unwrap();
        // Whole files appear at once (renamed into place), as a copy tool writes them.
        let put = |name: &str| {
            let tmp = dst.join(format!(".{name}.part"));
            std::fs::copy(src.join(name), &tmp).unwrap();
            std::fs::rename(&tmp, dst.join(name)).unwrap();
        };
        put("meta.json");
        let text = std::fs::read_to_string(src.join("intervals.jsonl")).unwrap();
        std::fs::write(dst.join("intervals.jsonl"), "").unwrap();
        Copied {
            src: src.to_path_buf(),
            dst: dst.to_path_buf(),
            lines: text.split_inclusive('\n').map(str::to_string).collect(),
            copied: 0,
        }
    }

    /// Appends its lines up to the one of its own second `index` (from 0).
    fn through(&mut self, index: u64) {
        let upto = self
            .lines
            .iter()
            .position(|l| {
                let line: Json = serde_json::from_str(l).unwrap();
                line["record"]["index"].as_u64().unwrap() > index
            })
            .unwrap_or(self.lines.len());
        let mut log = std::fs::OpenOptions::new()
            .append(true)
            .open(self.dst.join("intervals.jsonl"))
            .unwrap();
        for line in &self.lines[self.copied..upto.max(self.copied)] {
            log.write_all(line.as_bytes()).unwrap();
        }
        self.copied = upto.max(self.copied);
    }

    /// Every line, then its end.json.
    fn end(&mut self) {
        self.through(u64::MAX);
        let tmp = self.dst.join(".end.json.part");
        std::fs::copy(self.src.join("end.json"), &tmp).unwrap();
        std::fs::rename(&tmp, self.dst.join("end.json")).unwrap();
    }
}

/// The next frame whose seconds so far are `second`, and the frames before it; the page
/// shows a state that no longer changes within a second or two, however slow the machine.
fn frame_at(events: &mut Events, second: u64) -> (Json, Vec<String>) {
    let mut seen = Vec::new();
    loop {
        let (name, frame) = events.next().expect("frames until that second");
        assert_eq!(name, "frame", "ended before second {second}: {seen:?}");
        let at = frame["position"].as_str().unwrap().to_string();
        if phase_and_second(&frame).1 == second {
            return (frame, seen);
        }
        seen.push(at);
    }
}

/// Two shards of one 6 s test at 50/s against the built-in target, shard 1 started about
/// 3 s after the common start (as a pod scheduled late), into `dir`/src0 and src1; the
/// common start.
fn late_shards(dir: &Path) -> (Vec<PathBuf>, SystemTime) {
    let server = crate::support::start_target(Duration::ZERO);
    let url = format!("http://{}/", server.addr());
    let src: Vec<PathBuf> = ["src0", "src1"].iter().map(|s| dir.join(s)).collect();
    let start = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 2;
    let origin = UNIX_EPOCH + Duration::from_secs(start);
    let load = ["--rate", "50", "--duration", "6s"];
    let mut children = Reaped(vec![spawn_attack(&url, "0/2", start, &load, &src[0])]);
    let late = origin + Duration::from_millis(3_200);
    std::thread::sleep(late.duration_since(SystemTime::now()).unwrap_or_default());
    children
        .0
        .push(spawn_attack(&url, "1/2", start, &load, &src[1]));
    for (i, child) in std::mem::take(&mut children.0).into_iter().enumerate() {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "shard {i}: {}", stderr(&o));
    }
    assert!(shift_of(&src[1], origin) >= 3, "shard 1 started late");
    (src, origin)
}

#[test]
fn a_late_shard_keeps_the_test_sending_and_the_shards_seconds_are_numbered_as_the_report_does() {
    let dir = tempfile::tempdir().unwrap();
    let (src, origin) = late_shards(dir.path());
    let shift = shift_of(&src[1], origin);
    // Shard 1's sending ends on the merged clock at its shift plus its 6 s.
    let ends = shift + 6;
    let shards: Vec<PathBuf> = ["s0", "s1"].iter().map(|s| dir.path().join(s)).collect();
    let (mut watch, addr, rest) = spawn_watch(&shards, &["--stalled-after", "60s", "--quiet"]);
    let mut events = Events::open(&addr);
    // Shard 0 ran its 6 s and ended; shard 1 has written its seconds up to the seventh of
    // the test's clock (its own fourth), past the plan's 6 s, and still sends.
    let mut copies = [
        Copied::begin(&src[0], &shards[0]),
        Copied::begin(&src[1], &shards[1]),
    ];
    copies[0].end();
    copies[1].through(6 - shift);
    let (frame, _) = frame_at(&mut events, 7);
    let at = frame["position"].as_str().unwrap();
    // The old page said "draining (all sent; …) · 7s (sending ended at 6s)".
    assert_eq!(phase_and_second(&frame).0, "sending", "{at}");
    assert!(
        at.contains(&format!("7s of {ends}s, {}s left", ends - 7)),
        "{at}"
    );
    // The Shards table numbers a shard's last second as the report numbers seconds, and as
    // watch's stderr names it ("shard 1 running (second 7)"): from 1.
    let rows = shard_rows(&frame);
    assert_eq!(rows[1][0..3], ["1", "running", "7"], "{rows:?}");
    copies[1].end();
    let (last0, _) = written(&shards[0], origin);
    let (last1, _) = written(&shards[1], origin);
    let mut last = None;
    while let Some((name, frame)) = events.next() {
        if name == "end" {
            break;
        }
        last = Some(frame);
    }
    let last = last.expect("frames until the end");
    let rows = shard_rows(&last);
    assert_eq!(
        rows[0][0..3],
        ["0", "ended", &(last0.unwrap() + 1).to_string()],
        "{rows:?}"
    );
    assert_eq!(
        rows[1][0..3],
        ["1", "ended", &(last1.unwrap() + 1).to_string()],
        "{rows:?}"
    );
    assert!(watch.0[0].wait().unwrap().success());
    let said = rest.join().unwrap();
    assert!(said.contains("every run ended"), "{said}");
}

#[test]
fn a_stall_past_the_plan_names_the_merged_clock_never_a_stop_before_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    let (src, origin) = late_shards(dir.path());
    let shards: Vec<PathBuf> = ["s0", "s1"].iter().map(|s| dir.path().join(s)).collect();
    let (mut watch, addr, rest) = spawn_watch(&shards, &["--stalled-after", "2s", "--quiet"]);
    let mut events = Events::open(&addr);
    // Shard 0 killed after its second second (no end.json); shard 1, started late, ran its
    // 6 s to the end, past the plan's 6 s on the test's clock.
    let mut copies = [
        Copied::begin(&src[0], &shards[0]),
        Copied::begin(&src[1], &shards[1]),
    ];
    copies[0].through(1);
    copies[1].end();
    let mut stalled = None;
    while let Some((name, frame)) = events.next() {
        assert_eq!(name, "frame", "shard 0 never ended: no report");
        if phase_and_second(&frame).0 == "stalled" {
            stalled = Some(frame);
            break;
        }
    }
    let stalled = stalled.expect("the page says the test stalled once no shard writes");
    let (last0, _) = written(&shards[0], origin);
    let (last1, _) = written(&shards[1], origin);
    let (last0, last1) = (last0.unwrap(), last1.unwrap());
    assert!(last1 + 1 > 6, "past the plan: {last1}");
    // The old page said "9s (stopped before its planned 6s)".
    let at = stalled["position"].as_str().unwrap();
    assert!(
        at.contains(&format!(
            "{}s on the merged clock (a shard stopped writing before its end)",
            last1 + 1
        )) && !at.contains("before its planned"),
        "{at}"
    );
    let rows = shard_rows(&stalled);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(
        rows[0][0..3],
        ["0", "stopped", &(last0 + 1).to_string()],
        "{rows:?}"
    );
    assert_eq!(
        rows[1][0..3],
        ["1", "ended", &(last1 + 1).to_string()],
        "{rows:?}"
    );
    let sent = Command::new("kill")
        .args(["-INT", &watch.0[0].id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    watch.0[0].wait().unwrap();
    let said = rest.join().unwrap();
    assert!(said.contains("s0 has written no line for"), "{said}");
}

#[test]
fn shards_whose_safety_stop_fired_are_shown_stopping_not_sending() {
    // Every answer takes 2 s, so "p50 > 1s for 2s" holds from the first answers on, in both
    // shards, and each stops itself long before its 30 s.
    let server = crate::support::start_target(Duration::from_secs(2));
    let url = format!("http://{}/", server.addr());
    let dir = tempfile::tempdir().unwrap();
    let src: Vec<PathBuf> = ["src0", "src1"]
        .iter()
        .map(|s| dir.path().join(s))
        .collect();
    let start = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 2;
    let load = [
        "--rate",
        "20",
        "--duration",
        "30s",
        "--abort-when",
        "p50 > 1s for 2s",
    ];
    let mut children = Reaped(
        ["0/2", "1/2"]
            .iter()
            .zip(&src)
            .map(|(s, out)| spawn_attack(&url, s, start, &load, out))
            .collect(),
    );
    for (i, child) in std::mem::take(&mut children.0).into_iter().enumerate() {
        let o = child.wait_with_output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(5),
            "shard {i} aborted: {}",
            stderr(&o)
        );
    }
    // The second each shard's stop fired in, as its end says (both started on time: the
    // test's clock is theirs).
    let fired: Vec<u64> = src
        .iter()
        .map(|s| {
            let end: Json =
                serde_json::from_str(&std::fs::read_to_string(s.join("end.json")).unwrap())
                    .unwrap();
            assert_eq!(end["status"], "aborted", "{end}");
            end["aborted"]["at_second"].as_u64().unwrap()
        })
        .collect();
    let origin = UNIX_EPOCH + Duration::from_secs(start);
    assert!(src.iter().all(|s| shift_of(s, origin) == 0), "on time");
    // The watch has seen each shard's seconds up to the one its stop fired in, and no
    // end.json yet: the drain, while the answers in flight are awaited.
    let shards: Vec<PathBuf> = ["s0", "s1"].iter().map(|s| dir.path().join(s)).collect();
    let (mut watch, addr, rest) = spawn_watch(&shards, &["--stalled-after", "60s", "--quiet"]);
    let mut events = Events::open(&addr);
    let mut copies: Vec<Copied> = src
        .iter()
        .zip(&shards)
        .map(|(s, d)| Copied::begin(s, d))
        .collect();
    for (copy, at) in copies.iter_mut().zip(&fired) {
        copy.through(at - 1);
    }
    let (frame, _) = frame_at(&mut events, *fired.iter().min().unwrap());
    let at = frame["position"].as_str().unwrap();
    // The old page said "sending · 4s of 30s, 26s left".
    assert_eq!(phase_and_second(&frame).0, "stopping", "{at}");
    assert!(!at.contains(" left"), "{at}");
    let rows = shard_rows(&frame);
    assert!(rows.iter().all(|r| r[1] == "stopping"), "{rows:?}");
    for copy in &mut copies {
        copy.end();
    }
    let mut last = None;
    while let Some((name, frame)) = events.next() {
        if name == "end" {
            break;
        }
        last = Some(frame);
    }
    let last = last.expect("frames until the end");
    let at = last["position"].as_str().unwrap();
    assert_eq!(phase_and_second(&last).0, "ended", "{at}");
    assert!(watch.0[0].wait().unwrap().success());
    let said = rest.join().unwrap();
    assert!(said.contains("every run ended"), "{said}");
}
