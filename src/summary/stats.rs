//! Latency statistics read from an HDR histogram.

use super::confidence::PercentileIntervals;
use crate::record::Histogram;
use serde::{Deserialize, Serialize};

/// Distribution of a latency, in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Number of values.
    pub count: u64,
    /// Smallest.
    pub min_us: u64,
    /// Arithmetic mean.
    pub mean_us: f64,
    /// Median.
    pub p50_us: u64,
    /// 90th percentile.
    pub p90_us: u64,
    /// 95th percentile.
    pub p95_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// 99.9th percentile.
    pub p999_us: u64,
    /// Largest.
    pub max_us: u64,
    /// Standard deviation.
    pub stdev_us: f64,
    /// The 95 % confidence intervals of the percentiles (absent when there are no values,
    /// and from summaries stored before they were kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci: Option<PercentileIntervals>,
}

impl Stats {
    /// Statistics of `h` (all zero when empty).
    pub fn of(h: &Histogram) -> Stats {
        if h.is_empty() {
            return Stats::default();
        }
        let i = h.inner();
        Stats {
            count: i.len(),
            min_us: i.min(),
            mean_us: i.mean(),
            p50_us: i.value_at_quantile(0.50),
            p90_us: i.value_at_quantile(0.90),
            p95_us: i.value_at_quantile(0.95),
            p99_us: i.value_at_quantile(0.99),
            p999_us: i.value_at_quantile(0.999),
            max_us: i.max(),
            stdev_us: i.stdev(),
            ci: Some(PercentileIntervals::of(h)),
        }
    }

    /// Statistics of `h`, or `None` when it is empty.
    pub fn of_nonempty(h: &Histogram) -> Option<Stats> {
        (!h.is_empty()).then(|| Stats::of(h))
    }
}
