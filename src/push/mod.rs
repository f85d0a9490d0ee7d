//! Live outputs (`--push KIND=URL`): each second of the run written to the metrics backend
//! teams already watch, from the same interval records the run log and reports read.
//!
//! The run's interval callback turns the second into a batch (cumulative series for
//! Prometheus) and hands it to the output's own network thread through a bounded queue
//! ([`deliver`]); it never waits on the network. The thread sends with bounded retries; at
//! the end of the run what is left gets a flush with a deadline. What was sent and what was
//! dropped, and why, is kept in the run directory (`outputs.json`) and said in the report.
//!
//! Layout: `deliver` (queue, thread, retries, flush) · `http` (the small POST client) ·
//! `prometheus` (series and remote-write encoding) · `native` (HDR → native histogram) ·
//! `prompb` (the protobuf messages).

pub mod deliver;
pub mod http;
pub mod native;
pub mod prometheus;
pub mod prompb;

use crate::store::{DropReason, IntervalLine, OutputKind, OutputRecord, RunMeta};
use deliver::Delivery;
use http::Endpoint;
use std::time::{Duration, SystemTime};

/// Longest the end of a run waits for its outputs to send what is queued.
pub const FLUSH: Duration = Duration::from_secs(5);

/// Why a live output could not start.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    /// `--push` was not `KIND=URL` with a known kind and a usable URL.
    #[error("--push {given}: {reason}")]
    Invalid {
        /// What was given (credentials removed).
        given: String,
        /// What is wrong, with what to do.
        reason: String,
    },
    /// The output's thread could not be started.
    #[error("cannot start the {kind:?} output: {reason}")]
    Thread {
        /// Which output.
        kind: OutputKind,
        /// The cause.
        reason: std::io::Error,
    },
}

/// One `--push KIND=URL`: where a live output writes.
#[derive(Debug, Clone)]
pub struct PushTarget {
    /// The backend.
    pub kind: OutputKind,
    /// Its write URL.
    pub endpoint: Endpoint,
}

const USAGE: &str = "give KIND=URL, e.g. prometheus=http://127.0.0.1:9090/api/v1/write";

impl std::str::FromStr for PushTarget {
    type Err = PushError;

    fn from_str(s: &str) -> Result<PushTarget, PushError> {
        let invalid = |reason: String| PushError::Invalid {
            given: crate::plan::without_user_info(s),
            reason,
        };
        let (kind, url) = s
            .split_once('=')
            .ok_or_else(|| invalid(USAGE.to_string()))?;
        let kind = match kind.trim() {
            "prometheus" => OutputKind::Prometheus,
            other => {
                return Err(invalid(format!(
                    "unknown output {other:?}: the outputs are prometheus (remote write); {USAGE}"
                )))
            }
        };
        let endpoint = Endpoint::parse(url.trim()).map_err(invalid)?;
        Ok(PushTarget { kind, endpoint })
    }
}

/// What every series of a run is labelled with.
#[derive(Debug, Clone, PartialEq)]
pub struct RunLabels {
    /// The run: its directory's name, or for a shard the whole test's (shared by its shards).
    pub run_id: String,
    /// This shard's index, when the run is one.
    pub shard: Option<u32>,
    /// Each request's name and method, in plan order.
    pub requests: Vec<(String, String)>,
}

impl RunLabels {
    /// The labels of the run `meta` describes, stored in `dir_name`. Shards of one test
    /// share a run id (the whole test's plan fingerprint and common start), so their series
    /// add up in PromQL.
    pub fn of(meta: &RunMeta, dir_name: &str) -> RunLabels {
        let run_id = match &meta.shard {
            Some(s) => {
                let plan: String = s.plan.chars().take(12).collect();
                match &s.start_at {
                    Some(at) => format!("{plan}-{at}"),
                    None => plan,
                }
            }
            None => dir_name.to_string(),
        };
        RunLabels {
            run_id,
            shard: meta.shard.as_ref().map(|s| s.index),
            requests: meta
                .requests
                .iter()
                .map(|r| (r.name.clone(), r.method.clone()))
                .collect(),
        }
    }
}

enum Format {
    Prometheus(prometheus::RemoteWrite),
}

struct Output {
    format: Format,
    delivery: Delivery,
}

/// The run's live outputs.
pub struct Pushers {
    outputs: Vec<Output>,
}

impl Pushers {
    /// Starts a network thread for each of `targets`.
    pub fn start(targets: &[PushTarget], labels: &RunLabels) -> Result<Pushers, PushError> {
        let mut outputs = Vec::with_capacity(targets.len());
        for t in targets {
            let (format, headers) = match t.kind {
                OutputKind::Prometheus => (
                    Format::Prometheus(prometheus::RemoteWrite::new(labels.clone())),
                    prometheus::headers(),
                ),
            };
            let delivery = Delivery::start(
                t.kind,
                t.endpoint.clone(),
                t.endpoint.url().to_string(),
                headers,
            )
            .map_err(|reason| PushError::Thread {
                kind: t.kind,
                reason,
            })?;
            outputs.push(Output { format, delivery });
        }
        Ok(Pushers { outputs })
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.outputs.is_empty()
    }

    /// Hands `line` (a second that just ended) to every output; never waits on the network.
    pub fn offer(&mut self, line: &IntervalLine) {
        if self.outputs.is_empty() {
            return;
        }
        let at_ms = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        for o in &mut self.outputs {
            match &mut o.format {
                Format::Prometheus(rw) => {
                    let (batch, refused) = rw.batch(line, at_ms);
                    o.delivery.count_dropped(DropReason::SeriesLimit, refused);
                    o.delivery.offer(batch);
                }
            }
        }
    }

    /// Flushes every output within [`FLUSH`] (together, not one after another) and returns
    /// what each sent and dropped.
    pub fn finish(self) -> Vec<OutputRecord> {
        let handles: Vec<_> = self
            .outputs
            .into_iter()
            .map(|o| std::thread::spawn(move || o.delivery.finish(FLUSH)))
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    }
}
