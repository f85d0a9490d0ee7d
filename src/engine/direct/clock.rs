//! Turning the kernel's receive stamps (realtime) into the process's monotonic `Instant`s.
//!
//! The two clocks are read one after the other; a preemption between the two reads (on a
//! busy or virtual machine, tens of microseconds) would shift every stamp converted with
//! that pair, making replies look earlier than they came. So the pair is read between two
//! monotonic readings, again when those lie far apart, and anchored at their midpoint: the
//! error is at most half the tightest window seen.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A window between the two monotonic readings tight enough to trust.
const TIGHT: Duration = Duration::from_micros(2);
/// Readings tried before the tightest one is taken.
const TRIES: usize = 4;

/// Both clocks, read at (nearly) the same moment: once per wake-up, shared by every reply
/// read in it.
pub struct Clock {
    instant: Instant,
    real: SystemTime,
    /// Half the window between the monotonic readings around the realtime one: how far off
    /// a converted stamp can be.
    error: Duration,
}

impl Clock {
    /// Reads both clocks now.
    pub fn now() -> Clock {
        let mut best: Option<(Duration, Clock)> = None;
        for _ in 0..TRIES {
            let before = Instant::now();
            let real = SystemTime::now();
            let after = Instant::now();
            let window = after - before;
            let clock = Clock {
                instant: before + window / 2,
                real,
                error: window / 2 + Duration::from_nanos(1),
            };
            if best.as_ref().is_none_or(|(w, _)| window < *w) {
                best = Some((window, clock));
            }
            if window <= TIGHT {
                break;
            }
        }
        best.expect("at least one reading").1
    }

    /// The monotonic time of this reading.
    #[cfg(test)]
    pub fn instant(&self) -> Instant {
        self.instant
    }

    /// How far off a converted stamp can be.
    pub fn error(&self) -> Duration {
        self.error
    }

    /// The monotonic time of a kernel (realtime) stamp.
    pub fn at(&self, ts: &nix::sys::time::TimeSpec) -> Instant {
        let stamped = UNIX_EPOCH + Duration::new(ts.tv_sec().max(0) as u64, ts.tv_nsec() as u32);
        match self.real.duration_since(stamped) {
            Ok(ago) => self.instant.checked_sub(ago).unwrap_or(self.instant),
            // Stamped after the reading (it came while the wake-up's batch was handled):
            // now is no earlier than its arrival.
            Err(_) => Instant::now().max(self.instant),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_convert_to_the_moment_they_name() {
        let clock = Clock::now();
        let real = clock.real - Duration::from_millis(3);
        let since = real.duration_since(UNIX_EPOCH).unwrap();
        let ts = nix::sys::time::TimeSpec::new(since.as_secs() as i64, since.subsec_nanos() as i64);
        let at = clock.at(&ts);
        let d = clock.instant() - at;
        assert!(
            d.abs_diff(Duration::from_millis(3)) < Duration::from_micros(1),
            "{d:?}"
        );
        let later = real + Duration::from_millis(10);
        let since = later.duration_since(UNIX_EPOCH).unwrap();
        let ts = nix::sys::time::TimeSpec::new(since.as_secs() as i64, since.subsec_nanos() as i64);
        assert!(clock.at(&ts) >= clock.instant());
    }
}
