//! Prometheus remote write 1.0: each second, every series' value so far, as one
//! snappy-compressed protobuf `WriteRequest`.
//!
//! Series (metric names after the OpenTelemetry HTTP client conventions):
//! - `http_client_request_duration_seconds` — a native histogram (`http.client.request.duration`)
//!   of latency from the intended send, per request, method, `status_class` (`1xx`…`5xx`,
//!   `error`), `outcome` (`expected`: the answer the request expects, the latency headroom's
//!   own percentiles report; `unexpected`: the others), stage (index and `stage_name`) and
//!   shard.
//! - `headroom_requests_total` — a counter of completed requests per request, method,
//!   `status_class`, stage and shard. OpenTelemetry defines no request counter for HTTP
//!   clients (the count is the histogram's); this one is exact where a histogram's count is
//!   too (both are), and is what `rate()` dashboards expect, so it is kept in headroom's
//!   namespace.
//!
//! Every series also has `job="headroom"` and `run_id`. Series are cumulative since the
//! run's start, so `sum(headroom_requests_total{run_id="…"})` at the end is the run's count
//! and the histogram's last sample is the whole run's distribution.

use super::deliver::Batch;
use super::native::Native;
use super::prompb::{Label, Sample, TimeSeries, WriteRequest};
use super::RunLabels;
use crate::record::{RequestStats, StatusClass};
use crate::store::IntervalLine;
use prost::Message;
use std::collections::BTreeMap;

/// Series written at most (counters and histograms together). Requests × status classes ×
/// stages stays under it for any plan headroom takes in practice; past it, a new series is
/// not written and its samples are counted as dropped (`series limit`), the others go on.
pub const MAX_SERIES: usize = 10_000;

/// The HTTP headers of a remote-write request.
pub fn headers() -> Vec<(&'static str, String)> {
    vec![
        ("Content-Type", "application/x-protobuf".into()),
        ("Content-Encoding", "snappy".into()),
        ("X-Prometheus-Remote-Write-Version", "0.1.0".into()),
    ]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    request: u16,
    stage: Option<u16>,
}

/// The cumulative state of every series, and its encoding.
#[derive(Debug)]
pub struct RemoteWrite {
    labels: RunLabels,
    counters: BTreeMap<(Key, StatusClass), u64>,
    histograms: BTreeMap<(Key, StatusClass, bool), Native>,
    last_ms: i64,
}

impl RemoteWrite {
    /// No series yet, for the run `labels` describe.
    pub fn new(labels: RunLabels) -> RemoteWrite {
        RemoteWrite {
            labels,
            counters: BTreeMap::new(),
            histograms: BTreeMap::new(),
            last_ms: 0,
        }
    }

    fn series(&self) -> usize {
        self.counters.len() + self.histograms.len()
    }

    /// Adds one interval and returns the write of every series as it now stands, stamped
    /// `at_ms` (the interval's end on the wall clock), and the samples of new series the
    /// limit kept out.
    pub fn batch(&mut self, line: &IntervalLine, at_ms: i64) -> (Batch, u64) {
        let mut refused = 0;
        let record = &line.record;
        // Per stage when the run has stages (by the stage each request was sent for, so a
        // late answer is never counted in the next), else per request over the run.
        if record.steps.is_empty() {
            for (i, stats) in record.requests.iter().enumerate() {
                refused += self.add(
                    Key {
                        request: i as u16,
                        stage: None,
                    },
                    stats,
                );
            }
        } else {
            for (stage, step) in &record.steps {
                for (i, stats) in step.requests.iter().enumerate() {
                    let key = Key {
                        request: i as u16,
                        stage: Some(*stage),
                    };
                    refused += self.add(key, stats);
                }
            }
        }
        // A sample per series must move forward in time, even if the clock steps back.
        let at_ms = at_ms.max(self.last_ms + 1);
        self.last_ms = at_ms;
        (self.encode(at_ms), refused)
    }

    /// Adds a request's interval to its series; returns the samples the limit kept out.
    fn add(&mut self, key: Key, stats: &RequestStats) -> u64 {
        if stats.count == 0 {
            return 0;
        }
        let mut refused = 0;
        for (class, n) in stats.count_by_class() {
            let full = self.series() >= MAX_SERIES;
            match self.counters.get_mut(&(key, class)) {
                Some(total) => *total += n,
                None if full => refused += 1,
                None => {
                    self.counters.insert((key, class), n);
                }
            }
        }
        // A live line always has its latency per class (only a stored one can lack it).
        let Some(by_class) = stats.by_class() else {
            return refused;
        };
        for (class, latency) in by_class.iter() {
            for (expected, h) in [(true, &latency.expected), (false, &latency.unexpected)] {
                if h.is_empty() {
                    continue;
                }
                let full = self.series() >= MAX_SERIES;
                let id = (key, *class, expected);
                match self.histograms.get_mut(&id) {
                    Some(native) => native.add(h),
                    None if full => refused += 1,
                    None => self.histograms.entry(id).or_default().add(h),
                }
            }
        }
        refused
    }

    fn encode(&self, at_ms: i64) -> Batch {
        let mut timeseries = Vec::with_capacity(self.series());
        for (&(key, class), &total) in &self.counters {
            timeseries.push(TimeSeries {
                labels: self.labels_of(
                    "headroom_requests_total",
                    key,
                    &[("status_class", class_label(class))],
                ),
                samples: vec![Sample {
                    value: total as f64,
                    timestamp: at_ms,
                }],
                histograms: Vec::new(),
            });
        }
        for (&(key, class, expected), native) in &self.histograms {
            let outcome = if expected { "expected" } else { "unexpected" };
            timeseries.push(TimeSeries {
                labels: self.labels_of(
                    "http_client_request_duration_seconds",
                    key,
                    &[("status_class", class_label(class)), ("outcome", outcome)],
                ),
                samples: Vec::new(),
                histograms: vec![native.to_wire(at_ms)],
            });
        }
        let samples = timeseries.len() as u64;
        let proto = WriteRequest { timeseries }.encode_to_vec();
        // Remote write takes snappy's block format, not its framed stream.
        let body = snap::raw::Encoder::new()
            .compress_vec(&proto)
            .expect("snappy compresses any input under 4 GiB; a batch is far smaller");
        Batch { body, samples }
    }

    /// The labels of one series, sorted by name as remote write requires.
    fn labels_of(&self, name: &str, key: Key, by: &[(&str, &str)]) -> Vec<Label> {
        let request = self.labels.requests.get(usize::from(key.request));
        let mut labels = vec![
            label("__name__", name),
            label("job", "headroom"),
            label("run_id", &self.labels.run_id),
            label("request", request.map_or("", |r| r.0.as_str())),
            label("method", request.map_or("", |r| r.1.as_str())),
        ];
        labels.extend(by.iter().map(|(name, value)| label(name, value)));
        if let Some(stage) = key.stage {
            labels.push(label("stage", &stage.to_string()));
            if let Some(name) = self.labels.stages.get(usize::from(stage)) {
                labels.push(label("stage_name", name));
            }
        }
        if let Some(shard) = self.labels.shard {
            labels.push(label("shard", &shard.to_string()));
        }
        labels.sort_by(|a, b| a.name.cmp(&b.name));
        labels
    }
}

fn label(name: &str, value: &str) -> Label {
    Label {
        name: name.into(),
        value: value.into(),
    }
}

fn class_label(class: StatusClass) -> &'static str {
    match class {
        StatusClass::Informational => "1xx",
        StatusClass::Success => "2xx",
        StatusClass::Redirect => "3xx",
        StatusClass::ClientError => "4xx",
        StatusClass::ServerError => "5xx",
        StatusClass::Failed => "error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_staged_series_has_the_stage_index_and_name() {
        let rw = RemoteWrite::new(RunLabels {
            run_id: "r".into(),
            shard: None,
            requests: vec![("GET /".into(), "GET".into())],
            stages: vec!["200 req/s warm-up".into(), "200 req/s".into()],
            started_ms: 0,
        });
        let key = Key {
            request: 0,
            stage: Some(1),
        };
        let labels = rw.labels_of("x", key, &[("outcome", "expected")]);
        let get = |n: &str| {
            labels
                .iter()
                .find(|l| l.name == n)
                .map(|l| l.value.as_str())
        };
        assert_eq!(get("stage"), Some("1"));
        assert_eq!(get("stage_name"), Some("200 req/s"));
        let plain = rw.labels_of(
            "x",
            Key {
                request: 0,
                stage: None,
            },
            &[("outcome", "expected")],
        );
        assert!(plain.iter().all(|l| !l.name.starts_with("stage")));
    }

    /// The series of one written batch: each one's labels (name first) and its count.
    fn written(batch: &Batch) -> Vec<(Vec<(String, String)>, u64)> {
        let proto = snap::raw::Decoder::new()
            .decompress_vec(&batch.body)
            .unwrap();
        let request = WriteRequest::decode(proto.as_slice()).unwrap();
        request
            .timeseries
            .iter()
            .map(|ts| {
                let labels = ts
                    .labels
                    .iter()
                    .map(|l| (l.name.clone(), l.value.clone()))
                    .collect();
                let count = match (ts.samples.first(), ts.histograms.first()) {
                    (Some(s), _) => s.value as u64,
                    (None, Some(h)) => h.count_int.expect("an integer count"),
                    (None, None) => panic!("an empty series"),
                };
                (labels, count)
            })
            .collect()
    }

    #[test]
    fn latency_is_written_per_status_class_and_outcome() {
        use crate::sample::{ErrorKind, Outcome, Sample as Done};
        let mut rw = RemoteWrite::new(RunLabels {
            run_id: "r".into(),
            shard: None,
            requests: vec![("read".into(), "GET".into())],
            stages: Vec::new(),
            started_ms: 0,
        });
        let mut record = crate::record::IntervalRecord::new(0);
        let done = |outcome: Outcome, expected: bool, ms: u64| Done {
            outcome,
            latency: std::time::Duration::from_millis(ms),
            service: std::time::Duration::from_millis(ms),
            lag: std::time::Duration::ZERO,
            connect: None,
            tls_handshake: None,
            first_byte: None,
            bytes_in: 0,
            bytes_out: 0,
            retried: false,
            request: 0,
            stage: None,
            expected,
            iteration: None,
        };
        // Three 200s (one with a body the request did not expect), a 404 it expects, two
        // 503s and a timeout.
        for s in [
            done(Outcome::Status(200), true, 5),
            done(Outcome::Status(200), true, 6),
            done(Outcome::Status(200), false, 7),
            done(Outcome::Status(404), true, 2),
            done(Outcome::Status(503), false, 40),
            done(Outcome::Status(503), false, 41),
            done(Outcome::Error(ErrorKind::Timeout), false, 1000),
        ] {
            record.record(&s);
        }
        // Through the log line, as a stored run would carry it.
        let text = serde_json::to_string(&record).unwrap();
        let record: crate::record::IntervalRecord = serde_json::from_str(&text).unwrap();
        let line = IntervalLine {
            record,
            health: Default::default(),
            stage: None,
            server: None,
            shards: Vec::new(),
        };
        let (batch, refused) = rw.batch(&line, 1_000);
        assert_eq!(refused, 0);
        let mut histograms: Vec<(String, String, u64)> = Vec::new();
        let mut counters: Vec<(String, u64)> = Vec::new();
        for (labels, count) in written(&batch) {
            let get = |n: &str| {
                labels
                    .iter()
                    .find(|(k, _)| k == n)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            };
            match get("__name__").as_str() {
                "http_client_request_duration_seconds" => {
                    histograms.push((get("status_class"), get("outcome"), count))
                }
                "headroom_requests_total" => counters.push((get("status_class"), count)),
                other => panic!("unknown series {other}"),
            }
        }
        histograms.sort();
        assert_eq!(
            histograms,
            [
                ("2xx".into(), "expected".into(), 2),
                ("2xx".into(), "unexpected".into(), 1),
                ("4xx".into(), "expected".into(), 1),
                ("5xx".into(), "unexpected".into(), 2),
                ("error".into(), "unexpected".into(), 1),
            ]
        );
        counters.sort();
        assert_eq!(
            counters,
            [
                ("2xx".into(), 3),
                ("4xx".into(), 1),
                ("5xx".into(), 2),
                ("error".into(), 1)
            ]
        );
    }
}
