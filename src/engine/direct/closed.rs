//! The closed model: each user sends its next request as soon as its reply is read.
//!
//! The loop sleeps on every socket at once; one wake-up reads all the replies that arrived
//! and sends as many requests, in two system calls per request.

use super::poller::Listen;
use super::table::Table;
use super::{Chores, TICK};
use crate::engine::turns::{Turn, Users};
use std::time::Instant;

/// Keeps this worker's users busy until the stop condition; true when interrupted.
pub(super) fn run(table: &mut Table<'_>, users: &Users<'_>, chores: &mut Chores<'_>) -> bool {
    let mut stopping = false;
    loop {
        let now = Instant::now();
        stopping |= chores.run(table, now);
        // Between stages a target of zero users sends nothing; after the last, the run ends.
        stopping |= users.over(now);
        let target = users.target(now);
        table.trim_idle(target);
        // The start-rate cap's next slot, when it held users back.
        let mut capped = None;
        while !stopping && table.outstanding() < target {
            match users.next(now) {
                Turn::Go(intended, n) => table.enqueue(intended, n),
                Turn::Wait(at) => {
                    capped = Some(at);
                    break;
                }
                Turn::Over => stopping = true,
            }
        }
        table.dispatch();
        table.flush();
        if stopping && !table.busy() {
            return chores.interrupted;
        }
        if chores.gave_up(now) {
            return true;
        }
        // A frozen server wakes nobody: timeouts need a wake-up of their own.
        let mut wake = chores.wake_by(now).min(chores.next_expiry);
        if table.writing() {
            wake = wake.min(now + TICK);
        }
        if let Some(at) = table.next_event() {
            wake = wake.min(at);
        }
        if let Some(at) = capped {
            wake = wake.min(at);
        }
        table.sleep(Listen::All, wake);
    }
}
