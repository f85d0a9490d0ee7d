//! What an answer means, the same on both protocols: whether the request got what it
//! expects (status, body, the values it captures), what it captured, whether it refused the
//! connection's login, and the sample recorded for it.

use super::job::{Job, Values};
use super::reply::Reply;
use super::spec::RunSpec;
use crate::sample::{Answer, ErrorKind, Opened, Sample, Timing};
use std::time::Instant;

/// The judgement of one answer, for the driver to act on.
pub struct Verdict {
    /// The sample to record.
    pub sample: Sample,
    /// True when the request got an answer it expects (and every value it captures).
    pub expected: bool,
    /// For a login that got what it expects: the values it captured.
    pub logged_in: Option<Values>,
    /// The answer refused the connection's token (a `refresh_on` status the request did not
    /// expect): the connection logs in again before its next request.
    pub refused: bool,
}

/// How a request was sent.
#[derive(Debug, Clone, Copy)]
pub struct Sent {
    /// When it left (stamped before the write).
    pub at: Instant,
    /// Request body bytes.
    pub body_bytes: u64,
    /// The connection it opened, if it opened one.
    pub opened: Option<Opened>,
}

/// Judges `reply` to `job`, capturing into its flow iteration (or, for a login, into the
/// values the connection will carry).
pub fn judge(spec: &RunSpec, job: &mut Job, reply: &Reply, sent: Sent) -> Verdict {
    let requests = &spec.requests;
    let template = requests.template(usize::from(job.instance), job.request);
    let mut expected = template.expects(reply.status)
        && reply
            .kept
            .as_deref()
            .is_none_or(|k| template.body_holds(&k.body));
    let mut login_vars = job.login.then(|| vec![None; requests.variables]);
    let vars = match (&mut login_vars, job.session.as_mut()) {
        (Some(vars), _) => Some(vars),
        (None, Some(session)) => Some(&mut session.vars),
        (None, None) => None,
    };
    let mut capture_failed = false;
    if let (Some(vars), true) = (vars, expected) {
        for c in template.captures() {
            match reply
                .kept
                .as_deref()
                .and_then(|k| super::capture::extract(c, k))
            {
                Some(value) => vars[c.slot] = Some(value),
                None => {
                    capture_failed = true;
                    expected = false;
                    break;
                }
            }
        }
    }
    // A 401 the request expects (deliberately bad credentials) says nothing of the token.
    let refused = !job.login
        && !expected
        && requests
            .login
            .as_ref()
            .is_some_and(|l| l.refresh_on.contains(&reply.status));
    let at = Timing::new(job.intended, sent.at, reply.end);
    let sample = Sample::answered(
        job.origin(spec, sent.opened),
        at,
        Answer {
            status: reply.status,
            expected,
            head_at: reply.head_at,
            bytes_in: reply.body_bytes,
            bytes_out: sent.body_bytes,
        },
    );
    let sample = if capture_failed {
        sample.failing(ErrorKind::CaptureFailed)
    } else {
        sample
    };
    let sample = match job.iteration_ended(spec, expected, at.end) {
        Some(it) => sample.ending(it),
        None => sample,
    };
    Verdict {
        sample,
        expected,
        logged_in: login_vars.filter(|_| expected),
        refused,
    }
}

/// The sample of a request that got no usable answer: `sent` when it left, if it did.
pub fn failed(
    spec: &RunSpec,
    job: &Job,
    sent: Option<Sent>,
    kind: ErrorKind,
    end: Instant,
) -> Sample {
    let at = Timing::new(job.intended, sent.map_or(end, |s| s.at), end);
    let sample = Sample::failed(job.origin(spec, sent.and_then(|s| s.opened)), at, kind);
    match job.iteration_ended(spec, false, at.end) {
        Some(it) => sample.ending(it),
        None => sample,
    }
}
