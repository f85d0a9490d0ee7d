//! What became of a request on a direct worker: judged by the shared rules when its answer
//! or failure came, recorded, sent again when the retry rule says so, and followed by what
//! waits for it (a login's request, a flow's next step).

use super::{InFlight, Slot, Table};
use crate::engine::job::{Failure, Job, LoggedIn};
use crate::engine::reply::Reply;
use crate::engine::settle::{self, Sent};
use crate::sample::ErrorKind;
use std::time::Instant;

/// What becomes of a connection after an answer.
enum Next {
    /// Idle again, if keep-alive allows and the server did not end it.
    Idle,
    /// It carries the request that waited for its login.
    Busy,
    /// Closed: its login failed, or the server ended it after the login.
    Close,
}

impl Table<'_> {
    /// Records how an in-flight request ended and returns its connection to the idle set.
    pub(super) fn settle(
        &mut self,
        index: usize,
        inflight: InFlight,
        outcome: Result<Reply, Failure>,
    ) {
        self.inflight -= 1;
        match outcome {
            Ok(reply) => {
                let reusable =
                    matches!(&self.slots[index], Some(Slot::Open(o)) if o.conn.reusable());
                match self.complete(index, inflight, reply, reusable) {
                    Next::Idle if reusable && self.spec.conn.keepalive => {
                        self.pools[self.owner[index]].idle.push(index);
                    }
                    Next::Busy => {}
                    Next::Idle | Next::Close => self.close(index),
                }
            }
            Err(failure) => {
                self.close(index);
                self.retry_or_fail(inflight.job, failure, Some(inflight.sent));
            }
        }
    }

    /// Sends a request once more when the retry rule allows (and the run goes on); fails it
    /// otherwise.
    pub(super) fn retry_or_fail(&mut self, job: Job, failure: Failure, sent: Option<Sent>) {
        let template = self
            .spec
            .requests
            .template(usize::from(job.instance), job.request);
        if !self.stopped && self.tally.may_retry(&job, failure, template.method()) {
            self.pools[usize::from(job.instance)]
                .waiting
                .push_front(job.again());
        } else {
            self.fail(job, sent, failure.kind);
        }
    }

    /// Records a completed request and sends what waited for it.
    fn complete(&mut self, index: usize, inflight: InFlight, reply: Reply, reusable: bool) -> Next {
        let InFlight { mut job, sent } = inflight;
        let verdict = settle::judge(self.spec, &mut job, &reply, sent);
        self.tally.record(&verdict.sample, reply.end.max(sent.at));
        if job.login && self.paced {
            let waiting = job.then.take().map(|j| *j);
            return self.identified(index, waiting, verdict.logged_in, reusable);
        }
        if job.login {
            let waiting = job.then.take().map(|j| *j);
            let Some(vars) = verdict.logged_in else {
                if let Some(waiting) = waiting {
                    self.fail(waiting, None, ErrorKind::LoginFailed);
                }
                return Next::Close;
            };
            if let Some(Slot::Open(open)) = self.slots[index].as_mut() {
                open.login = Some(LoggedIn {
                    vars,
                    at: Instant::now(),
                });
            }
            return self.resume(index, waiting, reusable);
        }
        if verdict.refused {
            // The token was refused: this connection (its user) logs in again before its
            // next request.
            if let Some(Slot::Open(open)) = self.slots[index].as_mut() {
                open.login = None;
            }
            // The identity is renewed only when the request used the current one, so a burst
            // of refusals makes one new login, not one each.
            if self.identity.as_ref().is_some_and(|l| l.at <= sent.at) {
                self.identity = None;
            }
        }
        // A flow goes on only past a step that got what it expected.
        if verdict.expected && job.session.is_some() && !self.stopped {
            let now = Instant::now();
            if let Some(next) = job.next_step(&self.spec.requests, now) {
                if next.intended <= now {
                    self.pools[usize::from(next.instance)]
                        .waiting
                        .push_back(next);
                } else {
                    self.delayed.push(next);
                }
            }
        }
        Next::Idle
    }

    /// Records a request that got no usable answer, and the request that waited for it if
    /// it was a login.
    pub(super) fn fail(&mut self, mut job: Job, sent: Option<Sent>, kind: ErrorKind) {
        let end = Instant::now();
        let sample = settle::failed(self.spec, &job, sent, kind, end);
        self.tally.record(&sample, end);
        if let Some(waiting) = job.then.take() {
            self.fail(*waiting, None, ErrorKind::LoginFailed);
        }
        if job.login && self.paced {
            self.identity_pending = false;
            for held in std::mem::take(&mut self.held) {
                self.fail(held, None, ErrorKind::LoginFailed);
            }
        }
    }
}

impl Table<'_> {
    /// Ends the open model's login on connection `index`: the identity holds what it captured
    /// and the requests that waited go, or they fail as `login_failed`.
    fn identified(
        &mut self,
        index: usize,
        waiting: Option<Job>,
        logged_in: Option<crate::engine::job::Values>,
        reusable: bool,
    ) -> Next {
        self.identity_pending = false;
        let Some(vars) = logged_in else {
            if let Some(waiting) = waiting {
                self.fail(waiting, None, ErrorKind::LoginFailed);
            }
            for held in std::mem::take(&mut self.held) {
                self.fail(held, None, ErrorKind::LoginFailed);
            }
            return Next::Close;
        };
        self.identity = Some(LoggedIn {
            vars,
            at: Instant::now(),
        });
        // A login whose connection the server closed is no failed login: its token stays good.
        let held = std::mem::take(&mut self.held);
        if !self.stopped {
            for held in held {
                self.pools[usize::from(held.instance)]
                    .waiting
                    .push_front(held.logged_in());
            }
        }
        self.resume(index, waiting, reusable)
    }

    /// Sends the request that waited for a login on the login's own connection, or first on
    /// the next one when the server closed it (the token stays good and goes with it).
    fn resume(&mut self, index: usize, waiting: Option<Job>, reusable: bool) -> Next {
        match waiting {
            Some(waiting) if !self.stopped && reusable => {
                self.send_on(index, waiting);
                Next::Busy
            }
            Some(waiting) if !self.stopped => {
                self.pools[usize::from(waiting.instance)]
                    .waiting
                    .push_front(waiting.logged_in());
                Next::Close
            }
            // Stopped: dropped unsent, as the requests still waiting are.
            _ => Next::Idle,
        }
    }
}
