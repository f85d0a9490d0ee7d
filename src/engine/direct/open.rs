//! The open model: requests leave on the pacer's tick, replies are read on the next one.
//!
//! The loop sleeps only until the next request is due (or at most [`READ_WITHIN`] while
//! replies are outstanding), on an epoll that holds nothing but connections being opened: at
//! 5,000 req/s that is one wake-up per coalescing window instead of one per reply. Arrival
//! times come from the kernel, so reading a reply late loses no precision.

use super::poller::Listen;
use super::table::Table;
use super::{Chores, READ_WITHIN, TICK};
use crate::engine::spec::Pace;
use crate::engine::turns::DueWalk;
use crate::schedule::Schedule;
use std::time::Instant;

/// Runs worker `index`'s share of an open-model schedule; true when interrupted.
pub(super) fn run(
    table: &mut Table<'_>,
    pace: &Pace,
    schedule: &Schedule,
    index: usize,
    chores: &mut Chores<'_>,
) -> bool {
    let mut walk = DueWalk::new(pace, schedule, index);
    loop {
        table.flush();
        table.harvest();
        let now = Instant::now();
        if chores.run(table, now) {
            walk.stop();
        }
        // Everything due by now, and what falls due within the coalescing window, leaves
        // now: early, never late, so one wake-up serves several requests.
        let next_due = walk.take(now + pace.coalesce, |at, n| table.enqueue(at, n));
        table.dispatch();
        if next_due.is_none() && !table.busy() {
            return chores.interrupted;
        }
        if chores.gave_up(now) {
            return true;
        }
        let mut wake = chores.wake_by(now);
        if let Some(due) = next_due {
            wake = wake.min(due);
        }
        if table.awaiting() {
            wake = wake.min(now + READ_WITHIN);
        }
        if table.writing() {
            wake = wake.min(now + TICK);
        }
        if let Some(at) = table.next_event() {
            wake = wake.min(at);
        }
        table.sleep(Listen::Dials, wake);
    }
}
