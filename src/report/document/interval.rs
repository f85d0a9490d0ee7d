//! Confidence intervals in words, the one place they are worded: "11.900–13.000ms",
//! "≥11.900ms" for an interval the samples cannot bound above, and a value with its
//! interval, "12.301ms (11.900–13.000ms)". An objective's measured value with its interval
//! is a [`Cell::Measured`](super::Cell::Measured), worded from these.

use crate::summary::regression::Unit;
use crate::summary::Interval;
use crate::units::{fmt_num, fmt_us, us_parts};

/// A worded number and its unit, kept apart ("12.345", "ms").
pub type Worded = (String, &'static str);

/// An interval from its ends' numbers and units; the unit is said once when both ends share
/// it.
pub fn range(lo: Option<Worded>, hi: Option<Worded>) -> String {
    let whole = |(n, u): &Worded| format!("{n}{u}");
    match (lo, hi) {
        (Some(lo), Some(hi)) if lo == hi => whole(&lo),
        (Some(lo), Some(hi)) if lo.1 == hi.1 => format!("{}–{}", lo.0, whole(&hi)),
        (Some(lo), Some(hi)) => format!("{}–{}", whole(&lo), whole(&hi)),
        (Some(lo), None) => format!("≥{}", whole(&lo)),
        (None, Some(hi)) => format!("≤{}", whole(&hi)),
        (None, None) => "too few samples".into(),
    }
}

/// A latency interval, µs.
pub fn us(i: &Interval<u64>) -> String {
    let us = |v: u64| us_parts(v as f64);
    range(i.lo.map(us), i.hi.map(us))
}

/// A latency and its interval when there is one: "12.301ms (11.900–13.000ms)".
pub fn us_with(point: u64, i: Option<&Interval<u64>>) -> String {
    match i {
        Some(i) => format!("{} ({})", fmt_us(point), us(i)),
        None => fmt_us(point),
    }
}

/// `v` in `unit` ("-" when there is none).
pub fn value(unit: Unit, v: f64) -> String {
    if v.is_nan() {
        return "-".into();
    }
    let (number, unit) = parts(unit, v);
    format!("{number}{unit}")
}

/// `v`'s number and unit apart.
fn parts(unit: Unit, v: f64) -> Worded {
    match unit {
        Unit::Micros => us_parts(v),
        Unit::Ratio => (format!("{:.2}", 100.0 * v), "%"),
        Unit::PerSecond => (fmt_num(v, 1), " req/s"),
    }
}

/// An interval in `unit`.
pub fn in_unit(unit: Unit, i: &Interval<f64>) -> String {
    range(i.lo.map(|v| parts(unit, v)), i.hi.map(|v| parts(unit, v)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_says_its_unit_once_and_its_open_ends() {
        let i = |lo, hi| us(&Interval { lo, hi });
        assert_eq!(i(Some(11_900), Some(13_000)), "11.900–13.000ms");
        assert_eq!(i(Some(850), Some(1_200)), "850µs–1.200ms");
        assert_eq!(i(Some(11_900), None), "≥11.900ms");
        assert_eq!(i(None, Some(13_000)), "≤13.000ms");
        assert_eq!(i(None, None), "too few samples");
        assert_eq!(i(Some(5), Some(5)), "5µs");
        assert_eq!(
            range(Some(("1.20".into(), "%")), Some(("3.40".into(), "%"))),
            "1.20–3.40%"
        );
        assert_eq!(
            us_with(
                12_301,
                Some(&Interval {
                    lo: Some(11_900),
                    hi: Some(13_000)
                })
            ),
            "12.301ms (11.900–13.000ms)"
        );
        assert_eq!(us_with(12_301, None), "12.301ms");
    }
}
