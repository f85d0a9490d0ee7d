//! Where an axis puts its labels: round numbers a reader takes in at a glance. Log axes
//! at 1-2-5 of each decade, linear axes at a 1-2-5 step (whole steps for per-second time
//! axes), percentile axes at Locust's columns. Pure functions of the range, so the SVG and
//! the interactive HTML figures label the same values.

/// Percentiles a reader looks for (Locust's columns), then whole nines beyond.
pub const PERCENTILES: [f64; 12] = [
    0.0, 50.0, 66.0, 75.0, 80.0, 90.0, 95.0, 98.0, 99.0, 99.9, 99.99, 99.999,
];

/// The 1-2-5 values of each decade from the one at or below `lo` to the one at or above
/// `hi`; over many decades only the powers of ten, so labels never crowd.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi >= lo && hi.is_finite()) {
        return Vec::new();
    }
    let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let mantissas: &[f64] = if last - first > 4 {
        &[1.0]
    } else {
        &[1.0, 2.0, 5.0]
    };
    let (lo_tick, hi_tick) = (log_floor(lo), log_ceil(hi));
    (first..=last)
        .flat_map(|e| mantissas.iter().map(move |m| round_sig(m * 10f64.powi(e))))
        .filter(|v| *v >= lo_tick * (1.0 - 1e-9) && *v <= hi_tick * (1.0 + 1e-9))
        .collect()
}

/// The largest 1-2-5 value at or below `v` (> 0): where a log axis starts.
pub fn log_floor(v: f64) -> f64 {
    let e = v.log10().floor();
    let base = 10f64.powf(e);
    let m = [5.0, 2.0, 1.0]
        .into_iter()
        .find(|m| m * base <= v * (1.0 + 1e-9))
        .unwrap_or(1.0);
    round_sig(m * base)
}

/// The smallest 1-2-5 value at or above `v` (> 0): where a log axis ends.
pub fn log_ceil(v: f64) -> f64 {
    let e = v.log10().floor();
    let base = 10f64.powf(e);
    let m = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .find(|m| m * base >= v * (1.0 - 1e-9))
        .unwrap_or(10.0);
    round_sig(m * base)
}

/// A 1-2-5 step giving at most `most` intervals over `lo..hi`; at least 1 when `whole`.
pub fn linear_step(lo: f64, hi: f64, most: usize, whole: bool) -> f64 {
    let span = (hi - lo).abs().max(1e-12);
    let rough = span / most.max(1) as f64;
    let base = 10f64.powf(rough.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * base)
        .find(|s| *s >= rough * (1.0 - 1e-9))
        .unwrap_or(10.0 * base);
    if whole {
        step.max(1.0).round()
    } else {
        step
    }
}

/// Multiples of a 1-2-5 step within `lo..=hi`, at most about `most` of them.
pub fn linear_ticks(lo: f64, hi: f64, most: usize, whole: bool) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi < lo {
        return Vec::new();
    }
    let step = linear_step(lo, hi, most, whole);
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|k| round_sig(k as f64 * step)).collect()
}

/// The percentiles of [`PERCENTILES`] within `lo..=hi` (in %).
pub fn percentile_ticks(lo: f64, hi: f64) -> Vec<f64> {
    PERCENTILES
        .into_iter()
        .filter(|p| *p >= lo - 1e-9 && *p <= hi + 1e-9)
        .collect()
}

/// `v` rounded to 12 significant digits: 0.1 * 3 is labelled 0.3, not 0.30000000000000004.
fn round_sig(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let scale = 10f64.powi(11 - v.abs().log10().floor() as i32);
    (v * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axes_are_labelled_at_one_two_five_of_each_decade() {
        assert_eq!(
            log_ticks(1.3, 480.0),
            vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0]
        );
        assert_eq!(log_ticks(0.15, 0.9), vec![0.1, 0.2, 0.5, 1.0]);
        assert_eq!(log_floor(1.3), 1.0);
        assert_eq!(log_floor(3.9), 2.0);
        assert_eq!(log_floor(0.07), 0.05);
        assert_eq!(log_ceil(480.0), 500.0);
        assert_eq!(log_ceil(501.0), 1000.0);
        assert_eq!(log_ceil(2.0), 2.0);
    }

    #[test]
    fn a_log_axis_over_many_decades_keeps_only_powers_of_ten() {
        assert_eq!(
            log_ticks(0.01, 30_000.0),
            vec![0.01, 0.1, 1.0, 10.0, 100.0, 1000.0, 10_000.0]
        );
    }

    #[test]
    fn per_second_axes_are_labelled_on_whole_seconds() {
        assert_eq!(linear_ticks(0.0, 3.0, 10, true), vec![0.0, 1.0, 2.0, 3.0]);
        // Without the whole-second rule a 3 s run would be labelled every 0.5 s.
        assert_eq!(linear_step(0.0, 3.0, 10, false), 0.5);
        assert_eq!(
            linear_ticks(0.0, 95.0, 10, true),
            vec![0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0]
        );
        assert_eq!(linear_step(0.0, 23.0, 10, true), 5.0);
        assert!(linear_ticks(0.0, 1000.0, 8, false)
            .iter()
            .all(|t| t % 200.0 == 0.0));
    }

    #[test]
    fn linear_ticks_are_round_values() {
        assert_eq!(linear_ticks(0.0, 0.9, 10, false)[3], 0.3);
        assert_eq!(linear_ticks(0.0, 200.0, 5, false).len(), 5);
    }

    #[test]
    fn percentile_axes_show_locusts_columns_within_the_range() {
        assert_eq!(
            percentile_ticks(50.0, 99.95),
            vec![50.0, 66.0, 75.0, 80.0, 90.0, 95.0, 98.0, 99.0, 99.9]
        );
    }
}
