//! Workers that drive their sockets themselves, without tokio: HTTP/1.1 in both models.
//!
//! An event loop costs a wake-up, a task poll and a readiness re-arm for every reply; on a
//! two-core machine that is CPU taken from the server under test. A direct worker is one
//! thread with its own epolls: it sleeps with nanosecond timeouts (`epoll_pwait2`), opens
//! connections and shakes hands by hand, and reads replies with their kernel arrival time.
//! HTTP/2, and kernels older than Linux 5.11, use the tokio workers instead.

mod closed;
mod conns;
mod ticked;

use super::shutdown::Shutdown;
use super::worker::{Worker, WorkerReport};
use crate::record::Part;
use conns::Conns;
use std::num::NonZeroU64;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// While a request is only partly written, the longest a loop sleeps before writing more.
const TICK: Duration = Duration::from_millis(1);
/// While replies are outstanding, the longest the open model's loop sleeps before reading
/// them. Replies carry their kernel arrival stamps, so reading later costs no precision; at
/// this bound, from 500 req/s up the next send wakes the loop first and reading costs no
/// wake-up of its own (on the benchmark VM a wake-up costs more CPU than a request).
const READ_WITHIN: Duration = Duration::from_millis(2);
/// How often timeouts are checked: a scan of every connection, so not on every wake-up.
const EXPIRE_EVERY: Duration = Duration::from_millis(10);
/// The longest a loop sleeps without looking for Ctrl-C.
const SHUTDOWN_POLL: Duration = Duration::from_millis(20);

/// What both loops do on every wake-up besides sending: expire what outlived its timeout,
/// hand over finished seconds, and notice Ctrl-C.
struct Chores {
    interrupted: bool,
    give_up: Option<Instant>,
    next_expiry: Instant,
}

impl Chores {
    fn new() -> Chores {
        Chores {
            interrupted: false,
            give_up: None,
            next_expiry: Instant::now() + EXPIRE_EVERY,
        }
    }

    /// Does the chores due at `now`; true on the wake-up that first sees Ctrl-C (the
    /// requests not sent yet are dropped, those in flight get a grace period).
    fn run(
        &mut self,
        conns: &mut Conns<'_>,
        seconds: &mut Seconds<'_>,
        shutdown: &Shutdown,
        now: Instant,
    ) -> bool {
        if now >= self.next_expiry {
            conns.expire(now);
            self.next_expiry = now + EXPIRE_EVERY;
        }
        seconds.roll(now);
        if self.interrupted || !shutdown.is_triggered() {
            return false;
        }
        self.interrupted = true;
        conns.drop_waiting();
        self.give_up = Some(now + super::worker::INTERRUPT_GRACE);
        true
    }

    /// True once the grace period after Ctrl-C is over.
    fn gave_up(&self, now: Instant) -> bool {
        self.give_up.is_some_and(|g| now >= g)
    }
}

/// Hands the worker's record to the aggregator at each one-second boundary of the run.
struct Seconds<'a> {
    worker: &'a Worker,
    tx: &'a Sender<Part>,
    next: Instant,
    index: u64,
}

impl Seconds<'_> {
    /// When the current interval ends.
    fn next(&self) -> Instant {
        self.next
    }

    /// Hands over every interval that has ended by `now`.
    fn roll(&mut self, now: Instant) {
        while now >= self.next {
            self.index += 1;
            // A closed channel means the run is being torn down; the loop ends on its own.
            let _ = self.worker.hand_over(self.tx, self.index);
            self.next += Duration::from_secs(1);
        }
    }
}

/// Runs the worker to completion on this thread; `None` when the kernel lacks what a
/// direct worker needs and the caller must use an event loop.
pub(super) fn run(worker: &Worker, shutdown: &Shutdown, tx: &Sender<Part>) -> Option<WorkerReport> {
    let conns = Conns::new(worker).ok()?;
    // Timeouts are otherwise rounded up by the default 50 µs timer slack: lag on every send.
    let _ = rustix::thread::set_current_timer_slack(NonZeroU64::new(1));
    let run = &worker.run;
    std::thread::sleep(run.start.saturating_duration_since(Instant::now()));
    let mut seconds = Seconds {
        worker,
        tx,
        next: run.start + Duration::from_secs(1),
        index: 0,
    };
    let interrupted = match &run.pacer {
        Some(pacer) => ticked::pace(conns, pacer, shutdown, &mut seconds),
        None => closed::run(conns, shutdown, &mut seconds),
    };
    Some(worker.finish(tx, interrupted))
}
