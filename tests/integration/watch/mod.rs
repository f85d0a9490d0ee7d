//! `headroom watch` over the two shards of one test, started together against the built-in
//! target: its page's figures (read from `/events`, as the page reads them) show, second by
//! second, exactly what `headroom merge` makes of the shards at the end, only seconds every
//! shard has written, and at most two seconds behind the shards' logs.

mod phase;

use crate::support::stderr;
use headroom::store::RunDir;
use serde_json::Value as Json;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The figure of each second's sent, OK and failed requests.
const PER_SECOND: &str = "Sent, answered OK and failed per second";

fn headroom(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_headroom"));
    c.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("HEADROOM_SHARDS")
        .env_remove("JOB_COMPLETION_INDEX");
    c
}

fn arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The page's events, read as a browser's EventSource reads them (HTTP/1.0: the stream
/// ends when the server closes it, no chunks to undo).
struct Events(BufReader<TcpStream>);

impl Events {
    fn open(addr: &str) -> Events {
        let mut s = TcpStream::connect(addr).unwrap();
        // Generous: a frame comes every second; this only keeps a broken server from
        // hanging the test.
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        write!(s, "GET /events HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
        let mut r = BufReader::new(s);
        let mut status = String::new();
        r.read_line(&mut status).unwrap();
        assert!(status.starts_with("HTTP/1.0 200"), "{status}");
        loop {
            let mut line = String::new();
            r.read_line(&mut line).unwrap();
            if line.trim().is_empty() {
                break;
            }
        }
        Events(r)
    }

    /// The next event's name and data; `None` when the stream ends.
    fn next(&mut self) -> Option<(String, Json)> {
        let (mut name, mut data) = (String::new(), String::new());
        loop {
            let mut line = String::new();
            if self.0.read_line(&mut line).unwrap() == 0 {
                return None;
            }
            let line = line.trim_end_matches(['\r', '\n']);
            if let Some(v) = line.strip_prefix("event: ") {
                name = v.to_string();
            } else if let Some(v) = line.strip_prefix("data: ") {
                data.push_str(v);
            } else if line.is_empty() && !data.is_empty() {
                return Some((name, serde_json::from_str(&data).unwrap()));
            }
        }
    }
}

/// One second of the per-second figure: its index, and sent, OK and failed per second.
type Second = (u64, f64, f64, f64);

/// Each second as a frame's per-second figure shows it.
fn shown_seconds(frame: &Json) -> Vec<Second> {
    let Some(figure) = frame["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["title"] == PER_SECOND)
    else {
        return Vec::new();
    };
    let names: Vec<&str> = figure["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    let data = figure["data"].as_array().unwrap();
    let column = |name: &str| {
        let i = names.iter().position(|n| *n == name).unwrap() + 1;
        data[i].as_array().unwrap().clone()
    };
    let (ok, failed, sent) = (column("OK/s"), column("failed/s"), column("sent/s"));
    let f = |v: &Json| v.as_f64().unwrap();
    data[0]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, x)| (f(x) as u64, f(&sent[i]), f(&ok[i]), f(&failed[i])))
        .collect()
}

/// The same figure of the run `merge` made, drawn by the report's own code.
fn report_seconds(run: &headroom::store::StoredRun) -> Vec<Second> {
    let summary = headroom::summary::Summary::of(run);
    let view = headroom::report::plot::RunView {
        label: "all requests".into(),
        run,
        summary: &summary,
        scatter: None,
    };
    let figures = headroom::report::plot::for_run(&view);
    let figure = figures
        .shown
        .iter()
        .find(|f| f.title == PER_SECOND)
        .expect("the report has the figure");
    let series = |name: &str| {
        figure
            .series
            .iter()
            .find(|s| s.name == name)
            .unwrap()
            .points
            .clone()
    };
    let (ok, failed, sent) = (series("OK/s"), series("failed/s"), series("sent/s"));
    sent.iter()
        .enumerate()
        .map(|(i, &(x, y))| {
            assert_eq!(ok[i].0, x);
            (x as u64, y, ok[i].1, failed[i].1)
        })
        .collect()
}

/// A shard's last whole second on the test's clock (its index shifted by its start after
/// `origin`, as the merge places it), and whether it ended.
fn written(dir: &Path, origin: SystemTime) -> (Option<u64>, bool) {
    // end.json first: once it is there, every line is.
    let ended = dir.join("end.json").exists();
    let Ok(text) = std::fs::read_to_string(dir.join("intervals.jsonl")) else {
        return (None, ended);
    };
    let shift = shift_of(dir, origin);
    let last = text
        .split_inclusive('\n')
        .rev()
        .filter(|l| l.ends_with('\n'))
        .find_map(|l| serde_json::from_str::<Json>(l).ok())
        .map(|l| l["record"]["index"].as_u64().unwrap() + shift);
    (last, ended)
}

/// The whole seconds a shard's indices are shifted by on the test's clock: its start after
/// `origin`, rounded, as the merge places it.
fn shift_of(dir: &Path, origin: SystemTime) -> u64 {
    let meta: Json =
        serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
    let started = humantime::parse_rfc3339(meta["started_at"].as_str().unwrap()).unwrap();
    let offset = started.duration_since(origin).unwrap_or_default();
    (offset.as_millis() as u64 + 500) / 1000
}

fn spawn_shard(url: &str, shard: &str, start_at: &str, out: &Path) -> Child {
    headroom(&[
        "attack",
        url,
        "--rate",
        "200",
        "--duration",
        "8s",
        "--shard",
        shard,
        "--start-at",
        start_at,
        "-q",
        "--out",
        arg(out),
    ])
    .spawn()
    .expect("the binary runs")
}

#[test]
fn the_watched_shards_show_merges_seconds_as_they_are_written() {
    let server = crate::support::start_target(Duration::ZERO);
    let url = format!("http://{}/", server.addr());
    let dir = tempfile::tempdir().unwrap();
    let shards: Vec<PathBuf> = ["s0", "s1"].iter().map(|s| dir.path().join(s)).collect();
    // The watch starts before the shards' directories exist, as it would beside pods.
    let (mut watch, addr, rest) = spawn_watch(&shards, &["--quiet"]);
    let start = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3;
    let origin = UNIX_EPOCH + Duration::from_secs(start);
    let children: Vec<Child> = ["0/2", "1/2"]
        .iter()
        .zip(&shards)
        .map(|(s, out)| spawn_shard(&url, s, &start.to_string(), out))
        .collect();

    let mut events = Events::open(&addr);
    let mut frames = Vec::new();
    let mut lags = Vec::new();
    let mut ended = false;
    while let Some((name, data)) = events.next() {
        if name == "end" {
            assert!(
                data["report"].as_str().unwrap().contains("<!DOCTYPE html>"),
                "the page becomes the report"
            );
            ended = true;
            break;
        }
        // The shards' logs read at the moment the frame arrived: how far the page is behind
        // what they wrote, in the run's own seconds (judged while both still write).
        let now: Vec<(Option<u64>, bool)> = shards.iter().map(|s| written(s, origin)).collect();
        let seconds = shown_seconds(&data);
        if let (Some(&(shown, ..)), [(Some(a), false), (Some(b), false)]) =
            (seconds.last(), now.as_slice())
        {
            lags.push(a.min(b).saturating_sub(shown));
        }
        frames.push(seconds);
    }
    assert!(ended, "the stream ends with the report");
    for (i, child) in children.into_iter().enumerate() {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "shard {i}: {}", stderr(&o));
    }
    let status = watch.0[0].wait().unwrap();
    let said = rest.join().unwrap();
    assert!(status.success(), "{said}");
    assert!(said.contains("every run ended"), "{said}");
    assert!(
        !said.contains("stopped?") && !said.contains("damaged"),
        "{said}"
    );

    let merged = dir.path().join("merged");
    let o = headroom(&[
        "merge",
        arg(&shards[0]),
        arg(&shards[1]),
        "--out",
        arg(&merged),
    ])
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let run = RunDir::at(&merged).load().unwrap();
    let counts: Vec<Second> = run
        .intervals
        .iter()
        .map(|d| {
            let n = |x: u64| x as f64;
            (
                d.index,
                n(d.measured_sent()),
                n(d.measured_ok()),
                n(d.measured_failed()),
            )
        })
        .collect();
    assert!(counts.len() >= 8, "{counts:?}");
    // Every second ever shown is the merge's own, never a sum of some shards' parts: each
    // whole second's counts exactly (a frame's last second may be scaled to the part of it
    // the run covered so far, as the report scales a run's last).
    for seconds in &frames {
        for (k, &(index, sent, ok, failed)) in seconds.iter().enumerate() {
            assert_eq!(index, counts[k].0, "{seconds:?}");
            if k + 1 < seconds.len() {
                assert_eq!((index, sent, ok, failed), counts[k], "{seconds:?}");
            }
        }
    }
    // At the end, the page's figure is the merged run's report's, number for number.
    // (To the last bit but one: serde_json reads a float back to within one unit.)
    let last = frames.last().unwrap();
    let report = report_seconds(&run);
    assert_eq!(last.len(), report.len(), "every second: {last:?}");
    // (The report leaves out a last second the run hardly entered: its rate would be noise.)
    assert!(last.len() + 1 >= counts.len(), "every second: {last:?}");
    let same = |a: f64, b: f64| (a - b).abs() <= a.abs().max(b.abs()) * 1e-14;
    for (shown, drawn) in last.iter().zip(&report) {
        assert_eq!(shown.0, drawn.0);
        assert!(
            same(shown.1, drawn.1) && same(shown.2, drawn.2) && same(shown.3, drawn.3),
            "the last frame against the report: {last:?} {report:?}"
        );
    }
    // The page followed the run: it showed a growing number of seconds, close behind what
    // the shards had written.
    let lengths: Vec<usize> = frames.iter().map(Vec::len).collect();
    assert!(
        lengths.windows(2).filter(|w| w[1] > w[0]).count() >= 4,
        "{lengths:?}"
    );
    assert!(lags.len() >= 3, "frames while the shards wrote: {lags:?}");
    // Most frames within two seconds; a frame built while the machine was busy beside
    // the test may fall further behind, never far.
    let mut sorted = lags.clone();
    sorted.sort_unstable();
    assert!(sorted[sorted.len() / 2] <= 2, "lag in seconds: {lags:?}");
    assert!(lags.iter().all(|&l| l <= 6), "lag in seconds: {lags:?}");
    eprintln!("watch lag per frame (run seconds): {lags:?}");
}

/// The processes a test started, killed and reaped however it ends (a failed assertion
/// must not leave a minute-long run behind).
struct Reaped(Vec<Child>);

impl Drop for Reaped {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[test]
fn a_shard_killed_mid_run_is_said_stopped_once_and_shown_so_on_the_page() {
    let server = crate::support::start_target(Duration::ZERO);
    let url = format!("http://{}/", server.addr());
    let dir = tempfile::tempdir().unwrap();
    let shards: Vec<PathBuf> = ["s0", "s1"].iter().map(|s| dir.path().join(s)).collect();
    let start = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 2;
    let mut children = Reaped(
        ["0/2", "1/2"]
            .iter()
            .zip(&shards)
            .map(|(s, out)| {
                headroom(&[
                    "attack",
                    &url,
                    "--rate",
                    "100",
                    "--duration",
                    "60s",
                    "--shard",
                    s,
                    "--start-at",
                    &start.to_string(),
                    "-q",
                    "--out",
                    arg(out),
                ])
                .spawn()
                .unwrap()
            })
            .collect(),
    );
    let (mut watch, addr, rest) = spawn_watch(&shards, &["--stalled-after", "2s", "--quiet"]);
    // Shard 1 killed (as a pod is) once both have written a few seconds: no end.json.
    let mut events = Events::open(&addr);
    while written(&shards[1], UNIX_EPOCH + Duration::from_secs(start))
        .0
        .is_none_or(|last| last < 3)
    {
        events.next().expect("frames while the shards run");
    }
    children.0[1].kill().unwrap();
    children.0[1].wait().unwrap();
    // The page names it stopped, and the merged view goes on without it.
    let mut stopped = false;
    for _ in 0..30 {
        let (_, frame) = events.next().expect("frames");
        if frame["shards"].as_str().unwrap().contains("stopped") {
            stopped = true;
            break;
        }
    }
    assert!(stopped, "the Shards table says stopped");
    // Several more frames: said once on stderr, not each second.
    for _ in 0..4 {
        events.next().expect("frames");
    }
    children.0[0].kill().unwrap();
    children.0[0].wait().unwrap();
    // Nothing writes any more and nothing ended: the page no longer says the test is
    // sending, nor that time is left, nor that the run is still going.
    let mut stalled = None;
    for _ in 0..30 {
        let (_, frame) = events.next().expect("frames");
        if frame["position"].as_str().unwrap().contains("stalled") {
            stalled = Some(frame);
            break;
        }
    }
    let stalled = stalled.expect("the page says the test stalled once no shard writes");
    let at = stalled["position"].as_str().unwrap();
    assert!(!at.contains(" left"), "{at}");
    assert!(
        !stalled["answer"].as_str().unwrap().contains("still going"),
        "{stalled}"
    );
    // Ctrl-C ends the watch (never the shards): 130, as a signal's stop.
    let sent = Command::new("kill")
        .args(["-INT", &watch.0[0].id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = watch.0[0].wait().unwrap();
    let said = rest.join().unwrap();
    assert_eq!(status.code(), Some(130), "{said}");
    let stopped = |shard: &str| -> Vec<&str> {
        said.lines()
            .filter(|l| l.contains("(stopped?)") && l.contains(&format!("{shard} has written")))
            .collect()
    };
    // Shard 0 stopped too, at the end: said once as well.
    assert_eq!(
        stopped("s0").len(),
        1,
        "one line for shard 0's stop: {said}"
    );
    let lines = stopped("s1");
    assert_eq!(lines.len(), 1, "one line for shard 1's stop: {said}");
    assert!(
        lines[0].starts_with("headroom watch: ")
            && lines[0].contains("s1 has written no line for 2s and no end.json (stopped?); the later seconds are merged without it, as merge would"),
        "{said}"
    );
    assert!(
        said.contains("headroom: watch stopped (the runs go on)"),
        "{said}"
    );
}

/// The watch of `shards`, its page's address, and its stderr read to the end on a thread.
fn spawn_watch(
    shards: &[PathBuf],
    extra: &[&str],
) -> (Reaped, String, std::thread::JoinHandle<String>) {
    let mut args = vec!["watch"];
    args.extend(shards.iter().map(|s| arg(s)));
    args.extend(extra);
    let mut watch = headroom(&args).spawn().unwrap();
    let mut err = BufReader::new(watch.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    let addr = first
        .trim()
        .strip_prefix("headroom: live page at http://")
        .and_then(|a| a.strip_suffix('/'))
        .unwrap_or_else(|| panic!("the address first: {first}"))
        .to_string();
    let rest = std::thread::spawn(move || {
        let mut text = String::new();
        for line in err.lines() {
            text.push_str(&line.unwrap());
            text.push('\n');
        }
        text
    });
    (Reaped(vec![watch]), addr, rest)
}

/// `--out` keeps a merged run; given one run, there is nothing to merge, and watch says so
/// before it starts instead of writing nothing in silence.
#[test]
fn out_with_one_run_is_refused_before_the_page_starts() {
    let target = crate::support::start_target(Duration::from_millis(1));
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let url = format!("http://{}/", target.addr());
    let o = headroom(&[
        "attack",
        &url,
        "--rate",
        "20",
        "-d",
        "1s",
        "-q",
        "--out",
        arg(&run),
    ])
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.path().join("kept");
    let o = headroom(&["watch", arg(&run), "--out", arg(&out)])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("is one run, already stored where it is (drop --out"),
        "{err}"
    );
    assert!(!err.contains("live page at"), "{err}");
    assert!(!out.exists());
    // Directories yet to appear may be shards: the watch starts (its first line is the
    // page's address, or spawn_watch fails) and waits for them.
    let later: Vec<PathBuf> = ["s0", "s1"].iter().map(|s| dir.path().join(s)).collect();
    let (watch, _addr, _rest) = spawn_watch(&later, &["--out", arg(&out), "--quiet"]);
    drop(watch);
}
