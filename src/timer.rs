//! Precise timing on tokio: a Linux timerfd armed at an absolute monotonic time.
//!
//! tokio's timers fire on millisecond ticks. For the pacer that would add up to a millisecond
//! to every latency measured from the intended send time (and re-arming costs an eventfd
//! wake-up); for the built-in target it would answer a "2 ms" route after 3. A timerfd wakes
//! the event loop within microseconds of the due time instead.

use rustix::time::{
    clock_gettime, timerfd_create, timerfd_settime, ClockId, Itimerspec, TimerfdClockId,
    TimerfdFlags, TimerfdTimerFlags, Timespec,
};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// One re-armable alarm, registered with the current runtime.
pub struct Alarm {
    fd: AsyncFd<OwnedFd>,
}

impl Alarm {
    /// A disarmed alarm.
    pub fn new() -> io::Result<Alarm> {
        let fd = timerfd_create(
            TimerfdClockId::Monotonic,
            TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
        )?;
        // `with_interest` is deprecated because an arbitrary `AsRawFd` may close or swap its
        // descriptor; an `OwnedFd` moved in here cannot, and the crate forbids `unsafe`.
        #[allow(deprecated)]
        let fd = AsyncFd::with_interest(fd, Interest::READABLE)?;
        Ok(Alarm { fd })
    }

    /// Completes at `at` (at once if it has passed). Cancel-safe: a dropped wait leaves
    /// the alarm armed, and the next call re-arms it.
    pub async fn sleep_until(&self, at: Instant) -> io::Result<()> {
        let now = Instant::now();
        if at <= now {
            return Ok(());
        }
        arm(self.fd.get_ref(), at)?;
        loop {
            let mut guard = self.fd.readable().await?;
            let mut expirations = [0u8; 8];
            let read = rustix::io::read(guard.get_inner(), &mut expirations);
            // Reading the count drains the timerfd: clear readiness either way, so the next
            // wait goes to epoll instead of costing a read that fails with EAGAIN.
            guard.clear_ready();
            match read {
                Ok(_) => return Ok(()),
                Err(rustix::io::Errno::AGAIN) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// Arms the timerfd `fd` to fire once at `at` (at once if it has passed). std's `Instant` is
/// CLOCK_MONOTONIC on Linux; the conversion goes through a reading of both.
pub fn arm(fd: &impl AsFd, at: Instant) -> io::Result<()> {
    let base = clock_gettime(ClockId::Monotonic);
    let value = add(base, at.saturating_duration_since(Instant::now()));
    let zero = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    timerfd_settime(
        fd,
        TimerfdTimerFlags::ABSTIME,
        &Itimerspec {
            it_interval: zero,
            it_value: value,
        },
    )?;
    Ok(())
}

/// Sleeps for `delay` with microsecond precision, falling back to tokio's timer if no
/// timerfd can be had (for one-off waits such as the built-in target's delays).
pub async fn sleep_precise(delay: Duration) {
    let at = Instant::now() + delay;
    if let Ok(alarm) = Alarm::new() {
        if alarm.sleep_until(at).await.is_ok() {
            return;
        }
    }
    tokio::time::sleep_until(at.into()).await;
}

fn add(t: Timespec, d: Duration) -> Timespec {
    let nanos = t.tv_nsec as u64 + u64::from(d.subsec_nanos());
    Timespec {
        tv_sec: t.tv_sec + d.as_secs() as i64 + (nanos / 1_000_000_000) as i64,
        tv_nsec: (nanos % 1_000_000_000) as _,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timespec_addition_carries_nanoseconds() {
        let t = add(
            Timespec {
                tv_sec: 5,
                tv_nsec: 900_000_000,
            },
            Duration::from_millis(250),
        );
        assert_eq!((t.tv_sec, t.tv_nsec), (6, 150_000_000));
    }

    #[test]
    fn wakes_after_the_due_time_and_is_rearmable() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let alarm = Alarm::new().unwrap();
            for _ in 0..3 {
                let at = Instant::now() + Duration::from_millis(5);
                alarm.sleep_until(at).await.unwrap();
                assert!(Instant::now() >= at);
            }
            // A wait abandoned mid-way leaves nothing behind that fires early.
            let far = Instant::now() + Duration::from_secs(60);
            let _ = tokio::time::timeout(Duration::from_millis(1), alarm.sleep_until(far)).await;
            let at = Instant::now() + Duration::from_millis(5);
            alarm.sleep_until(at).await.unwrap();
            assert!(Instant::now() >= at);
        });
    }
}
