//! What a run asks of the engine, in three named parts read by both drivers: when to send
//! ([`Pace`]), what to send ([`Requests`]) and how to connect ([`ConnSpec`]).

use super::request::RequestTemplate;
use crate::plan::{Flow, Load, Login, Stage, StageBounds, Stop};
use crate::schedule::{Mix, Pacer};
use rustls::pki_types::ServerName;
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Everything a run's workers share, read-only but for the closed model's counter.
pub struct RunSpec {
    /// When requests are due.
    pub pace: Pace,
    /// Which requests go out.
    pub requests: Requests,
    /// How connections are made and used.
    pub conn: ConnSpec,
}

/// When requests are due.
pub struct Pace {
    /// The run's time zero: due times and interval boundaries count from here.
    pub start: Instant,
    /// Open (a rate) or closed (users) model.
    pub load: Load,
    /// When sending stops.
    pub stop: Stop,
    /// Engine threads. Thread `i` sends requests `i, i + threads, …` of the open model, and
    /// its share of the closed model's users.
    pub threads: usize,
    /// Due times of the open model; `None` in the closed model.
    pub pacer: Option<Pacer>,
    /// Requests falling due within this window of a wake-up leave with it, early.
    pub coalesce: Duration,
    /// The stages of a staged load (users, in the closed model).
    pub stages: Vec<Stage>,
    /// Where the stages end, to place each request in the stage it was sent for.
    pub stage_bounds: StageBounds,
    /// Requests handed out so far in the closed model (run-wide): the stop for `--requests`,
    /// and each request's turn in the mix.
    pub issued: AtomicU64,
}

/// Which requests go out, to which instance.
pub struct Requests {
    /// The run's requests for each instance: instance `i`'s start at `i * per_instance`, in
    /// plan order (the host header differs between instances). See [`Requests::template`].
    pub templates: Vec<RequestTemplate>,
    /// Instances of the service requests rotate over.
    pub instances: usize,
    /// The mix that picks among the requests.
    pub mix: Mix,
    /// The run's flows; when there are any, each arrival (or user turn) is an iteration.
    pub flows: Vec<Flow>,
    /// Picks the flow of each iteration, when there are flows.
    pub flow_mix: Option<Mix>,
    /// Captured values an iteration (or a login) carries.
    pub variables: usize,
    /// The login each connection runs first, if any.
    pub login: Option<Login>,
}

impl Requests {
    /// The template of `request` for `instance`.
    pub fn template(&self, instance: usize, request: u16) -> &RequestTemplate {
        &self.templates[instance * (self.templates.len() / self.instances) + usize::from(request)]
    }

    /// The instance the `turn`-th send of a request (or iteration of a flow) goes to: each
    /// name rotates over the instances on its own, so a mix never pins a name to one.
    pub fn instance_for(&self, turn: u64) -> usize {
        (turn % self.instances as u64) as usize
    }
}

impl RunSpec {
    /// The stage the run's `n`-th request, due at `intended`, was sent for.
    #[inline]
    pub fn stage_of(&self, intended: Instant, n: u64) -> Option<u16> {
        self.pace
            .stage_bounds
            .stage_of(intended.saturating_duration_since(self.pace.start), n)
    }
}

/// Where one instance of the service is, and how to speak TLS to it.
#[derive(Clone)]
pub struct Endpoint {
    /// Its address.
    pub addr: SocketAddr,
    /// The client configuration and server name, for https.
    pub tls: Option<(Arc<rustls::ClientConfig>, ServerName<'static>)>,
}

/// How connections are made and used.
pub struct ConnSpec {
    /// One per instance of the service, the plan's target first.
    pub endpoints: Vec<Endpoint>,
    /// Reuse connections; without, each request opens (and shakes hands on) its own.
    pub keepalive: bool,
    /// Most connections open at once, run-wide.
    pub max_connections: u32,
    /// Most concurrent streams per HTTP/2 connection.
    pub max_streams: u32,
    /// Deadline for one whole request.
    pub timeout: Duration,
    /// Deadline for opening a connection (TCP and TLS).
    pub connect_timeout: Duration,
    /// Largest response head accepted.
    pub max_header_bytes: usize,
}

/// Worker `index`'s share of `total` spread over `threads` workers, the remainder going to
/// the first ones.
pub fn share(total: usize, index: usize, threads: usize) -> usize {
    total / threads + usize::from(index < total % threads)
}
