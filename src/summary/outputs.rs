//! What the live outputs (`--push`) delivered and dropped (`outputs.json`), so a run's
//! report says whether the dashboards saw all of it.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The kind of backend a live output writes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputKind {
    /// Prometheus remote write 1.0 (protobuf + snappy, native histograms).
    Prometheus,
    /// InfluxDB line protocol (the 1.x `/write` or the 2 `/api/v2/write` API).
    Influxdb,
}

/// Why samples did not reach the backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// Nothing listened at the address (connection refused).
    Refused,
    /// The address could not be reached or resolved, or the connection broke.
    Unreachable,
    /// The backend took longer than the send's deadline.
    Timeout,
    /// The backend answered with a 5xx status.
    ServerError,
    /// The backend refused the batch with a 4xx status (not retried: it would refuse again).
    Rejected,
    /// The hand-over queue was full (the backend slower than a batch a second for longer
    /// than the queue holds): the oldest batch went.
    QueueFull,
    /// The run ended and the flush deadline passed before the batch could be sent.
    FlushDeadline,
    /// The series limit was reached: a series past it is not written.
    SeriesLimit,
}

/// What one live output did over a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputRecord {
    /// Which backend.
    pub kind: OutputKind,
    /// Where it wrote, credentials removed.
    pub url: String,
    /// Samples (Prometheus) or points (InfluxDB) the backend accepted.
    pub sent: u64,
    /// Samples or points that did not reach it, by why (a batch counts under its last failure).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub dropped: BTreeMap<DropReason, u64>,
    /// The last HTTP status a refused or failed batch got, when one answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_status: Option<u16>,
    /// The first line of that answer's body (at most 200 bytes, control characters removed,
    /// nothing headroom sent echoed back): Prometheus says there why it refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_answer: Option<String>,
}

impl OutputRecord {
    /// Samples or points dropped, whatever the reason (saturating: see [`Self::damaged`]).
    pub fn dropped_total(&self) -> u64 {
        self.dropped
            .values()
            .fold(0u64, |sum, &n| sum.saturating_add(n))
    }

    /// True when its counts are more than any run sends (past 2^60, alone or added up): the
    /// file was damaged or edited after the run, and its numbers mean nothing.
    pub fn damaged(&self) -> bool {
        let limit = crate::store::MAX_COUNT;
        self.sent > limit
            || self
                .dropped
                .values()
                .try_fold(self.sent, |sum, &n| {
                    sum.checked_add(n).filter(|&s| s <= limit)
                })
                .is_none()
    }
}
