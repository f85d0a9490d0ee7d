//! A pause in opening connections while the generator is short of descriptors or ports.
//! Without it, every waiting request would fail at once and the next would fail the same
//! way: thousands of failures for nothing sent. With it, each attempt fails once, and the
//! next attempt comes after a pause that doubles while the shortage lasts.

use crate::sample::ErrorKind;
use std::time::{Duration, Instant};

/// The first pause.
const MIN: Duration = Duration::from_millis(10);
/// The longest pause.
const MAX: Duration = Duration::from_secs(1);

/// The pause of one pool of connections.
#[derive(Debug, Default)]
pub struct Backoff {
    until: Option<Instant>,
    next: Duration,
}

impl Backoff {
    /// True when a failure to open a connection for this reason calls for a pause: the
    /// generator's own shortage, which retrying at once cannot cure.
    pub fn applies(kind: ErrorKind) -> bool {
        matches!(
            kind,
            ErrorKind::TooManyOpenFiles | ErrorKind::PortExhaustion
        )
    }

    /// True while connections should not be opened.
    pub fn active(&self, now: Instant) -> bool {
        self.until.is_some_and(|u| now < u)
    }

    /// When the pause in force at `now` ends; `None` when there is none.
    pub fn pending(&self, now: Instant) -> Option<Instant> {
        self.until.filter(|&u| now < u)
    }

    /// An attempt failed for want of descriptors or ports at `now`: pause, longer each time.
    pub fn hit(&mut self, now: Instant) {
        self.next = (self.next * 2).clamp(MIN, MAX);
        self.until = Some(now + self.next);
    }

    /// A connection opened: the shortage is over.
    pub fn clear(&mut self) {
        *self = Backoff::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_double_up_to_a_second_and_clear_on_success() {
        let now = Instant::now();
        let mut b = Backoff::default();
        assert!(!b.active(now));
        b.hit(now);
        assert_eq!(b.pending(now), Some(now + MIN));
        assert!(b.active(now) && !b.active(now + MIN));
        assert_eq!(
            b.pending(now + MIN),
            None,
            "a pause that has passed is none"
        );
        for _ in 0..20 {
            b.hit(now);
        }
        assert_eq!(b.pending(now), Some(now + MAX));
        b.clear();
        assert!(!b.active(now));
        assert!(Backoff::applies(ErrorKind::TooManyOpenFiles));
        assert!(!Backoff::applies(ErrorKind::Refused));
    }
}
