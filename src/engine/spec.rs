//! What a run asks of the engine, in three named parts read by both drivers: when to send
//! ([`Pace`]), what to send ([`Requests`]) and how to connect ([`ConnSpec`]).

use super::request::RequestTemplate;
use crate::plan::{Flow, Load, Login, Stage, StageBounds, Stop};
use crate::schedule::{Mix, Schedule};
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
    /// Where each request's record goes, when asked (`--raw`).
    pub raw: Option<crate::record::RawSink>,
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
    pub pacer: Option<Schedule>,
    /// The gaps between a Poisson run's arrivals as they left; `None` for even arrivals and
    /// in the closed model.
    pub meter: Option<Arc<super::sends::SendMeter>>,
    /// Requests falling due within this window of a wake-up leave with it, early.
    pub coalesce: Duration,
    /// The stages of a staged load (users, in the closed model).
    pub stages: Vec<Stage>,
    /// Where the stages end, to place each request in the stage it was sent for.
    pub stage_bounds: StageBounds,
    /// Requests handed out so far in the closed model (run-wide): the stop for `--requests`,
    /// and each request's turn in the mix.
    pub issued: AtomicU64,
    /// The closed model's cap on starts per second (`--max-rate`), when asked.
    pub cap: Option<super::cap::StartCap>,
    /// The whole test, when this run is one shard of it: the closed model's users are then
    /// the shard's share of the whole test's users at each instant, so that the shards'
    /// users always add up to the whole (dividing a ramp's ends would not).
    pub whole: Option<crate::plan::shard::Whole>,
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
    /// The part of a sharded test this run is: its logins draw the whole test's rows.
    pub shard: Option<crate::plan::shard::Shard>,
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

    /// The data row number of the run's `n`-th login: for a shard, the whole test's
    /// `n·N + I`-th, so shards never log in with the same account.
    pub fn login_turn(&self, n: u64) -> u64 {
        self.shard.map_or(n, |s| s.whole_index(n))
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
    /// How the connections are held.
    pub shape: Shape,
}

/// How a run holds its connections: what both drivers size their pools by, and what the
/// check against the open-files limit counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Engine threads.
    pub threads: usize,
    /// Instances of the service.
    pub instances: usize,
    /// The closed model's most users at once, run-wide; `None` for the open model.
    pub users: Option<usize>,
    /// Streams per connection over HTTP/2; `None` over HTTP/1.1.
    pub streams: Option<usize>,
    /// Connections are kept between requests.
    pub keepalive: bool,
}

impl Shape {
    /// The shape of `plan`'s connections over the HTTP version the preflight found.
    pub fn of(plan: &crate::plan::AttackPlan, h2: bool) -> Shape {
        let users = match plan.load {
            Load::Open { .. } => None,
            // A staged load's users peak where a stage starts or ends (as the user loops
            // count them).
            Load::Closed { concurrency } if plan.stages.is_empty() => Some(concurrency as usize),
            Load::Closed { .. } => Some(
                plan.stages
                    .iter()
                    .map(|s| s.from.max(s.to))
                    .fold(0.0, f64::max)
                    .round() as usize,
            ),
        };
        // A closed model has no use for more threads than users.
        let threads = match plan.load {
            Load::Closed { concurrency } => plan.threads.min(concurrency as usize),
            Load::Open { .. } => plan.threads,
        };
        Shape {
            threads: threads.max(1),
            instances: plan.targets().count().max(1),
            users,
            streams: h2.then_some(plan.connection.max_streams.max(1) as usize),
            keepalive: plan.connection.keepalive,
        }
    }

    /// Worker `index`'s most users at once (0 in the open model).
    pub fn users_of(&self, index: usize) -> usize {
        self.users.map_or(0, |u| share(u, index, self.threads))
    }

    /// The connections worker `index` keeps to each instance under a run-wide cap of `cap`:
    /// the open model's share of the cap split over the instances; in the closed model what
    /// its users need (a connection each over HTTP/1.1, a stream each over HTTP/2), within
    /// its share of the cap.
    pub fn per_instance(&self, cap: u32, index: usize) -> usize {
        let mine = share(cap as usize, index, self.threads);
        match self.users {
            None => mine.div_ceil(self.instances).max(1),
            Some(_) => {
                let users = self.users_of(index);
                let wanted = match self.streams {
                    Some(streams) => users.div_ceil(streams),
                    None => users,
                };
                mine.min(wanted).max(1)
            }
        }
    }

    /// True when a connection is a user's own: the closed model over HTTP/1.1 (one to each
    /// instance it sends to), or over HTTP/2 without keep-alive (one per user, for its
    /// stream); then users beyond what the descriptors hold cannot be made to wait.
    pub fn per_user(&self) -> bool {
        self.users.is_some() && (self.streams.is_none() || !self.keepalive)
    }

    /// The most connections the run holds at once under a cap of `cap`.
    pub fn most(&self, cap: u32) -> u64 {
        (0..self.threads)
            .map(|t| match (self.streams, self.keepalive) {
                // Over HTTP/2 without keep-alive each stream lane opens a connection of its
                // own: the closed model's users, or the open model's lanes.
                (Some(_), false) => match self.users {
                    Some(_) => self.users_of(t),
                    None => self.per_instance(cap, t),
                },
                _ => self.per_instance(cap, t) * self.instances,
            } as u64)
            .sum()
    }
}

/// Worker `index`'s share of `total` spread over `threads` workers, the remainder going to
/// the first ones.
pub fn share(total: usize, index: usize, threads: usize) -> usize {
    total / threads + usize::from(index < total % threads)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(users: Option<usize>, streams: Option<usize>, keepalive: bool) -> Shape {
        Shape {
            threads: 2,
            instances: 3,
            users,
            streams,
            keepalive,
        }
    }

    #[test]
    fn connections_are_counted_as_the_drivers_hold_them() {
        // The open model: the cap, split over threads and instances (rounded up per thread).
        let open = shape(None, None, true);
        assert_eq!((open.per_instance(100, 0), open.most(100)), (17, 102));
        // Users over HTTP/1.1: one each to every instance, within the cap's share.
        let users = shape(Some(7), None, true);
        assert_eq!((users.users_of(0), users.users_of(1)), (4, 3));
        assert_eq!(users.most(10_000), 7 * 3);
        assert_eq!(users.most(4), 2 * 2 * 3);
        assert!(users.per_user());
        // Users over HTTP/2 share connections, a stream each.
        let streams = shape(Some(250), Some(100), true);
        assert_eq!(streams.most(10_000), 2 * 2 * 3);
        assert!(!streams.per_user());
        // Over HTTP/2 without keep-alive each stream lane has a connection of its own.
        assert_eq!(shape(Some(250), Some(100), false).most(10_000), 250);
        assert!(shape(Some(250), Some(100), false).per_user());
        assert_eq!(shape(None, Some(100), false).most(100), 34);
        // Grows with the cap, as the search for a cap that fits assumes.
        for s in [open, users, streams] {
            assert!((1..300).all(|c| s.most(c) <= s.most(c + 1)));
        }
    }
}
