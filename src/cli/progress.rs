//! The live progress line on stderr, shown only when stderr is a terminal.

use headroom::plan::AttackPlan;
use headroom::run::Observer;
use headroom::store::IntervalLine;
use headroom::units::fmt_us;
use std::io::{IsTerminal, Write};

/// Prints one line per interval: sent and completed rate, p50/p99, errors, elapsed/remaining.
pub struct Progress {
    enabled: bool,
    total_secs: Option<u64>,
    /// Stage names, shown beside the second they run in (a sweep's current step).
    stages: Vec<String>,
    errors: u64,
    shown: bool,
}

impl Progress {
    /// Progress for `plan`; silent when `quiet` or when stderr is not a terminal.
    pub fn new(plan: &AttackPlan, quiet: bool) -> Self {
        Progress {
            enabled: !quiet && std::io::stderr().is_terminal(),
            total_secs: plan.stop.duration.map(|d| d.as_secs()),
            stages: plan.stages.iter().map(|s| s.name.clone()).collect(),
            errors: 0,
            shown: false,
        }
    }

    /// Ends the line so the report starts on a fresh one.
    pub fn finish(&mut self) {
        if self.shown {
            eprintln!();
        }
    }
}

impl Observer for Progress {
    fn notice(&mut self, notice: &headroom::sample::Notice) {
        // Shown whatever the progress setting: it may explain every number that follows.
        eprintln!("headroom: note: {notice}");
    }

    fn interval(&mut self, line: &IntervalLine) {
        let r = &line.record;
        self.errors +=
            r.errors.values().sum::<u64>() + r.status.range(500..).map(|(_, n)| n).sum::<u64>();
        if !self.enabled {
            return;
        }
        let latency = r.latency_ok();
        let elapsed = r.index + 1;
        let of = self
            .total_secs
            .map(|t| format!("/{t}s"))
            .unwrap_or_default();
        let stage = line
            .stage
            .and_then(|i| self.stages.get(usize::from(i)))
            .map(|name| format!("  [{name}]"))
            .unwrap_or_default();
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r\x1b[2K[{elapsed:>4}s{of}] sent {:>7}/s  done {:>7}/s  p50 {:>9}  p99 {:>9}  errors {}  cpu {:.0}%{stage}",
            r.sent,
            r.completed(),
            fmt_us(latency.quantile(0.5).as_micros() as u64),
            fmt_us(latency.quantile(0.99).as_micros() as u64),
            self.errors,
            line.health.cpu.total.as_secs_f64() * 100.0,
        );
        let _ = err.flush();
        self.shown = true;
    }
}
