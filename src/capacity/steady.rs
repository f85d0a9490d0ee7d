//! Whether a probe held its rate steadily: a p99 under the bound at the end of a short
//! window says nothing if a queue was growing through it.
//!
//! A rate is sustainable only when the server completes what it is offered and nothing
//! accumulates: by Little's law a growing backlog of requests in flight, or a latency that
//! climbs second after second, is a queue that would break any objective given time. Each
//! trend is a least-squares slope over the window's whole seconds, allowed a growth of
//! [`QUEUE_GROWTH`] of the rate plus three standard errors of its own noise.

use crate::store::IntervalDigest;
pub use crate::summary::diagnosis::trend::Unsteady;
use crate::summary::diagnosis::trend::{self, slope, QUEUE_GROWTH};

/// The shortest window a probe is judged on, whatever the objectives.
pub const MIN_WINDOW_SECS: f64 = 5.0;
/// The window is at least this many times the objectives' latency bound: a queue has to
/// show above a second's noise before the window ends.
pub const WINDOW_PER_BOUND: f64 = 20.0;
/// The window when none is asked and the objectives allow one this short.
pub const DEFAULT_WINDOW_SECS: f64 = 10.0;
/// The longest window a search takes: ten minutes per probe.
pub const MAX_WINDOW_SECS: f64 = 600.0;

/// The shortest window that can show a queue under objectives whose tightest latency
/// bound is `bound_secs` (none: only [`MIN_WINDOW_SECS`]).
pub fn min_window_secs(bound_secs: Option<f64>) -> f64 {
    bound_secs.map_or(MIN_WINDOW_SECS, |b| {
        (b * WINDOW_PER_BOUND).max(MIN_WINDOW_SECS)
    })
}

/// The window each probe is judged on: `asked`, or when none is, the longer of
/// [`DEFAULT_WINDOW_SECS`] and the shortest that can show a queue under the objectives'
/// tightest latency bound. A window asked shorter than that is refused.
pub fn window(
    objectives: &[crate::plan::Slo],
    asked: Option<std::time::Duration>,
) -> Result<std::time::Duration, super::CapacityError> {
    use crate::plan::Metric;
    let bound_secs = objectives
        .iter()
        .filter(|o| matches!(o.metric, Metric::Quantile(_) | Metric::Mean | Metric::Max))
        .map(|o| o.bound / 1e6)
        .reduce(f64::min);
    let least = min_window_secs(bound_secs);
    let bound = || crate::units::fmt_us_f(bound_secs.unwrap_or(0.0) * 1e6);
    if least > MAX_WINDOW_SECS {
        return Err(super::CapacityError::Search(format!(
            "a latency bound of {} needs windows of {}s to see a queue grow; search with a tighter objective",
            bound(),
            least.ceil()
        )));
    }
    match asked {
        None => Ok(std::time::Duration::from_secs_f64(
            least.max(DEFAULT_WINDOW_SECS).ceil(),
        )),
        Some(w) if w.as_secs_f64() + 1e-9 < least => Err(super::CapacityError::Search(format!(
            "--window {} is too short to see a queue grow{}: use at least {}s",
            humantime::format_duration(w),
            if bound_secs.is_some() {
                format!(
                    " under a {} latency bound (20 times it, and at least 5s)",
                    bound()
                )
            } else {
                String::new()
            },
            least.ceil()
        ))),
        Some(w) => Ok(w),
    }
}

/// Judges the window's whole seconds at `offered` req/s; an empty list is steady.
pub fn judge(offered: f64, window: &[&IntervalDigest]) -> Vec<Unsteady> {
    let mut out = trend::queue(offered, window);
    if window.is_empty() || offered <= 0.0 {
        return out;
    }
    let medians: Vec<f64> = window.iter().map(|d| d.p50_us as f64).collect();
    if let Some((us_per_sec, se)) = slope(&medians) {
        if us_per_sec > QUEUE_GROWTH * 1e6 + 3.0 * se {
            out.push(Unsteady::LatencyClimbing {
                us_per_sec,
                first_p50_us: window[0].p50_us,
                last_p50_us: window[window.len() - 1].p50_us,
            });
        }
    }
    // Slower than a queue's climb, a rise is still a rise: with nothing piling up, the
    // server changed while the probe ran (the diagnosis' own test of a drift).
    if out.is_empty() {
        let seconds: Vec<IntervalDigest> = window.iter().map(|d| (*d).clone()).collect();
        if let Some(r) = trend::rise(&seconds) {
            out.push(Unsteady::LatencyDrifting {
                us_per_sec: r.us_per_sec,
                first_p50_us: r.first_p50_us,
                last_p50_us: r.last_p50_us,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn second(sent: u64, completed: u64, p50_us: u64) -> IntervalDigest {
        IntervalDigest {
            index: 0,
            sent,
            completed,
            failed: 0,
            p50_us,
            p90_us: p50_us,
            p99_us: p50_us,
            max_us: p50_us,
            health: Default::default(),
            warmup_sent: 0,
            warmup_completed: 0,
            warmup_failed: 0,
            stage: Some(1),
            server: None,
            ..Default::default()
        }
    }

    fn judged(seconds: &[IntervalDigest], offered: f64) -> Vec<Unsteady> {
        judge(offered, &seconds.iter().collect::<Vec<_>>())
    }

    #[test]
    fn a_server_keeping_up_is_steady_through_noise() {
        let seconds: Vec<_> = [2_000, 2_400, 1_900, 2_600, 2_100, 2_300]
            .iter()
            .enumerate()
            .map(|(i, &p50)| second(1490, 1490 - (i as u64 % 2), p50))
            .collect();
        assert_eq!(judged(&seconds, 1490.0), vec![]);
    }

    #[test]
    fn two_percent_over_capacity_is_a_queue_even_with_p99_under_the_bound() {
        // 1530 offered to a server completing 1500: 30 more in flight each second, and each
        // second's requests wait 20 ms longer.
        let seconds: Vec<_> = (0..6)
            .map(|i| second(1530, 1500, 20_000 + 20_000 * i))
            .collect();
        let why = judged(&seconds, 1530.0);
        assert!(
            matches!(why[0], Unsteady::ThroughputShort { completed, .. } if completed == 1500.0),
            "{why:?}"
        );
        assert!(why
            .iter()
            .any(|w| matches!(w, Unsteady::BacklogGrowing { per_sec, .. } if (per_sec - 30.0).abs() < 1e-6)));
        assert!(why.iter().any(|w| matches!(
            w,
            Unsteady::LatencyClimbing {
                last_p50_us: 120_000,
                ..
            }
        )));
    }

    #[test]
    fn the_window_is_tied_to_the_latency_bound() {
        assert_eq!(min_window_secs(None), 5.0);
        assert_eq!(min_window_secs(Some(0.010)), 5.0);
        assert_eq!(min_window_secs(Some(0.5)), 10.0);
    }
}
