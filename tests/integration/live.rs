//! `--live`: the page of a run while it goes, against the built-in target, through the binary
//! as a user starts it. In Chromium (driven over the DevTools protocol, so the page can be
//! read while it changes): values that change during the run, no errors, a 1280-pixel fit,
//! and the page becoming the report; over its events: the last frame's answer equal to the
//! stored run's report. The stop button: refused without the token, a Ctrl-C with it.

use crate::support::cdp::Browser;
use crate::support::{headroom, start_target, succeeded as ok};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A run of the binary with `--live`, its page's address read from its first line.
struct LiveRun {
    child: Child,
    url: String,
    addr: SocketAddr,
    token: String,
    rest: std::thread::JoinHandle<String>,
}

fn start(args: &[&str]) -> LiveRun {
    let mut child = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    lines.read_line(&mut first).unwrap();
    let url = first
        .trim()
        .strip_prefix("headroom: live page at ")
        .unwrap_or_else(|| panic!("the first line is not the page's address: {first:?}"))
        .to_string();
    let (base, token) = url.split_once("/?token=").unwrap();
    let addr: SocketAddr = base.strip_prefix("http://").unwrap().parse().unwrap();
    assert!(addr.ip().is_loopback(), "{url}");
    let rest = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = lines.read_to_string(&mut text);
        text
    });
    LiveRun {
        child,
        url: url.clone(),
        addr,
        token: token.to_string(),
        rest,
    }
}

impl LiveRun {
    /// Waits (at most `limit`) for the run to end; its exit code and the rest of stderr.
    fn wait(mut self, limit: Duration) -> (Option<i32>, String) {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return (status.code(), self.rest.join().unwrap());
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("the run did not end within {limit:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// One request to the page; its status and body.
fn ask(addr: SocketAddr, head: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(s, "{head}\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let mut text = String::new();
    let _ = s.read_to_string(&mut text);
    (
        text.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0),
        text,
    )
}

/// Follows the page's events until the end event; returns the frames' data and the end's.
fn follow(
    addr: SocketAddr,
) -> std::thread::JoinHandle<(Vec<serde_json::Value>, serde_json::Value)> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        s,
        "GET /events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    std::thread::spawn(move || {
        let mut frames = Vec::new();
        let mut event = String::new();
        for line in BufReader::new(s).lines() {
            let Ok(line) = line else { break };
            if let Some(name) = line.strip_prefix("event: ") {
                event = name.to_string();
            } else if let Some(data) = line.strip_prefix("data: ") {
                let v: serde_json::Value = serde_json::from_str(data).unwrap();
                if event == "end" {
                    return (frames, v);
                }
                frames.push(v);
            }
        }
        panic!(
            "the events ended without the end event after {} frames",
            frames.len()
        );
    })
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs Chromium: run tests/run")]
fn the_live_page_changes_during_the_run_fits_and_becomes_the_report() {
    let _one = crate::support::one_heavy_at_a_time();
    let target = start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let url = format!("http://{}/", target.addr());
    let live = start(&[
        "attack",
        &url,
        "--rate",
        "100",
        "-d",
        "10s",
        "--live",
        "--out",
        run.to_str().unwrap(),
        "-q",
    ]);
    let events = follow(live.addr);
    let (addr, token) = (live.addr, live.token.clone());
    let mut browser = Browser::open(&live.url);
    let probe = r##"JSON.stringify({
        frames: Number(document.documentElement.getAttribute("data-frames") || 0),
        where: (document.getElementById("where") || {}).textContent || "",
        title: document.title,
        sw: document.documentElement.scrollWidth,
        cw: document.documentElement.clientWidth,
        charts: document.querySelectorAll("#charts .uplot").length,
        stop: !!document.getElementById("stop"),
        answer: !!document.querySelector(".answer .verdict"),
        live: !!document.getElementById("charts")
    })"##;
    let mut seen: Vec<serde_json::Value> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(90);
    let shot = std::env::var_os("HEADROOM_SCREENSHOTS").is_some();
    let report_page = loop {
        assert!(
            Instant::now() < deadline,
            "the page never became the report: {seen:?}"
        );
        let Some(text) = browser.try_eval(probe) else {
            std::thread::sleep(Duration::from_millis(100));
            continue;
        };
        let v: serde_json::Value = serde_json::from_str(text.as_str().unwrap()).unwrap();
        if v["live"] == false && v["answer"] == true {
            break v;
        }
        if v["live"] == false {
            // Not yet the page (about:blank, loading).
            std::thread::sleep(Duration::from_millis(100));
            continue;
        }
        // The README's screenshot, from a page well into its run.
        if shot && v["frames"].as_u64().unwrap() == 6 {
            let png = browser.screenshot();
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/img/live.png");
            std::fs::write(&path, png).unwrap();
        }
        seen.push(v);
        std::thread::sleep(Duration::from_millis(250));
    };
    let (code, stderr) = live.wait(Duration::from_secs(60));
    assert_eq!(code, Some(0), "{stderr}");
    let live_frames: Vec<&serde_json::Value> = seen
        .iter()
        .filter(|v| v["frames"].as_u64() > Some(0))
        .collect();
    // Values change during the run: the position line differs from frame to frame.
    let mut positions: Vec<&str> = live_frames
        .iter()
        .map(|v| v["where"].as_str().unwrap())
        .collect();
    positions.dedup();
    assert!(
        positions.len() >= 4,
        "the page barely changed: {positions:?}"
    );
    assert!(
        live_frames
            .iter()
            .all(|v| v["stop"] == true && v["answer"] == true),
        "{live_frames:?}"
    );
    assert!(
        live_frames.iter().any(|v| v["charts"].as_u64() >= Some(3)),
        "{live_frames:?}"
    );
    for v in &live_frames {
        assert!(
            v["sw"].as_u64() <= v["cw"].as_u64(),
            "wider than 1280 px: {v}"
        );
    }
    // At the end the page is the report itself, as written in the run directory.
    assert!(report_page["answer"] == true, "{report_page}");
    let errors = browser.errors();
    assert!(errors.is_empty(), "the page logged errors: {errors:?}");
    // The last frame's numbers are the stored run's report's, exactly.
    let json: serde_json::Value = serde_json::from_str(&ok(headroom(&[
        "report",
        run.to_str().unwrap(),
        "--format",
        "json",
    ])))
    .unwrap();
    let (frames, end) = events.join().unwrap();
    assert!(frames.len() >= 5, "{} frames", frames.len());
    // A page behind skips to the newest frame, so the ended run's own frame may be passed
    // over for the end event; the end carries that frame's answer for this reason.
    assert_eq!(end["answer_data"], json["answer"]);
    let last = frames.last().unwrap();
    if last["ended"] == true {
        assert_eq!(last["answer_data"], json["answer"]);
    }
    let page = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert_eq!(end["report"].as_str().unwrap(), page);
    // The address is kept with the run; the token is not, anywhere in it.
    let kept = crate::support::json_file(&run.join("live.json"));
    assert_eq!(kept["address"], format!("http://{}/", addr));
    for file in [
        "meta.json",
        "end.json",
        "live.json",
        "report.html",
        "intervals.jsonl",
    ] {
        let text = std::fs::read_to_string(run.join(file)).unwrap();
        assert!(!text.contains(&token), "{file} holds the token");
    }
}

#[test]
fn the_stop_button_is_refused_without_the_token_and_ends_the_run_as_ctrl_c_with_it() {
    let target = start_target(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let url = format!("http://{}/", target.addr());
    let live = start(&[
        "attack",
        &url,
        "--rate",
        "50",
        "-d",
        "120s",
        "--live",
        "--out",
        run.to_str().unwrap(),
        "-q",
    ]);
    // A page following the run sees it end too.
    let events = follow(live.addr);
    // Some seconds recorded first, so the report has something to be whole about.
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::read_to_string(run.join("intervals.jsonl")).map_or(0, |t| t.lines().count()) < 2
    {
        assert!(Instant::now() < deadline, "the run recorded nothing");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (status, body) = ask(live.addr, "POST /stop HTTP/1.1");
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("needs its token"), "{body}");
    let (status, _) = ask(live.addr, "POST /stop?token=not-the-token HTTP/1.1");
    assert_eq!(status, 403);
    // The page read without the token has no button.
    let (_, page) = ask(live.addr, "GET / HTTP/1.1");
    assert!(!page.contains("id=\"stop\""));
    assert!(
        !run.join("end.json").exists(),
        "refused stops stopped the run"
    );
    let (status, body) = ask(
        live.addr,
        &format!("POST /stop HTTP/1.1\r\nx-headroom-token: {}", live.token),
    );
    assert_eq!(status, 202, "{body}");
    let started = Instant::now();
    let (code, stderr) = live.wait(Duration::from_secs(60));
    // As Ctrl-C: the run drains, stores and reports, and exits 130.
    assert_eq!(code, Some(130), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(60));
    assert!(
        stderr.contains("the live page's stop button was pressed"),
        "{stderr}"
    );
    let end = crate::support::json_file(&run.join("end.json"));
    assert_eq!(end["status"], "interrupted", "{end}");
    assert!(run.join("report.html").exists());
    let json: serde_json::Value = serde_json::from_str(&ok(headroom(&[
        "report",
        run.to_str().unwrap(),
        "--format",
        "json",
    ])))
    .unwrap();
    assert_eq!(
        json["partial"],
        "the run was interrupted before its stop condition"
    );
    let (frames, end) = events.join().unwrap();
    assert!(!frames.is_empty());
    assert_eq!(end["answer_data"], json["answer"]);
}

/// A run its safety stop ends, watched live: stderr says it is stopping (the live page's
/// observer passes the stop on to the progress line), no frame says time is left of a run
/// that stopped, and the end's answer is the JSON report's, the stop included.
#[test]
fn a_run_aborted_while_watched_says_so_on_stderr_and_ends_with_the_reports_answer() {
    let _one = crate::support::one_heavy_at_a_time();
    // Every answer takes 1.5 s: the first second measured breaks "p99 > 1s", with
    // requests still in flight to drain after the stop.
    let target = start_target(Duration::from_millis(1_500));
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let url = format!("http://{}/", target.addr());
    let live = start(&[
        "attack",
        &url,
        "--rate",
        "20",
        "-d",
        "60s",
        "--abort-when",
        "p99 > 1s",
        "--live",
        "--out",
        run.to_str().unwrap(),
    ]);
    let events = follow(live.addr);
    let (code, stderr) = live.wait(Duration::from_secs(60));
    assert_eq!(code, Some(5), "{stderr}");
    assert!(
        stderr.contains("headroom: stopping: aborted at second"),
        "{stderr}"
    );
    let json: serde_json::Value = serde_json::from_str(&ok(headroom(&[
        "report",
        run.to_str().unwrap(),
        "--format",
        "json",
    ])))
    .unwrap();
    assert!(json["answer"]["aborted"].is_object(), "{json}");
    let (frames, end) = events.join().unwrap();
    assert_eq!(end["answer_data"], json["answer"]);
    let stopped_at = json["answer"]["aborted"]["at_second"].as_u64().unwrap();
    for f in &frames {
        let at = f["position"].as_str().unwrap();
        let sending = at.contains("<strong class=\"phase\">sending</strong>");
        assert!(
            sending || !at.contains(" left"),
            "time left of a stopped run: {at}"
        );
        if f["ended"] == true {
            assert!(at.contains("stopped before its planned 60s"), "{at}");
        } else {
            // A second recorded after the stop is the stop's drain, as stderr says.
            let second: u64 = at
                .split(" · ")
                .nth(1)
                .and_then(|t| t.split('s').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("no second in {at}"));
            if second > stopped_at {
                assert!(
                    at.contains("<strong class=\"phase\">stopping"),
                    "second {second}, stopped at {stopped_at}: {at}"
                );
            }
        }
    }
}

#[test]
fn a_capacity_searchs_page_shows_its_probes_so_far_and_the_probe_in_progress() {
    let _one = crate::support::one_heavy_at_a_time();
    let target = headroom::target::spawn(headroom::target::TargetConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        tls: None,
        latency: Duration::ZERO,
        threads: 1,
        capacity: Some(500.0),
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let search = dir.path().join("search");
    let url = format!("http://{}/", target.addr());
    let live = start(&[
        "capacity",
        &url,
        "--slo",
        "p99 < 100ms",
        "--window",
        "5s",
        "--warmup",
        "1s",
        "--confirm",
        "0",
        "--precision",
        "50%",
        "--live",
        "--out",
        search.to_str().unwrap(),
    ]);
    let events = follow(live.addr);
    let (code, stderr) = live.wait(Duration::from_secs(300));
    assert_eq!(code, Some(0), "{stderr}");
    let (frames, end) = events.join().unwrap();
    // Each probe in turn, by its directory's name, with the search's figures and its own.
    let mut probes: Vec<String> = frames
        .iter()
        .filter_map(|f| {
            let w = f["position"].as_str()?;
            let name = w.split("<strong>").nth(1)?.split("</strong>").next()?;
            Some(name.to_string())
        })
        .collect();
    probes.dedup();
    assert!(probes.len() >= 3, "{probes:?}");
    assert!(probes[0].starts_with("01-grow-"), "{probes:?}");
    assert!(frames.iter().any(|f| f["now"]
        .as_str()
        .is_some_and(|n| n.contains("The probe in progress"))));
    // A probe's progress counts its warm-up, which its tables leave out: it says so.
    assert!(
        frames.iter().any(|f| f["position"]
            .as_str()
            .is_some_and(|w| w.contains(" in warm-up) · completed "))),
        "{:?}",
        frames.iter().map(|f| &f["position"]).collect::<Vec<_>>()
    );
    let names = |f: &serde_json::Value| -> Vec<String> {
        f["figures"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap().to_string())
            .collect()
    };
    // Once a probe has seconds enough for a time axis, its chart is beside the search's.
    assert!(
        frames.iter().any(|f| {
            let n = names(f);
            n.iter().any(|n| n == "probe-latency-over-time")
                && n.iter().any(|n| n.starts_with("capacity-"))
        }),
        "{:?}",
        frames.iter().map(names).collect::<Vec<_>>()
    );
    let answers: Vec<&str> = frames
        .iter()
        .filter_map(|f| f["answer"].as_str())
        .filter(|a| a.contains("still going"))
        .collect();
    assert!(
        !answers.is_empty(),
        "no frame says the search is still going"
    );
    // Its last frame is the search's record whole; then the page becomes its report.
    let last = frames.last().unwrap();
    assert!(
        last["now"] == "",
        "the last frame still shows a probe: {}",
        last["now"]
    );
    let json: serde_json::Value = serde_json::from_str(&ok(headroom(&[
        "report",
        search.to_str().unwrap(),
        "--format",
        "json",
    ])))
    .unwrap();
    assert_eq!(last["answer_data"], json["answer"]);
    let page = std::fs::read_to_string(search.join("report.html")).unwrap();
    assert_eq!(end["report"].as_str().unwrap(), page);
    assert!(search.join("live.json").exists());
}
