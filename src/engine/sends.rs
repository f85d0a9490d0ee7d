//! What a Poisson run's sends looked like: how long each span of consecutive arrivals took to
//! leave, on any worker, measured on the schedule's count axis (`record::SendSpans` says why
//! spans and how long).
//!
//! On that axis (the expected count of arrivals by a time, which ramps and stages change the
//! pace of) Poisson arrivals are a unit-rate process whatever the rate does, so a span of `k`
//! of the whole test's arrivals lasts an Erlang-k time. A generator that fell behind and
//! caught up sends a bunch in no time; one that cannot keep up sends at an even pace of its
//! own; either moves the spans' lengths away from Erlang-k, and the summary's check sees it.
//! The cost is a shared counter per arrival and a histogram entry per span.

use crate::record::{arrivals_per_span, SendSpans, SEND_RESOLUTION_US};
use crate::schedule::Pacer;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The run-wide record of arrivals sent, shared by the workers.
#[derive(Debug)]
pub struct SendMeter {
    pacer: Pacer,
    start: Instant,
    /// This generator's sends per span.
    sends: u64,
    /// The whole test's arrivals per span, and the resolution on the count axis.
    arrivals: u64,
    band: f64,
    /// Arrivals sent so far, run-wide.
    count: AtomicU64,
    /// The count of the schedule at which the span in progress began, as `f64` bits.
    began: AtomicU64,
}

impl SendMeter {
    /// The meter of a run paced by `pacer` from `start`, whose whole test peaks at `peak`
    /// req/s over `shards` generators.
    pub fn new(pacer: &Pacer, start: Instant, peak: f64, shards: u32) -> SendMeter {
        let sends = arrivals_per_span(peak, shards);
        SendMeter {
            pacer: pacer.clone(),
            start,
            sends,
            arrivals: sends * u64::from(shards.max(1)),
            band: peak * SEND_RESOLUTION_US / 1e6,
            count: AtomicU64::new(0),
            began: AtomicU64::new(0),
        }
    }

    /// No spans yet, of this meter's length.
    pub fn spans(&self) -> SendSpans {
        SendSpans::new(self.arrivals, self.band)
    }

    /// An arrival left at `at`: the length of the span it ends, in expected arrivals, when it
    /// ends one. The span boundaries go by the order sends are counted in; two workers
    /// stamping within the same instant may count out of stamp order, which moves a
    /// boundary by less than that instant.
    #[inline]
    pub fn left(&self, at: Instant) -> Option<f64> {
        let i = self.count.fetch_add(1, Ordering::Relaxed);
        if i % self.sends != 0 {
            return None;
        }
        let now = self
            .pacer
            .expected_by(at.saturating_duration_since(self.start));
        let began = f64::from_bits(self.began.swap(now.to_bits(), Ordering::Relaxed));
        (i > 0).then(|| (now - began).max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Rate;
    use crate::schedule::ConstantPacer;
    use std::time::Duration;

    #[test]
    fn spans_of_ten_sends_are_counted_in_expected_arrivals() {
        let start = Instant::now();
        let pacer = Pacer::Constant(ConstantPacer::new(Rate(1000.0)));
        let meter = SendMeter::new(&pacer, start, 1000.0, 1);
        let spans = meter.spans();
        assert_eq!((spans.arrivals, spans.band), (10, 0.05));
        let at = |ms| start + Duration::from_millis(ms);
        let ended: Vec<Option<f64>> = (0..21).map(|i| meter.left(at(3 + 2 * i))).collect();
        assert_eq!(ended[0], None, "the first send begins the first span");
        assert!(ended[1..10].iter().all(Option::is_none));
        // Sends 2 ms apart at 1,000 req/s: 10 sends span 20 expected arrivals.
        assert!((ended[10].unwrap() - 20.0).abs() < 1e-9);
        assert!((ended[20].unwrap() - 20.0).abs() < 1e-9);
        // A shard of 4 covers 4 times the arrivals in as many sends.
        let shard = SendMeter::new(&pacer, start, 1000.0, 4);
        assert_eq!(shard.spans().arrivals, 40);
    }
}
