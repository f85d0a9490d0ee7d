//! Judging a run against its service-level objectives, from the recorded histograms, and how
//! sure each verdict is: the measured value's 95 % confidence interval, and whether the bound
//! lies inside it.

use super::confidence::{self, Interval};
use super::regression::Unit;
use crate::plan::{Metric, Slo};
use crate::record::RequestStats;
use crate::store::RequestMeta;
use crate::units::{fmt_us, fmt_us_f};
use serde::{Deserialize, Serialize};

/// One objective and whether the run met it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SloVerdict {
    /// The objective as written.
    pub objective: String,
    /// The request it is about, when it is scoped to one (`slo.request`); `None` for the
    /// whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    /// What was measured, in the objective's unit ("1.204ms", "0.30%", "812.5 req/s"), or
    /// why nothing was ("no answered requests").
    pub measured: String,
    /// What was measured as a number with its unit, for reports and figures that need the
    /// number (never re-read from `measured`); `None` when nothing could be measured, and in
    /// summaries written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Measured>,
    /// True when the objective held.
    pub met: bool,
    /// How sure `met` is, when the metric has a confidence interval (percentiles, the mean
    /// and the error rate; not the maximum or the rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci: Option<SloCi>,
}

/// A measured value in its unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// The value, in `unit` (µs, a ratio, per second).
    pub value: f64,
    /// Its unit.
    pub unit: Unit,
}

impl Measured {
    /// The value of `metric` as measured: `None` for "nothing to measure" (NaN).
    pub fn of(metric: Metric, value: f64) -> Option<Measured> {
        let unit = match metric {
            Metric::Quantile(_) | Metric::Mean | Metric::Max => Unit::Micros,
            Metric::ErrorRate => Unit::Ratio,
            Metric::Rps => Unit::PerSecond,
        };
        value.is_finite().then_some(Measured { value, unit })
    }
}

/// The measured value's 95 % confidence interval against the objective's bound.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SloCi {
    /// The unit of `interval` and `bound`.
    pub unit: Unit,
    /// The interval of the measured value.
    pub interval: Interval<f64>,
    /// The objective's bound.
    pub bound: f64,
    /// The bound lies inside the interval: `met` is what was measured, but the samples
    /// cannot tell it from the other side of the bound (more requests would settle it).
    pub uncertain: bool,
}

impl SloCi {
    /// The interval of `metric` over `count` completions (`failures` of them failed) with the
    /// answered requests' `latency`, against `bound`; `None` for a metric without one.
    pub fn of(
        metric: Metric,
        bound: f64,
        count: u64,
        failures: u64,
        latency: &crate::record::Histogram,
    ) -> Option<SloCi> {
        let h = latency.inner();
        let (unit, interval) = match metric {
            Metric::Quantile(q) if q < 1.0 && !latency.is_empty() => {
                (Unit::Micros, confidence::quantile(latency, q).as_f64())
            }
            Metric::Mean if !latency.is_empty() => (
                Unit::Micros,
                confidence::mean(h.mean(), h.stdev(), h.len())?,
            ),
            Metric::ErrorRate => (Unit::Ratio, confidence::wilson(failures, count)?),
            _ => return None,
        };
        Some(SloCi {
            unit,
            interval,
            bound,
            uncertain: interval.contains(bound),
        })
    }
}

/// Judges each objective (as stored with the run) against the run's per-request records.
pub fn judge(
    objectives: &[String],
    requests: &[RequestMeta],
    stats: &[RequestStats],
    secs: f64,
) -> Vec<SloVerdict> {
    objectives
        .iter()
        .map(|text| match text.parse::<Slo>() {
            Ok(slo) => judge_one(&slo, requests, stats, secs),
            Err(e) => SloVerdict {
                objective: text.clone(),
                request: None,
                measured: format!("unreadable: {}", e.reason),
                value: None,
                met: false,
                ci: None,
            },
        })
        .collect()
}

fn judge_one(slo: &Slo, requests: &[RequestMeta], stats: &[RequestStats], secs: f64) -> SloVerdict {
    let mut scope = RequestStats::default();
    let picked: Vec<&RequestStats> = match &slo.request {
        Some(name) => requests
            .iter()
            .position(|r| &r.name == name)
            .and_then(|i| stats.get(i))
            .into_iter()
            .collect(),
        None => stats.iter().collect(),
    };
    for s in picked {
        scope.add(s);
    }
    let verdict = |measured: String, value: f64, met: bool, ci: Option<SloCi>| SloVerdict {
        objective: slo.text.clone(),
        request: slo.request.clone(),
        measured,
        value: Measured::of(slo.metric, value),
        met,
        ci,
    };
    if scope.count == 0 && slo.metric != Metric::Rps {
        return verdict("no requests completed".into(), f64::NAN, false, None);
    }
    let (value, measured) = measure(
        slo.metric,
        scope.count,
        scope.failures,
        &scope.latency,
        secs,
    );
    let ci = SloCi::of(
        slo.metric,
        slo.bound,
        scope.count,
        scope.failures,
        &scope.latency,
    );
    verdict(measured, value, slo.op.holds(value, slo.bound), ci)
}

/// The value of `metric` over `count` completions (`failures` of them failed) taking
/// `secs`, and how it reads in the objective's unit.
pub fn measure(
    metric: Metric,
    count: u64,
    failures: u64,
    latency: &crate::record::Histogram,
    secs: f64,
) -> (f64, String) {
    let h = latency.inner();
    let latency_metric = matches!(metric, Metric::Quantile(_) | Metric::Mean | Metric::Max);
    if latency_metric && latency.is_empty() {
        // Latency is the answered requests'; with none, a latency objective cannot hold
        // (NaN compares false either way).
        return (f64::NAN, "no answered requests".into());
    }
    match metric {
        Metric::Quantile(q) => {
            let v = h.value_at_quantile(q);
            (v as f64, fmt_us(v))
        }
        Metric::Mean => (h.mean(), fmt_us_f(h.mean())),
        Metric::Max => (h.max() as f64, fmt_us(h.max())),
        Metric::ErrorRate => {
            let r = if count > 0 {
                failures as f64 / count as f64
            } else {
                0.0
            };
            (r, format!("{:.2}%", 100.0 * r))
        }
        Metric::Rps => {
            // The report's throughput: answers that succeeded. A 429 or a 401 answered fast
            // is no throughput, and counted it would pass "rps >= 150" for a gateway that
            // refuses a third of what it is sent.
            let ok = count.saturating_sub(failures);
            let r = if secs > 0.0 { ok as f64 / secs } else { 0.0 };
            (r, format!("{r:.1} req/s"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Histogram;
    use std::time::Duration;

    fn latencies(n: u64, spread_ms: u64) -> Histogram {
        let mut h = Histogram::new();
        for i in 0..n {
            h.record(Duration::from_micros(
                200_000 + (i * 7_919) % (spread_ms * 1_000),
            ));
        }
        h
    }

    #[test]
    fn an_objective_met_with_its_bound_inside_the_interval_is_uncertain() {
        // 50 latencies from 200 to 260 ms: a p99 of about 259 ms, whose interval from 50
        // samples has no upper bound, so `p99 < 300ms` holds but cannot be sure.
        let few = latencies(50, 60);
        let p99 = Metric::Quantile(0.99);
        let ci = SloCi::of(p99, 300_000.0, 50, 0, &few).unwrap();
        assert_eq!(ci.unit, Unit::Micros);
        assert_eq!(ci.interval.hi, None);
        assert!(ci.uncertain, "{ci:?}");
        // 10,000 of them: the interval closes below the bound.
        let many = latencies(10_000, 60);
        let ci = SloCi::of(p99, 300_000.0, 10_000, 0, &many).unwrap();
        assert!(ci.interval.hi.unwrap() < 300_000.0, "{ci:?}");
        assert!(!ci.uncertain);
        // A median far from the bound is sure even from 50.
        let ci = SloCi::of(Metric::Quantile(0.5), 300_000.0, 50, 0, &few).unwrap();
        assert!(!ci.uncertain, "{ci:?}");
    }

    #[test]
    fn the_error_rate_has_a_wilson_interval_and_the_maximum_none() {
        let h = latencies(500, 10);
        // 1 failure in 500 (0.2 %) against `error_rate < 0.5%`: Wilson's upper bound is 1.1 %.
        let ci = SloCi::of(Metric::ErrorRate, 0.005, 500, 1, &h).unwrap();
        assert_eq!(ci.unit, Unit::Ratio);
        assert!(ci.uncertain, "{ci:?}");
        assert_eq!(SloCi::of(Metric::Max, 300_000.0, 500, 0, &h), None);
        assert_eq!(SloCi::of(Metric::Rps, 100.0, 500, 0, &h), None);
        // Throughput is what succeeded: 300 answers in 2 s, 100 of them refused (429).
        assert_eq!(measure(Metric::Rps, 300, 100, &h, 2.0).0, 100.0);
        assert_eq!(
            SloCi::of(Metric::Quantile(1.0), 300_000.0, 500, 0, &h),
            None
        );
        assert_eq!(
            SloCi::of(Metric::Quantile(0.99), 1.0, 0, 0, &Histogram::new()),
            None
        );
    }
}
