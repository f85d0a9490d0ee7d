//! The closed model: each connection sends its next request as soon as its reply is read.
//!
//! The loop sleeps on every socket at once; one wake-up reads all the replies that arrived
//! and sends as many requests, in two system calls per request.

use super::conns::{Conns, Listen};
use super::{Chores, Seconds, SHUTDOWN_POLL, TICK};
use crate::engine::shutdown::Shutdown;
use std::time::Instant;

/// Keeps this worker's share of the concurrency busy until the stop condition; true when
/// interrupted.
pub(super) fn run(mut conns: Conns<'_>, shutdown: &Shutdown, seconds: &mut Seconds<'_>) -> bool {
    let worker = seconds.worker;
    let mut stopping = false;
    let mut chores = Chores::new();
    loop {
        let now = Instant::now();
        stopping |= chores.run(&mut conns, seconds, shutdown, now);
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
            return chores.interrupted;
        }
        if chores.gave_up(now) {
            return true;
        }
        let mut wake = seconds
            .next()
            .min(chores.next_expiry)
            .min(now + SHUTDOWN_POLL);
        if conns.writing() {
            wake = wake.min(now + TICK);
        }
        if let Some(step) = conns.next_delayed() {
            wake = wake.min(step);
        }
        conns.sleep(Listen::All, wake);
    }
}
