//! Turns a plan into load: the only owner of threads, sockets and cancellation.
//!
//! `run` resolves the target, checks it can be reached (a preflight connection, so a wrong
//! port or certificate is one clear error rather than a report full of failures), then starts
//! one worker thread per core, each with its own single-threaded event loop, and merges their
//! per-second records as they arrive.

mod capture;
pub(crate) mod classify;
pub(crate) mod connect;
mod direct;
mod h1;
mod lane;
mod shutdown;
pub mod tls;
mod transport;
mod worker;

pub use shutdown::{shutdown_pair, Shutdown, ShutdownHandle};

use crate::plan::{AttackPlan, HttpVersion, Load, Stop};
use crate::record::{Aggregator, IntervalRecord};
use crate::sample::ErrorKind;
use connect::Connector;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};
use transport::RequestTemplate;

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The host name does not resolve.
    #[error("cannot resolve {host}: {reason}")]
    Resolve {
        /// The host.
        host: String,
        /// The resolver's answer.
        reason: String,
    },
    /// The preflight connection failed.
    #[error("cannot connect to {url} ({addr}): {kind}")]
    Unreachable {
        /// The target URL.
        url: String,
        /// The address tried.
        addr: SocketAddr,
        /// What went wrong.
        kind: ErrorKind,
    },
    /// The TLS settings cannot be used.
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    /// The request cannot be built.
    #[error("cannot build the request: {0}")]
    Request(String),
    /// The operating system refused a thread or event loop.
    #[error("cannot start the engine: {0}")]
    Io(#[from] std::io::Error),
    /// A worker failed mid-run: a bug in headroom. The intervals already stored are kept.
    #[error("an engine worker failed mid-run ({0}); this is a bug in headroom, please report it")]
    Worker(String),
}

/// What the engine measured about the run as a whole.
#[derive(Debug, Clone, Copy)]
pub struct EngineReport {
    /// From the start to the last request sent.
    pub attack: Duration,
    /// From the last request sent to the last response.
    pub wait: Duration,
    /// True when the run was stopped early.
    pub interrupted: bool,
}

/// Everything a worker needs, shared read-only across threads.
pub(crate) struct RunShared {
    pub start: Instant,
    pub load: Load,
    pub stop: Stop,
    pub threads: usize,
    /// One per instance of the service, `target` first.
    pub connectors: Vec<Connector>,
    /// The run's requests for each instance: instance `i`'s come at `i * requests`, in plan
    /// order (the host header differs between instances). See [`RunShared::template`].
    pub requests: Vec<RequestTemplate>,
    /// The mix that picks among the requests.
    pub mix: crate::schedule::Mix,
    /// The run's flows; when there are any, each arrival (or user turn) is a flow iteration.
    pub flows: Vec<crate::plan::Flow>,
    /// Picks the flow of each iteration, when there are flows.
    pub flow_mix: Option<crate::schedule::Mix>,
    /// Captured values a flow iteration carries.
    pub variables: usize,
    /// The login each connection runs first, if any.
    pub login: Option<crate::plan::Login>,
    /// Flows, a login or body checks: what only direct workers can run.
    pub direct_only: bool,
    pub http: HttpVersion,
    pub h2: bool,
    pub keepalive: bool,
    pub max_connections: u32,
    pub h2_connections: u32,
    pub max_streams: u32,
    pub timeout: Duration,
    pub max_header_bytes: usize,
    pub coalesce: Duration,
    /// HTTP/1.1 runs on direct workers unless the plan asks for event loops.
    pub direct: bool,
    /// When requests are due, in the open model.
    pub pacer: Option<crate::schedule::Pacer>,
    /// The stages of a staged load (users, for the closed model).
    pub stages: Vec<crate::plan::Stage>,
    /// Where the stages end, to place each request in its stage.
    pub stage_bounds: crate::plan::StageBounds,
    /// Requests handed out so far in the closed model: the stop for `--requests`, and each
    /// request's turn in the mix.
    pub issued: AtomicU64,
}

impl RunShared {
    /// Number of instances requests rotate over.
    pub fn instances(&self) -> usize {
        self.connectors.len()
    }

    /// The template of `request` for `instance`.
    pub fn template(&self, instance: usize, request: u16) -> &RequestTemplate {
        &self.requests[instance * (self.requests.len() / self.instances()) + usize::from(request)]
    }

    /// Which instance the run's `n`-th request goes to: each request name rotates over the
    /// instances on its own, so a mix never pins a name to one instance.
    pub fn instance_of(&self, n: u64) -> usize {
        self.instance_for(self.mix.turn(n))
    }

    /// The stage the run's `n`-th request, due at `intended`, was sent for.
    #[inline]
    pub fn stage_of(&self, intended: std::time::Instant, n: u64) -> Option<u16> {
        self.stage_bounds
            .stage_of(intended.saturating_duration_since(self.start), n)
    }

    /// The instance the `turn`-th send of a request (or iteration of a flow) goes to.
    pub fn instance_for(&self, turn: u64) -> usize {
        (turn % self.instances() as u64) as usize
    }
}

fn resolve(target: &crate::plan::Target) -> Result<SocketAddr, EngineError> {
    let host = target.host.as_str();
    let mut addrs = (host, target.port)
        .to_socket_addrs()
        .map_err(|e| EngineError::Resolve {
            host: host.into(),
            reason: e.to_string(),
        })?;
    addrs.next().ok_or_else(|| EngineError::Resolve {
        host: host.into(),
        reason: "no addresses".into(),
    })
}

/// How long the preflight listens after a TLS handshake for the server to reject it.
const TLS_REJECTION_WAIT: Duration = Duration::from_millis(200);

/// Opens one connection (TCP and TLS) and reports whether it speaks HTTP/2.
fn preflight(
    connector: &Connector,
    plan: &AttackPlan,
    url: &str,
    addr: SocketAddr,
) -> Result<bool, EngineError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let result = rt.block_on(async {
        let (mut stream, _) = connector.connect().await?;
        let h2 = transport::speaks_h2(plan.connection.http, &stream)?;
        if matches!(stream, connect::Stream::Tls(_)) {
            // With TLS 1.3 a server refuses a client certificate (or its absence) only after
            // the client's side of the handshake is done: listen briefly for that alert, so it
            // is one clear error here rather than resets and closes in every request.
            use tokio::io::AsyncReadExt;
            let mut byte = [0u8; 1];
            match tokio::time::timeout(TLS_REJECTION_WAIT, stream.read(&mut byte)).await {
                Ok(Err(e)) => return Err(classify::io_error(&e)),
                Ok(Ok(0)) if !h2 => return Err(ErrorKind::Closed),
                _ => {}
            }
        }
        Ok::<bool, ErrorKind>(h2)
    });
    result.map_err(|kind| EngineError::Unreachable {
        url: url.to_string(),
        addr,
        kind,
    })
}

/// A plan checked against the world: resolved, TLS configured, the target reached once.
pub struct Prepared {
    plan: AttackPlan,
    connectors: Vec<Connector>,
    requests: Vec<RequestTemplate>,
    h2: bool,
}

impl Prepared {
    /// The protocol the preflight connection negotiated, as HTTP names it.
    pub fn protocol(&self) -> &'static str {
        if self.h2 {
            "HTTP/2"
        } else {
            "HTTP/1.1"
        }
    }
}

/// Resolves the target, builds the TLS configuration and opens one connection, so that a
/// wrong host, port or certificate is one clear error before anything is recorded.
pub fn prepare(plan: &AttackPlan) -> Result<Prepared, EngineError> {
    let config = match plan.target.scheme {
        crate::plan::Scheme::Https => Some(tls::client_config(&plan.tls, plan.connection.http)?),
        crate::plan::Scheme::Http => None,
    };
    let mut connectors = Vec::new();
    let mut h2 = None;
    let mut requests = Vec::new();
    for target in plan.targets() {
        let addr = resolve(target)?;
        let tls = match &config {
            Some(config) => Some((config.clone(), tls::server_name(&plan.tls, &target.host)?)),
            None => None,
        };
        let connector = Connector::new(addr, target.scheme, tls, plan.connection.connect_timeout);
        let speaks_h2 = preflight(&connector, plan, &target.url, addr)?;
        if h2.is_some_and(|h2| h2 != speaks_h2) {
            return Err(EngineError::Request(format!(
                "{} negotiated another HTTP version than {}; force one with http1 or http2",
                target.url, plan.target.url
            )));
        }
        h2 = Some(speaks_h2);
        connectors.push(connector);
        for r in &plan.requests {
            requests.push(
                RequestTemplate::new(target, r, plan.connection.keepalive)
                    .map_err(EngineError::Request)?,
            );
        }
    }
    Ok(Prepared {
        plan: plan.clone(),
        connectors,
        requests,
        h2: h2.unwrap_or(false),
    })
}

/// The open model's due times: the constant rate, or the stages as a rate profile.
fn pacer(plan: &AttackPlan) -> Option<crate::schedule::Pacer> {
    use crate::schedule::{ConstantPacer, Pacer, RateProfile};
    let Load::Open { rate } = plan.load else {
        return None;
    };
    Some(if plan.stages.is_empty() {
        Pacer::Constant(ConstantPacer::new(rate))
    } else {
        Pacer::Staged(RateProfile::of_stages(&plan.stages))
    })
}

/// Runs a prepared plan until its stop condition or `shutdown`; `on_interval` receives each
/// whole interval, in order, as soon as every worker has reported it.
pub fn run(
    prepared: Prepared,
    shutdown: Shutdown,
    mut on_interval: impl FnMut(IntervalRecord),
) -> Result<EngineReport, EngineError> {
    let Prepared {
        plan,
        connectors,
        requests,
        h2,
    } = prepared;
    let mix = crate::schedule::Mix::new(&plan.weights())
        .map_err(|e| EngineError::Request(e.to_string()))?;
    let reads_bodies = plan.requests.iter().any(|r| r.expect.reads_body());
    if (plan.login.is_some() || reads_bodies) && (h2 || plan.connection.event_loop) {
        return Err(EngineError::Request(
            "logins and body checks run on HTTP/1.1 direct workers for now: drop --event-loop, or force http1".into(),
        ));
    }
    let flow_mix = if plan.flows.is_empty() {
        None
    } else {
        if h2 || plan.connection.event_loop {
            return Err(EngineError::Request(
                "flows run on HTTP/1.1 direct workers for now: drop --event-loop, or force http1"
                    .into(),
            ));
        }
        let weights: Vec<u32> = plan.flows.iter().map(|f| f.weight).collect();
        Some(crate::schedule::Mix::new(&weights).map_err(|e| EngineError::Request(e.to_string()))?)
    };
    let plan = &plan;
    let threads = match plan.load {
        Load::Closed { concurrency } => plan.threads.min(concurrency as usize).max(1),
        Load::Open { .. } => plan.threads.max(1),
    };
    // Leave the threads time to start so the first due time is not already late.
    let start = Instant::now() + Duration::from_millis(20);
    let shared = Arc::new(RunShared {
        start,
        load: plan.load,
        stop: plan.stop,
        threads,
        connectors,
        requests,
        mix,
        flows: plan.flows.clone(),
        flow_mix,
        variables: plan.variables.len(),
        login: plan.login.clone(),
        direct_only: !plan.flows.is_empty() || plan.login.is_some() || reads_bodies,
        http: plan.connection.http,
        h2,
        keepalive: plan.connection.keepalive,
        max_connections: plan.connection.max_connections,
        h2_connections: plan.connection.max_connections.min(threads as u32),
        max_streams: plan.connection.max_streams,
        timeout: plan.connection.timeout,
        max_header_bytes: plan.connection.max_header_bytes,
        coalesce: plan.connection.coalesce,
        direct: !h2 && !plan.connection.event_loop,
        pacer: pacer(plan),
        stages: plan.stages.clone(),
        stage_bounds: crate::plan::StageBounds::of(&plan.stages),
        issued: AtomicU64::new(0),
    });

    let (tx, rx) = std::sync::mpsc::channel();
    let mut handles = Vec::with_capacity(threads);
    for index in 0..threads {
        let shared = shared.clone();
        let tx = tx.clone();
        let shutdown = shutdown.clone();
        handles.push(
            std::thread::Builder::new()
                .name(format!("headroom-worker-{index}"))
                .spawn(move || worker::run(index, shared, shutdown, tx))?,
        );
    }
    drop(tx);

    let mut aggregator = Aggregator::new(threads);
    while let Ok(part) = rx.recv() {
        for interval in aggregator.accept(part) {
            on_interval(interval);
        }
        if aggregator.is_done() {
            break;
        }
    }
    for interval in aggregator.drain() {
        on_interval(interval);
    }

    let mut last_send: Option<Instant> = None;
    let mut last_done: Option<Instant> = None;
    let mut interrupted = false;
    for handle in handles {
        let report = handle
            .join()
            .map_err(|_| EngineError::Worker("a worker thread panicked".into()))??;
        last_send = last_send.max(report.last_send);
        last_done = last_done.max(report.last_done);
        interrupted |= report.interrupted;
    }
    let attack = last_send
        .map(|t| t.saturating_duration_since(start))
        .unwrap_or_default();
    let wait = match (last_send, last_done) {
        (Some(s), Some(d)) => d.saturating_duration_since(s),
        _ => Duration::ZERO,
    };
    Ok(EngineReport {
        attack,
        wait,
        interrupted,
    })
}
