//! What to send and how hard: a validated, unit-typed description of one run.
//!
//! Every way of starting load (`headroom attack`'s flags, a scenario file for `headroom run`)
//! lowers to an [`AttackPlan`]; the engine only ever sees a plan, never flags or YAML.

pub mod abort;
mod arrivals;
mod body_file;
mod data;
mod flow;
pub mod gate;
pub mod import;
mod load;
pub mod matrix;
pub(crate) mod regular_file;
pub(crate) mod request;
pub mod scenario;
pub mod secret_names;
pub mod shard;
mod slo;
mod target;
mod template;
mod tls;
pub mod vegeta_targets;
pub(crate) mod weights;

pub use abort::{parse_abort_condition, parse_abort_when, AbortWhen, AbortWhenError};
pub use arrivals::{fresh_seed, ArrivalKind, Arrivals};
pub use body_file::{read_body_file, BodyFileError, MAX_BODY_FILE};
pub use data::{DataError, Dataset, Pick, Unreadable};
pub use flow::{json_path, Capture, CaptureFrom, Flow, JsonStep, Login, MAX_CAPTURED};
pub use load::{
    stage_at, Load, Rate, SendingEnd, Stage, StageBounds, StepPlace, Stop, MAX_RATE, MAX_USERS,
};
pub use request::{DataBinding, Expect, NamedRequest, RequestSpec, Templates};
pub use slo::{Metric, Op, Slo, SloError};
pub use target::{Scheme, Target};
pub use template::{Context, Names, Template, TemplateError};
pub use tls::{ClientIdentity, TlsOptions};
pub use weights::{MixError, Weights, MAX_CYCLE};

use std::time::Duration;

/// The most engine threads a run takes: each runs an event loop that wants a core.
pub const MAX_THREADS: usize = 256;

/// Which HTTP version to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HttpVersion {
    /// HTTP/2 when the server offers it over TLS (ALPN), HTTP/1.1 otherwise.
    Auto,
    /// HTTP/1.1 only.
    Http1,
    /// HTTP/2 only (ALPN `h2` over TLS, prior knowledge over cleartext).
    Http2,
}

/// Connection behaviour shared by every request of a run.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ConnectionOptions {
    /// HTTP version to speak.
    pub http: HttpVersion,
    /// Reuse connections; when false every request opens (and handshakes) its own.
    pub keepalive: bool,
    /// Upper bound on open connections across all workers.
    pub max_connections: u32,
    /// Upper bound on concurrent HTTP/2 streams per connection.
    pub max_streams: u32,
    /// Deadline for one whole request: connect, send, headers and body.
    #[serde(with = "humantime_serde_compat")]
    pub timeout: Duration,
    /// Deadline for establishing a connection (TCP and TLS).
    #[serde(with = "humantime_serde_compat")]
    pub connect_timeout: Duration,
    /// Largest response head accepted before the response is classified as hostile.
    pub max_header_bytes: usize,
    /// Requests falling due within this window after a pacer wake-up are sent with it
    /// (early, never late), trading exact spacing for fewer wake-ups.
    #[serde(with = "humantime_serde_compat")]
    pub coalesce: Duration,
}

impl Default for ConnectionOptions {
    fn default() -> Self {
        ConnectionOptions {
            http: HttpVersion::Auto,
            keepalive: true,
            max_connections: 10_000,
            max_streams: 100,
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            max_header_bytes: 64 * 1024,
            coalesce: Duration::from_millis(1),
        }
    }
}

/// Largest coalescing window: beyond it, "early" sends would reshape the load itself.
pub const MAX_COALESCE: Duration = Duration::from_millis(100);

/// Everything one attack needs: where, what, how hard, for how long, over what.
#[derive(Debug, Clone)]
pub struct AttackPlan {
    /// The server and path requests go to.
    pub target: Target,
    /// The requests sent, each with its share of the load; a one-line attack has one.
    pub requests: Vec<NamedRequest>,
    /// Open (rate) or closed (concurrency) load.
    pub load: Load,
    /// How the open model's arrivals are spaced: evenly, or as a Poisson process.
    pub arrivals: Arrivals,
    /// When the run stops sending.
    pub stop: Stop,
    /// Connection behaviour.
    pub connection: ConnectionOptions,
    /// TLS settings, used when the target is `https`.
    pub tls: TlsOptions,
    /// Number of engine threads, each with its own event loop, connections and recorder.
    pub threads: usize,
    /// Objectives the run is judged against.
    pub slo: Vec<Slo>,
    /// A load in stages (rates for the open model, users for the closed one), run in order;
    /// empty for the constant `load` until `stop`.
    pub stages: Vec<Stage>,
    /// Further instances of the same service: each request goes to `target` and these in
    /// turn (round-robin, as a load balancer would), each instance with its own connections.
    pub instances: Vec<Target>,
    /// Flows of requests; when there are any, the load is counted in flow iterations and the
    /// requests are sent as their steps.
    pub flows: Vec<Flow>,
    /// Names of the values flows capture, by slot.
    pub variables: Vec<String>,
    /// A login run on each connection before its first request, if the scenario has one.
    pub login: Option<Login>,
    /// The closed model's cap on requests started per second (`--max-rate`): users wait
    /// for a slot rather than flood a fast server.
    pub max_rate: Option<Rate>,
    /// Conditions that stop the run early once one holds for its window (`--abort-when`).
    pub abort: Vec<AbortWhen>,
}

/// A plan that cannot be run, with what to change.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The URL does not parse or is not http(s).
    #[error("invalid URL {url:?}: {reason}")]
    Url {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A header is not `Name: value`.
    #[error("invalid header {0:?}: expected \"Name: value\"")]
    Header(String),
    /// A method name is not valid HTTP.
    #[error("invalid method {0:?}")]
    Method(String),
    /// A number or duration is out of range.
    #[error("{0}")]
    Range(String),
    /// A file the plan refers to cannot be used.
    #[error("{what} {path}: {reason}")]
    File {
        /// What the file was for (e.g. "client certificate").
        what: &'static str,
        /// The path given.
        path: String,
        /// Why it cannot be used.
        reason: String,
    },
}

impl AttackPlan {
    /// A plan of `requests` sent to `target` with `load` until `stop`, on one thread, with
    /// default connection and TLS settings and nothing else (no stages, flows or objectives).
    pub fn new(target: Target, requests: Vec<NamedRequest>, load: Load, stop: Stop) -> AttackPlan {
        AttackPlan {
            target,
            requests,
            load,
            arrivals: Arrivals::Even,
            stop,
            connection: ConnectionOptions::default(),
            tls: TlsOptions::default(),
            threads: 1,
            slo: Vec::new(),
            stages: Vec::new(),
            instances: Vec::new(),
            flows: Vec::new(),
            variables: Vec::new(),
            login: None,
            max_rate: None,
            abort: Vec::new(),
        }
    }

    fn validate_stages(&self, generators: u32) -> Result<(), PlanError> {
        if self.stages.is_empty() {
            return Ok(());
        }
        let closed = matches!(self.load, Load::Closed { .. });
        for s in &self.stages {
            for v in [s.from, s.to] {
                let most = f64::from(generators.max(1))
                    * if closed {
                        f64::from(load::MAX_USERS)
                    } else {
                        load::MAX_RATE
                    };
                if v > most {
                    let unit = if closed { "users" } else { "req/s" };
                    return Err(PlanError::Range(if generators <= 1 {
                        format!(
                            "stage {:?}: {v} is above the {most} {unit} one generator {}",
                            s.name,
                            if closed {
                                "runs; split the load over several generators"
                            } else {
                                "paces"
                            }
                        )
                    } else {
                        format!(
                            "stage {:?}: {v} is above the {most} {unit} its {generators} shards {}; use more shards",
                            s.name,
                            if closed { "run" } else { "pace" }
                        )
                    }));
                }
                if !v.is_finite() || v < 0.0 || (closed && v.fract() != 0.0) {
                    return Err(PlanError::Range(format!(
                        "stage {:?}: {} must be a non-negative {}",
                        s.name,
                        v,
                        if closed {
                            "whole number of users"
                        } else {
                            "rate"
                        }
                    )));
                }
            }
        }
        let counted = self.stages.iter().filter(|s| s.requests.is_some()).count();
        if counted > 0 {
            if counted < self.stages.len() || !closed {
                return Err(PlanError::Range(
                    "steps counted in requests need the closed model and a count for every step"
                        .into(),
                ));
            }
            if self
                .stages
                .iter()
                .any(|s| s.requests == Some(0) || s.warmup)
            {
                return Err(PlanError::Range(
                    "a step counted in requests needs at least 1 request and cannot be a warm-up"
                        .into(),
                ));
            }
            return Ok(());
        }
        let total: Duration = self.stages.iter().map(|s| s.duration).sum();
        if total.is_zero() || self.stages.iter().all(|s| s.from == 0.0 && s.to == 0.0) {
            return Err(PlanError::Range(
                "the stages send nothing: give at least one stage a load and a duration".into(),
            ));
        }
        Ok(())
    }

    /// Every instance requests go to: `target` first.
    pub fn targets(&self) -> impl Iterator<Item = &Target> {
        std::iter::once(&self.target).chain(&self.instances)
    }

    /// The highest load of the stages, or of the constant load.
    pub fn peak(&self) -> f64 {
        self.stages
            .iter()
            .map(|s| s.from.max(s.to))
            .fold(0.0, f64::max)
    }

    /// Each request's share of the load, in order.
    pub fn weights(&self) -> Vec<u32> {
        self.requests.iter().map(|r| r.weight).collect()
    }

    /// Checks the combination of settings that each part cannot check alone.
    pub fn validate(&self) -> Result<(), PlanError> {
        self.validate_for(1)
    }

    /// Like [`validate`](Self::validate), for the whole of a test split over `generators`
    /// shards: the load may be up to that many times what one generator offers (each
    /// shard's part is then checked as a plan of its own).
    pub fn validate_for(&self, generators: u32) -> Result<(), PlanError> {
        self.load.validate(generators)?;
        self.load.validate_cap(self.max_rate, generators)?;
        self.arrivals.validate(&self.load)?;
        self.stop.validate(&self.load)?;
        if self.threads == 0 {
            return Err(PlanError::Range("threads must be at least 1".into()));
        }
        if self.threads > MAX_THREADS {
            return Err(PlanError::Range(format!(
                "--threads {} is above {MAX_THREADS}: each engine thread wants a core of its own, so more only adds switching",
                self.threads
            )));
        }
        if self.connection.max_connections == 0 {
            return Err(PlanError::Range(
                "--max-connections must be at least 1".into(),
            ));
        }
        if self.connection.timeout.is_zero() || self.connection.connect_timeout.is_zero() {
            return Err(PlanError::Range("timeouts must be greater than 0".into()));
        }
        if self.connection.coalesce > MAX_COALESCE {
            return Err(PlanError::Range(format!(
                "--coalesce {} would send bursts too far ahead of schedule; use at most {}",
                humantime::format_duration(self.connection.coalesce),
                humantime::format_duration(MAX_COALESCE)
            )));
        }
        self.validate_stages(generators)?;
        for a in &self.abort {
            if let Some(name) = &a.limit.request {
                if !self.requests.iter().any(|r| &r.name == name) {
                    return Err(PlanError::Range(format!(
                        "abort condition {:?} is about request {name:?}, which the run does not send; name one of its requests or drop the name",
                        a.text
                    )));
                }
            }
        }
        for t in &self.instances {
            if t.scheme != self.target.scheme || t.path_and_query != self.target.path_and_query {
                return Err(PlanError::Range(format!(
                    "instance {} differs from {} in more than host and port; instances of one service share scheme and path",
                    t.url, self.target.url
                )));
            }
        }
        let mut names = std::collections::HashSet::new();
        if let Some(dup) = self.requests.iter().find(|r| !names.insert(&r.name)) {
            return Err(PlanError::Range(format!(
                "two requests are named {:?}; each needs its own name (its row in the report)",
                dup.name
            )));
        }
        Weights::new(&self.weights()).map_err(|e| PlanError::Range(e.to_string()))?;
        if self.tls.identity.is_some() && self.target.scheme != Scheme::Https {
            return Err(PlanError::Range(
                "a client certificate needs an https:// URL".into(),
            ));
        }
        Ok(())
    }
}

/// Serde helpers that store durations as human-readable strings ("1.5s").
pub mod humantime_serde_compat {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    /// Writes a duration as "1s 500ms".
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&humantime::format_duration(*d).to_string())
    }

    /// Reads a duration written by [`serialize`].
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let s = String::deserialize(d)?;
        crate::units::parse_duration(&s).map_err(serde::de::Error::custom)
    }
}
