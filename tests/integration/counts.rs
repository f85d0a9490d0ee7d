//! One set of counts, against real servers: a warm-up whose answers come after it, answers
//! the requests do not expect, and a sweep too short for a time axis. Every run here (as
//! every run the suite makes) also goes through the count identity in every format
//! (`support::counts`).

use crate::support::nginx::{Nginx, Tls};
use crate::support::{attack, headroom};
use headroom::plan::scenario;
use headroom::report::plot::{self, Figure, RunView, Why};
use headroom::store::{Counting, RunDir};
use headroom::summary::{Reason, Summary};
use std::path::Path;

/// `source` (a scenario aimed at `url`) parsed into a plan.
fn plan(source: &str, url: &str) -> headroom::plan::AttackPlan {
    let source = format!("target: {{url: '{url}'}}\n{source}");
    scenario::parse(&source, Path::new("counts.yaml"), 1).unwrap()
}

fn figures(stored: &headroom::store::StoredRun, summary: &Summary) -> plot::Figures {
    plot::for_run(&RunView {
        label: "run".into(),
        run: stored,
        summary,
        scatter: None,
    })
}

fn series_sum(f: &Figure, name: &str) -> f64 {
    let s = f.series.iter().find(|s| s.name == name).unwrap();
    s.points.iter().map(|p| p.1).sum()
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn warm_up_requests_answered_after_the_warm_up_are_in_no_count() {
    // Every answer takes 300 ms: the warm-up's last 300 ms of requests are answered in the
    // measured stage's first second.
    let nginx = Nginx::with_echo("location / { echo_sleep 0.3; echo ok; }");
    let url = nginx.url("http", "/");
    let p = plan(
        "requests: [{name: get, path: /}]\nload:\n  stages:\n    - {name: warm, rate: 100, duration: 1s, warmup: true}\n    - {name: measured, rate: 100, duration: 2s}\n",
        &url,
    );
    let (s, stored, _dir) = attack(&p);
    assert_eq!(s.counting, Counting::ByStage);
    let (warm, measured) = (&s.stages[0], &s.stages[1]);
    // The run's numbers are the measured stage's requests, every one of them answered...
    assert_eq!(s.requests.total, measured.count);
    assert_eq!(s.requests.sent, s.requests.total);
    assert_eq!(warm.count + measured.count, stored.all.completed());
    assert_eq!(s.requests.throughput, measured.throughput);
    // ... though warm-up answers came in the measured seconds, which whole seconds after
    // the warm-up would have counted.
    let in_measured_seconds = |f: fn(&headroom::store::IntervalDigest) -> u64| -> u64 {
        s.timeline
            .iter()
            .filter(|d| d.stage != Some(0))
            .map(f)
            .sum()
    };
    assert!(in_measured_seconds(|d| d.warmup_completed) >= 1);
    assert!(in_measured_seconds(|d| d.completed) > s.requests.total);
}

/// The checks of a run every request of which got an answer it does not expect: failed in
/// the figures as in the numbers, for `reason`.
fn check_nothing_expected(s: &Summary, stored: &headroom::store::StoredRun, reason: Reason) {
    assert!(s.requests.total > 0);
    assert_eq!(s.success_ratio, 0.0);
    let reasons: Vec<(Reason, u64)> = s.failures.iter().map(|f| (f.reason, f.count)).collect();
    assert_eq!(reasons, [(reason, s.requests.total)]);
    let drawn = figures(stored, s);
    let per_second = drawn
        .shown
        .iter()
        .find(|f| f.name == "throughput-over-time")
        .expect("a throughput figure");
    assert_eq!(series_sum(per_second, "OK/s"), 0.0);
    assert!(series_sum(per_second, "failed/s") > 0.0);
    // No latency to draw: each latency figure is a note saying why.
    assert!(drawn.shown.iter().all(|f| !f.name.starts_with("latency")));
    let notes: Vec<Why> = drawn.left_out.iter().map(|l| l.why).collect();
    assert!(
        notes.len() >= 2 && notes.iter().all(|w| *w == Why::NoneAnswered),
        "{notes:?}"
    );
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn answers_of_a_status_not_expected_are_failed_in_every_figure() {
    let nginx = Nginx::with_locations(Tls::None, "location / { return 401; }");
    let p = plan(
        "requests: [{name: get, path: /}]\nload: {rate: 100, duration: 4s}\n",
        &nginx.url("http", "/"),
    );
    let (s, stored, _dir) = attack(&p);
    check_nothing_expected(&s, &stored, Reason::Status { code: 401 });
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn answers_without_the_body_expected_are_failed_in_every_figure() {
    let nginx = Nginx::start(Tls::None);
    let p = plan(
        "requests: [{name: get, path: /, expect: {body: never}}]\nload: {rate: 100, duration: 4s}\n",
        &nginx.url("http", "/"),
    );
    let (s, stored, _dir) = attack(&p);
    check_nothing_expected(&s, &stored, Reason::Expectation { code: 200 });
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn a_sweep_too_short_for_a_time_axis_has_notes_and_its_steps() {
    let nginx = Nginx::start(Tls::None);
    let url = nginx.url("http", "/");
    let dir = tempfile::tempdir().unwrap();
    // The sweep of the issue: 1 to 121 users, 200 requests a step (counts checked by
    // `headroom` in every format).
    let closed = dir.path().join("closed");
    let o = headroom(&[
        "sweep",
        &url,
        "--concurrency",
        "1..121",
        "--step",
        "30",
        "--step-requests",
        "200",
        "-q",
        "--out",
        closed.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = Summary::of(&RunDir::at(&closed).load().unwrap());
    let counts: Vec<u64> = s.stages.iter().map(|st| st.count).collect();
    assert_eq!(counts, [200; 5]);
    assert_eq!(s.requests.total, 1000);
    // A step of one second, by the schedule: its answers fill one second and a sliver of
    // the next, whatever the machine's speed (unless the last answer took a second more).
    let timed = dir.path().join("timed");
    let o = headroom(&[
        "sweep",
        &url,
        "--rate",
        "200",
        "--step-duration",
        "1s",
        "-q",
        "--out",
        timed.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stored = RunDir::at(&timed).load().unwrap();
    let s = Summary::of(&stored);
    let drawn = figures(&stored, &s);
    let left: Vec<(&str, Why)> = drawn
        .left_out
        .iter()
        .map(|l| (l.title.as_str(), l.why))
        .collect();
    let short = Why::TooShort {
        run_secs: s.duration.total_secs,
        steps: true,
    };
    assert_eq!(
        left,
        [
            ("Latency over time (per second)", short),
            ("Sent, answered OK and failed per second", short)
        ]
    );
    let headroom_plot = drawn
        .shown
        .iter()
        .find(|f| f.name == "headroom")
        .expect("the per-step figure");
    assert!(headroom_plot.series.iter().all(|l| l.points.len() == 1));
    // The page says so where the figures would be.
    let html = headroom::report::render_run(
        &s,
        headroom::report::Format::Html,
        headroom::report::Extras {
            figures: Some(drawn.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(
        html.contains("<p class=\"note\">Latency over time (per second): left out, the run lasted")
    );
    assert!(!html.contains("id=\"latency-over-time\""));
}

/// A small seeded generator (xorshift): the same runs on every machine.
struct Dice(u64);

impl Dice {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A stored run made by `dice`: stages of 1 to 3 s (any of them a warm-up), requests sent
/// through them and answered up to 2.5 s later (across stage and warm-up ends), with
/// statuses expected or not, broken bodies and transport errors, recorded as the engine
/// records: a send in the second it left, an answer in the second it came, for the stage it
/// was sent for.
fn random_run(dice: &mut Dice, dir: &Path) -> RunDir {
    use headroom::monitor::Health;
    use headroom::plan::Stage;
    use headroom::record::IntervalRecord;
    use headroom::sample::{ErrorKind, Outcome, Sample};
    use headroom::store::{EndStatus, IntervalLine, RunEnd, RunMeta};
    use std::time::Duration;

    let mut p = plan(
        "requests: [{name: a, path: /a}, {name: b, path: /b, expect: {status: [200, 401]}}]\nload: {rate: 50, duration: 1s}\n",
        "http://127.0.0.1:9",
    );
    let stages = 1 + dice.below(4) as usize;
    p.stages = (0..stages)
        .map(|i| Stage {
            warmup: dice.below(3) == 0,
            ..Stage::constant(
                format!("s{i}"),
                50.0,
                Duration::from_secs(1 + dice.below(3)),
            )
        })
        .collect();
    let ends: Vec<u64> = p
        .stages
        .iter()
        .scan(0, |end, s| {
            *end += s.duration.as_millis() as u64;
            Some(*end)
        })
        .collect();
    let attack_ms = *ends.last().unwrap();
    let stage_at = |ms: u64| ends.iter().position(|&e| ms < e).map(|i| i as u16);
    let mut records: Vec<IntervalRecord> = Vec::new();
    fn at(records: &mut Vec<IntervalRecord>, ms: u64) -> &mut IntervalRecord {
        let i = (ms / 1000) as usize;
        while records.len() <= i {
            records.push(IntervalRecord::new(records.len() as u64));
        }
        &mut records[i]
    }
    let mut last_ms = 0;
    let mut send_ms = dice.below(20);
    while send_ms < attack_ms {
        let stage = stage_at(send_ms).unwrap();
        let request = dice.below(2) as u16;
        let latency_ms = if dice.below(5) == 0 {
            dice.below(2500)
        } else {
            dice.below(40)
        };
        let (outcome, expected) = match dice.below(10) {
            0 => (Outcome::Error(ErrorKind::Reset), false),
            1 => (Outcome::Status(503), false),
            2 => (Outcome::Status(401), request == 1),
            3 => (Outcome::Status(200), false),
            _ => (Outcome::Status(200), true),
        };
        let s = Sample {
            outcome,
            latency: Duration::from_millis(latency_ms),
            service: Duration::from_millis(latency_ms),
            lag: Duration::ZERO,
            connect: (dice.below(8) == 0).then_some(Duration::from_micros(80)),
            tls_handshake: None,
            first_byte: matches!(outcome, Outcome::Status(_)).then_some(Duration::from_millis(1)),
            bytes_in: 3,
            bytes_out: 1,
            retried: false,
            request,
            stage: Some(stage),
            expected,
            iteration: None,
        };
        let sent = at(&mut records, send_ms);
        sent.sent += 1;
        sent.scheduled += 1;
        sent.sent_for(stage);
        let done_ms = send_ms + latency_ms;
        let done = at(&mut records, done_ms);
        done.record(&s);
        done.record_step(stage, &s, Duration::from_millis(done_ms));
        last_ms = last_ms.max(done_ms);
        send_ms += 1 + dice.below(40);
    }
    let meta = RunMeta::describe(
        &p,
        &["headroom".into(), "run".into()],
        None,
        "HTTP/1.1",
        &[],
    );
    let run = RunDir::at(dir.join("run"));
    let mut log = run.create(&meta).unwrap();
    for r in records {
        let stage = stage_at(r.index * 1000);
        log.append(&IntervalLine {
            record: r,
            health: Health::default(),
            stage,
            server: None,
            shards: Vec::new(),
        })
        .unwrap();
    }
    run.finish(&RunEnd {
        status: EndStatus::Completed,
        ended_at: "2026-11-21T00:00:10.000Z".into(),
        ended_unix: None,
        attack_secs: attack_ms as f64 / 1e3,
        wait_secs: last_ms.saturating_sub(attack_ms) as f64 / 1e3,
        cpu: Default::default(),
        peak_open_fds: 1,
        peak_rss_bytes: None,
        reason: None,
        aborted: None,
    })
    .unwrap();
    run
}

#[test]
fn random_stored_runs_keep_one_set_of_counts_in_every_format() {
    // Seconds of CPU: never beside a test that times a server.
    let _one = crate::support::one_heavy_at_a_time();
    let mut dice = Dice(0x5eed_cafe_f00d_beef);
    let mut crossing = 0;
    for case in 0..30 {
        let dir = tempfile::tempdir().unwrap();
        let run = random_run(&mut dice, dir.path());
        let stored = crate::support::counts::check_dir(run.path());
        let s = Summary::of(&stored);
        if stored.meta.stages.iter().any(|st| st.warmup) {
            assert_eq!(s.counting, Counting::ByStage, "case {case}");
        }
        // Warm-up answers in seconds that are not a warm-up's: what is to be left out.
        let warm = |d: &&headroom::store::IntervalDigest| {
            d.stage
                .and_then(|i| stored.meta.stages.get(usize::from(i)))
                .is_some_and(|st| st.warmup)
        };
        if s.timeline
            .iter()
            .any(|d| !warm(&d) && d.warmup_completed > 0)
        {
            crossing += 1;
        }
    }
    // The cases the identity is for are among them.
    assert!(
        crossing >= 5,
        "{crossing} runs with warm-up answers after it"
    );
}

#[test]
fn the_identity_names_what_does_not_add_up() {
    use headroom::summary::Mismatch;
    let dir = tempfile::tempdir().unwrap();
    let mut dice = Dice(7);
    let run = random_run(&mut dice, dir.path());
    let s = Summary::of(&run.load().unwrap());
    assert_eq!(s.count_identity(), []);
    let total = s.requests.total;
    // A warm-up answer counted in the total (the probe's 17,223 against its step's 16,000).
    let mut one_more = s.clone();
    one_more.requests.total += 1;
    let found = one_more.count_identity();
    assert!(found.contains(&Mismatch::Seconds {
        total: total + 1,
        seconds: total
    }));
    assert!(found.iter().any(|m| matches!(m, Mismatch::Outcomes { .. })));
    // Rows that are not the run's.
    let mut rows = s.clone();
    rows.by_request[0].count += 2;
    assert!(rows.count_identity().contains(&Mismatch::RequestRows {
        total,
        rows: total + 2
    }));
    // A throughput over another span than its rows'.
    let mut fast = s;
    fast.requests.throughput *= 1.5;
    assert!(fast
        .count_identity()
        .iter()
        .any(|m| matches!(m, Mismatch::Throughput { .. })));
}
