//! What a Poisson run's sends looked like: the gap between each arrival as it actually left
//! and the one that left before it, on any worker, and how long each span of consecutive
//! arrivals took, on the schedule's count axis (`record::SendGaps` says why both).
//!
//! On that axis (the expected count of arrivals by a time, which ramps and stages change the
//! pace of) Poisson arrivals are a unit-rate process whatever the rate does: gaps of `k` of
//! the whole test's arrivals last an Erlang-k time. A generator that fell behind and caught
//! up sends a bunch in no time; one that cannot keep up sends at an even pace of its own;
//! either moves gaps and spans away from Erlang, and the summary's check sees it. The cost is
//! two shared atomics per arrival and a histogram entry or two.

use crate::record::{arrivals_per_span, SendGaps, SEND_RESOLUTION_US};
use crate::schedule::Pacer;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The run-wide record of arrivals sent, shared by the workers.
#[derive(Debug)]
pub struct SendMeter {
    pacer: Pacer,
    start: Instant,
    /// The whole test's arrivals between two of this generator's.
    stride: u64,
    /// This generator's sends per span.
    sends: u64,
    /// The resolution on the count axis.
    band: f64,
    /// Arrivals sent so far, run-wide.
    count: AtomicU64,
    /// The latest count an arrival left at, as `f64` bits: counts are non-negative, and
    /// the bits of non-negative floats order as the floats do, so `fetch_max` keeps the
    /// latest whichever worker posts first. Zero: no arrival yet.
    last: AtomicU64,
    /// The count at which the span in progress began, as `f64` bits.
    began: AtomicU64,
}

/// What one arrival's send measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Left {
    /// The gap since the latest send before it, in expected arrivals; `None` for the first.
    pub gap: Option<f64>,
    /// The length of the span it ends, when it ends one.
    pub span: Option<f64>,
}

impl SendMeter {
    /// The meter of a run paced by `pacer` from `start`, whose whole test peaks at `peak`
    /// req/s over `shards` generators.
    pub fn new(pacer: &Pacer, start: Instant, peak: f64, shards: u32) -> SendMeter {
        SendMeter {
            pacer: pacer.clone(),
            start,
            stride: u64::from(shards.max(1)),
            sends: arrivals_per_span(peak, shards),
            band: peak * SEND_RESOLUTION_US / 1e6,
            count: AtomicU64::new(0),
            last: AtomicU64::new(0),
            began: AtomicU64::new(0),
        }
    }

    /// No gaps yet, of this meter's sizes.
    pub fn record(&self) -> SendGaps {
        SendGaps::new(self.stride, self.sends * self.stride, self.band)
    }

    /// An arrival left at `at`. Two workers stamping within the same instant may post out
    /// of stamp order: the later-posted then counts a gap of 0 (its true gap is shorter
    /// than that race), and a span boundary moves by less than it.
    #[inline]
    pub fn left(&self, at: Instant) -> Left {
        let now = self
            .pacer
            .expected_by(at.saturating_duration_since(self.start));
        let before = f64::from_bits(self.last.fetch_max(now.to_bits(), Ordering::Relaxed));
        let i = self.count.fetch_add(1, Ordering::Relaxed);
        let span = (i % self.sends == 0)
            .then(|| f64::from_bits(self.began.swap(now.to_bits(), Ordering::Relaxed)))
            .filter(|_| i > 0)
            .map(|began| (now - began).max(0.0));
        Left {
            // Every count after the start is above 0: 0 is the first send's predecessor.
            gap: (before > 0.0).then(|| (now - before).max(0.0)),
            span,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Rate;
    use crate::schedule::ConstantPacer;
    use std::time::Duration;

    #[test]
    fn gaps_and_spans_are_counted_in_expected_arrivals_across_workers() {
        let start = Instant::now();
        let pacer = Pacer::Constant(ConstantPacer::new(Rate(1000.0)));
        let meter = SendMeter::new(&pacer, start, 1000.0, 1);
        let record = meter.record();
        assert_eq!((record.stride, record.span, record.band), (1, 10, 0.05));
        let at = |us| start + Duration::from_micros(us);
        let first = meter.left(at(3000));
        assert_eq!(
            (first.gap, first.span),
            (None, None),
            "the first begins the first span"
        );
        // Posted after a later send: a gap of 0, never a negative one.
        let next = meter.left(at(5000));
        assert!((next.gap.unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(meter.left(at(4000)).gap, Some(0.0));
        let rest: Vec<Left> = (3..21).map(|i| meter.left(at(3000 + 2000 * i))).collect();
        // Ten sends from the first end its span: 20 ms of 1,000 req/s, 20 expected arrivals.
        assert!((rest[7].span.unwrap() - 20.0).abs() < 1e-9, "{rest:?}");
        assert_eq!(rest.iter().filter(|l| l.span.is_some()).count(), 2);
        assert!((rest[17].span.unwrap() - 20.0).abs() < 1e-9);
        // A shard of 4 sends every 4th arrival: its gaps are 4 arrivals, its spans 40.
        let shard = SendMeter::new(&pacer, start, 1000.0, 4).record();
        assert_eq!((shard.stride, shard.span), (4, 40));
    }
}
