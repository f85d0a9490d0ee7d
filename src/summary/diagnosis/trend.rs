//! What the seconds of a span say over time: whether latency trended, whether requests
//! piled up (a queue) or not (the server changed), and whether lateness was confined to a
//! moment (a transient).
//!
//! Trends are least-squares slopes over whole seconds with their standard errors, so a trend
//! is only called one when it stands out of its own noise (three standard errors), and only
//! when it is large enough to matter to a reader.

use super::{TransientCause, LAG_LIMIT};
use crate::store::IntervalDigest;
use serde::{Deserialize, Serialize};

/// Fewest whole seconds a trend is fitted on.
pub const MIN_POINTS: usize = 4;
/// A latency trend counts when its slope stands this many standard errors out of the
/// seconds' own noise (more than the usual three: per-second medians are not independent,
/// a garbage collection or a busy neighbour spans seconds)…
pub const RISE_SIGNIFICANCE: f64 = 4.0;
/// …and the median of the span's last third is higher than its first third's by at least
/// this much (a 1 ms → 2 ms change on loopback is the machine's noise, not the server's;
/// 2 ms more every ten seconds is 12 ms a minute, which a soak test cares about).
pub const RISE_MIN_US: u64 = 2_000;
/// Requests in flight may grow by this share of the rate per second before they count as
/// a queue (and latency by as many seconds per second, what such a backlog adds).
pub const QUEUE_GROWTH: f64 = 0.0025;
/// The share of the offered rate a server must complete over a span to have kept up.
pub const THROUGHPUT_SHARE: f64 = 0.995;
/// Lateness confined to this many first seconds of a span is its start, not its state.
pub const START_SECS: u64 = 2;

/// A least-squares line through `ys` at x = 0, 1, 2, …: its slope and the slope's
/// standard error; `None` with fewer than [`MIN_POINTS`] points.
pub fn slope(ys: &[f64]) -> Option<(f64, f64)> {
    let n = ys.len();
    if n < MIN_POINTS {
        return None;
    }
    let nf = n as f64;
    let mean_x = (nf - 1.0) / 2.0;
    let mean_y = ys.iter().sum::<f64>() / nf;
    let sxx: f64 = (0..n).map(|i| (i as f64 - mean_x).powi(2)).sum();
    let sxy: f64 = ys
        .iter()
        .enumerate()
        .map(|(i, y)| (i as f64 - mean_x) * (y - mean_y))
        .sum();
    let b = sxy / sxx;
    let a = mean_y - b * mean_x;
    let residual: f64 = ys
        .iter()
        .enumerate()
        .map(|(i, y)| (y - (a + b * i as f64)).powi(2))
        .sum();
    let se = (residual / (nf - 2.0) / sxx).sqrt();
    Some((b, se))
}

/// A latency trend through a span.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rise {
    /// Median of the first third's per-second medians, µs.
    pub first_p50_us: u64,
    /// Of the last third's, µs.
    pub last_p50_us: u64,
    /// The slope of the per-second medians, µs per second.
    pub us_per_sec: f64,
    /// Seconds fitted.
    pub secs: u64,
}

/// The seconds with answers, whose medians a trend is read from.
fn answered(seconds: &[IntervalDigest]) -> Vec<&IntervalDigest> {
    seconds.iter().filter(|d| d.completed > 0).collect()
}

/// The latency trend through `seconds` (whole seconds of one load, in order), when latency
/// climbed: significantly ([`RISE_SIGNIFICANCE`]) and by [`RISE_MIN_US`] from the first
/// third to the last.
pub fn rise(seconds: &[IntervalDigest]) -> Option<Rise> {
    let s = answered(seconds);
    let medians: Vec<f64> = s.iter().map(|d| d.p50_us as f64).collect();
    let (us_per_sec, se) = slope(&medians)?;
    if us_per_sec <= RISE_SIGNIFICANCE * se || us_per_sec <= 0.0 {
        return None;
    }
    let (first, last) = thirds(&s, |d| d.p50_us);
    (last.saturating_sub(first) >= RISE_MIN_US).then_some(Rise {
        first_p50_us: first,
        last_p50_us: last,
        us_per_sec,
        secs: s.len() as u64,
    })
}

/// On a span too short to fit a trend (fewer than [`MIN_POINTS`] answered seconds, at least
/// two): the climb from its first second's median to its last's, when it is at least
/// [`RISE_MIN_US`]. Alone it says nothing (a slow start reads the same); beside requests
/// piling up ([`queue`]'s throughput short of the offer) it is a queue seen early.
pub fn short_rise(seconds: &[IntervalDigest]) -> Option<Rise> {
    let s = answered(seconds);
    if s.len() < 2 || s.len() >= MIN_POINTS {
        return None;
    }
    let (first, last) = (s[0].p50_us, s[s.len() - 1].p50_us);
    (last.saturating_sub(first) >= RISE_MIN_US).then(|| Rise {
        first_p50_us: first,
        last_p50_us: last,
        us_per_sec: (last - first) as f64 / (s.len() - 1) as f64,
        secs: s.len() as u64,
    })
}

/// How much the generator's send lag p99 rose from the span's first third of seconds to its
/// last, µs (0 when it fell, or in runs stored without it): latency from the intended time
/// includes the lag, so only a rise beyond the lag's happened at the server.
pub fn lag_rise(seconds: &[IntervalDigest]) -> u64 {
    let s = answered(seconds);
    if s.is_empty() {
        return 0;
    }
    let (first, last) = thirds(&s, |d| d.lag_p99_us);
    last.saturating_sub(first)
}

/// The median of `value` over the first third of `seconds` and over the last (at least one
/// second each): a trend's two ends, robust to a stray second.
fn thirds(seconds: &[&IntervalDigest], value: impl Fn(&IntervalDigest) -> u64) -> (u64, u64) {
    let third = (seconds.len() / 3).max(1);
    let median = |part: &[&IntervalDigest]| {
        let mut v: Vec<u64> = part.iter().map(|d| value(d)).collect();
        v.sort_unstable();
        v[v.len() / 2]
    };
    (
        median(&seconds[..third]),
        median(&seconds[seconds.len() - third..]),
    )
}

/// How a span (a capacity probe's window) was not steady: its requests piled up
/// ([`queue`]), or its latency climbed or drifted through it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum Unsteady {
    /// The server completed less than it was offered.
    ThroughputShort {
        /// Offered, req/s.
        offered: f64,
        /// Completed, req/s, over the window.
        completed: f64,
    },
    /// Requests in flight grew through the window: a queue.
    BacklogGrowing {
        /// Growth, requests per second.
        per_sec: f64,
        /// What was allowed, requests per second.
        allowed: f64,
    },
    /// Latency climbed through the window faster than a queue of the allowed growth would
    /// make it.
    LatencyClimbing {
        /// Climb of the per-second median, µs per second.
        us_per_sec: f64,
        /// Median of the window's first whole second, µs.
        first_p50_us: u64,
        /// Of its last, µs.
        last_p50_us: u64,
    },
    /// Latency rose through the window while the server completed all it was offered: not
    /// a queue; the server changed while the probe ran.
    LatencyDrifting {
        /// Climb of the per-second median, µs per second.
        us_per_sec: f64,
        /// Median of the window's first third, µs.
        first_p50_us: u64,
        /// Of its last third, µs.
        last_p50_us: u64,
    },
}

/// Requests a span may complete fewer than its share allows, whatever its length: at a few
/// requests per second one answer falling just past the span's end is a percent.
pub const THROUGHPUT_SLACK: f64 = 2.0;

/// `seconds` up to the last in which the load was still sent (at least half the typical
/// second's sends): the seconds after a stop or the end of sending carry the last answers
/// and no new requests, and counted in they read as a backlog emptying, hiding the queue
/// that was there while the load was on.
pub fn while_sending(seconds: &[IntervalDigest]) -> Vec<&IntervalDigest> {
    let mut sends: Vec<u64> = seconds.iter().map(|d| d.sent).filter(|&n| n > 0).collect();
    sends.sort_unstable();
    let typical = sends.get(sends.len() / 2).copied().unwrap_or(0);
    let end = seconds
        .iter()
        .rposition(|d| d.sent.saturating_mul(2) >= typical)
        .map_or(0, |i| i + 1);
    seconds[..end].iter().collect()
}

/// Whether requests piled up through `seconds` offered `offered` req/s (open model): the
/// throughput fell short of the offer (by more than [`THROUGHPUT_SHARE`] and
/// [`THROUGHPUT_SLACK`] requests), or the backlog (sent minus completed, summed) grew by
/// more than [`QUEUE_GROWTH`] of the rate per second plus three standard errors.
pub fn queue(offered: f64, seconds: &[&IntervalDigest]) -> Vec<Unsteady> {
    let mut out = Vec::new();
    if seconds.is_empty() || offered <= 0.0 {
        return out;
    }
    let secs = seconds.len() as f64;
    let completed = seconds.iter().map(|d| d.completed).sum::<u64>() as f64 / secs;
    if completed * secs < offered * secs * THROUGHPUT_SHARE - THROUGHPUT_SLACK {
        out.push(Unsteady::ThroughputShort { offered, completed });
    }
    let backlog: Vec<f64> = seconds
        .iter()
        .scan(0.0, |b, d| {
            *b += d.sent as f64 - d.completed as f64;
            Some(*b)
        })
        .collect();
    if let Some((per_sec, se)) = slope(&backlog) {
        let allowed = offered * QUEUE_GROWTH + 3.0 * se;
        if per_sec > allowed {
            out.push(Unsteady::BacklogGrowing { per_sec, allowed });
        }
    }
    out
}

/// A moment of lateness: its cause, its seconds, and its worst second's lag p99 (µs).
#[derive(Debug, Clone, PartialEq)]
pub struct Moment {
    /// What it was.
    pub cause: TransientCause,
    /// Its seconds (indices from the run's start).
    pub seconds: Vec<u64>,
    /// The worst of their lag p99s, µs.
    pub lag_p99_us: u64,
}

/// Whether the seconds in which requests left late (lag p99 above [`LAG_LIMIT`]) were a
/// moment: all within the span's first [`START_SECS`] seconds (connections opening, when any
/// were opened then), or one second alone — and a second on time came after them, so it
/// passed. `None` when lateness was spread or never ended, or when the seconds carry no lag
/// (runs stored before it was kept).
pub fn moment(seconds: &[IntervalDigest]) -> Option<Moment> {
    let limit = LAG_LIMIT.as_micros() as u64;
    let late: Vec<&IntervalDigest> = seconds.iter().filter(|d| d.lag_p99_us > limit).collect();
    let first = seconds.first()?.index;
    let worst = late.iter().map(|d| d.lag_p99_us).max()?;
    let last_late = late.last()?.index;
    if !seconds
        .iter()
        .any(|d| d.index > last_late && d.lag_p99_us <= limit)
    {
        return None;
    }
    let at_start = late.iter().all(|d| d.index < first + START_SECS);
    let cause = if at_start && late.iter().any(|d| d.connects > 0) {
        TransientCause::ConnectionOpening
    } else if at_start {
        TransientCause::StartUp
    } else if late.len() == 1 {
        TransientCause::OneSlowSecond
    } else {
        return None;
    };
    Some(Moment {
        cause,
        seconds: late.iter().map(|d| d.index).collect(),
        lag_p99_us: worst,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn second(index: u64, sent: u64, completed: u64, p50_us: u64) -> IntervalDigest {
        IntervalDigest {
            index,
            sent,
            completed,
            failed: 0,
            p50_us,
            p90_us: p50_us,
            p99_us: p50_us,
            max_us: p50_us,
            ..Default::default()
        }
    }

    #[test]
    fn slopes_and_their_errors() {
        let (b, se) = slope(&[1.0, 3.0, 5.0, 7.0, 9.0]).unwrap();
        assert!((b - 2.0).abs() < 1e-9 && se < 1e-9);
        let (b, se) = slope(&[5.0, 6.0, 4.0, 5.0, 6.0, 4.0]).unwrap();
        assert!(b.abs() < 0.5 && se > 0.1, "{b} {se}");
        assert!(slope(&[1.0, 2.0, 3.0]).is_none());
    }

    #[test]
    fn a_half_millisecond_a_second_is_a_rise_and_noise_is_not() {
        // The server of the issue: 0.5 ms more every second, from 1 ms, over 10 s.
        let drifting: Vec<_> = (0..10)
            .map(|i| second(i, 100, 100, 1_000 + 500 * i))
            .collect();
        let r = rise(&drifting).expect("a rise");
        assert!((r.us_per_sec - 500.0).abs() < 1.0, "{r:?}");
        assert!(r.last_p50_us >= r.first_p50_us + 3_000, "{r:?}");
        // Noise around 2 ms, and a doubling of a few hundred microseconds, are not.
        let noisy: Vec<_> = [2_000, 2_400, 1_900, 2_600, 2_100, 2_300, 1_800, 2_500]
            .iter()
            .enumerate()
            .map(|(i, &p)| second(i as u64, 100, 100, p))
            .collect();
        assert_eq!(rise(&noisy), None);
        let small: Vec<_> = (0..8).map(|i| second(i, 100, 100, 200 + 60 * i)).collect();
        assert_eq!(rise(&small), None);
    }

    #[test]
    fn a_queue_is_told_from_a_server_that_keeps_up() {
        // 1530 offered to a server completing 1500: 30 more in flight each second.
        let over: Vec<_> = (0..6).map(|i| second(i, 1530, 1500, 20_000)).collect();
        let q = queue(1530.0, &over.iter().collect::<Vec<_>>());
        assert!(q.iter().any(
            |w| matches!(w, Unsteady::BacklogGrowing { per_sec, .. } if (per_sec - 30.0).abs() < 1e-6)
        ));
        // Slower each second but completing what it is sent: no queue.
        let kept: Vec<_> = (0..6)
            .map(|i| second(i, 100, 100, 1_000 + 500 * i))
            .collect();
        assert!(queue(100.0, &kept.iter().collect::<Vec<_>>()).is_empty());
    }

    #[test]
    fn lateness_at_the_start_or_in_one_second_is_a_moment() {
        let mut s: Vec<_> = (10..16).map(|i| second(i, 100, 100, 1_000)).collect();
        assert_eq!(moment(&s), None, "nothing late");
        s[0].lag_p99_us = 30_000;
        s[0].connects = 40;
        s[1].lag_p99_us = 12_000;
        let m = moment(&s).unwrap();
        assert_eq!(m.cause, TransientCause::ConnectionOpening);
        assert_eq!((m.seconds, m.lag_p99_us), (vec![10, 11], 30_000));
        s[0].connects = 0;
        assert_eq!(moment(&s).unwrap().cause, TransientCause::StartUp);
        let mut one: Vec<_> = (0..6).map(|i| second(i, 100, 100, 1_000)).collect();
        one[4].lag_p99_us = 50_000;
        assert_eq!(moment(&one).unwrap().cause, TransientCause::OneSlowSecond);
        one[2].lag_p99_us = 50_000;
        assert_eq!(moment(&one), None, "two seconds apart is not a moment");
        // Late to the end, even of a span of two seconds, never passed.
        let mut short: Vec<_> = (0..2).map(|i| second(i, 100, 100, 1_000)).collect();
        short[0].lag_p99_us = 30_000;
        short[1].lag_p99_us = 30_000;
        assert_eq!(moment(&short), None);
        let mut tail: Vec<_> = (0..6).map(|i| second(i, 100, 100, 1_000)).collect();
        tail[5].lag_p99_us = 50_000;
        assert_eq!(
            moment(&tail),
            None,
            "a last second late has no second after it"
        );
    }
}
