//! A direct worker's connections: opened by hand, read when the kernel has data, and the
//! requests waiting for them. Shared by the open model's ticked loop and the closed model's
//! back-to-back loop, which differ only in when they sleep and where requests come from.
//!
//! Two epolls: `dials` holds connections being opened, `replies` holds open ones (and `dials`
//! itself, so one wait on `replies` sees everything). The ticked loop sleeps on `dials` alone,
//! so a reply wakes nobody while a new connection's progress is handled at once.

mod flow;
mod outcome;

use crate::engine::connect::ConnectTimings;
use crate::engine::h1::dial::{Dial, DialTarget, Step, Wait};
use crate::engine::h1::polled::{Clock, Harvest, Polled};
use crate::engine::transport::Scratch;
use crate::engine::worker::{Worker, BACKLOG_LIMIT};
use crate::sample::ErrorKind;
use flow::{Delayed, LoggedIn, Session};
use rustix::event::epoll::{self, CreateFlags, Event, EventData, EventFlags};
use rustix::time::Timespec;
use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

/// The token under which `dials` sits in `replies`.
const DIALS: u64 = u64::MAX;

/// A request waiting to be sent, or in flight.
pub(super) struct Job {
    /// When it should have been sent.
    pub intended: Instant,
    /// True for the second attempt of a request the server provably did not process.
    pub retried: bool,
    /// Which of the run's requests it is.
    pub request: u16,
    /// Its number in the run, from which its turn in the mix (and its data row) follows.
    pub n: u64,
    /// The instance of the service it goes to.
    pub instance: u16,
    /// The flow iteration it is a step of, if the run has flows.
    pub session: Option<Box<Session>>,
    /// True for a connection's login, sent before the request that needed it.
    pub login: bool,
}

impl Job {
    /// Its count among its request's sends (or its flow's iterations): its data row.
    fn turn(&self, mix: &crate::schedule::Mix) -> u64 {
        match &self.session {
            _ if self.login => self.n,
            Some(s) => s.k,
            None => mix.turn(self.n),
        }
    }
}

/// The connections to one instance of the service, and the requests waiting for them.
struct Pool {
    target: DialTarget,
    idle: Vec<usize>,
    waiting: VecDeque<Job>,
    dialing: usize,
    open: usize,
}

struct InFlight {
    job: Job,
    sent_at: Instant,
    opened: Option<ConnectTimings>,
    /// Request body bytes sent.
    body_len: u64,
}

struct Open {
    conn: Box<Polled>,
    inflight: Option<InFlight>,
    /// The connection's login, once it has run.
    login: Option<LoggedIn>,
    /// Timings of the connect, given to the first request the connection carries.
    fresh: Option<ConnectTimings>,
}

enum Slot {
    Dialing(Box<Dial>, Wait),
    Open(Open),
}

/// Which epoll a wait listens on.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Listen {
    /// Connections being opened only: replies are left for the next harvest.
    Dials,
    /// Everything.
    All,
}

/// The connections and waiting requests of one direct worker.
pub(super) struct Conns<'a> {
    worker: &'a Worker,
    connect_timeout: Duration,
    replies: OwnedFd,
    dials: OwnedFd,
    slots: Vec<Option<Slot>>,
    /// The pool (instance) each slot's connection belongs to.
    owner: Vec<usize>,
    free_slots: Vec<usize>,
    pools: Vec<Pool>,
    /// Logins this worker has run, numbering their data rows.
    logins: u64,
    /// Flow steps waiting out their think time.
    delayed: std::collections::BinaryHeap<Delayed>,
    delayed_seq: u64,
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
    events: Vec<Event>,
}

fn interest(wait: Wait) -> EventFlags {
    match wait {
        Wait::Write => EventFlags::OUT,
        Wait::Read => EventFlags::IN | EventFlags::RDHUP,
    }
}

fn timeout_until(until: Instant) -> Timespec {
    let d = until.saturating_duration_since(Instant::now());
    Timespec {
        tv_sec: d.as_secs() as i64,
        tv_nsec: i64::from(d.subsec_nanos()),
    }
}

impl<'a> Conns<'a> {
    /// An empty table; fails when the kernel lacks what it needs (epoll_pwait2, Linux 5.11).
    pub fn new(worker: &'a Worker) -> std::io::Result<Conns<'a>> {
        let replies = epoll::create(CreateFlags::CLOEXEC)?;
        let dials = epoll::create(CreateFlags::CLOEXEC)?;
        epoll::add(&replies, &dials, EventData::new_u64(DIALS), EventFlags::IN)?;
        let zero = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let mut probe = [Event {
            flags: EventFlags::empty(),
            data: EventData::new_u64(0),
        }];
        epoll::wait(&dials, &mut probe[..], Some(&zero))?;
        let run = &worker.run;
        Ok(Conns {
            worker,
            connect_timeout: run.connectors[0].timeout(),
            replies,
            dials,
            slots: Vec::new(),
            owner: Vec::new(),
            free_slots: Vec::new(),
            pools: run
                .connectors
                .iter()
                .map(|c| Pool {
                    target: c.dial_target(run.max_header_bytes),
                    idle: Vec::new(),
                    waiting: VecDeque::new(),
                    dialing: 0,
                    open: 0,
                })
                .collect(),
            delayed: std::collections::BinaryHeap::new(),
            delayed_seq: 0,
            logins: 0,
            dialing: 0,
            open: 0,
            inflight: 0,
            writing: Vec::new(),
            // The open model's cap is the run's, shared by the instances; a closed-model user
            // keeps a connection to each instance it sends to, as a client with a pool per
            // host does.
            max_connections: match run.load {
                crate::plan::Load::Open { .. } => {
                    worker.max_connections().div_ceil(run.instances()).max(1)
                }
                crate::plan::Load::Closed { .. } => worker.max_connections(),
            },
            scratch: Scratch::default(),
            paced: matches!(run.load, crate::plan::Load::Open { .. }),
            events: vec![
                Event {
                    flags: EventFlags::empty(),
                    data: EventData::new_u64(0),
                };
                256
            ],
        })
    }

    /// Queues the run's `n`-th request, due at `intended`, or fails it when the backlog is
    /// full.
    pub fn enqueue(&mut self, intended: Instant, n: u64) {
        let run = &self.worker.run;
        let (request, turn, session) = match &run.flow_mix {
            Some(flows) => {
                let flow = flows.pick(n);
                let k = flows.turn(n);
                let session = Session {
                    flow,
                    step: 0,
                    k,
                    vars: vec![None; run.variables],
                };
                (
                    run.flows[usize::from(flow)].steps[0],
                    k,
                    Some(Box::new(session)),
                )
            }
            None => (run.mix.pick(n), run.mix.turn(n), None),
        };
        let job = Job {
            intended,
            retried: false,
            request,
            n,
            instance: run.instance_for(turn) as u16,
            session,
            login: false,
        };
        let pool = &mut self.pools[usize::from(job.instance)];
        if pool.waiting.len() >= BACKLOG_LIMIT {
            self.fail(job, None, ErrorKind::Backlog, None);
            return;
        }
        pool.waiting.push_back(job);
    }

    /// Drops the requests not yet sent (on Ctrl-C).
    pub fn drop_waiting(&mut self) {
        for pool in &mut self.pools {
            pool.waiting.clear();
        }
        self.delayed.clear();
    }

    /// When the next flow step ends its think time, if one is waiting.
    pub fn next_delayed(&self) -> Option<Instant> {
        self.delayed.peek().map(|d| d.at)
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
        self.inflight > 0 || self.dialing > 0 || self.waiting() > 0 || !self.delayed.is_empty()
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
        while self.delayed.peek().is_some_and(|d| d.at <= now) {
            let job = self.delayed.pop().expect("peeked").job;
            self.pools[usize::from(job.instance)].waiting.push_back(job);
        }
        for p in 0..self.pools.len() {
            self.assign(p);
            if !self.pools[p].waiting.is_empty() {
                self.dial_more(p);
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
            let mut job = self.pools[p].waiting.pop_front().expect("not empty");
            let run = &self.worker.run;
            let now = Instant::now();
            let Some(Slot::Open(open)) = self.slots[index].as_ref() else {
                continue;
            };
            if let Some(login) = &run.login {
                let stale = open.login.as_ref().is_none_or(|l| {
                    login
                        .refresh_after
                        .is_some_and(|after| now.saturating_duration_since(l.at) >= after)
                });
                if stale && !job.login {
                    // This connection logs in first; the request waits at the front.
                    self.pools[p].waiting.push_front(job);
                    self.logins += 1;
                    job = Job {
                        intended: now,
                        retried: false,
                        request: login.request,
                        n: self.logins * run.threads as u64 + self.worker.index as u64,
                        instance: p as u16,
                        session: None,
                        login: true,
                    };
                }
            }
            let template = run.template(p, job.request);
            let session_vars = job.session.as_ref().map_or(&[][..], |s| &s.vars[..]);
            let login_vars = open.login.as_ref().map_or(&[][..], |l| &l.vars[..]);
            let (bytes, body_len) = match template.h1(
                job.turn(&run.mix),
                &[session_vars, login_vars],
                &mut self.scratch,
            ) {
                Ok(rendered) => rendered,
                Err(kind) => {
                    // Nothing to send (its data ran out): the connection stays idle.
                    self.pools[p].idle.push(index);
                    self.fail(job, None, kind, None);
                    continue;
                }
            };
            let Some(Slot::Open(open)) = self.slots[index].as_mut() else {
                continue;
            };
            let sent_at = Instant::now();
            if !self.paced && !job.retried {
                // Queued behind the other replies of one wake-up is not the server's time.
                job.intended = sent_at;
            }
            self.worker.note_sent(sent_at);
            let keep = template.keeps_response();
            match open.conn.send(bytes, template.is_head(), keep) {
                Ok(()) => {
                    let opened = open.fresh.take();
                    open.inflight = Some(InFlight {
                        job,
                        sent_at,
                        opened,
                        body_len,
                    });
                    self.inflight += 1;
                    if open.conn.wants_write() {
                        self.writing.push(index);
                    }
                }
                Err((kind, unprocessed)) => {
                    let opened = open.fresh.take();
                    self.close(index);
                    self.retry_or_fail(job, unprocessed, Some(sent_at), kind, opened);
                }
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
                Err(kind) => {
                    if let Some(inflight) = open.inflight.take() {
                        self.settle(index, inflight, Err((kind, false)));
                    }
                }
            }
        }
        self.writing.extend(still);
    }

    fn dial_more(&mut self, p: usize) {
        let pool = &self.pools[p];
        let wanted = pool.waiting.len().saturating_sub(pool.dialing);
        let room = self
            .max_connections
            .saturating_sub(pool.open + pool.dialing);
        for _ in 0..wanted.min(room) {
            match Dial::start(&self.pools[p].target) {
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
                Err(kind) => self.fail_waiting(p, kind),
            }
        }
    }

    /// Takes a connection being opened as far as it goes, and files it where it now belongs.
    fn step_dial(&mut self, index: usize, dial: Box<Dial>, registered: Option<Wait>) {
        match dial.step() {
            Step::Pending(dial, wait) => {
                let flags = interest(wait);
                let data = EventData::new_u64(index as u64);
                let ok = match registered {
                    None => epoll::add(&self.dials, dial.fd(), data, flags).is_ok(),
                    Some(w) if w != wait => {
                        epoll::modify(&self.dials, dial.fd(), data, flags).is_ok()
                    }
                    Some(_) => true,
                };
                if ok {
                    self.slots[index] = Some(Slot::Dialing(dial, wait));
                } else {
                    self.dial_failed(index, ErrorKind::ClientOther);
                }
            }
            Step::Ready(conn, timings) => {
                // The descriptor leaves `dials` as it joins `replies`.
                if registered.is_some() {
                    let _ = epoll::delete(&self.dials, conn.fd());
                }
                let data = EventData::new_u64(index as u64);
                if epoll::add(
                    &self.replies,
                    conn.fd(),
                    data,
                    EventFlags::IN | EventFlags::RDHUP,
                )
                .is_err()
                {
                    self.dial_failed(index, ErrorKind::ClientOther);
                    return;
                }
                let pool = &mut self.pools[self.owner[index]];
                pool.dialing -= 1;
                pool.open += 1;
                pool.idle.push(index);
                self.dialing -= 1;
                self.open += 1;
                self.slots[index] = Some(Slot::Open(Open {
                    conn,
                    inflight: None,
                    login: None,
                    fresh: Some(timings),
                }));
            }
            Step::Failed(kind) => self.dial_failed(index, kind),
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
            self.fail(job, None, kind, None);
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
        let mut timeout = until.map(timeout_until).unwrap_or(Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        });
        loop {
            let epoll = match listen {
                Listen::Dials => &self.dials,
                Listen::All => &self.replies,
            };
            let n = match epoll::wait(epoll, &mut self.events[..], Some(&timeout)) {
                Ok(n) => n,
                // A signal cut the sleep short; the loop comes round again anyway.
                Err(_) => return,
            };
            if n == 0 {
                return;
            }
            let clock = Clock::now();
            for i in 0..n {
                let token = self.events[i].data.u64();
                if token == DIALS {
                    self.wait(Listen::Dials, None);
                    continue;
                }
                let index = token as usize;
                match self.slots.get(index) {
                    Some(Some(Slot::Open(_))) => self.harvest_one(index, &clock),
                    Some(Some(Slot::Dialing(..))) => {
                        if let Some(Slot::Dialing(dial, wait)) = self.slots[index].take() {
                            self.step_dial(index, dial, Some(wait));
                        }
                    }
                    _ => {}
                }
            }
            if n < self.events.len() {
                return;
            }
            timeout = Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
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
            Harvest::Done(reply) => Ok(reply),
            Harvest::Failed { kind, unprocessed } => Err((kind, unprocessed)),
        };
        self.settle(index, inflight, outcome);
    }

    /// Fails requests that outlived the timeout, and connections that outlived the connect
    /// timeout; both are closed.
    pub fn expire(&mut self, now: Instant) {
        let timeout = self.worker.run.timeout;
        for index in 0..self.slots.len() {
            match &mut self.slots[index] {
                Some(Slot::Open(open)) => {
                    let expired = open
                        .inflight
                        .take_if(|f| now.saturating_duration_since(f.sent_at) >= timeout);
                    if let Some(inflight) = expired {
                        self.inflight -= 1;
                        self.close(index);
                        self.fail(
                            inflight.job,
                            Some(inflight.sent_at),
                            ErrorKind::Timeout,
                            inflight.opened,
                        );
                    }
                }
                Some(Slot::Dialing(dial, _))
                    if now.saturating_duration_since(dial.started()) >= self.connect_timeout =>
                {
                    self.dial_failed(index, ErrorKind::ConnectTimeout);
                }
                _ => {}
            }
        }
    }

    fn close(&mut self, index: usize) {
        if let Some(Slot::Open(open)) = self.slots[index].take() {
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
