//! Confidence intervals in words, the one place they are worded: "11.900–13.000ms",
//! "≥11.900ms" for an interval the samples cannot bound above, and a value with its
//! interval, "12.301ms (11.900–13.000ms)". An objective's measured value with its interval
//! is a [`Cell::Measured`](super::document::Cell::Measured), worded from these.

use crate::summary::regression::Unit;
use crate::summary::Interval;
use crate::units::{fmt_num, fmt_us, fmt_us_f};

/// An interval whose ends are already worded; the unit is said once when both ends share it.
pub fn range(lo: Option<String>, hi: Option<String>) -> String {
    match (lo, hi) {
        (Some(lo), Some(hi)) if lo == hi => lo,
        (Some(lo), Some(hi)) => {
            let (number, unit) = split_unit(&lo);
            if !unit.is_empty() && unit == split_unit(&hi).1 {
                format!("{number}–{hi}")
            } else {
                format!("{lo}–{hi}")
            }
        }
        (Some(lo), None) => format!("≥{lo}"),
        (None, Some(hi)) => format!("≤{hi}"),
        (None, None) => "too few samples".into(),
    }
}

/// A latency interval, µs.
pub fn us(i: &Interval<u64>) -> String {
    range(i.lo.map(fmt_us), i.hi.map(fmt_us))
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
    match unit {
        Unit::Micros => fmt_us_f(v),
        Unit::Ratio => format!("{:.2}%", 100.0 * v),
        Unit::PerSecond => format!("{} req/s", fmt_num(v, 1)),
    }
}

/// An interval in `unit`.
pub fn in_unit(unit: Unit, i: &Interval<f64>) -> String {
    range(i.lo.map(|v| value(unit, v)), i.hi.map(|v| value(unit, v)))
}

/// A worded number split before its unit: "12.345ms" → ("12.345", "ms").
fn split_unit(text: &str) -> (&str, &str) {
    let at = text
        .rfind(|c: char| c.is_ascii_digit())
        .map_or(0, |i| i + 1);
    text.split_at(at)
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
            range(Some("1.20%".into()), Some("3.40%".into())),
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
