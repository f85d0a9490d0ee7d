//! The closed model: each connection sends its next request as soon as its reply is read.
//!
//! The loop sleeps on every socket at once; one wake-up reads all the replies that arrived
//! and sends as many requests, in two system calls per request.

use super::conns::{Conns, Listen};
use super::{Seconds, EXPIRE_EVERY, SHUTDOWN_POLL, TICK};
use crate::engine::shutdown::Shutdown;
use crate::engine::worker::INTERRUPT_GRACE;
use std::time::Instant;

/// Keeps this worker's share of the concurrency busy until the stop condition; true when
/// interrupted.
pub(super) fn run(mut conns: Conns<'_>, shutdown: &Shutdown, seconds: &mut Seconds<'_>) -> bool {
    let worker = seconds.worker;
    let mut stopping = false;
    let mut interrupted = false;
    let mut give_up: Option<Instant> = None;
    let mut next_expiry = Instant::now() + EXPIRE_EVERY;
    loop {
        let now = Instant::now();
        if now >= next_expiry {
            conns.expire(now);
            next_expiry = now + EXPIRE_EVERY;
        }
        seconds.roll(now);
        if !interrupted && shutdown.is_triggered() {
            interrupted = true;
            stopping = true;
            conns.drop_waiting();
            give_up = Some(now + INTERRUPT_GRACE);
        }
        // Between stages a target of zero users sends nothing; after the last, the run ends.
        stopping |= worker.past_duration(now);
        let users = worker.closed_target(now);
        conns.trim_idle(users);
        while !stopping && conns.outstanding() < users {
            match worker.next_closed() {
                Some((intended, n)) => conns.enqueue(intended, n),
                None => stopping = true,
            }
        }
        conns.dispatch();
        conns.flush();
        if stopping && !conns.busy() {
            return interrupted;
        }
        if give_up.is_some_and(|g| now >= g) {
            return true;
        }
        let mut wake = seconds.next().min(next_expiry).min(now + SHUTDOWN_POLL);
        if conns.writing() {
            wake = wake.min(now + TICK);
        }
        if let Some(step) = conns.next_delayed() {
            wake = wake.min(step);
        }
        conns.sleep(Listen::All, wake);
    }
}
