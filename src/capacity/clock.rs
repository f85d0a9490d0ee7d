//! Whether a search's latency follows the rate or the clock. A server that slows with time
//! whatever the load (a leak, a cache or table filling) makes every later probe slower
//! than an earlier one at a higher rate: a search reading that as the rate's doing finds a
//! boundary that moves as it looks ("unstable"), and a longer window only makes it worse.
//! The evidence is inside the probes: at one rate, through its own window, latency climbs
//! while the server completes all it is offered (no queue); when that happens in most probes
//! that kept up, at several rates, at about the same speed, the clock is the cause.

use super::steady::Unsteady;
use super::study::ProbeRecord;
use serde::{Deserialize, Serialize};

/// Fewest probes that must drift before the clock is named.
pub const MIN_DRIFTING: usize = 3;
/// The share of the probes that kept up which must drift.
pub const DRIFTING_SHARE: f64 = 2.0 / 3.0;
/// The fastest drift may be at most this many times the slowest: the clock drifts at one
/// speed whatever the rate, where a queue climbs faster the closer the rate is to the limit.
pub const SAME_SPEED: f64 = 4.0;

/// A search whose latency followed the clock: the evidence, as numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockDrift {
    /// The probes whose window drifted, by their number (from 1).
    pub probes: Vec<usize>,
    /// Their rates, req/s.
    pub rates: Vec<f64>,
    /// The slowest and fastest drift of their medians, µs per second.
    pub slowest_us_per_sec: f64,
    /// See `slowest_us_per_sec`.
    pub fastest_us_per_sec: f64,
    /// The first drifting probe's first median, µs.
    pub first_p50_us: u64,
    /// The last drifting probe's last median, µs.
    pub last_p50_us: u64,
}

/// The drift of a probe's window, µs per second, and its first and last medians, when its
/// latency climbed through it.
fn drift(p: &ProbeRecord) -> Option<(f64, u64, u64)> {
    p.unsteady.iter().find_map(|u| match u {
        Unsteady::LatencyDrifting {
            us_per_sec,
            first_p50_us,
            last_p50_us,
        }
        | Unsteady::LatencyClimbing {
            us_per_sec,
            first_p50_us,
            last_p50_us,
        } => Some((*us_per_sec, *first_p50_us, *last_p50_us)),
        _ => None,
    })
}

/// Whether the probes' latency followed the clock: `Some` with the evidence when at least
/// [`MIN_DRIFTING`] probes that kept up drifted — [`DRIFTING_SHARE`] of those that kept
/// up, at two rates or more, at speeds within [`SAME_SPEED`] of each other.
pub fn judge(probes: &[ProbeRecord]) -> Option<ClockDrift> {
    let kept_up: Vec<(usize, &ProbeRecord)> = probes
        .iter()
        .enumerate()
        .filter(|(_, p)| {
            !p.generator_bound
                && !p.unsteady.iter().any(|u| {
                    matches!(
                        u,
                        Unsteady::ThroughputShort { .. } | Unsteady::BacklogGrowing { .. }
                    )
                })
        })
        .collect();
    let drifting: Vec<(usize, &ProbeRecord, (f64, u64, u64))> = kept_up
        .iter()
        .filter_map(|(i, p)| drift(p).map(|d| (*i, *p, d)))
        .collect();
    if drifting.len() < MIN_DRIFTING
        || (drifting.len() as f64) < DRIFTING_SHARE * kept_up.len() as f64
    {
        return None;
    }
    let mut rates: Vec<f64> = drifting.iter().map(|(_, p, _)| p.rate).collect();
    rates.sort_by(f64::total_cmp);
    rates.dedup();
    if rates.len() < 2 {
        return None;
    }
    let speeds = drifting.iter().map(|(_, _, d)| d.0);
    let slowest = speeds.clone().fold(f64::INFINITY, f64::min);
    let fastest = speeds.fold(0.0, f64::max);
    if slowest <= 0.0 || fastest > slowest * SAME_SPEED {
        return None;
    }
    Some(ClockDrift {
        probes: drifting.iter().map(|(i, _, _)| i + 1).collect(),
        rates,
        slowest_us_per_sec: slowest,
        fastest_us_per_sec: fastest,
        first_p50_us: drifting[0].2 .1,
        last_p50_us: drifting[drifting.len() - 1].2 .2,
    })
}
