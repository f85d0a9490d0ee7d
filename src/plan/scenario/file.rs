//! The scenario file as written: YAML, checked field by field as it is read, so a mistake is
//! reported at its line and column. The doc comments here are the schema's descriptions.
//! `headroom import` writes these same types back out (see `plan::import::writer`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// A headroom scenario: where the traffic goes, what it is, how hard and how long, and the
/// service-level objectives it must meet.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Where requests go, and how to connect.
    pub target: TargetSection,
    /// The kinds of request sent; each is a row of the report.
    pub requests: Vec<RequestSection>,
    /// How hard and how long.
    pub load: LoadSection,
    /// Objectives the run must meet, e.g. "p95 < 250ms", "error_rate < 1%", "read: p99 < 50ms".
    /// The run exits with status 3 when one is not met.
    #[serde(default)]
    pub slo: Vec<String>,
    /// A safety stop: conditions, comma-separated, that end the run early the first time
    /// one holds for its whole window of consecutive seconds, e.g. "errors > 5% for 30s,
    /// p99 > 2s for 1m" (the metrics of `slo`; no `for`: the first second it holds), or a
    /// list of them as `slo` is written. The run keeps what it sent and exits with status
    /// 5. `--abort-when` replaces it; `sweep` and `capacity` stop by their own limits and
    /// leave it out.
    pub abort_when: Option<Conditions>,
    /// Data sets that request templates draw from, by name.
    #[serde(default)]
    pub data: BTreeMap<String, DataSection>,
    /// A login each connection runs before its first request: its captures (a token) are
    /// available to every request after it.
    pub login: Option<LoginSection>,
    /// Flows: requests run in order by each virtual user, passing captured values along.
    /// With flows, the load counts flow iterations, and requests are sent only as steps.
    #[serde(default)]
    pub flows: Vec<FlowSection>,
    /// Engine threads (default: the cores this process may use).
    pub threads: Option<usize>,
    /// Variants of this scenario run one after another by `headroom run`, each with some
    /// values replaced; one table compares them (docs/variants.md).
    pub matrix: Option<crate::plan::matrix::MatrixSection>,
}

/// The server, and connection settings shared by every request.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TargetSection {
    /// Base URL, e.g. "https://127.0.0.1:8443" or "http://127.0.0.1:2379/v3"; request paths
    /// are appended to its path. Give `urls` instead for several instances.
    pub url: Option<String>,
    /// Several instances of one service (same scheme and path, other hosts or ports): each
    /// request goes to the next in turn, as behind a round-robin load balancer.
    pub urls: Option<Vec<String>>,
    /// TLS settings, for https.
    #[serde(default)]
    pub tls: TlsSection,
    /// HTTP version: "auto" (HTTP/2 when the server offers it over TLS), "http1" or "http2".
    #[serde(default)]
    pub http: HttpChoice,
    /// Headers sent with every request.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Deadline for a whole request, e.g. "5s" (default 30s).
    pub timeout: Option<String>,
    /// Deadline for opening a connection, TLS included (default 10s).
    pub connect_timeout: Option<String>,
    /// Reuse connections (default true); false opens a connection (and handshake) per request.
    pub keepalive: Option<bool>,
    /// Most connections open at once (default 10000).
    pub max_connections: Option<u32>,
}

/// TLS settings. Relative paths are relative to the scenario file.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TlsSection {
    /// PEM bundle of trusted CAs; when set, only these are trusted.
    pub ca: Option<PathBuf>,
    /// PEM client certificate (with its chain), for servers that verify clients.
    pub cert: Option<PathBuf>,
    /// PEM private key of the client certificate. Its content is never stored.
    pub key: Option<PathBuf>,
    /// Skip verification of the server's certificate.
    #[serde(default)]
    pub insecure: bool,
    /// Server name sent in SNI and verified, when it differs from the URL's host.
    pub server_name: Option<String>,
    /// Resume TLS sessions on new connections (default true).
    pub session_resumption: Option<bool>,
}

/// Which HTTP version to speak.
#[derive(Debug, Default, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HttpChoice {
    /// HTTP/2 when the server offers it over TLS, HTTP/1.1 otherwise.
    #[default]
    Auto,
    /// HTTP/1.1 only.
    Http1,
    /// HTTP/2 only.
    Http2,
}

/// One kind of request.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestSection {
    /// The name it is reported under; unique in the scenario.
    pub name: String,
    /// HTTP method (default GET).
    #[serde(default = "get")]
    pub method: String,
    /// Path and query, appended to the target URL's path, e.g. "/v1/keys?limit=5".
    pub path: String,
    /// Headers of this request (added to the target's).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Body, as text.
    pub body: Option<String>,
    /// Body, as JSON (sent with content-type: application/json unless a header says otherwise).
    pub json: Option<serde_json::Value>,
    /// Body, read from this file (relative to the scenario file).
    pub body_file: Option<PathBuf>,
    /// Share of the load, relative to the other requests' weights (default 1).
    #[serde(default = "one")]
    pub weight: u32,
    /// Which answers count as success (default: any 2xx or 3xx).
    #[serde(default)]
    pub expect: ExpectSection,
    /// The data set (from `data:`) whose columns fill this request's {{ templates }}.
    pub data: Option<String>,
    /// How rows are picked: "sequential" (default, wrapping), "random", or "unique" (each
    /// row once; sends beyond the last fail as data_exhausted).
    #[serde(default)]
    pub pick: PickChoice,
    /// Values to take from the response for later flow steps, by variable name.
    #[serde(default)]
    pub capture: BTreeMap<String, CaptureSection>,
}

/// Where a captured value is found: give one of json, header and regex.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaptureSection {
    /// A JSON path into the body: "id", "data.items[0].id".
    pub json: Option<String>,
    /// A response header, by name.
    pub header: Option<String>,
    /// A regular expression over the body: its first group, or the whole match.
    pub regex: Option<String>,
}

/// The login request and when to run it again.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginSection {
    /// The login request, by name (it captures the token; it gets its own row).
    pub request: String,
    /// Log in again after this long, e.g. "15m".
    pub refresh_after: Option<String>,
    /// Log in again after a request gets one of these statuses (default [401]).
    pub refresh_on: Option<Vec<u16>>,
}

/// A flow: steps a virtual user runs in order.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowSection {
    /// Its name (default "flow N").
    pub name: Option<String>,
    /// Its share of the iterations, relative to the other flows (default 1).
    #[serde(default = "one")]
    pub weight: u32,
    /// Pause between a step's answer and the next step, e.g. "500ms".
    pub think: Option<String>,
    /// The requests, by name, in order.
    pub steps: Vec<String>,
}

/// How a request picks its data row.
#[derive(Debug, Default, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PickChoice {
    /// Row k for the k-th send, wrapping around.
    #[default]
    Sequential,
    /// A row drawn per send (the same draws every run).
    Random,
    /// Each row once.
    Unique,
}

/// A data set: a CSV or JSON-lines file, or generated keys and values.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DataSection {
    /// CSV file whose first line names the columns (relative to the scenario file).
    pub csv: Option<PathBuf>,
    /// JSON-lines file, one object per line (relative to the scenario file).
    pub jsonl: Option<PathBuf>,
    /// Generated keys with random values: columns key, value and index.
    pub generate: Option<GenerateSection>,
}

/// A generated key-value set, e.g. 1,000,000 keys with 256-byte values.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GenerateSection {
    /// Number of keys.
    pub keys: u64,
    /// Bytes per value.
    pub value_bytes: usize,
    /// What each key starts with (default `key-`): sets of other shapes written to the
    /// same store keep apart.
    pub prefix: Option<String>,
}

fn get() -> String {
    "GET".into()
}

fn one() -> u32 {
    1
}

/// What a request expects back; anything else is a failure of that request.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectSection {
    /// Allowed status codes: numbers (404), classes ("2xx") or ranges ("200-204").
    pub status: Option<Vec<StatusPattern>>,
    /// Text the body must contain.
    pub body: Option<String>,
    /// Values the JSON body must hold, by path: {"data.state": "active", "count": 5}.
    #[serde(default)]
    pub json: BTreeMap<String, serde_json::Value>,
}

/// Conditions written either way a reader of `slo` would try: one comma-separated string,
/// or a list.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Conditions {
    /// Comma-separated conditions.
    Text(String),
    /// One condition (or several, comma-separated) per item.
    List(Vec<String>),
}

// By hand rather than `untagged`: an untagged enum reads its value into a buffer first,
// and a mistake in it loses its line and column.
impl<'de> Deserialize<'de> for Conditions {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Either;
        impl<'de> serde::de::Visitor<'de> for Either {
            type Value = Conditions;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "conditions as one string (\"errors > 5% for 30s, p99 > 2s for 1m\") or a list of them",
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Conditions, E> {
                Ok(Conditions::Text(v.to_string()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Conditions, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<String>()? {
                    items.push(item);
                }
                Ok(Conditions::List(items))
            }
        }
        d.deserialize_any(Either)
    }
}

impl Conditions {
    /// The conditions as one comma-separated text, as `--abort-when` takes them.
    pub fn text(&self) -> String {
        match self {
            Conditions::Text(t) => t.clone(),
            Conditions::List(items) => items.join(", "),
        }
    }
}

/// A status code, a class such as "2xx", or a range such as "200-204".
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum StatusPattern {
    /// One status code.
    Code(u16),
    /// A class or a range.
    Text(String),
}

/// How hard and how long.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadSection {
    /// Open model: requests per second, whatever the server does: 100, or as vegeta writes
    /// it, "100/s", "6000/1m".
    pub rate: Option<RateValue>,
    /// Closed model: virtual users, each sending its next request when the last is answered.
    pub users: Option<u32>,
    /// Closed model: at most this many requests per second from all users together (100,
    /// "100/s"), so a fast server on a shared machine is not flooded. `--max-rate` wins.
    pub max_rate: Option<RateValue>,
    /// Stop after this long, e.g. "60s", "5m".
    pub duration: Option<String>,
    /// Stop after this many requests.
    pub requests: Option<u64>,
    /// A load in stages, run in order (instead of rate or users): burst, ramp, steady state,
    /// spike and step profiles.
    pub stages: Option<Vec<StageSection>>,
    /// How the open model's arrivals are spaced: "even" (the default) or "poisson"
    /// (exponential gaps, as independent users send; ramps and stages vary its rate).
    pub arrivals: Option<crate::plan::ArrivalKind>,
    /// Seeds Poisson arrivals, so that a run can be repeated exactly (default: drawn at
    /// random, and stored with the run).
    pub seed: Option<u64>,
}

/// A rate: a number of requests per second, or a count per span ("100/s", "6000/1m").
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RateValue {
    /// Requests per second.
    PerSecond(f64),
    /// A count per span, as vegeta writes it.
    Text(String),
}

impl RateValue {
    /// Requests per second, or why the text is not a rate.
    pub fn per_second(&self) -> Result<f64, String> {
        match self {
            RateValue::PerSecond(r) => Ok(*r),
            RateValue::Text(t) => crate::units::parse_rate(t),
        }
    }
}

/// One stage: a rate or a number of users, constant or ramped, for a duration.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StageSection {
    /// Its name in the report (default "stage N").
    pub name: Option<String>,
    /// Requests per second: a number, or [from, to] for a linear ramp.
    pub rate: Option<Level>,
    /// Virtual users: a number, or [from, to] for a linear ramp.
    pub users: Option<Level>,
    /// How long it lasts, e.g. "1m".
    pub duration: String,
    /// A warm-up: its requests are sent and stored but left out of the reported numbers
    /// (latency, status codes, per-request rows, objectives).
    #[serde(default)]
    pub warmup: bool,
}

/// A constant level, or a linear ramp from one level to another.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Level {
    /// Constant.
    Constant(f64),
    /// From the first to the second, linearly.
    Ramp([f64; 2]),
}

impl Level {
    /// Where the stage starts and ends.
    pub fn span(self) -> (f64, f64) {
        match self {
            Level::Constant(v) => (v, v),
            Level::Ramp([a, b]) => (a, b),
        }
    }
}

/// A duration as written ("30s", "500ms", "5m").
pub fn duration(text: &str) -> Result<Duration, String> {
    crate::units::parse_duration(text).map_err(|e| format!("invalid duration: {e}"))
}

/// The inclusive range of codes a pattern allows.
pub fn status_range(p: &StatusPattern) -> Result<(u16, u16), String> {
    let valid = |c: u16| (100..=599).contains(&c);
    let bad = |t: &str| {
        format!("invalid status {t:?}: expected a code (404), a class (\"2xx\") or a range (\"200-204\")")
    };
    match p {
        StatusPattern::Code(c) if valid(*c) => Ok((*c, *c)),
        StatusPattern::Code(c) => Err(bad(&c.to_string())),
        StatusPattern::Text(t) => {
            let t = t.trim();
            if let Some(class) = t.strip_suffix("xx").or_else(|| t.strip_suffix("XX")) {
                return match class.parse::<u16>() {
                    Ok(d @ 1..=5) => Ok((d * 100, d * 100 + 99)),
                    _ => Err(bad(t)),
                };
            }
            let (lo, hi) = t.split_once('-').unwrap_or((t, t));
            match (lo.trim().parse::<u16>(), hi.trim().parse::<u16>()) {
                (Ok(lo), Ok(hi)) if valid(lo) && valid(hi) && lo <= hi => Ok((lo, hi)),
                _ => Err(bad(t)),
            }
        }
    }
}
