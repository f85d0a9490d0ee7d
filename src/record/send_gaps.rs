//! The rhythm of a Poisson run's sends, in expected arrivals of the schedule
//! (`engine::sends` measures it): the gap between each arrival as it left and the one that
//! left before it, and how long each span of consecutive arrivals took. What the summary
//! checks the sends against; histograms per interval, so shards, workers and seconds add up
//! losslessly.
//!
//! Gaps and spans both: a send that left up to [`SEND_RESOLUTION_US`] late moves the gaps on
//! either side of it by as much, a quarter of the mean gap at 5,000 req/s, so a check of
//! single gaps must allow that much and cannot see a bunch of sends whose gaps were small
//! anyway; a span's length moves by that much at its two ends only, while its spread grows
//! with its length. Spans are made long enough ([`arrivals_per_span`]) for the resolution to
//! be a tenth of their spread, so a check of them is blind to the timer and sharp to what a
//! generator behind its schedule does: send a bunch in no time, or keep an even pace of its
//! own; gaps see bunching shorter than a span.

use super::Histogram;

/// How precisely a send is trusted to leave at its due time, µs: the engine's timer wakes
/// 20–40 µs after a due time on the 2-core benchmark VM (lag p50 26 µs, p90 39 µs, at
/// 5,000 req/s without coalescing, measured from `--raw` records).
pub const SEND_RESOLUTION_US: f64 = 50.0;

/// The fewest consecutive sends of one generator a span holds.
const MIN_SENDS_PER_SPAN: u64 = 10;

/// Recorded units per expected arrival.
const SCALE: f64 = 1000.0;

/// How many of one generator's consecutive arrivals make a span, for a test whose schedule
/// peaks at `peak` req/s and that `shards` generators share (each sends every `shards`-th
/// arrival): enough that the resolution is at most a tenth of a span's spread (a span of
/// `k` of the whole test's arrivals spreads by √k).
pub fn arrivals_per_span(peak: f64, shards: u32) -> u64 {
    let band = peak * SEND_RESOLUTION_US / 1e6;
    let shards = u64::from(shards.max(1));
    let whole = (100.0 * band * band).ceil().min(1e12) as u64;
    whole.div_ceil(shards).max(MIN_SENDS_PER_SPAN)
}

/// The gaps and spans of a Poisson run's sends.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct SendGaps {
    /// Arrivals of the whole test between two consecutive sends of one generator: 1, or a
    /// shard's count of shards (it sends every N-th arrival). Poisson gaps of `k` arrivals
    /// are Erlang-k.
    pub stride: u64,
    /// Arrivals of the whole test each span covers: its sends times the stride.
    pub span: u64,
    /// The resolution at the schedule's peak rate, in expected arrivals.
    pub band: f64,
    /// The gaps between consecutive sends, in thousandths of an expected arrival.
    pub gaps: Histogram,
    /// How long each span took, in thousandths of an expected arrival.
    pub spans: Histogram,
}

impl SendGaps {
    /// No gaps yet, of sends `stride` arrivals apart in spans of `span` arrivals, trusted to
    /// `band`.
    pub fn new(stride: u64, span: u64, band: f64) -> SendGaps {
        SendGaps {
            stride,
            span,
            band,
            gaps: Histogram::default(),
            spans: Histogram::default(),
        }
    }

    /// Records the gap (in expected arrivals) before one send.
    #[inline]
    pub fn gap(&mut self, length: f64) {
        record(&mut self.gaps, length);
    }

    /// Records one span's length (in expected arrivals).
    #[inline]
    pub fn span(&mut self, length: f64) {
        record(&mut self.spans, length);
    }

    /// Adds every gap and span of `other` (of the same test).
    pub fn add(&mut self, other: &SendGaps) {
        // An empty record (the merge's start) takes the test's parameters from its parts.
        if self.span == 0 {
            (self.stride, self.span, self.band) = (other.stride, other.span, other.band);
        }
        self.gaps.add(&other.gaps);
        self.spans.add(&other.spans);
    }
}

/// Records `length` in expected arrivals (a negative one counts as 0).
fn record(h: &mut Histogram, length: f64) {
    h.record_value((length.max(0.0) * SCALE).round() as u64);
}

/// The lengths `h` holds, in expected arrivals, with how often each was met, in increasing
/// order.
pub fn points(h: &Histogram) -> Vec<(f64, u64)> {
    let h = h.inner();
    h.iter_recorded()
        .map(|v| {
            let at = h.median_equivalent(v.value_iterated_to());
            (at as f64 / SCALE, v.count_at_value())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_long_enough_for_the_resolution_and_shared_by_shards() {
        // 5,000 req/s: the resolution is a quarter of the mean gap; 10 sends span 10 arrivals.
        assert_eq!(arrivals_per_span(5000.0, 1), 10);
        // 40,000 req/s: two mean gaps, so spans of 400 arrivals (a spread of 20).
        assert_eq!(arrivals_per_span(40_000.0, 1), 400);
        assert_eq!(arrivals_per_span(40_000.0, 3), 134);
        assert_eq!(arrivals_per_span(100.0, 4), 10);
    }

    #[test]
    fn lengths_keep_three_digits_add_up_and_survive_the_log() {
        let mut a = SendGaps::new(1, 10, 0.25);
        let mut b = SendGaps::default();
        for x in [0.0, 0.0004, 9.5, 10.0, 31.5] {
            a.span(x);
            a.gap(x / 10.0);
        }
        b.span(10.0);
        b.span(-0.1);
        let mut sum = SendGaps::default();
        sum.add(&b);
        sum.add(&a);
        let line = serde_json::to_string(&sum).unwrap();
        let back: SendGaps = serde_json::from_str(&line).unwrap();
        assert_eq!((back.stride, back.span, back.band), (1, 10, 0.25));
        assert_eq!((back.spans.len(), back.gaps.len()), (7, 5));
        let spans = points(&back.spans);
        assert_eq!(
            spans[0],
            (0.0, 3),
            "0, a rounding of 0.0004, and a negative one"
        );
        let ten = spans.iter().find(|p| (p.0 - 10.0).abs() < 0.01).unwrap();
        assert_eq!(ten.1, 2);
        assert!(spans.iter().any(|p| (p.0 - 31.5).abs() / 31.5 < 0.001));
        assert!(spans.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(points(&back.gaps).iter().any(|p| (p.0 - 3.15).abs() < 0.01));
    }
}
