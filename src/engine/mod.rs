//! Turns a plan into load: the only owner of threads, sockets and cancellation.
//!
//! [`prepare`] resolves the target and opens one connection (the preflight), which says
//! which HTTP version the server speaks; [`run`] then starts one worker thread per core on
//! the driver for that version, and merges their per-second records as they arrive.
//!
//! Two drivers, one per protocol, over one shared core:
//! - `direct/`: HTTP/1.1 on epoll, without a runtime (the hot path);
//! - `http2/`: HTTP/2 on a tokio event loop per thread, with the `h2` crate.
//!
//! Everything both need is written once beside them: what a run asks (`spec`), when
//! requests are due (`turns`), which request and what it carries (`job`, `request`), what
//! an answer means (`reply`, `settle`, `capture`, `classify`), the per-second record
//! (`tally`), opening connections by hand (`dial`, also the preflight's) and TLS (`tls`).
//! Neither driver imports from the other.

mod backoff;
mod cap;
mod capture;
pub(crate) mod classify;
mod dial;
mod direct;
mod error;
pub(crate) mod http1;
mod http2;
mod job;
mod preflight;
pub mod preview;
pub(crate) mod reply;
mod request;
mod retries;
mod sends;
mod settle;
mod spec;
mod tally;
pub mod tls;
mod turns;

pub use error::EngineError;
pub use tokio_util::sync::CancellationToken;

use crate::plan::{AttackPlan, HttpVersion, Load, Scheme};
use crate::record::{Aggregator, IntervalRecord, RawSink};
use crate::sample::Notice;
use crate::schedule::{ConstantPacer, Mix, Pacer, RateProfile, Schedule};
use request::RequestTemplate;
use spec::{ConnSpec, Endpoint, Pace, Requests, RunSpec};
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Requests waiting for a free connection (or lane) beyond this are failed as
/// `backlog_full`, so a frozen server cannot make the generator's memory grow without bound.
pub(crate) const BACKLOG_LIMIT: usize = 1_000_000;
/// After the run is stopped, how long requests already sent may take to finish.
const INTERRUPT_GRACE: Duration = Duration::from_secs(1);

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

/// A plan checked against the world: resolved, TLS configured, the target reached once.
pub struct Prepared {
    plan: AttackPlan,
    endpoints: Vec<Endpoint>,
    templates: Vec<RequestTemplate>,
    h2: bool,
    notices: Vec<Notice>,
    raw: Option<RawSink>,
    whole: Option<crate::plan::shard::Whole>,
    start: Option<Instant>,
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

    /// What the preflight noticed.
    pub fn notices(&self) -> &[Notice] {
        &self.notices
    }

    /// The plan as it will run (its connection cap fitted to the open-files limit).
    pub fn plan(&self) -> &AttackPlan {
        &self.plan
    }

    /// Hands each request's record to `sink` as well (`--raw`).
    pub fn record_raw(&mut self, sink: RawSink) {
        self.raw = Some(sink);
    }

    /// Runs the plan as one shard of `whole` (the plan being the shard's part of it, from
    /// `Shard::split`): the open model walks the whole schedule's due times at the shard's
    /// indices, the closed model takes the shard's share of the whole test's users.
    pub fn shard_of(&mut self, whole: crate::plan::shard::Whole) {
        self.whole = Some(whole);
    }

    /// Begins the schedule at `start` (a common start of several generators) rather than
    /// as soon as the threads are up; a `start` already past begins at once.
    pub fn start_at(&mut self, start: Instant) {
        self.start = Some(start);
    }
}

/// Descriptors a run holds besides its connections: the standard streams, the run
/// directory's files, the monitor's readings, each engine thread's event loop and timers,
/// and the data files read from disk as the run goes.
fn reserved_descriptors(plan: &AttackPlan) -> u64 {
    let mut files: Vec<&crate::plan::Dataset> = Vec::new();
    for r in &plan.requests {
        if let Some(d) = r.data.as_ref().filter(|d| d.dataset.holds_file()) {
            if !files.iter().any(|f| std::ptr::eq(*f, &*d.dataset)) {
                files.push(&d.dataset);
            }
        }
    }
    32 + 4 * plan.threads as u64 + files.len() as u64
}

/// Checks that the connections the run may hold fit in `open_files` descriptors. A run
/// whose users each hold a connection of their own, or whose cap the user set, is refused
/// past them; the default cap is lowered to fit, with a notice (a pool only grows to what
/// the load needs, and requests beyond it wait, which the verdict can then name).
fn fit_connections(
    plan: &mut AttackPlan,
    h2: bool,
    open_files: Option<u64>,
    notices: &mut Vec<Notice>,
) -> Result<(), EngineError> {
    const CAP: &str = "(--max-connections, or max_connections: in a scenario)";
    let Some(open_files) = open_files else {
        return Ok(());
    };
    let reserved = reserved_descriptors(plan);
    let room = open_files.saturating_sub(reserved);
    let shape = spec::Shape::of(plan, h2);
    let cap = plan.connection.max_connections;
    let needed = shape.most(cap);
    if needed <= room {
        return Ok(());
    }
    // A user's own connections go to each instance; a pool's cap is the run's, split.
    let each = match shape.instances {
        n if n > 1 && shape.per_user() => format!(" to each of {n} instances"),
        _ => String::new(),
    };
    let refuse = |wanted: String, lower: String| EngineError::Descriptors {
        wanted,
        needed,
        open_files,
        reserved,
        advice: format!("{lower}raise the hard limit (ulimit -Hn, or LimitNOFILE= for a service)"),
    };
    let users = shape.users.unwrap_or(0);
    if shape.per_user() && (shape.streams.is_some() || users <= cap as usize) {
        let (how, lower) = match shape.streams {
            None => (
                format!("a connection each{each}"),
                format!("lower the users, or set a connection cap {CAP} for users beyond it to wait for, or "),
            ),
            Some(_) => (
                "a connection each without keep-alive".to_string(),
                "lower the users, or keep connections alive (users then share them as streams), or ".into(),
            ),
        };
        return Err(refuse(format!("{users} users, {how}"), lower));
    }
    let default = crate::plan::ConnectionOptions::default().max_connections;
    if cap != default {
        return Err(refuse(
            format!("a connection cap of {cap}{each}"),
            format!("lower the cap {CAP}, or "),
        ));
    }
    // The largest cap that fits: `most` grows with the cap.
    let (mut fits, mut over) = (0u32, cap);
    while over - fits > 1 {
        let mid = fits + (over - fits) / 2;
        if shape.most(mid) <= room {
            fits = mid;
        } else {
            over = mid;
        }
    }
    if fits == 0 {
        return Err(refuse(
            format!("a connection cap of {cap}{each}"),
            String::new(),
        ));
    }
    notices.push(Notice::ConnectionsLowered {
        from: cap,
        to: fits,
        open_files,
    });
    plan.connection.max_connections = fits;
    Ok(())
}

/// Resolves the target, builds the TLS configuration and opens one connection to each
/// instance, so that a wrong host, port, certificate or HTTP version is one clear error
/// before anything is recorded; the connections the run may open must fit in `open_files`
/// descriptors (the limit in force, when known).
pub fn prepare(plan: &AttackPlan, open_files: Option<u64>) -> Result<Prepared, EngineError> {
    let config = match plan.target.scheme {
        Scheme::Https => Some(tls::client_config(&plan.tls, plan.connection.http, None)?),
        Scheme::Http => None,
    };
    let mut endpoints = Vec::new();
    let mut h2 = None;
    let mut versions = Vec::new();
    let mut notices = Vec::new();
    for target in plan.targets() {
        let addr = resolve(target)?;
        let tls = match &config {
            Some(config) => Some((config.clone(), tls::server_name(&plan.tls, &target.host)?)),
            None => None,
        };
        let endpoint = Endpoint { addr, tls };
        let found = preflight::check(
            &endpoint,
            plan.connection.http,
            plan.connection.connect_timeout,
        )
        .map_err(|r| EngineError::Unreachable {
            url: target.url.clone(),
            addr,
            kind: r.kind,
            detail: r.detail,
        })?;
        if h2.is_some_and(|h2| h2 != found.h2) {
            return Err(EngineError::Request(format!(
                "{} negotiated another HTTP version than {}; force one with http1 or http2",
                target.url, plan.target.url
            )));
        }
        h2 = Some(found.h2);
        versions.push(found.tls_version);
        if found.client_cert_asked && !notices.contains(&Notice::ClientCertificateAsked) {
            notices.push(Notice::ClientCertificateAsked);
        }
        endpoints.push(endpoint);
    }
    let h2 = h2.unwrap_or(false);
    // The run's connections offer what the preflight found, so none can land on the other
    // driver's HTTP version; and the TLS version too, when every instance chose the same:
    // offering TLS 1.3 to a server that speaks 1.2 costs a key share per connection for
    // nothing (x25519, most of a resumed handshake's CPU).
    if config.is_some() {
        let http = if h2 {
            HttpVersion::Http2
        } else {
            HttpVersion::Http1
        };
        let version = versions
            .first()
            .copied()
            .flatten()
            .filter(|v| versions.iter().all(|w| *w == Some(*v)));
        let config = tls::client_config(&plan.tls, http, version)?;
        for endpoint in &mut endpoints {
            if let Some((c, _)) = endpoint.tls.as_mut() {
                *c = config.clone();
            }
        }
    }
    let mut plan = plan.clone();
    if !plan.arrivals.is_even() {
        // Coalescing sends requests due soon along with an earlier one: it would even out
        // the very bursts Poisson arrivals are asked for.
        plan.connection.coalesce = Duration::ZERO;
    }
    fit_connections(&mut plan, h2, open_files, &mut notices)?;
    let mut templates = Vec::new();
    let login = plan.login.as_ref().map(|l| usize::from(l.request));
    for target in plan.targets() {
        for (i, r) in plan.requests.iter().enumerate() {
            // A login never asks to close its connection: the request that waited for it
            // goes on the same one, even without keep-alive.
            let keepalive = plan.connection.keepalive || login == Some(i);
            templates
                .push(RequestTemplate::new(target, r, keepalive).map_err(EngineError::Request)?);
        }
    }
    Ok(Prepared {
        plan,
        endpoints,
        templates,
        h2,
        notices,
        raw: None,
        whole: None,
        start: None,
    })
}

/// The open model's due times: the constant rate, or the stages as a rate profile; for a
/// shard, its indices of the whole test's schedule; arrivals spaced as the plan asks.
fn schedule(plan: &AttackPlan, whole: Option<&crate::plan::shard::Whole>) -> Option<Schedule> {
    Some(Schedule {
        pacer: pacer(plan, whole)?,
        spacing: plan.arrivals.spacing(),
    })
}

/// The open model's count→time map: the constant rate, or the stages as a rate profile; for
/// a shard, its indices of the whole test's schedule.
fn pacer(plan: &AttackPlan, whole: Option<&crate::plan::shard::Whole>) -> Option<Pacer> {
    let (load, stages) = match whole {
        Some(w) => (w.load, &w.stages),
        None => (plan.load, &plan.stages),
    };
    let Load::Open { rate } = load else {
        return None;
    };
    let pacer = if stages.is_empty() {
        Pacer::Constant(ConstantPacer::new(rate))
    } else {
        Pacer::Staged(RateProfile::of_stages(stages))
    };
    Some(match whole {
        Some(w) => Pacer::Sharded {
            whole: Box::new(pacer),
            index: u64::from(w.shard.index),
            count: u64::from(w.shard.count),
        },
        None => pacer,
    })
}

/// The highest rate of an open-model load, req/s: the constant rate, or the stages' peak.
fn peak_rate(load: Load, stages: &[crate::plan::Stage]) -> f64 {
    match load {
        Load::Open { rate } if stages.is_empty() => rate.per_second(),
        _ => stages.iter().map(|s| s.from.max(s.to)).fold(0.0, f64::max),
    }
}

/// What the workers of a prepared plan share.
fn spec(prepared: Prepared) -> Result<RunSpec, EngineError> {
    let Prepared {
        plan,
        endpoints,
        templates,
        h2,
        raw,
        whole,
        start,
        ..
    } = prepared;
    let shape = spec::Shape::of(&plan, h2);
    // A shard's `m`-th request (an arrival, or a user's turn) is the whole run's
    // `m·N + I`-th, in both models: it picks what the whole mix picks there and draws the
    // row the whole test draws.
    let shard = whole.as_ref().map(|w| w.shard);
    let weights = |w: &[u32]| {
        crate::plan::Weights::new(w)
            .map(|w| Mix::new(&w))
            .map(|mix| match shard {
                Some(s) => mix.shard(u64::from(s.index), u64::from(s.count)),
                None => mix,
            })
            .map_err(|e| EngineError::Request(e.to_string()))
    };
    let flow_mix = if plan.flows.is_empty() {
        None
    } else {
        let w: Vec<u32> = plan.flows.iter().map(|f| f.weight).collect();
        Some(weights(&w)?)
    };
    // Leave the threads time to start so the first due time is not already late.
    let start = start.unwrap_or_else(|| Instant::now() + Duration::from_millis(20));
    let schedule = schedule(&plan, whole.as_ref());
    // Only Poisson sends are checked: even ones are known not to be Poisson.
    let meter = schedule
        .as_ref()
        .filter(|_| !plan.arrivals.is_even())
        .map(|s| {
            let (load, stages, shards) = match &whole {
                Some(w) => (w.load, &w.stages, w.shard.count),
                None => (plan.load, &plan.stages, 1),
            };
            let peak = peak_rate(load, stages);
            Arc::new(sends::SendMeter::new(&s.pacer, start, peak, shards))
        });
    Ok(RunSpec {
        pace: Pace {
            start,
            load: plan.load,
            stop: plan.stop,
            threads: shape.threads,
            pacer: schedule,
            meter,
            coalesce: plan.connection.coalesce,
            stage_bounds: crate::plan::StageBounds::of(&plan.stages),
            stages: plan.stages.clone(),
            issued: AtomicU64::new(0),
            cap: plan.max_rate.map(cap::StartCap::new),
            whole,
        },
        requests: Requests {
            templates,
            instances: endpoints.len(),
            mix: weights(&plan.weights())?,
            flows: plan.flows.clone(),
            flow_mix,
            variables: plan.variables.len(),
            login: plan.login.clone(),
            shard,
        },
        conn: ConnSpec {
            endpoints,
            keepalive: plan.connection.keepalive,
            max_connections: plan.connection.max_connections,
            max_streams: plan.connection.max_streams.max(1),
            timeout: plan.connection.timeout,
            connect_timeout: plan.connection.connect_timeout,
            max_header_bytes: plan.connection.max_header_bytes,
            shape,
        },
        raw,
    })
}

/// Runs a prepared plan until its stop condition or `cancel`; `on_interval` receives each
/// whole interval, in order, as soon as every worker has reported it.
///
/// The driver is picked here, once: HTTP/2 (as the preflight found) runs on `http2`, every
/// HTTP/1.1 run on `direct`.
pub fn run(
    prepared: Prepared,
    cancel: CancellationToken,
    mut on_interval: impl FnMut(IntervalRecord),
) -> Result<EngineReport, EngineError> {
    let h2 = prepared.h2;
    let spec = Arc::new(spec(prepared)?);
    let threads = spec.conn.shape.threads;
    let start = spec.pace.start;

    let (tx, rx) = std::sync::mpsc::channel();
    let mut handles = Vec::with_capacity(threads);
    for index in 0..threads {
        let spec = spec.clone();
        let tx = tx.clone();
        let cancel = cancel.clone();
        handles.push(
            std::thread::Builder::new()
                .name(format!("headroom-worker-{index}"))
                .spawn(move || {
                    if h2 {
                        http2::run(spec, index, cancel, tx)
                    } else {
                        direct::run(&spec, index, &cancel, tx)
                    }
                })?,
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
