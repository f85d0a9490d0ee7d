//! A direct worker's connections, opened by hand and read when the kernel has data, and
//! the requests waiting for them. Shared by the open and the closed model's loops, which
//! differ only in when they sleep and where requests come from.

mod delayed;
mod outcome;

use super::clock::Clock;
use super::conn::{Conn, Harvest};
use super::poller::{Listen, Poller};
use crate::engine::backoff::Backoff;
use crate::engine::dial::{Dial, Step, Wait};
use crate::engine::job::{Failure, Job, LoggedIn, Unprocessed};
use crate::engine::request::Scratch;
use crate::engine::settle::Sent;
use crate::engine::spec::{Endpoint, RunSpec};
use crate::engine::tally::Tally;
use crate::sample::{ErrorKind, Opened};
use delayed::Delayed;
use std::collections::VecDeque;
use std::time::Instant;

/// The connections to one instance of the service, and the requests waiting for them.
struct Pool {
    endpoint: Endpoint,
    idle: Vec<usize>,
    waiting: VecDeque<Job>,
    dialing: usize,
    open: usize,
    backoff: Backoff,
}

/// A request on the wire.
struct InFlight {
    job: Job,
    sent: Sent,
}

struct Open {
    conn: Box<Conn>,
    inflight: Option<InFlight>,
    /// The connection's login, once it has run.
    login: Option<LoggedIn>,
    /// Timings of the connect, given to the first request the connection carries.
    fresh: Option<Opened>,
}

enum Slot {
    Dialing(Box<Dial>, Wait),
    Open(Open),
}

/// The connections and waiting requests of one direct worker.
pub struct Table<'a> {
    spec: &'a RunSpec,
    worker: usize,
    /// What this worker recorded in the second in progress.
    pub tally: Tally,
    poller: Poller,
    tokens: Vec<u64>,
    slots: Vec<Option<Slot>>,
    /// The pool (instance) each slot's connection belongs to.
    owner: Vec<usize>,
    free_slots: Vec<usize>,
    pools: Vec<Pool>,
    /// Logins this worker has run, numbering their data rows.
    logins: u64,
    /// The open model's identity: one per worker, shared by all its connections, so a closed
    /// connection (keep-alive off, a server close, a retry) is not a new login.
    identity: Option<LoggedIn>,
    /// True while the identity's login is in flight: one at a time, no login storm.
    identity_pending: bool,
    /// Requests waiting for the identity's login to answer.
    held: Vec<Job>,
    /// The closed model's identities of closed connections: a user's next connection takes
    /// one instead of logging in again (keep-alive off, a server close, a retry).
    spare: Vec<LoggedIn>,
    delayed: Delayed,
    dialing: usize,
    open: usize,
    inflight: usize,
    /// Connections whose request did not fit the socket at once.
    writing: Vec<usize>,
    /// Most connections to one instance.
    max_connections: usize,
    /// Where templated requests are filled.
    scratch: Scratch,
    /// False in the closed model: a request is due when it is sent, not before.
    paced: bool,
    /// True once the run was stopped: only what is in flight is awaited.
    stopped: bool,
}

impl<'a> Table<'a> {
    /// An empty table for worker `worker`, which keeps at most `connections` to each
    /// instance.
    pub fn new(spec: &'a RunSpec, worker: usize, connections: usize) -> std::io::Result<Table<'a>> {
        let pools: Vec<Pool> = spec
            .conn
            .endpoints
            .iter()
            .map(|endpoint| Pool {
                endpoint: endpoint.clone(),
                idle: Vec::new(),
                waiting: VecDeque::new(),
                dialing: 0,
                open: 0,
                backoff: Backoff::default(),
            })
            .collect();
        let paced = matches!(spec.pace.load, crate::plan::Load::Open { .. });
        Ok(Table {
            spec,
            worker,
            tally: Tally::new(&spec.pace, spec.raw.as_ref()),
            poller: Poller::new()?,
            tokens: Vec::new(),
            slots: Vec::new(),
            owner: Vec::new(),
            free_slots: Vec::new(),
            // The open model's share is the run's, split over the instances; a closed-model
            // user keeps a connection to each instance it sends to, as a client with a pool
            // per host does (`Shape::per_instance`).
            max_connections: connections.max(1),
            pools,
            logins: 0,
            identity: None,
            identity_pending: false,
            held: Vec::new(),
            spare: Vec::new(),
            delayed: Delayed::default(),
            dialing: 0,
            open: 0,
            inflight: 0,
            writing: Vec::new(),
            scratch: Scratch::default(),
            paced,
            stopped: false,
        })
    }

    /// Queues the run's `n`-th request (or flow iteration), due at `intended`, or fails it
    /// when the backlog is full.
    pub fn enqueue(&mut self, intended: Instant, n: u64) {
        self.tally.scheduled();
        let job = Job::arrival(&self.spec.requests, intended, n);
        let pool = &mut self.pools[usize::from(job.instance)];
        if pool.waiting.len() >= crate::engine::BACKLOG_LIMIT {
            self.fail(job, None, ErrorKind::Backlog);
            return;
        }
        pool.waiting.push_back(job);
    }

    /// Drops the requests not yet sent (the run was stopped): from now on nothing new is
    /// sent, neither a flow's next step, nor a login's request, nor a retry.
    pub fn drop_waiting(&mut self) {
        for pool in &mut self.pools {
            pool.waiting.clear();
        }
        self.delayed.clear();
        self.stopped = true;
    }

    /// When something besides the network needs the loop: a flow step's think time ends,
    /// or a pause in opening connections ends while requests wait for one.
    pub fn next_event(&self) -> Option<Instant> {
        let now = Instant::now();
        let backoffs = self
            .pools
            .iter()
            .filter(|p| !p.waiting.is_empty())
            .filter_map(|p| p.backoff.pending(now));
        self.delayed.next().into_iter().chain(backoffs).min()
    }

    /// Closes idle connections beyond those `users` need, one to each instance (a stage
    /// asked for fewer users).
    pub fn trim_idle(&mut self, users: usize) {
        let keep = users * self.pools.len();
        while self.open + self.dialing > keep {
            let fullest = (0..self.pools.len()).max_by_key(|&p| self.pools[p].idle.len());
            let Some(index) = fullest.and_then(|p| self.pools[p].idle.pop()) else {
                return;
            };
            self.close(index);
        }
    }

    fn waiting(&self) -> usize {
        self.pools.iter().map(|p| p.waiting.len()).sum()
    }

    /// Requests waiting (or thinking) or in flight.
    pub fn outstanding(&self) -> usize {
        self.waiting() + self.inflight + self.delayed.len()
    }

    /// True while anything is waiting, in flight or being connected.
    pub fn busy(&self) -> bool {
        self.inflight > 0
            || self.dialing > 0
            || self.waiting() > 0
            || self.delayed.len() > 0
            || !self.held.is_empty()
    }

    /// True while replies are awaited.
    pub fn awaiting(&self) -> bool {
        self.inflight > 0
    }

    /// True while a request body is only partly written.
    pub fn writing(&self) -> bool {
        !self.writing.is_empty()
    }

    /// Sends waiting requests on idle connections, and opens connections (within the limit)
    /// for those no idle connection can take.
    pub fn dispatch(&mut self) {
        let now = Instant::now();
        while let Some(job) = self.delayed.pop_due(now) {
            self.pools[usize::from(job.instance)].waiting.push_back(job);
        }
        for p in 0..self.pools.len() {
            self.assign(p);
            if !self.pools[p].waiting.is_empty() {
                self.dial_more(p, now);
                // On loopback a connect usually completes at once: use it now, not next
                // wake-up.
                self.assign(p);
            }
        }
    }

    fn assign(&mut self, p: usize) {
        while !self.pools[p].waiting.is_empty() {
            let Some(index) = self.pools[p].idle.pop() else {
                return;
            };
            let job = self.pools[p].waiting.pop_front().expect("not empty");
            self.send_on(index, job);
        }
    }

    /// Sends `job` on the idle connection `index`, after the connection's login when it has
    /// none yet or it is stale: then the login goes first, carrying the job.
    fn send_on(&mut self, index: usize, mut job: Job) {
        let spec = self.spec;
        let p = self.owner[index];
        let Some(Slot::Open(open)) = self.slots[index].as_mut() else {
            debug_assert!(false, "an idle slot holds an open connection");
            self.pools[p].waiting.push_front(job);
            return;
        };
        if let Some(rule) = &spec.requests.login {
            // The open model logs in once per worker (its identity); the closed model once
            // per user: a connection takes the identity a closed one left, if any.
            if !self.paced && !job.login && open.login.is_none() {
                // The latest first; stale ones are dropped on the way.
                let now = Instant::now();
                while let Some(spare) = self.spare.pop() {
                    if job.after_login || !LoggedIn::stale(Some(&spare), rule, now) {
                        open.login = Some(spare);
                        break;
                    }
                }
            }
            let current = if self.paced {
                self.identity.as_ref()
            } else {
                open.login.as_ref()
            };
            let fresh_enough = job.after_login && current.is_some();
            if !job.login && !fresh_enough && LoggedIn::stale(current, rule, Instant::now()) {
                if self.paced && self.identity_pending {
                    // The identity's login is under way: wait for it, not a second login.
                    self.held.push(job);
                    self.pools[p].idle.push(index);
                    return;
                }
                self.identity_pending = self.paced;
                let count = self.logins;
                self.logins += 1;
                let login = Job::login(
                    rule,
                    count,
                    self.worker,
                    spec.pace.threads,
                    p as u16,
                    Instant::now(),
                );
                job = login.carrying(job);
            }
        }
        let template = spec.requests.template(p, job.request);
        let Open {
            conn,
            inflight,
            login,
            fresh,
        } = open;
        let vars = job.vars(if self.paced {
            self.identity.as_ref()
        } else {
            login.as_ref()
        });
        let (bytes, body_bytes) =
            match template.h1(job.turn(&spec.requests), &vars, &mut self.scratch) {
                Ok(rendered) => rendered,
                Err(kind) => {
                    // Nothing to send (its data ran out): the connection stays idle.
                    self.pools[p].idle.push(index);
                    self.fail(job, None, kind);
                    return;
                }
            };
        // Stamped before the write: the reply's kernel stamp comes after the server got the
        // request, so no time is shorter than the exchange took.
        let at = Instant::now();
        job.leaving(at, self.paced);
        self.tally
            .sent(&job, at, spec.stage_of(job.intended, job.n));
        let sent = Sent {
            at,
            body_bytes,
            opened: fresh.take(),
        };
        match conn.send(bytes, template.is_head(), template.keeps_response()) {
            Ok(()) => {
                let writing = conn.wants_write();
                *inflight = Some(InFlight { job, sent });
                self.inflight += 1;
                if writing {
                    self.writing.push(index);
                }
            }
            Err(failure) => {
                self.close(index);
                self.retry_or_fail(job, failure, Some(sent));
            }
        }
    }

    /// Writes more of requests that did not fit their socket at once.
    pub fn flush(&mut self) {
        let mut still = Vec::new();
        for index in std::mem::take(&mut self.writing) {
            let Some(Slot::Open(open)) = self.slots.get_mut(index).and_then(Option::as_mut) else {
                continue;
            };
            if open.inflight.is_none() {
                continue;
            }
            match open.conn.flush() {
                Ok(()) if open.conn.wants_write() => still.push(index),
                Ok(()) => {}
                Err(failure) => {
                    if let Some(inflight) = open.inflight.take() {
                        self.settle(index, inflight, Err(failure));
                    }
                }
            }
        }
        self.writing.extend(still);
    }

    fn dial_more(&mut self, p: usize, now: Instant) {
        if self.pools[p].backoff.active(now) {
            return;
        }
        let pool = &self.pools[p];
        let wanted = pool.waiting.len().saturating_sub(pool.dialing);
        let room = self
            .max_connections
            .saturating_sub(pool.open + pool.dialing);
        for _ in 0..wanted.min(room) {
            match Dial::start(&self.pools[p].endpoint) {
                Ok(dial) => {
                    let index = self.free_slots.pop().unwrap_or_else(|| {
                        self.slots.push(None);
                        self.owner.push(p);
                        self.slots.len() - 1
                    });
                    self.owner[index] = p;
                    self.dialing += 1;
                    self.pools[p].dialing += 1;
                    self.step_dial(index, Box::new(dial), None);
                }
                Err(e) => {
                    self.fail_waiting(p, e.kind);
                    if Backoff::applies(e.kind) {
                        // One failure per attempt; the next attempt after a pause.
                        self.pools[p].backoff.hit(now);
                        return;
                    }
                }
            }
        }
    }

    /// Takes a connection being opened as far as it goes, and files it where it now belongs.
    fn step_dial(&mut self, index: usize, dial: Box<Dial>, registered: Option<Wait>) {
        match dial.step() {
            Step::Pending(dial, wait) => {
                let token = index as u64;
                let ok = match registered {
                    None => self.poller.watch_dial(dial.fd(), token, wait).is_ok(),
                    Some(w) if w != wait => {
                        self.poller.rewatch_dial(dial.fd(), token, wait).is_ok()
                    }
                    Some(_) => true,
                };
                if ok {
                    self.slots[index] = Some(Slot::Dialing(dial, wait));
                } else {
                    self.dial_failed(index, ErrorKind::ClientOther);
                }
            }
            Step::Ready(connected) => {
                let opened = connected.opened;
                let conn = match Conn::new(*connected, self.spec.conn.max_header_bytes) {
                    Ok(conn) => conn,
                    Err(kind) => return self.dial_failed(index, kind),
                };
                // The descriptor leaves `dials` as it joins `replies`.
                if self
                    .poller
                    .watch_replies(conn.fd(), index as u64, registered.is_some())
                    .is_err()
                {
                    self.dial_failed(index, ErrorKind::ClientOther);
                    return;
                }
                let pool = &mut self.pools[self.owner[index]];
                pool.dialing -= 1;
                pool.open += 1;
                pool.idle.push(index);
                pool.backoff.clear();
                self.dialing -= 1;
                self.open += 1;
                self.slots[index] = Some(Slot::Open(Open {
                    conn: Box::new(conn),
                    inflight: None,
                    login: None,
                    fresh: Some(opened),
                }));
            }
            Step::Failed(e) => self.dial_failed(index, e.kind),
        }
    }

    /// A connection could not be opened: the request that waited longest fails with why.
    fn dial_failed(&mut self, index: usize, kind: ErrorKind) {
        let p = self.owner[index];
        self.dialing -= 1;
        self.pools[p].dialing -= 1;
        self.slots[index] = None;
        self.free_slots.push(index);
        self.fail_waiting(p, kind);
    }

    fn fail_waiting(&mut self, p: usize, kind: ErrorKind) {
        if let Some(job) = self.pools[p].waiting.pop_front() {
            self.fail(job, None, kind);
        }
    }

    /// Handles whatever the kernel has ready now, without sleeping.
    pub fn harvest(&mut self) {
        self.wait(Listen::All, None);
    }

    /// Sleeps until `until` or until `listen` has something, and handles it.
    pub fn sleep(&mut self, listen: Listen, until: Instant) {
        self.wait(listen, Some(until));
    }

    fn wait(&mut self, listen: Listen, until: Option<Instant>) {
        let mut tokens = std::mem::take(&mut self.tokens);
        let mut until = until;
        loop {
            let (ready, more) = self.poller.wait(listen, until);
            tokens.clear();
            tokens.extend_from_slice(ready);
            if !tokens.is_empty() {
                let clock = Clock::now();
                for &token in &tokens {
                    self.handle(token as usize, &clock);
                }
            }
            // A full batch: what it left is ready still; take it now, without sleeping, now
            // that the batch's own sockets were read.
            if !more {
                break;
            }
            until = None;
        }
        self.tokens = tokens;
    }

    fn handle(&mut self, index: usize, clock: &Clock) {
        match self.slots.get(index) {
            Some(Some(Slot::Open(_))) => self.harvest_one(index, clock),
            Some(Some(Slot::Dialing(..))) => {
                if let Some(Slot::Dialing(dial, wait)) = self.slots[index].take() {
                    self.step_dial(index, dial, Some(wait));
                }
            }
            _ => {}
        }
    }

    fn harvest_one(&mut self, index: usize, clock: &Clock) {
        let Some(Slot::Open(open)) = self.slots.get_mut(index).and_then(Option::as_mut) else {
            return;
        };
        let Some(inflight) = open.inflight.take() else {
            // Data or a close on an idle connection: the server closed it, or sent garbage.
            self.close(index);
            return;
        };
        let outcome = match open.conn.harvest(clock) {
            Harvest::Pending => {
                open.inflight = Some(inflight);
                return;
            }
            // Bytes that came before the request left are not its answer (a server's 408 as
            // it closed an idle connection): the server closed the connection unasked.
            Harvest::Done(reply) if reply.head_at + clock.error() < inflight.sent.at => {
                Err(Failure {
                    kind: ErrorKind::Closed,
                    unprocessed: Unprocessed::IfIdempotent,
                })
            }
            Harvest::Done(reply) => Ok(reply),
            Harvest::Failed(failure) => Err(failure),
        };
        self.settle(index, inflight, outcome);
    }

    /// Fails requests that outlived the timeout, and connections that outlived the connect
    /// timeout; both are closed.
    pub fn expire(&mut self, now: Instant) {
        let timeout = self.spec.conn.timeout;
        let connect_timeout = self.spec.conn.connect_timeout;
        for index in 0..self.slots.len() {
            match &mut self.slots[index] {
                Some(Slot::Open(open)) => {
                    let expired = open
                        .inflight
                        .take_if(|f| now.saturating_duration_since(f.sent.at) >= timeout);
                    if let Some(InFlight { job, sent }) = expired {
                        self.inflight -= 1;
                        self.close(index);
                        self.fail(job, Some(sent), ErrorKind::Timeout);
                    }
                }
                Some(Slot::Dialing(dial, _))
                    if now.saturating_duration_since(dial.started()) >= connect_timeout =>
                {
                    self.dial_failed(index, ErrorKind::ConnectTimeout);
                }
                _ => {}
            }
        }
    }

    /// Fails every request still on the wire as unanswered at the stop, and closes its
    /// connection: the worker is done waiting for it.
    pub fn abandon_inflight(&mut self) {
        for index in 0..self.slots.len() {
            let Some(Slot::Open(open)) = &mut self.slots[index] else {
                continue;
            };
            if let Some(InFlight { job, sent }) = open.inflight.take() {
                self.inflight -= 1;
                self.close(index);
                self.fail(job, Some(sent), ErrorKind::Unanswered);
            }
        }
        self.writing.clear();
    }

    fn close(&mut self, index: usize) {
        if let Some(Slot::Open(mut open)) = self.slots[index].take() {
            if let Some(login) = open.login.take() {
                self.spare.push(login);
            }
            let pool = &mut self.pools[self.owner[index]];
            pool.open -= 1;
            pool.idle.retain(|&i| i != index);
            self.open -= 1;
            // Closing the descriptor takes it out of the epoll.
            drop(open);
            self.free_slots.push(index);
        }
    }
}
