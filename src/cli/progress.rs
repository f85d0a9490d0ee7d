//! The live progress on stderr: a line rewritten every second when stderr is a terminal;
//! otherwise (CI logs, pods, `nohup`) one plain line every ten seconds and the last at the
//! end, so a log shows the run as it goes without a line a second.

use headroom::plan::{AttackPlan, SendingEnd};
use headroom::report::document::Cell;
use headroom::run::Observer;
use headroom::store::IntervalLine;
use headroom::summary::live::SoFar;
use headroom::units::fmt_us;
use std::io::{IsTerminal, Write};

/// Seconds between two plain lines when stderr is not a terminal.
const PLAIN_EVERY: u64 = 10;

/// Prints one line per interval: where the run is (second, step, time left, or draining
/// after the last send), sent and completed rate, p50/p99, errors this second and in all,
/// the generator's CPU, and the diagnosis so far in the report's own words.
pub struct Progress {
    mode: Mode,
    /// The last plain line not printed yet, printed at the end.
    pending: Option<String>,
    /// The run was stopped early (the safety stop, Ctrl-C, the stop button…): the seconds
    /// left are the drain's.
    stopping: bool,
    /// When the run's sending ends: after a time, or after a count of requests.
    end: SendingEnd,
    /// Stage names, shown beside the second they run in (a sweep's current step).
    stages: Vec<headroom::plan::Stage>,
    errors: u64,
    sent: u64,
    shown: bool,
    /// The diagnosis so far; `None` when nothing is shown.
    so_far: Option<SoFar>,
    /// The verdict last shown, kept through the drain.
    verdict: Option<String>,
}

/// How the progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Not at all (`--quiet`).
    Off,
    /// One line rewritten in place every second (stderr is a terminal).
    Terminal,
    /// A plain line every [`PLAIN_EVERY`] seconds, and the last at the end.
    Plain,
}

impl Progress {
    /// Progress for `plan`; silent when `quiet`, plain lines when stderr is not a terminal.
    pub fn new(plan: &AttackPlan, quiet: bool) -> Self {
        let mode = match (quiet, std::io::stderr().is_terminal()) {
            (true, _) => Mode::Off,
            (false, true) => Mode::Terminal,
            (false, false) => Mode::Plain,
        };
        Progress::shown_as(plan, mode)
    }

    fn shown_as(plan: &AttackPlan, mode: Mode) -> Self {
        let end = SendingEnd::of(&plan.stop, &plan.stages);
        let enabled = mode != Mode::Off;
        Progress {
            mode,
            pending: None,
            stopping: false,
            end,
            stages: plan.stages.clone(),
            errors: 0,
            sent: 0,
            shown: false,
            so_far: enabled.then(|| SoFar::new(plan)),
            verdict: None,
        }
    }

    /// Ends the line so the report starts on a fresh one; prints the last plain line.
    pub fn finish(&mut self) {
        if let Some(line) = self.pending.take() {
            eprintln!("{line}");
        }
        if self.shown && self.mode == Mode::Terminal {
            eprintln!();
            self.shown = false;
        }
    }

    /// Whether second `index` (from 0) comes after the last send (`sent_before`: sent in
    /// the seconds before it).
    fn draining(&self, index: u64, sent_before: u64) -> bool {
        self.end.drains(index, sent_before)
    }

    /// Where the run is and what it sends ("[  12s/60s, 48s left]", "  sent 100/s"), or
    /// that it drains: nothing is sent any more, the last answers are awaited.
    fn head(&self, index: u64, sent_now: u64, sent_before: u64) -> (String, String) {
        let elapsed = index + 1;
        if self.stopping {
            return (format!("[{elapsed:>4}s, stopping]"), String::new());
        }
        if self.draining(index, sent_before) {
            return (format!("[{elapsed:>4}s, draining]"), String::new());
        }
        (
            format!("[{}]", self.position(elapsed, sent_now)),
            format!("  sent {sent_now:>7}/s"),
        )
    }

    /// Where the run is after second `elapsed` (from 1): "12s/60s, 48s left", and for a
    /// run that ends after a count, the time left at the rate of the last second.
    fn position(&self, elapsed: u64, sent_now: u64) -> String {
        match (self.end.secs(), self.end.requests) {
            (Some(total), _) => format!(
                "{elapsed:>4}s/{total}s, {} left",
                fmt_left(total.saturating_sub(elapsed))
            ),
            // The second that sent the last of a count: nothing is left to send, and the page
            // says "sent N of N", not a time.
            (None, Some(total)) if self.sent >= total => {
                format!("{elapsed:>4}s, all {total} sent")
            }
            (None, Some(total)) if sent_now > 0 => format!(
                "{elapsed:>4}s, {} left",
                fmt_left(total.saturating_sub(self.sent).div_ceil(sent_now))
            ),
            _ => format!("{elapsed:>4}s"),
        }
    }

    /// The step the second ran in, numbered as the report numbers it: "step 3/7 rate-300",
    /// "warm-up for step 3/7 rate-300 warm-up".
    fn step(&self, stage: Option<u16>) -> String {
        let place = stage.and_then(|i| headroom::plan::StepPlace::of(&self.stages, i.into()));
        place.map_or_else(String::new, |p| {
            let kind = if p.warmup { "warm-up for " } else { "" };
            format!("  {kind}step {}/{} {}", p.number, p.of, p.name)
        })
    }
}

/// Whole seconds left, as `1h02m`, `3m20s` or `45s`.
fn fmt_left(secs: u64) -> String {
    match secs {
        s if s >= 3600 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        s if s >= 60 => format!("{}m{:02}s", s / 60, s % 60),
        s => format!("{s}s"),
    }
}

impl Observer for Progress {
    fn notice(&mut self, notice: &headroom::sample::Notice) {
        // Shown whatever the progress setting: it may explain every number that follows.
        eprintln!("headroom: note: {notice}");
    }

    fn interval(&mut self, line: &IntervalLine) {
        let r = &line.record;
        // Every request that did not get what it expects, as the report's Failures count
        // them: transport errors, unexpected statuses, failed expectations.
        let errors_now: u64 = r.requests.iter().map(|q| q.failures).sum();
        self.errors += errors_now;
        let sent_before = self.sent;
        // First sends: a count of requests to send does not count retries.
        self.sent += r.sent_first();
        if self.mode == Mode::Off {
            return;
        }
        // The verdict so far, once a stage has seconds enough for one. The drain's seconds
        // send nothing: judged with them, a rate held would read as one fallen short (the
        // report judges the sending's span), so the verdict stays the sending's.
        let drained = self.stopping || self.draining(r.index, sent_before);
        // A stopped run's verdict is the seconds' before the stop, as its report's is.
        let verdict = if drained {
            self.verdict.clone()
        } else {
            self.so_far.as_mut().and_then(|so_far| {
                so_far.add(line);
                let d = so_far.diagnosis();
                let undecided = d
                    .findings
                    .iter()
                    .any(|f| matches!(f, headroom::summary::Finding::TooShort { .. }));
                (!undecided).then(|| headroom::report::build::verdict::cell(&d))
            })
        };
        self.verdict.clone_from(&verdict);
        let latency = r.latency_ok();
        let (position, sent) = self.head(r.index, r.sent, sent_before);
        let text = format!(
            "{position}{}{sent}  done {:>7}/s  p50 {:>9}  p99 {:>9}  errors {}/s ({} in all)  cpu {:.0}%{}",
            self.step(line.stage),
            r.completed(),
            quantile(&latency, 0.5),
            quantile(&latency, 0.99),
            errors_now,
            self.errors,
            line.health.cpu.total.as_secs_f64() * 100.0,
            verdict.map_or(String::new(), |v| format!("  so far: {v}")),
        );
        match self.mode {
            Mode::Terminal => {
                let mut err = std::io::stderr().lock();
                let _ = write!(err, "\r\x1b[2K{text}");
                let _ = err.flush();
                self.shown = true;
            }
            Mode::Plain if (r.index + 1) % PLAIN_EVERY == 0 => {
                eprintln!("{text}");
                self.pending = None;
            }
            Mode::Plain => self.pending = Some(text),
            Mode::Off => {}
        }
    }

    fn stopping(&mut self) {
        self.stopping = true;
        if let Some(so_far) = self.so_far.as_mut() {
            so_far.stop();
        }
    }

    fn aborting(&mut self, aborted: &headroom::store::Aborted) {
        self.stopping = true;
        // Said whatever the progress setting, as a notice is: it explains why the run ends.
        if self.shown && self.mode == Mode::Terminal {
            eprintln!();
            self.shown = false;
        }
        eprintln!(
            "headroom: stopping: {}; waiting for the requests in flight",
            headroom::report::build::words::aborted(aborted)
        );
    }
}

/// A second's latency at `q`, or the report's dash when no answer in it was measured: a
/// second of 401s has no latency, not one of 0 µs.
fn quantile(latency: &headroom::record::Histogram, q: f64) -> String {
    if latency.is_empty() {
        return Cell::Unmeasured.to_text();
    }
    fmt_us(latency.quantile(q).as_micros() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(end: SendingEnd, stages: &[&str]) -> Progress {
        Progress {
            mode: Mode::Terminal,
            pending: None,
            stopping: false,
            end,
            stages: stages
                .iter()
                .map(|s| {
                    let warmup = s.ends_with(" warm-up");
                    headroom::plan::Stage {
                        warmup,
                        ..headroom::plan::Stage::constant(
                            s.to_string(),
                            100.0,
                            std::time::Duration::from_secs(1),
                        )
                    }
                })
                .collect(),
            errors: 0,
            sent: 0,
            shown: false,
            so_far: None,
            verdict: None,
        }
    }

    fn secs(n: u64) -> SendingEnd {
        SendingEnd {
            after: Some(std::time::Duration::from_secs(n)),
            requests: None,
        }
    }

    fn count(n: u64) -> SendingEnd {
        SendingEnd {
            after: None,
            requests: Some(n),
        }
    }

    #[test]
    fn the_line_says_where_the_run_is_and_how_long_is_left() {
        let p = progress(secs(300), &["rate-100", "rate-200", "rate-300"]);
        assert_eq!(p.position(12, 100), "  12s/300s, 4m48s left");
        assert_eq!(p.step(Some(1)), "  step 2/3 rate-200");
        // A sweep warming each step up: the warm-ups are not steps, as in the report.
        let p = progress(secs(8), &["100 warm-up", "100", "200 warm-up", "200"]);
        assert_eq!(p.step(Some(2)), "  warm-up for step 2/2 200 warm-up");
        assert_eq!(p.step(Some(3)), "  step 2/2 200");
        assert_eq!(progress(secs(60), &["only"]).step(Some(0)), "");
        let mut p = progress(count(10_000), &[]);
        p.sent = 4_000;
        assert_eq!(p.position(8, 500), "   8s, 12s left");
        assert_eq!(p.position(8, 0), "   8s");
        p.sent = 10_000;
        assert_eq!(p.position(20, 500), "  20s, all 10000 sent");
        assert_eq!(fmt_left(7_440), "2h04m");
    }

    #[test]
    fn the_seconds_after_the_last_send_are_shown_as_draining() {
        let p = progress(secs(4), &[]);
        assert_eq!(
            p.head(3, 100, 300),
            (
                "[   4s/4s, 0s left]".to_string(),
                "  sent     100/s".to_string()
            )
        );
        // Not "[   5s/4s, 0s left] sent 0/s".
        assert_eq!(
            p.head(4, 0, 400),
            ("[   5s, draining]".to_string(), String::new())
        );
        let p = progress(count(1_000), &[]);
        assert!(!p.draining(3, 999));
        assert_eq!(p.head(4, 0, 1_000).0, "[   5s, draining]");
        assert!(!progress(SendingEnd::default(), &[]).draining(1_000, 1 << 40));
        // After the safety stop, the seconds left are its drain, whatever the time left.
        let mut p = progress(secs(60), &[]);
        p.stopping = true;
        assert_eq!(
            p.head(3, 1, 300),
            ("[   4s, stopping]".to_string(), String::new())
        );
    }

    /// A plan of `rate` req/s on a loopback address, stopped by `stop`.
    fn plan(rate: f64, stop: headroom::plan::Stop) -> AttackPlan {
        use headroom::plan::{Load, NamedRequest, Rate, RequestSpec, Target};
        let target = Target::parse("http://127.0.0.1:9/").unwrap();
        let request = NamedRequest::single(
            RequestSpec::parse("GET", &[], bytes::Bytes::new()).unwrap(),
            &target,
        );
        AttackPlan::new(target, vec![request], Load::Open { rate: Rate(rate) }, stop)
    }

    /// Second `index`: `n` sent, and answered 200 in 2 ms, on time.
    fn answered(index: u64, n: u64) -> IntervalLine {
        let mut record = headroom::record::IntervalRecord::new(index);
        record.sent = n;
        for _ in 0..n {
            record.record(&headroom::sample::Sample {
                outcome: headroom::sample::Outcome::Status(200),
                latency: std::time::Duration::from_millis(2),
                service: std::time::Duration::from_millis(2),
                lag: std::time::Duration::ZERO,
                connect: None,
                tls_handshake: None,
                first_byte: None,
                bytes_in: 0,
                bytes_out: 0,
                retried: false,
                request: 0,
                stage: None,
                expected: true,
                iteration: None,
            });
        }
        IntervalLine {
            record,
            health: Default::default(),
            stage: None,
            server: None,
            shards: Vec::new(),
        }
    }

    #[test]
    fn the_last_verdict_so_far_leaves_out_a_partial_last_second_as_the_report_does() {
        use headroom::plan::Stop;
        let timed = |ms| Stop {
            duration: Some(std::time::Duration::from_millis(ms)),
            requests: None,
        };
        // 3.5 s at 200 req/s: the fourth second sends 100 (not "sent 175 of 200 req/s").
        let mut p = Progress::shown_as(&plan(200.0, timed(3_500)), Mode::Plain);
        for (i, n) in [200, 200, 200, 100, 0].into_iter().enumerate() {
            p.interval(&answered(i as u64, n));
        }
        let v = p.verdict.clone().unwrap();
        assert_eq!(v, "ok");
        // 250 requests at 100 req/s: the third second sends 50.
        let count = Stop {
            duration: None,
            requests: Some(250),
        };
        let mut p = Progress::shown_as(&plan(100.0, count), Mode::Plain);
        for (i, n) in [100, 100, 50, 0].into_iter().enumerate() {
            p.interval(&answered(i as u64, n));
        }
        let v = p.verdict.clone().unwrap();
        assert_eq!(v, "ok");
        // Stopped (Ctrl-C, the stop button) 3.2 s into a 10 s run.
        let mut p = Progress::shown_as(&plan(200.0, timed(10_000)), Mode::Plain);
        for (i, n) in [200, 200, 200].into_iter().enumerate() {
            p.interval(&answered(i as u64, n));
        }
        p.stopping();
        for (i, n) in [40, 0].into_iter().enumerate() {
            p.interval(&answered(3 + i as u64, n));
        }
        let v = p.verdict.clone().unwrap();
        assert_eq!(v, "ok");
        // Its line says it stops, not the time left of its plan.
        assert_eq!(p.head(4, 0, 640).0, "[   5s, stopping]");
    }

    #[test]
    fn without_a_terminal_a_plain_line_every_ten_seconds_and_the_last_at_the_end() {
        let plan = plan(
            10.0,
            headroom::plan::Stop {
                duration: Some(std::time::Duration::from_millis(12_500)),
                requests: None,
            },
        );
        let mut p = Progress::shown_as(&plan, Mode::Plain);
        assert_eq!(p.end.secs(), Some(13));
        let mut printed = Vec::new();
        for index in 0..14 {
            let line = IntervalLine {
                record: headroom::record::IntervalRecord::new(index),
                health: Default::default(),
                stage: None,
                server: None,
                shards: Vec::new(),
            };
            p.interval(&line);
            printed.push(p.pending.is_none());
        }
        // Printed at the tenth second, held after; the last (the drain's) waits for the end.
        assert_eq!(printed.iter().filter(|&&x| x).count(), 1);
        assert!(printed[9]);
        let last = p.pending.clone().unwrap();
        assert!(last.starts_with("[  14s, draining]  done"), "{last}");
        assert!(!last.contains('\r') && !last.contains('\x1b'), "{last}");
        p.finish();
        assert!(p.pending.is_none());
    }

    #[test]
    fn a_second_without_an_answer_shows_a_dash_not_0us() {
        let empty = headroom::record::Histogram::new();
        assert_eq!(quantile(&empty, 0.99), "—");
        let mut one = headroom::record::Histogram::new();
        one.record(std::time::Duration::from_micros(1500));
        assert_ne!(quantile(&one, 0.5), "—");
    }
}
