//! A native (exponential-bucket) histogram built from HDR histograms, cumulative since the
//! run's start as Prometheus histograms are.
//!
//! Each HDR bucket's count goes to the exponential bucket that holds the bucket's value
//! (its highest equivalent value, the value headroom's own percentiles report), so a
//! quantile read from the native histogram lies in the same exponential bucket as
//! headroom's: within a factor 2^(2^-SCHEMA) of it.

use super::prompb::{BucketSpan, Histogram as Wire};
use crate::record::Histogram;
use std::collections::BTreeMap;

/// Bucket schema: boundaries grow by 2^(2^-5) ≈ 1.0219, so a quantile is within 2.2 %.
pub const SCHEMA: i32 = 5;

/// Buckets a series may hold: a latency from 1 µs to a day spans 37 doublings of 32
/// buckets, under this; the bound holds whatever the values.
const MAX_BUCKETS: usize = 2048;

/// A cumulative native histogram of seconds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Native {
    /// Observations.
    pub count: u64,
    /// Their sum in seconds (from the HDR buckets' middle values: HDR keeps no exact sum).
    pub sum: f64,
    /// Count per bucket index: bucket i holds (2^((i-1)/2^SCHEMA), 2^(i/2^SCHEMA)].
    pub buckets: BTreeMap<i32, u64>,
}

/// The bucket index of `secs` (> 0) under `schema`: the i with base^(i-1) < secs <= base^i.
pub fn bucket_index(secs: f64, schema: i32) -> i32 {
    let scale = f64::from(schema).exp2();
    let upper = |i: i32| (f64::from(i) / scale).exp2();
    let mut i = (secs.log2() * scale).ceil() as i32;
    // log2 rounds; settle a value that lands on a boundary on the side the definition says.
    if secs > upper(i) {
        i += 1;
    } else if secs <= upper(i - 1) {
        i -= 1;
    }
    i
}

/// The upper bound of bucket `i` under `schema`, in seconds.
pub fn bucket_upper(i: i32, schema: i32) -> f64 {
    (f64::from(i) / f64::from(schema).exp2()).exp2()
}

impl Native {
    /// Adds every value of `h` (microseconds).
    pub fn add(&mut self, h: &Histogram) {
        let inner = h.inner();
        for v in inner.iter_recorded() {
            let n = v.count_at_value();
            let us = v.value_iterated_to();
            let i = bucket_index(us as f64 / 1e6, SCHEMA);
            if self.buckets.len() >= MAX_BUCKETS && !self.buckets.contains_key(&i) {
                // Past the bound the value joins the nearest bucket kept: counts stay exact,
                // only its place is coarser.
                let near = self
                    .buckets
                    .range(i..)
                    .next()
                    .or_else(|| self.buckets.range(..i).next_back())
                    .map(|(k, _)| *k)
                    .unwrap_or(i);
                *self.buckets.entry(near).or_default() += n;
            } else {
                *self.buckets.entry(i).or_default() += n;
            }
            self.count += n;
            self.sum += inner.median_equivalent(us) as f64 / 1e6 * n as f64;
        }
    }

    /// The histogram as a remote-write sample at `timestamp_ms`.
    pub fn to_wire(&self, timestamp_ms: i64) -> Wire {
        let mut spans: Vec<BucketSpan> = Vec::new();
        let mut deltas = Vec::with_capacity(self.buckets.len());
        let (mut prev_index, mut prev_count) = (None::<i32>, 0i64);
        for (&i, &n) in &self.buckets {
            match (prev_index, spans.last_mut()) {
                (Some(p), Some(span)) if i == p + 1 => span.length += 1,
                (Some(p), _) => spans.push(BucketSpan {
                    offset: i - p - 1,
                    length: 1,
                }),
                (None, _) => spans.push(BucketSpan {
                    offset: i,
                    length: 1,
                }),
            }
            let n = i64::try_from(n).unwrap_or(i64::MAX);
            deltas.push(n - prev_count);
            prev_count = n;
            prev_index = Some(i);
        }
        Wire {
            count_int: Some(self.count),
            sum: self.sum,
            schema: SCHEMA,
            // Latencies are at least 1 µs (the HDR floor): nothing falls in a zero bucket.
            zero_threshold: 0.0,
            zero_count_int: Some(0),
            positive_spans: spans,
            positive_deltas: deltas,
            reset_hint: 0,
            timestamp: timestamp_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_value_falls_in_the_bucket_whose_bounds_hold_it() {
        for schema in [0, 3, 5, 8] {
            for secs in [1e-6, 0.001, 0.0123, 0.02, 0.5, 1.0, 2.0, 3.7, 30.0] {
                let i = bucket_index(secs, schema);
                assert!(
                    bucket_upper(i - 1, schema) < secs,
                    "{secs} s schema {schema}"
                );
                assert!(secs <= bucket_upper(i, schema), "{secs} s schema {schema}");
            }
        }
        // Powers of two are upper bounds: 1 s is the top of bucket 0.
        assert_eq!(bucket_index(1.0, 5), 0);
        assert_eq!(bucket_index(2.0, 5), 32);
    }

    #[test]
    fn counts_add_up_and_spans_encode_the_gaps() {
        let mut h = Histogram::new();
        for _ in 0..10 {
            h.record(Duration::from_millis(1));
        }
        h.record(Duration::from_millis(4));
        let mut n = Native::default();
        n.add(&h);
        n.add(&h);
        assert_eq!(n.count, 22);
        assert_eq!(n.buckets.values().sum::<u64>(), 22);
        let wire = n.to_wire(7);
        assert_eq!(wire.count_int, Some(22));
        let (first, second) = (bucket_index(0.001, SCHEMA), bucket_index(0.004, SCHEMA));
        assert_eq!(wire.positive_spans.len(), 2);
        assert_eq!(wire.positive_spans[0].offset, first);
        assert_eq!(wire.positive_spans[1].offset, second - first - 1);
        assert_eq!(wire.positive_deltas, vec![20, 2 - 20]);
        assert!(
            (n.sum - (20.0 * 0.001 + 2.0 * 0.004)).abs() < 1e-4,
            "{}",
            n.sum
        );
    }
}
