//! One stage's tally: what the requests sent for it met, wherever their answers fell.

use super::interval::{add_each, is_zero, FlowStats, RequestStats};
use super::Histogram;

/// What the requests sent for one stage met, wherever their answers fell: everything a
/// report counts of a request is here, so a stage's numbers (and a run's, warm-up left
/// out) never take a request sent for another stage.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct StepStats {
    /// Requests sent for it (retries included, as [`super::IntervalRecord::sent`]); absent from
    /// runs stored before it was kept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sent: u64,
    /// Of its completions, requests that were sent a second time.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retried: u64,
    /// Request body bytes of its completions.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bytes_out: u64,
    /// Time to the response head of its completions that had one.
    #[serde(default, skip_serializing_if = "Histogram::is_empty")]
    pub first_byte: Histogram,
    /// TCP connect times of the connections its requests opened.
    #[serde(default, skip_serializing_if = "Histogram::is_empty")]
    pub connect: Histogram,
    /// TLS handshake times of those connections.
    #[serde(default, skip_serializing_if = "Histogram::is_empty")]
    pub tls_handshake: Histogram,
    /// Requests completed.
    pub count: u64,
    /// Completions without an expected answer.
    pub failures: u64,
    /// Completions with no answer at all (a classified error).
    pub errors: u64,
    /// Latency of the completions with an expected answer.
    pub latency: Histogram,
    /// Earliest intended send, µs after the start of the run.
    pub first_us: u64,
    /// Latest completion, µs after the start of the run.
    pub last_us: u64,
    /// Earliest completion, µs after the start of the run.
    #[serde(default)]
    pub first_done_us: u64,
    /// Per request of the run, by its index in the plan: the request × step table, with
    /// each step's status codes and errors (absent from runs stored before it was kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<RequestStats>,
    /// Per flow of the run: the iterations begun in this stage that ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<FlowStats>,
}

impl StepStats {
    /// Adds everything in `other`.
    pub fn add(&mut self, other: &StepStats) {
        // Before the early return: an iteration begun in this stage may end in an interval
        // that counts none of its requests.
        add_each(&mut self.flows, &other.flows, FlowStats::add);
        // So are its sends: a request leaves seconds before its answer comes.
        self.sent += other.sent;
        self.connect.add(&other.connect);
        self.tls_handshake.add(&other.tls_handshake);
        if other.count == 0 {
            return;
        }
        self.widen(other.first_us, other.first_done_us, other.last_us);
        self.count += other.count;
        self.failures += other.failures;
        self.errors += other.errors;
        self.retried += other.retried;
        self.bytes_out += other.bytes_out;
        self.latency.add(&other.latency);
        self.first_byte.add(&other.first_byte);
        add_each(&mut self.requests, &other.requests, RequestStats::add);
    }

    /// Requests sent for it, retries left out: what the load asked for that left.
    pub fn sent_first(&self) -> u64 {
        self.sent.saturating_sub(self.retried)
    }

    /// Stretches the span to take in requests first sent at `first_us` and completed from
    /// `first_done_us` to `last_us`; before the first count, the span is theirs.
    pub(super) fn widen(&mut self, first_us: u64, first_done_us: u64, last_us: u64) {
        if self.count == 0 {
            (self.first_us, self.first_done_us) = (first_us, first_done_us);
        } else {
            self.first_us = self.first_us.min(first_us);
            self.first_done_us = self.first_done_us.min(first_done_us);
        }
        self.last_us = self.last_us.max(last_us);
    }

    /// Seconds from the first intended send to the last completion.
    pub fn span_secs(&self) -> f64 {
        self.last_us.saturating_sub(self.first_us) as f64 / 1e6
    }

    /// Completions per second between the first and the last: a closed-model step's
    /// throughput, not stretched by the latency of its first answer.
    pub fn completion_rate(&self) -> f64 {
        let secs = self.last_us.saturating_sub(self.first_done_us) as f64 / 1e6;
        if self.count > 1 && secs > 0.0 {
            (self.count - 1) as f64 / secs
        } else {
            0.0
        }
    }
}
