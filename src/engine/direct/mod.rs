//! Driver 1: HTTP/1.1 on epoll, without a runtime (the hot path).
//!
//! An event loop costs a wake-up, a task poll and a readiness re-arm for every reply; on a
//! two-core machine that is CPU taken from the server under test. A direct worker is one
//! thread with its own epolls: it sleeps until a nanosecond deadline, opens connections and
//! shakes hands by hand, and reads replies with their kernel arrival time.

mod clock;
mod closed;
mod conn;
mod open;
mod poller;
mod table;

use super::spec::RunSpec;
use super::tally::{Seconds, WorkerReport};
use super::turns::Users;
use crate::record::Part;
use std::num::NonZeroU64;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};
use table::Table;
use tokio_util::sync::CancellationToken;

/// While a request is only partly written, the longest a loop sleeps before writing more.
const TICK: Duration = Duration::from_millis(1);
/// While replies are outstanding, the longest the open model's loop sleeps before reading
/// them. Replies carry their kernel arrival stamps, so reading later costs no precision; at
/// this bound, from 500 req/s up the next send wakes the loop first and reading costs no
/// wake-up of its own (on the benchmark VM a wake-up costs more CPU than a request).
const READ_WITHIN: Duration = Duration::from_millis(2);
/// How often timeouts are checked: a scan of every connection, so not on every wake-up.
const EXPIRE_EVERY: Duration = Duration::from_millis(10);
/// The longest a loop sleeps without looking at the run's cancellation.
const CANCEL_POLL: Duration = Duration::from_millis(20);

/// What both loops do on every wake-up besides sending: expire what outlived its timeout,
/// hand over finished seconds, and notice that the run was stopped.
struct Chores<'a> {
    seconds: Seconds,
    cancel: &'a CancellationToken,
    interrupted: bool,
    give_up: Option<Instant>,
    next_expiry: Instant,
}

impl Chores<'_> {
    /// Does the chores due at `now`; true on the wake-up that first sees the run stopped
    /// (the requests not sent yet are dropped, those in flight get a grace period).
    fn run(&mut self, table: &mut Table<'_>, now: Instant) -> bool {
        if now >= self.next_expiry {
            table.expire(now);
            self.next_expiry = now + EXPIRE_EVERY;
        }
        self.seconds.roll(now, &mut table.tally);
        if self.interrupted || !self.cancel.is_cancelled() {
            return false;
        }
        self.interrupted = true;
        table.drop_waiting();
        self.give_up = Some(now + super::INTERRUPT_GRACE);
        true
    }

    /// True once the grace period after a stop is over.
    fn gave_up(&self, now: Instant) -> bool {
        self.give_up.is_some_and(|g| now >= g)
    }

    /// The latest a loop may sleep until, from `now`: the end of the second in progress, or
    /// a look at the run's cancellation. Timeouts wait for a wake-up that comes anyway (a
    /// wake-up of their own would cost the open model CPU on every request's account).
    fn wake_by(&self, now: Instant) -> Instant {
        self.seconds.next().min(now + CANCEL_POLL)
    }
}

/// Runs worker `index` to completion on this thread.
pub fn run(
    spec: &RunSpec,
    index: usize,
    cancel: &CancellationToken,
    tx: Sender<Part>,
) -> std::io::Result<WorkerReport> {
    let pace = &spec.pace;
    let connections = spec
        .conn
        .shape
        .per_instance(spec.conn.max_connections, index);
    let mut table = Table::new(spec, index, connections)?;
    // Timeouts are otherwise rounded up by the default 50 µs timer slack: lag on every send.
    let _ = rustix::thread::set_current_timer_slack(NonZeroU64::new(1));
    std::thread::sleep(pace.start.saturating_duration_since(Instant::now()));
    let mut chores = Chores {
        seconds: Seconds::new(index, pace, tx),
        cancel,
        interrupted: false,
        give_up: None,
        next_expiry: Instant::now() + EXPIRE_EVERY,
    };
    let interrupted = match &pace.pacer {
        Some(schedule) => open::run(&mut table, pace, schedule, index, &mut chores),
        None => closed::run(&mut table, &Users::new(pace, index), &mut chores),
    };
    // What the grace after a stop left unanswered is failed, so every request sent is
    // counted (in the last second, as a timeout is counted in the second it expires).
    table.abandon_inflight();
    Ok(chores.seconds.finish(&mut table.tally, interrupted))
}
