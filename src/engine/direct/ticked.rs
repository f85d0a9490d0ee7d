//! The open model: requests leave on the pacer's tick, replies are read on the next one.
//!
//! The loop sleeps only until the next request is due (or at most [`READ_WITHIN`] while
//! replies are outstanding), on an epoll that holds nothing but connections being opened: at
//! 5,000 req/s that is one wake-up per coalescing window instead of one per reply. Arrival
//! times come from the kernel, so reading a reply late loses no precision.

use super::conns::{Conns, Listen};
use super::{Chores, Seconds, READ_WITHIN, SHUTDOWN_POLL, TICK};
use crate::engine::shutdown::Shutdown;
use crate::schedule::{within, Pacer, Stride};
use std::time::Instant;

/// Runs this worker's share of a constant-rate schedule; true when interrupted.
pub(super) fn pace(
    mut conns: Conns<'_>,
    pacer: &Pacer,
    shutdown: &Shutdown,
    seconds: &mut Seconds<'_>,
) -> bool {
    let worker = seconds.worker;
    let run = &worker.run;
    let mut stride = Stride::new(worker.index, run.threads);
    let mut sending = true;
    let mut chores = Chores::new();
    loop {
        conns.flush();
        conns.harvest();
        let now = Instant::now();
        if chores.run(&mut conns, seconds, shutdown, now) {
            sending = false;
        }
        let mut next_due = None;
        if sending {
            // Everything due by now, and what falls due within the coalescing window, leaves
            // now: early, never late, so one wake-up serves several requests.
            let horizon = now + run.coalesce;
            loop {
                let n = stride.peek();
                let Some(due) = pacer.due(n).filter(|&d| within(&run.stop, n, d)) else {
                    sending = false;
                    break;
                };
                let at = run.start + due;
                if at > horizon {
                    next_due = Some(at);
                    break;
                }
                worker.note_scheduled();
                conns.enqueue(at, n);
                stride.advance();
            }
        }
        conns.dispatch();
        if !sending && !conns.busy() {
            return chores.interrupted;
        }
        if chores.gave_up(now) {
            return true;
        }
        let poll = now + SHUTDOWN_POLL;
        let mut wake = next_due.map_or(poll, |d| d.min(poll)).min(seconds.next());
        if conns.awaiting() {
            wake = wake.min(now + READ_WITHIN);
        }
        if conns.writing() {
            wake = wake.min(now + TICK);
        }
        if let Some(step) = conns.next_delayed() {
            wake = wake.min(step);
        }
        conns.sleep(Listen::Dials, wake);
    }
}
