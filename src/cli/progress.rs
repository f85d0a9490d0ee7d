//! The live progress line on stderr, shown only when stderr is a terminal.

use headroom::plan::AttackPlan;
use headroom::run::Observer;
use headroom::store::IntervalLine;
use headroom::summary::live::SoFar;
use headroom::units::fmt_us;
use std::io::{IsTerminal, Write};

/// Prints one line per interval: where the run is (second, step, time left), sent and
/// completed rate, p50/p99, errors this second and in all, the generator's CPU, and the
/// diagnosis so far in the report's own words.
pub struct Progress {
    enabled: bool,
    /// When the run ends by itself: after a time, or after a count of requests.
    end: End,
    /// Stage names, shown beside the second they run in (a sweep's current step).
    stages: Vec<String>,
    errors: u64,
    sent: u64,
    shown: bool,
    /// The diagnosis so far; `None` when nothing is shown.
    so_far: Option<SoFar>,
}

/// What ends a run, for the time left.
#[derive(Debug, Clone, Copy)]
enum End {
    Seconds(u64),
    Requests(u64),
    Unknown,
}

impl Progress {
    /// Progress for `plan`; silent when `quiet` or when stderr is not a terminal.
    pub fn new(plan: &AttackPlan, quiet: bool) -> Self {
        let staged: u64 = plan.stages.iter().map(|s| s.duration.as_secs()).sum();
        let end = match (plan.stop.duration, plan.stop.requests) {
            (Some(d), _) => End::Seconds(d.as_secs()),
            (None, _) if staged > 0 && plan.stages.iter().all(|s| s.requests.is_none()) => {
                End::Seconds(staged)
            }
            (None, Some(n)) => End::Requests(n),
            (None, None) => End::Unknown,
        };
        let enabled = !quiet && std::io::stderr().is_terminal();
        Progress {
            enabled,
            end,
            stages: plan.stages.iter().map(|s| s.name.clone()).collect(),
            errors: 0,
            sent: 0,
            shown: false,
            so_far: enabled.then(|| SoFar::new(plan)),
        }
    }

    /// Ends the line so the report starts on a fresh one.
    pub fn finish(&mut self) {
        if self.shown {
            eprintln!();
        }
    }

    /// Where the run is after second `elapsed` (from 1): "12s/60s, 48s left", and for a
    /// run that ends after a count, the time left at the rate of the last second.
    fn position(&self, elapsed: u64, sent_now: u64) -> String {
        match self.end {
            End::Seconds(total) => format!(
                "{elapsed:>4}s/{total}s, {} left",
                fmt_left(total.saturating_sub(elapsed))
            ),
            End::Requests(total) if sent_now > 0 => format!(
                "{elapsed:>4}s, {} left",
                fmt_left(total.saturating_sub(self.sent).div_ceil(sent_now))
            ),
            _ => format!("{elapsed:>4}s"),
        }
    }

    /// The step the second ran in: "step 3/7 rate-300".
    fn step(&self, stage: Option<u16>) -> String {
        match stage {
            Some(i) if self.stages.len() > 1 => format!(
                "  step {}/{} {}",
                usize::from(i) + 1,
                self.stages.len(),
                self.stages.get(usize::from(i)).map_or("", String::as_str)
            ),
            _ => String::new(),
        }
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
        self.sent += r.sent;
        if !self.enabled {
            return;
        }
        // The verdict so far, once a stage has seconds enough for one.
        let verdict = self.so_far.as_mut().and_then(|so_far| {
            so_far.add(line);
            let d = so_far.diagnosis();
            let undecided = d
                .findings
                .iter()
                .any(|f| matches!(f, headroom::summary::Finding::TooShort { .. }));
            (!undecided).then(|| headroom::report::build::verdict::cell(&d))
        });
        let latency = r.latency_ok();
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r\x1b[2K[{}]{}  sent {:>7}/s  done {:>7}/s  p50 {:>9}  p99 {:>9}  errors {}/s ({} in all)  cpu {:.0}%{}",
            self.position(r.index + 1, r.sent),
            self.step(line.stage),
            r.sent,
            r.completed(),
            fmt_us(latency.quantile(0.5).as_micros() as u64),
            fmt_us(latency.quantile(0.99).as_micros() as u64),
            errors_now,
            self.errors,
            line.health.cpu.total.as_secs_f64() * 100.0,
            verdict.map_or(String::new(), |v| format!("  so far: {v}")),
        );
        let _ = err.flush();
        self.shown = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(end: End, stages: &[&str]) -> Progress {
        Progress {
            enabled: true,
            end,
            stages: stages.iter().map(|s| s.to_string()).collect(),
            errors: 0,
            sent: 0,
            shown: false,
            so_far: None,
        }
    }

    #[test]
    fn the_line_says_where_the_run_is_and_how_long_is_left() {
        let p = progress(End::Seconds(300), &["rate-100", "rate-200", "rate-300"]);
        assert_eq!(p.position(12, 100), "  12s/300s, 4m48s left");
        assert_eq!(p.step(Some(1)), "  step 2/3 rate-200");
        assert_eq!(progress(End::Seconds(60), &["only"]).step(Some(0)), "");
        let mut p = progress(End::Requests(10_000), &[]);
        p.sent = 4_000;
        assert_eq!(p.position(8, 500), "   8s, 12s left");
        assert_eq!(p.position(8, 0), "   8s");
        assert_eq!(fmt_left(7_440), "2h04m");
    }
}
