//! Live outputs (`--push KIND=URL`): each second of the run written to the metrics backend
//! teams already watch, from the same interval records the run log and reports read.
//!
//! The run's interval callback turns the second into a batch (cumulative series for
//! Prometheus, the second's own points for InfluxDB) and hands it to the output's own
//! network thread through a bounded queue ([`deliver`]); it never waits on the network. The thread sends with bounded retries; at
//! the end of the run what is left gets a flush with a deadline. What was sent and what was
//! dropped, and why, is kept in the run directory (`outputs.json`) and said in the report.
//!
//! Layout: `deliver` (queue, thread, retries, flush) · `http` (the small POST client) ·
//! `prometheus` (series and remote-write encoding) · `native` (HDR → native histogram) ·
//! `prompb` (the protobuf messages) · `influx` (line protocol points) · `influx_endpoint`
//! (the InfluxDB API a URL names, credentials from the environment).

pub mod deliver;
pub mod http;
pub mod influx;
pub mod influx_endpoint;
pub mod native;
pub mod prometheus;
pub mod prompb;
pub mod promql;

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
    /// Its write URL (for InfluxDB, with `precision=ms`).
    pub endpoint: Endpoint,
    /// The URL as given, for `outputs.json` and the report: user info and query values named
    /// like credentials redacted (InfluxDB's are refused).
    pub shown_url: String,
    /// The `Authorization` header, from the environment (InfluxDB); never shown.
    pub authorization: Option<influx_endpoint::Authorization>,
}

const USAGE: &str = "give KIND=URL, e.g. prometheus=http://127.0.0.1:9090/api/v1/write or influxdb=http://127.0.0.1:8086/write?db=DB";

impl PushTarget {
    /// Parses `KIND=URL`, reading an output's credentials with `env` (the process
    /// environment for [`str::parse`]).
    pub fn parse_with(s: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Self, PushError> {
        let invalid = |reason: String| PushError::Invalid {
            given: influx_endpoint::without_secret_params(&crate::plan::secret_names::redact_url(
                s,
            )),
            reason,
        };
        let (kind, url) = s
            .split_once('=')
            .ok_or_else(|| invalid(USAGE.to_string()))?;
        let url = url.trim();
        match kind.trim() {
            "prometheus" => Ok(PushTarget {
                kind: OutputKind::Prometheus,
                endpoint: Endpoint::parse(url).map_err(invalid)?,
                shown_url: crate::plan::secret_names::redact_url(url),
                authorization: None,
            }),
            "influxdb" => {
                // Checked before the URL is parsed: a parse error would show a `p=`.
                let write = influx_endpoint::check(url, env).map_err(invalid)?;
                Ok(PushTarget {
                    kind: OutputKind::Influxdb,
                    endpoint: Endpoint::parse(&write.write_url).map_err(invalid)?,
                    shown_url: crate::plan::secret_names::redact_url(url),
                    authorization: write.authorization,
                })
            }
            other => Err(invalid(format!(
                "unknown output {other:?}: the outputs are prometheus (remote write) and influxdb (line protocol); {USAGE}"
            ))),
        }
    }
}

impl std::str::FromStr for PushTarget {
    type Err = PushError;

    fn from_str(s: &str) -> Result<PushTarget, PushError> {
        PushTarget::parse_with(s, &|name| std::env::var(name).ok())
    }
}

fn unix_ms(t: SystemTime) -> i64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
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
    /// Each stage's name by its index (warm-ups included): the `stage_name` label beside the
    /// `stage` index, so a dashboard shows "200 req/s warm-up", not only `2`.
    pub stages: Vec<String>,
    /// The run's start on the wall clock (ms since the Unix epoch), as `meta.json` has it:
    /// InfluxDB points are stamped with it plus their second's index.
    pub started_ms: i64,
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
        // `started_at` is written by headroom in RFC 3339; were it unreadable, now is within
        // milliseconds of it (the labels are made as the run starts).
        let started =
            humantime::parse_rfc3339(&meta.started_at).unwrap_or_else(|_| SystemTime::now());
        RunLabels {
            run_id,
            started_ms: unix_ms(started),
            shard: meta.shard.as_ref().map(|s| s.index),
            requests: meta
                .requests
                .iter()
                .map(|r| (r.name.clone(), r.method.clone()))
                .collect(),
            stages: meta.stages.iter().map(|s| s.name.clone()).collect(),
        }
    }
}

enum Format {
    Prometheus(prometheus::RemoteWrite),
    // Boxed: its empty request record is larger than the Prometheus state's handles.
    Influx(Box<influx::LineProtocol>),
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
                OutputKind::Influxdb => (
                    Format::Influx(Box::new(influx::LineProtocol::new(labels))),
                    influx::headers(t.authorization.as_ref().map(|a| a.value())),
                ),
            };
            let delivery =
                Delivery::start(t.kind, t.endpoint.clone(), t.shown_url.clone(), headers).map_err(
                    |reason| PushError::Thread {
                        kind: t.kind,
                        reason,
                    },
                )?;
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
        let at_ms = unix_ms(SystemTime::now());
        for o in &mut self.outputs {
            match &mut o.format {
                Format::Prometheus(rw) => {
                    let (batch, refused) = rw.batch(line, at_ms);
                    o.delivery.count_dropped(DropReason::SeriesLimit, refused);
                    o.delivery.offer(batch);
                }
                Format::Influx(lp) => {
                    let batch = lp.batch(line);
                    // A staged run's second in which nothing completed has no stage, so no point.
                    if batch.samples > 0 {
                        o.delivery.offer(batch);
                    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_shown_and_stored_has_no_credential() {
        let t = PushTarget::parse_with(
            "prometheus=http://127.0.0.1:9090/api/v1/write?access_token=s3cret&x=1",
            &|_| None,
        )
        .unwrap();
        assert_eq!(
            t.shown_url,
            "http://127.0.0.1:9090/api/v1/write?access_token=<redacted>&x=1"
        );
    }
}
