//! The count identity a summary keeps: its counts of one run, read in different ways, are one
//! set of counts. Tests check it on every run they make and in every format.

use super::Summary;
use crate::store::Counting;

/// One way a summary's counts fail to add up, with the two numbers that differ.
#[derive(Debug, Clone, PartialEq)]
pub enum Mismatch {
    /// Completions are not the status codes plus the transport errors.
    Outcomes {
        /// `requests.total`.
        total: u64,
        /// The status codes added up.
        statuses: u64,
        /// The transport errors (the Failures table's errors) added up.
        errors: u64,
    },
    /// The per-request rows do not add up to the completions.
    RequestRows {
        /// `requests.total`.
        total: u64,
        /// The rows' completions added up.
        rows: u64,
    },
    /// The aggregated row is not the completions.
    Aggregated {
        /// `requests.total`.
        total: u64,
        /// The aggregated row's completions.
        aggregated: u64,
    },
    /// The measured stages' rows do not add up to the completions.
    Stages {
        /// `requests.total`.
        total: u64,
        /// The measured stages' completions added up.
        stages: u64,
    },
    /// The per-second rows' measured completions do not add up to the completions.
    Seconds {
        /// `requests.total`.
        total: u64,
        /// The seconds' measured completions added up.
        seconds: u64,
    },
    /// The per-second rows' measured sends do not add up to the requests sent.
    SecondsSent {
        /// `requests.sent`.
        sent: u64,
        /// The seconds' measured sends added up.
        seconds: u64,
    },
    /// The failures of the Failures table, the per-request rows and the success ratio differ.
    Failures {
        /// The Failures table added up.
        table: u64,
        /// The per-request rows' failures added up.
        rows: u64,
        /// Completions less those the success ratio says succeeded.
        by_ratio: f64,
    },
    /// Throughput is not the completions answered as expected per second of the span the
    /// per-request rows are over.
    Throughput {
        /// `requests.throughput`.
        run: f64,
        /// The rows' completions less failures, per second.
        rows: f64,
    },
    /// A run of one measured stage does not have that stage's send rate.
    StageRate {
        /// `requests.rate`.
        run: f64,
        /// The stage's `sent_rps`.
        stage: f64,
    },
    /// A run of one measured stage does not have that stage's throughput.
    StageThroughput {
        /// `requests.throughput`.
        run: f64,
        /// The stage's.
        stage: f64,
    },
}

impl Summary {
    /// What does not add up among this summary's counts; empty when they are one set.
    pub fn count_identity(&self) -> Vec<Mismatch> {
        let mut out = Vec::new();
        let total = self.requests.total;
        let statuses: u64 = self.status_codes.values().sum();
        // The Error Set's transport errors: kept for every run, where the Failures table
        // needs each request's (runs stored before they were kept have none).
        let errors: u64 = self
            .errors
            .iter()
            .filter(|e| !e.key.starts_with("status_") && e.key != "expectation_failed")
            .map(|e| e.count)
            .sum();
        if statuses + errors != total {
            out.push(Mismatch::Outcomes {
                total,
                statuses,
                errors,
            });
        }
        if !self.by_request.is_empty() {
            let rows: u64 = self.by_request.iter().map(|r| r.count).sum();
            if rows != total {
                out.push(Mismatch::RequestRows { total, rows });
            }
        }
        if let Some(a) = &self.aggregated {
            if a.count != total {
                out.push(Mismatch::Aggregated {
                    total,
                    aggregated: a.count,
                });
            }
        }
        // Runs counted by second took whole seconds out; their stages are by stage.
        let measured_stages = self.stages.iter().filter(|s| !s.warmup);
        if self.counting != Counting::BySecond && measured_stages.clone().next().is_some() {
            let stages: u64 = measured_stages.clone().map(|s| s.count).sum();
            if stages != total {
                out.push(Mismatch::Stages { total, stages });
            }
        }
        let seconds: u64 = self.timeline.iter().map(|d| d.measured_completed()).sum();
        if seconds != total {
            out.push(Mismatch::Seconds { total, seconds });
        }
        let seconds: u64 = self.timeline.iter().map(|d| d.measured_sent()).sum();
        if seconds != self.requests.sent {
            out.push(Mismatch::SecondsSent {
                sent: self.requests.sent,
                seconds,
            });
        }
        let table: u64 = self.failures.iter().map(|f| f.count).sum();
        let rows: u64 = self.by_request.iter().map(|r| r.failures).sum();
        let by_ratio = total as f64 * (1.0 - self.success_ratio);
        // Runs stored before each request's outcomes were kept have no Failures table.
        let reasons_kept = self
            .by_request
            .iter()
            .all(|r| r.count == 0 || !r.status_codes.is_empty() || r.failures == 0);
        let off = |n: u64| total > 0 && (by_ratio - n as f64).abs() > 1e-6 * total as f64;
        if (reasons_kept && (rows != table || off(table)))
            || (!self.by_request.is_empty() && off(rows))
        {
            out.push(Mismatch::Failures {
                table,
                rows,
                by_ratio,
            });
        }
        if let Some(a) = &self.aggregated {
            let rows = a.rps - a.failures_per_sec;
            if !close(rows, self.requests.throughput) {
                out.push(Mismatch::Throughput {
                    run: self.requests.throughput,
                    rows,
                });
            }
        }
        let mut measured = self.stages.iter().filter(|s| !s.warmup && s.count > 0);
        if let (Some(only), None) = (measured.next(), measured.next()) {
            // Exactly: the run's span is the stage's.
            if !only.counted
                && self.counting != Counting::BySecond
                && only.throughput != self.requests.throughput
            {
                out.push(Mismatch::StageThroughput {
                    run: self.requests.throughput,
                    stage: only.throughput,
                });
            }
            if !only.counted
                && self.counting == Counting::ByStage
                && !close(only.sent_rps, self.requests.rate)
            {
                out.push(Mismatch::StageRate {
                    run: self.requests.rate,
                    stage: only.sent_rps,
                });
            }
        }
        out
    }
}

/// Equal but for rounding.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}
