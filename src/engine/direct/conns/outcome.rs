//! What became of a request: settled when its answer or failure came, retried once when the
//! server provably did not process it, recorded, and followed by its flow's next step.

use super::flow::LoggedIn;
use super::{Conns, InFlight, Job, Slot};
use crate::engine::connect::ConnectTimings;
use crate::engine::h1::polled::Reply;
use crate::sample::{ErrorKind, Outcome, Sample};
use std::time::Instant;

impl Conns<'_> {
    /// Records how an in-flight request ended and returns its connection to the idle set.
    pub(super) fn settle(
        &mut self,
        index: usize,
        inflight: InFlight,
        outcome: Result<Reply, (ErrorKind, bool)>,
    ) {
        self.inflight -= 1;
        let keep_open = matches!(&self.slots[index], Some(Slot::Open(o)) if o.conn.is_open());
        match outcome {
            Ok(reply) => {
                let logged_in = self.complete(index, inflight, reply);
                if !logged_in {
                    // A connection whose login failed is not used again.
                    self.close(index);
                } else if keep_open && self.worker.run.keepalive {
                    self.pools[self.owner[index]].idle.push(index);
                } else {
                    self.close(index);
                }
            }
            Err((kind, unprocessed)) => {
                self.close(index);
                self.retry_or_fail(
                    inflight.job,
                    unprocessed,
                    Some(inflight.sent_at),
                    kind,
                    inflight.opened,
                );
            }
        }
    }

    /// Retries once a request the server provably did not process; fails anything else.
    pub(super) fn retry_or_fail(
        &mut self,
        job: Job,
        unprocessed: bool,
        sent_at: Option<Instant>,
        kind: ErrorKind,
        opened: Option<ConnectTimings>,
    ) {
        if unprocessed && !job.retried {
            self.pools[usize::from(job.instance)]
                .waiting
                .push_front(Job {
                    retried: true,
                    ..job
                });
        } else {
            self.fail(job, sent_at, kind, opened);
        }
    }

    /// Records a completed request and moves its flow on; false when it was a login that
    /// failed (the request waiting for it fails too).
    pub(super) fn complete(&mut self, index: usize, inflight: InFlight, reply: Reply) -> bool {
        let InFlight {
            mut job,
            sent_at,
            opened,
            body_len,
        } = inflight;
        // Kernel stamps precede our own clock readings; never let them precede the send.
        let end = reply.end.max(sent_at);
        let run = &self.worker.run;
        let template = run.template(usize::from(job.instance), job.request);
        let mut outcome = Outcome::Status(reply.status);
        let mut expected = template.expects(reply.status)
            && reply
                .kept
                .as_deref()
                .is_none_or(|k| template.body_holds(&k.body));
        let mut login_vars = job.login.then(|| vec![None; run.variables]);
        let vars = match (&mut login_vars, job.session.as_mut()) {
            (Some(vars), _) => Some(vars),
            (None, Some(session)) => Some(&mut session.vars),
            (None, None) => None,
        };
        if let (Some(vars), true) = (vars, expected) {
            for c in template.captures() {
                match reply
                    .kept
                    .as_deref()
                    .and_then(|k| crate::engine::capture::extract(c, k))
                {
                    Some(value) => vars[c.slot] = Some(value),
                    None => {
                        outcome = Outcome::Error(ErrorKind::CaptureFailed);
                        expected = false;
                        break;
                    }
                }
            }
        }
        // A 401 the request expects (deliberately bad credentials) says nothing of the token.
        let refused = !job.login
            && !expected
            && run
                .login
                .as_ref()
                .is_some_and(|l| l.refresh_on.contains(&reply.status));
        self.worker.record(
            &Sample {
                outcome,
                latency: end - job.intended.min(sent_at),
                service: end - sent_at,
                lag: sent_at.saturating_duration_since(job.intended),
                connect: opened.map(|t| t.tcp),
                tls_handshake: opened.and_then(|t| t.tls),
                first_byte: Some(reply.head_at.max(sent_at) - sent_at),
                bytes_in: reply.body_bytes,
                bytes_out: body_len,
                retried: job.retried,
                request: job.request,
                stage: run.stage_of(job.intended, job.n),
                expected,
            },
            end,
        );
        if let Some(Slot::Open(open)) = self.slots[index].as_mut() {
            if job.login && expected {
                open.login = login_vars.map(|vars| LoggedIn {
                    vars,
                    at: Instant::now(),
                });
            } else if refused {
                // The token was refused: this connection logs in again before its next request.
                open.login = None;
            }
        }
        if job.login && !expected {
            let pool = usize::from(job.instance);
            if let Some(waiting) = self.pools[pool].waiting.pop_front() {
                self.fail(waiting, None, ErrorKind::LoginFailed, None);
            }
            return false;
        }
        // A flow goes on only past a step that got what it expected.
        if expected && job.session.is_some() {
            self.next_step(job, Instant::now());
        }
        true
    }

    pub(super) fn fail(
        &self,
        job: Job,
        sent_at: Option<Instant>,
        kind: ErrorKind,
        opened: Option<ConnectTimings>,
    ) {
        let end = Instant::now();
        let sent = sent_at.unwrap_or(end);
        self.worker.record(
            &Sample {
                outcome: Outcome::Error(kind),
                latency: end - job.intended.min(sent),
                service: end - sent,
                lag: sent.saturating_duration_since(job.intended),
                connect: opened.map(|t| t.tcp),
                tls_handshake: opened.and_then(|t| t.tls),
                first_byte: None,
                bytes_in: 0,
                bytes_out: 0,
                retried: job.retried,
                request: job.request,
                stage: self.worker.run.stage_of(job.intended, job.n),
                expected: false,
            },
            end,
        );
    }
}
