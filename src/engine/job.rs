//! A request to send: which one, when it was due, and what it carries (a flow iteration's
//! captured values, or that it is a connection's login). Both drivers queue the same jobs,
//! and decide the same way whether a failed one may be sent again.

use super::spec::{Requests, RunSpec};
use crate::sample::{ErrorKind, Origin};
use std::time::Instant;

/// Captured values, by slot; `None` until captured.
pub type Values = Vec<Option<Vec<u8>>>;

/// The captured values a send may use, looked up in order (the iteration's own, then the
/// connection's login).
pub type Vars<'a> = &'a [&'a [Option<Vec<u8>>]];

/// A request waiting to be sent, or in flight.
pub struct Job {
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
    /// For a login: the request waiting for it, sent on the same connection once it has
    /// logged in, or failed as `login_failed` if it cannot.
    pub then: Option<Box<Job>>,
    /// True for a request that waited for a login that answered, put back to go on
    /// another connection: it goes with the identity as it is, stale or not, so a
    /// `refresh_after` shorter than a reconnect cannot log in again and again.
    pub after_login: bool,
}

/// Where a flow iteration stands: its flow, its step, its data turn and what it captured.
pub struct Session {
    /// Which flow.
    pub flow: u16,
    /// Which of its steps is next (or in flight).
    pub step: u16,
    /// The iteration's count among its flow's iterations: every step draws this data row.
    pub k: u64,
    /// What its steps captured so far.
    pub vars: Values,
    /// When its first step was due: its time runs from there.
    pub started: Instant,
}

/// What a connection's login captured, and when.
pub struct LoggedIn {
    /// The captured values (a token).
    pub vars: Values,
    /// When the login answered.
    pub at: Instant,
}

impl LoggedIn {
    /// True when it must run again before the next request: never run, or older than the
    /// login's `refresh_after`.
    pub fn stale(login: Option<&LoggedIn>, rule: &crate::plan::Login, now: Instant) -> bool {
        login.is_none_or(|l| {
            rule.refresh_after
                .is_some_and(|after| now.saturating_duration_since(l.at) >= after)
        })
    }
}

impl Job {
    /// The run's `n`-th arrival (or user turn), due at `intended`: a flow iteration's first
    /// step, or the mix's request.
    pub fn arrival(requests: &Requests, intended: Instant, n: u64) -> Job {
        let (request, turn, session) = match &requests.flow_mix {
            Some(flows) => {
                let flow = flows.pick(n);
                let k = flows.turn(n);
                let session = Session {
                    flow,
                    step: 0,
                    k,
                    vars: vec![None; requests.variables],
                    started: intended,
                };
                (
                    requests.flows[usize::from(flow)].steps[0],
                    k,
                    Some(Box::new(session)),
                )
            }
            None => (requests.mix.pick(n), requests.mix.turn(n), None),
        };
        Job {
            intended,
            retried: false,
            request,
            n,
            instance: requests.instance_for(turn) as u16,
            session,
            login: false,
            then: None,
            after_login: false,
        }
    }

    /// The login a connection to `instance` runs before its first request: the `count`-th
    /// of worker `worker` (of `threads`), which numbers its data row among all the run's
    /// logins.
    pub fn login(
        login: &crate::plan::Login,
        count: u64,
        worker: usize,
        threads: usize,
        instance: u16,
        now: Instant,
    ) -> Job {
        Job {
            intended: now,
            retried: false,
            request: login.request,
            n: count * threads as u64 + worker as u64,
            instance,
            session: None,
            login: true,
            then: None,
            after_login: false,
        }
    }

    /// This login, with `job` waiting for it.
    pub fn carrying(self, job: Job) -> Job {
        Job {
            then: Some(Box::new(job)),
            ..self
        }
    }

    /// True for an arrival's first send: a scheduled request (or a flow's first step), not
    /// a login, a retry or a later step.
    pub fn is_arrival(&self) -> bool {
        !self.login && !self.retried && self.session.as_ref().is_none_or(|s| s.step == 0)
    }

    /// As the closed model sends it: due when it leaves (`at`), since waiting behind the
    /// other replies of one wake-up, or for a stream, is not the server's time; a retry
    /// keeps the first attempt's time, so its latency counts both.
    pub fn leaving(&mut self, at: Instant, paced: bool) {
        if !paced && !self.retried {
            self.intended = at;
        }
    }

    /// Its count among its request's sends (or its flow's iterations): its data row.
    pub fn turn(&self, requests: &Requests) -> u64 {
        match &self.session {
            _ if self.login => requests.login_turn(self.n),
            Some(s) => s.k,
            None => requests.mix.turn(self.n),
        }
    }

    /// The captured values its send may use: its iteration's, then its connection's login's.
    pub fn vars<'a>(&'a self, login: Option<&'a LoggedIn>) -> [&'a [Option<Vec<u8>>]; 2] {
        [
            self.session.as_ref().map_or(&[][..], |s| &s.vars[..]),
            login.map_or(&[][..], |l| &l.vars[..]),
        ]
    }

    /// The step after this one in its flow iteration, due after the flow's think time;
    /// `None` after the last step, or outside flows.
    pub fn next_step(self, requests: &Requests, now: Instant) -> Option<Job> {
        let mut session = self.session?;
        let flow = &requests.flows[usize::from(session.flow)];
        session.step += 1;
        let request = *flow.steps.get(usize::from(session.step))?;
        Some(Job {
            intended: now + flow.think,
            retried: false,
            request,
            n: self.n,
            instance: self.instance,
            session: Some(session),
            login: false,
            then: None,
            after_login: false,
        })
    }

    /// The flow iteration this job ends, if it is a flow step: the last, answered as it
    /// expects (`ok`), or any that did not get what it expects, ending at `end`.
    pub fn iteration_ended(
        &self,
        spec: &RunSpec,
        ok: bool,
        end: Instant,
    ) -> Option<crate::sample::Iteration> {
        let session = self.session.as_ref()?;
        let flow = &spec.requests.flows[usize::from(session.flow)];
        let last = usize::from(session.step) + 1 >= flow.steps.len();
        (!ok || last).then(|| crate::sample::Iteration {
            flow: session.flow,
            stage: spec.stage_of(session.started, self.n),
            took: end.saturating_duration_since(session.started),
            ok,
        })
    }

    /// The same request, sent once more.
    pub fn again(self) -> Job {
        Job {
            retried: true,
            after_login: false,
            ..self
        }
    }

    /// The request that waited for a login that answered, to go on another connection.
    pub fn logged_in(self) -> Job {
        Job {
            after_login: true,
            ..self
        }
    }

    /// What its sample says of where it came from.
    pub fn origin(&self, spec: &RunSpec, opened: Option<crate::sample::Opened>) -> Origin {
        Origin {
            request: self.request,
            stage: spec.stage_of(self.intended, self.n),
            retried: self.retried,
            opened,
        }
    }

    /// The one retry rule, for both protocols: a request the server cannot have processed
    /// is sent once more on a fresh connection, as real clients do (drivers ask through
    /// `Tally::may_retry`, which adds the worker's retry budget). On HTTP/1.1 a reused
    /// connection closed before a byte of the answer only means the server *probably*
    /// closed it idle, so only idempotent requests go again (RFC 9110 §9.2.2).
    pub fn may_retry(&self, failure: Failure, method: &http::Method) -> bool {
        !self.retried
            && match failure.unprocessed {
                Unprocessed::No => false,
                Unprocessed::Certainly | Unprocessed::Unsent => true,
                Unprocessed::IfIdempotent => method.is_idempotent(),
            }
    }
}

/// Why an exchange failed, and whether the server can have seen the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failure {
    /// The classified error.
    pub kind: ErrorKind,
    /// Whether the server can have processed the request.
    pub unprocessed: Unprocessed,
}

/// How sure it is that the server did not process a failed request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unprocessed {
    /// It may have.
    No,
    /// It cannot have: not a byte of it left, or refused unprocessed (HTTP/2 REFUSED_STREAM,
    /// a GOAWAY with an error code).
    Certainly,
    /// It never reached the server, and not because the server shed it: an HTTP/2
    /// connection that could not take another stream, or a stream a graceful GOAWAY
    /// (NO_ERROR, as a server rotating its connections sends) passed over. Sending it again
    /// adds no load the server refused, so it costs no retry budget.
    Unsent,
    /// A reused HTTP/1.1 connection closed before a byte of the answer: almost surely
    /// closed while idle, as the request left.
    IfIdempotent,
}

impl From<ErrorKind> for Failure {
    fn from(kind: ErrorKind) -> Failure {
        Failure {
            kind,
            unprocessed: Unprocessed::No,
        }
    }
}
