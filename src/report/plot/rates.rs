//! Counts of each stored second as rates. The last interval of a run is usually cut short
//! (the attack stops mid-second, then answers drain), and its raw count drawn as a
//! per-second value reads as a collapse to zero; each count is divided by the part of its
//! second that could hold it instead, and a sliver too short to be a rate is left out.

use crate::store::IntervalDigest;

/// A part of a second shorter than this gives no rate worth drawing.
pub const SHORTEST_WINDOW_SECS: f64 = 0.2;

/// When a run could send and when it could complete, in seconds since its start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    /// Sending stops here (the end of the attack).
    pub sending_secs: f64,
    /// Completions stop here (the attack plus the wait for the last answers).
    pub completing_secs: f64,
}

/// Which of the two windows a count falls in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// Requests sent.
    Sending,
    /// Answers (or errors) completed.
    Completing,
}

impl Span {
    /// The seconds of interval `index` within `window`, 0..=1.
    pub fn covered(&self, index: u64, window: Window) -> f64 {
        let end = match window {
            Window::Sending => self.sending_secs,
            Window::Completing => self.completing_secs,
        };
        (end - index as f64).clamp(0.0, 1.0)
    }
}

/// `count` of each interval per second of `window`, at the interval's start; `span` `None`
/// (a run that never recorded its end) takes every interval as whole.
pub fn per_second(
    digests: &[IntervalDigest],
    span: Option<Span>,
    window: Window,
    count: impl Fn(&IntervalDigest) -> u64,
) -> Vec<(f64, f64)> {
    digests
        .iter()
        .filter_map(|d| {
            let secs = span.map_or(1.0, |s| s.covered(d.index, window));
            (secs >= SHORTEST_WINDOW_SECS).then(|| (d.index as f64, count(d) as f64 / secs))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::Health;

    fn digest(index: u64, sent: u64, completed: u64) -> IntervalDigest {
        IntervalDigest {
            index,
            sent,
            completed,
            failed: 0,
            p50_us: 0,
            p90_us: 0,
            p99_us: 0,
            max_us: 0,
            health: Health::default(),
            warmup_sent: 0,
            warmup_completed: 0,
            warmup_failed: 0,
            stage: None,
            server: None,
            ..Default::default()
        }
    }

    #[test]
    fn the_last_partial_second_is_a_rate_not_a_collapse() {
        // 8 s of 1,000/s, then 0.5 s in which 401 answers drain.
        let mut d: Vec<IntervalDigest> = (0..8).map(|i| digest(i, 1000, 1000)).collect();
        d.push(digest(8, 0, 401));
        let span = Some(Span {
            sending_secs: 8.0,
            completing_secs: 8.5,
        });
        let done = per_second(&d, span, Window::Completing, |d| d.completed);
        assert_eq!(done.last(), Some(&(8.0, 802.0)));
        // Nothing could be sent after the attack: no point, not a drop to zero.
        let sent = per_second(&d, span, Window::Sending, |d| d.sent);
        assert_eq!(sent.len(), 8);
        assert!(sent.iter().all(|p| p.1 == 1000.0));
    }

    #[test]
    fn a_sliver_of_a_second_is_left_out_and_an_unknown_end_counts_whole() {
        let d = vec![digest(0, 100, 100), digest(1, 5, 5)];
        let span = Some(Span {
            sending_secs: 1.05,
            completing_secs: 1.1,
        });
        assert_eq!(
            per_second(&d, span, Window::Completing, |d| d.completed),
            vec![(0.0, 100.0)]
        );
        assert_eq!(
            per_second(&d, None, Window::Completing, |d| d.completed),
            vec![(0.0, 100.0), (1.0, 5.0)]
        );
    }
}
