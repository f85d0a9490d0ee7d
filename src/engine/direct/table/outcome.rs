//! What became of a request on a direct worker: judged by the shared rules when its answer
//! or failure came, recorded, sent again when the retry rule says so, and followed by its
//! flow's next step.

use super::{InFlight, Slot, Table};
use crate::engine::job::{Failure, Job, LoggedIn};
use crate::engine::reply::Reply;
use crate::engine::settle::{self, Sent};
use crate::sample::ErrorKind;
use std::time::Instant;

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
                let logged_in = self.complete(index, inflight, reply);
                if logged_in && reusable && self.spec.conn.keepalive {
                    self.pools[self.owner[index]].idle.push(index);
                } else {
                    // A connection whose login failed is not used again.
                    self.close(index);
                }
            }
            Err(failure) => {
                self.close(index);
                self.retry_or_fail(inflight.job, failure, Some(inflight.sent));
            }
        }
    }

    /// Sends a request once more when the retry rule allows; fails it otherwise.
    pub(super) fn retry_or_fail(&mut self, job: Job, failure: Failure, sent: Option<Sent>) {
        let template = self
            .spec
            .requests
            .template(usize::from(job.instance), job.request);
        if job.may_retry(failure, template.method()) {
            self.pools[usize::from(job.instance)]
                .waiting
                .push_front(job.again());
        } else {
            self.fail(job, sent, failure.kind);
        }
    }

    /// Records a completed request and moves its flow on; false when it was a login that
    /// failed (the request waiting for it fails too).
    fn complete(&mut self, index: usize, inflight: InFlight, reply: Reply) -> bool {
        let InFlight { mut job, sent } = inflight;
        let verdict = settle::judge(self.spec, &mut job, &reply, sent);
        self.tally.record(&verdict.sample, reply.end.max(sent.at));
        let now = Instant::now();
        if let Some(Slot::Open(open)) = self.slots[index].as_mut() {
            if let Some(vars) = verdict.logged_in {
                open.login = Some(LoggedIn { vars, at: now });
            } else if verdict.refused {
                // The token was refused: this connection logs in again before its next request.
                open.login = None;
            }
        }
        if job.login && !verdict.expected {
            let pool = usize::from(job.instance);
            if let Some(waiting) = self.pools[pool].waiting.pop_front() {
                self.fail(waiting, None, ErrorKind::LoginFailed);
            }
            return false;
        }
        // A flow goes on only past a step that got what it expected.
        if verdict.expected {
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
        true
    }

    /// Records a request that got no usable answer.
    pub(super) fn fail(&mut self, job: Job, sent: Option<Sent>, kind: ErrorKind) {
        let end = Instant::now();
        let sample = settle::failed(self.spec, &job, sent, kind, end);
        self.tally.record(&sample, end);
    }
}
