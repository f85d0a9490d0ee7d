//! The closed model's cap on the start rate (`--max-rate`): users wait for a start slot
//! so the run's starts never outpace the cap, however fast the server answers.
//!
//! Slots are the open model's own constant schedule (`ConstantPacer`), claimed run-wide by
//! every worker's users. A user blocked by a slow server does not bank the slots it missed:
//! more than [`CATCH_UP`] behind, the missed slots are skipped, so a stall is not followed
//! by a burst above the cap.

use crate::plan::Rate;
use crate::schedule::ConstantPacer;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How far behind the schedule the cap lets starts catch up. A driver wakes about once a
/// millisecond, so a window of a few wake-ups keeps the cap's rate exact at high rates while
/// bounding what a stall can release at once (the cap's rate times this window).
const CATCH_UP: Duration = Duration::from_millis(10);

/// The start-rate cap shared by a run's workers.
#[derive(Debug)]
pub struct StartCap {
    pacer: ConstantPacer,
    /// The next slot of the schedule not yet taken.
    next: AtomicU64,
}

/// What the cap says to a user that wants to start a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// Start now.
    Now,
    /// No slot before this instant: wait until then.
    At(Instant),
}

impl StartCap {
    /// A cap of `rate` starts per second.
    pub fn new(rate: Rate) -> StartCap {
        StartCap {
            pacer: ConstantPacer::new(rate),
            next: AtomicU64::new(0),
        }
    }

    /// Takes a slot for a start at `now` (the run began at `start`), or says when the next
    /// one opens.
    pub fn take(&self, start: Instant, now: Instant) -> Slot {
        let elapsed = now.saturating_duration_since(start);
        // Slots before this one are older than the catch-up window: skipped, not banked.
        let oldest = match elapsed.checked_sub(CATCH_UP) {
            Some(behind) => self.pacer.due_by(behind),
            None => 0,
        };
        let mut next = self.next.load(Ordering::Relaxed);
        loop {
            let slot = next.max(oldest);
            let due = self.pacer.due(slot);
            if due > elapsed {
                return Slot::At(start + due);
            }
            match self.next.compare_exchange_weak(
                next,
                slot + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Slot::Now,
                Err(actual) => next = actual,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Starts granted at each instant of a clock that asks as often as users would.
    fn granted(cap: &StartCap, start: Instant, asks: impl Iterator<Item = Duration>) -> u64 {
        asks.map(|at| {
            let mut n = 0;
            while cap.take(start, start + at) == Slot::Now {
                n += 1;
            }
            n
        })
        .sum()
    }

    #[test]
    fn starts_never_outpace_the_cap_whoever_asks() {
        let start = Instant::now();
        // 100/s asked for by eager users every millisecond for 2 s: 200 starts (slots 0..=199
        // fall due by 1.999 s; slot 200 at 2 s is the last ask's).
        let cap = StartCap::new(Rate(100.0));
        let n = granted(&cap, start, (0..2000).map(Duration::from_millis));
        assert_eq!(n, 200);
        // The refusal says when the next slot opens.
        let cap = StartCap::new(Rate(100.0));
        assert_eq!(cap.take(start, start), Slot::Now);
        assert_eq!(
            cap.take(start, start),
            Slot::At(start + Duration::from_millis(10))
        );
    }

    #[test]
    fn a_stall_does_not_release_a_burst() {
        let start = Instant::now();
        let cap = StartCap::new(Rate(1000.0));
        // Nobody asks for a second (a frozen server), then everyone asks at once: only the
        // catch-up window's slots go, not the second's thousand.
        let n = granted(&cap, start, std::iter::once(Duration::from_secs(1)));
        assert_eq!(n, 10, "the 10 ms catch-up window's slots at 1000/s");
    }
}
