//! How sure a number is: 95 % confidence intervals of a percentile (from order statistics),
//! of a proportion (Wilson), of a mean and of a per-second rate (normal and Student t), as
//! typed bounds. An end the samples cannot bound is `None`, never a made-up value; renderers
//! word them.
//!
//! Percentiles: the interval of the `q`-quantile from `n` samples is `[X(j), X(k)]`, the
//! order statistics of ranks `j` and `k` chosen so that `P(j <= B < k) >= 95 %` for
//! `B ~ Binomial(n, q)` (the number of samples below the true quantile): distribution-free,
//! exact for every `n` (Le Boudec, "Performance Evaluation of Computer and Communication
//! Systems", EPFL Press 2010, Theorem 2.1; Lancet, Kogias, Mallon and Bugnion, USENIX ATC 2019,
//! reports its tail latencies the same way). When `n` is too small, `j` falls below the smallest sample
//! or `k` past the largest, and that end is open: a p99 from fewer than 368 samples has no
//! upper bound, a median from fewer than 6 none at all.
//!
//! The binomial sums are written here rather than taken from statrs: its 0.18 `Binomial::cdf`
//! (the last that builds with our Rust 1.85) matches these sums in the tails but returned
//! -0.54 at the centre for n = 10^8 when tried (its incomplete beta stops after 140 terms),
//! and its `inverse_cdf` unwraps the `None` its bisection returns on a cdf that is not
//! monotone (read in its source): a panic on a large run.

use crate::record::Histogram;
use serde::{Deserialize, Serialize};

/// The confidence of every interval here.
pub const LEVEL: f64 = 0.95;

/// The standard normal quantile of `1 - (1 - LEVEL) / 2`.
const Z: f64 = 1.959_963_984_540_054;

/// A two-sided confidence interval at [`LEVEL`]; an end is `None` when the samples are too
/// few to bound it (the interval is open on that side).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval<T> {
    /// The lower bound, when the samples give one.
    pub lo: Option<T>,
    /// The upper bound, when the samples give one.
    pub hi: Option<T>,
}

impl Interval<u64> {
    /// The same interval in `f64`, to compare with other measures (microsecond counts are far
    /// below 2^53, so exactly).
    pub fn as_f64(self) -> Interval<f64> {
        Interval {
            lo: self.lo.map(|v| v as f64),
            hi: self.hi.map(|v| v as f64),
        }
    }
}

impl Interval<f64> {
    /// True when `x` is inside the interval (an open end contains everything on its side).
    pub fn contains(&self, x: f64) -> bool {
        self.lo.is_none_or(|lo| lo <= x) && self.hi.is_none_or(|hi| x <= hi)
    }
}

/// The intervals of the percentiles [`super::Stats`] reports, µs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PercentileIntervals {
    /// Of the median.
    pub p50_us: Interval<u64>,
    /// Of the 90th percentile.
    pub p90_us: Interval<u64>,
    /// Of the 95th percentile.
    pub p95_us: Interval<u64>,
    /// Of the 99th percentile.
    pub p99_us: Interval<u64>,
    /// Of the 99.9th percentile.
    pub p999_us: Interval<u64>,
}

impl PercentileIntervals {
    /// The intervals of the percentiles of the values in `h` (its counts read once).
    pub fn of(h: &Histogram) -> PercentileIntervals {
        let q = [0.50, 0.90, 0.95, 0.99, 0.999];
        let bounds = q.map(|q| ranks(h.len(), q));
        // Ranks of 0 (an open end) are read as nothing: the histogram has no value there.
        let wanted: Vec<u64> = bounds
            .iter()
            .flat_map(|&(lo, hi)| [lo.unwrap_or(u64::MAX), hi.unwrap_or(u64::MAX)])
            .collect();
        let at = h.at_ranks(&wanted);
        let interval = |i: usize| Interval {
            lo: bounds[i].0.and(at[2 * i]).map(|(lowest, _)| lowest),
            hi: bounds[i].1.and(at[2 * i + 1]).map(|(_, highest)| highest),
        };
        PercentileIntervals {
            p50_us: interval(0),
            p90_us: interval(1),
            p95_us: interval(2),
            p99_us: interval(3),
            p999_us: interval(4),
        }
    }
}

/// The interval of the `q`-quantile (0 < q < 1) of the values in `h`: the values at the
/// ranks of [`ranks`], the lower one rounded down and the upper one up to the histogram's
/// bucket edges, so that the interval holds the order statistics whatever the bucketing.
pub fn quantile(h: &Histogram, q: f64) -> Interval<u64> {
    let (lo, hi) = ranks(h.len(), q);
    Interval {
        lo: lo.and_then(|r| h.at_rank(r)).map(|(lowest, _)| lowest),
        hi: hi.and_then(|r| h.at_rank(r)).map(|(_, highest)| highest),
    }
}

/// Relative binomial weights below this are left out of the sums: the mass they carry is
/// many orders of magnitude below the 2.5 % tails looked for.
const NEGLIGIBLE: f64 = 1e-20;

/// The ranks (1 = the smallest sample) of the order statistics bounding the `q`-quantile of
/// `n` samples at [`LEVEL`]: the largest `j` with `P(B <= j - 1) <= 2.5 %` and the smallest
/// `k` with `P(B >= k) <= 2.5 %`, `B ~ Binomial(n, q)`. `None` when that rank is not a
/// sample's (below 1 or past `n`).
///
/// The binomial's probabilities are summed exactly, relative to its mode and walking out
/// from it until they are negligible: about 20 standard deviations of terms, so a run of a
/// billion samples takes some 10^5 multiplications and no approximation.
pub fn ranks(n: u64, q: f64) -> (Option<u64>, Option<u64>) {
    if n == 0 || q.is_nan() || q <= 0.0 || q >= 1.0 {
        return (None, None);
    }
    let tail = (1.0 - LEVEL) / 2.0;
    let odds = q / (1.0 - q);
    // P(B = k + 1) / P(B = k) and P(B = k - 1) / P(B = k).
    let up = |k: u64, w: f64| w * (n - k) as f64 / (k + 1) as f64 * odds;
    let down = |k: u64, w: f64| w * k as f64 / ((n - k + 1) as f64 * odds);
    let mode = ((n as f64 + 1.0) * q).floor().min(n as f64) as u64;
    let (mut start, mut w_start, mut total) = (mode, 1.0, 1.0);
    while start > 0 {
        let w = down(start, w_start);
        if w < NEGLIGIBLE {
            break;
        }
        start -= 1;
        w_start = w;
        total += w;
    }
    let (mut end, mut w) = (mode, 1.0);
    while end < n {
        let next = up(end, w);
        if next < NEGLIGIBLE {
            break;
        }
        end += 1;
        w = next;
        total += next;
    }
    // Walk k from the lowest weighed rank to one past the highest: `below` is P(B <= k - 1)
    // times `total`.
    let (mut lower, mut upper) = (0, end + 1);
    let (mut below, mut w) = (0.0, w_start);
    for k in start..=end + 1 {
        if below / total <= tail {
            lower = k;
        }
        if (total - below) / total <= tail {
            upper = k;
            break;
        }
        if k <= end {
            below += w;
            w = up(k, w);
        }
    }
    ((lower >= 1).then_some(lower), (upper <= n).then_some(upper))
}

/// The Wilson score interval of a proportion of `hits` among `n` (Wilson, JASA 1927):
/// unlike the normal one it stays inside 0..=1 and is honest for few samples or a rate near
/// zero (Brown, Cai and DasGupta, Statistical Science 2001). `None` without samples.
pub fn wilson(hits: u64, n: u64) -> Option<Interval<f64>> {
    if n == 0 {
        return None;
    }
    let (count, n, p) = (n, n as f64, hits.min(n) as f64 / n as f64);
    let z2 = Z * Z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    // At no hits (or all) the bound is 0 (or 1) exactly, not what rounding leaves of it.
    Some(Interval {
        lo: Some(if hits == 0 {
            0.0
        } else {
            (centre - half).max(0.0)
        }),
        hi: Some(if hits >= count {
            1.0
        } else {
            (centre + half).min(1.0)
        }),
    })
}

/// The fewest samples a mean's interval is given from: below it the normal approximation
/// of the mean's distribution is not to be trusted.
pub const MEAN_MIN_SAMPLES: u64 = 30;

/// The interval of a mean of `n` values with standard deviation `stdev`: `mean ± z·s/√n`,
/// from the central limit theorem (Le Boudec, section 2.2, the asymptotic case), so only
/// from [`MEAN_MIN_SAMPLES`] values on; a latency, never negative, is not bounded below 0.
pub fn mean(mean: f64, stdev: f64, n: u64) -> Option<Interval<f64>> {
    if n < MEAN_MIN_SAMPLES || !mean.is_finite() || !stdev.is_finite() {
        return None;
    }
    let half = Z * stdev / (n as f64).sqrt();
    Some(Interval {
        lo: Some((mean - half).max(0.0)),
        hi: Some(mean + half),
    })
}

/// The interval of a rate `rate` measured over seconds whose counts were `per_second`:
/// `rate ± t·s/√k` with `s/mean` the counts' relative spread, `k` the seconds and `t`
/// Student's quantile with `k - 1` degrees of freedom. A rate's noise is its seconds'
/// spread, not a Poisson count's (a paced open-model run sends nearly the same count every
/// second); seconds next to one another are taken as independent, which a server's slow
/// patches make optimistic. `None` from fewer than two seconds or without completions.
pub fn per_second(rate: f64, per_second: &[u64]) -> Option<Interval<f64>> {
    let k = per_second.len();
    if k < 2 || !rate.is_finite() {
        return None;
    }
    let counts: Vec<f64> = per_second.iter().map(|&c| c as f64).collect();
    let m = counts.iter().sum::<f64>() / k as f64;
    if m <= 0.0 {
        return None;
    }
    let var = counts.iter().map(|c| (c - m) * (c - m)).sum::<f64>() / (k - 1) as f64;
    let half = rate * students_t(k as u64 - 1) * var.sqrt() / m / (k as f64).sqrt();
    Some(Interval {
        lo: Some((rate - half).max(0.0)),
        hi: Some(rate + half),
    })
}

/// Student's t quantile at `1 - (1 - LEVEL) / 2` with `df` (at least 1) degrees of freedom:
/// the table's values to 30, the Cornish-Fisher expansion beyond (within 1e-4 of the exact
/// quantile there; both checked against statrs' StudentsT when written).
fn students_t(df: u64) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df as usize - 1],
        _ => {
            let v = df as f64;
            let z3 = Z.powi(3);
            Z + (z3 + Z) / (4.0 * v) + (5.0 * Z.powi(5) + 16.0 * z3 + 3.0 * Z) / (96.0 * v * v)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// splitmix64: a seeded, portable stream of uniform numbers for the draws below.
    struct Draws(u64);

    impl Draws {
        fn uniform(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            // 53 bits in (0, 1): never 0, so its logarithm is finite.
            ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }

        /// An exponential draw with mean `mean_us`, by inversion.
        fn exponential(&mut self, mean_us: f64) -> f64 {
            -mean_us * self.uniform().ln()
        }

        /// A log-normal draw: exp(mu + sigma * N(0, 1)), N by Box-Muller.
        fn log_normal(&mut self, mu: f64, sigma: f64) -> f64 {
            let (u1, u2) = (self.uniform(), self.uniform());
            let n = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            (mu + sigma * n).exp()
        }
    }

    /// A latency drawn from a distribution, µs.
    type Draw = dyn Fn(&mut Draws) -> f64;

    /// How often, in 100 seeded runs of `n` draws, the true `q`-quantile lies in the interval,
    /// and the intervals' mean width relative to it.
    fn coverage(n: u64, q: f64, truth: f64, draw: &Draw) -> (u32, f64) {
        let (mut inside, mut width) = (0, 0.0);
        for seed in 0..100u64 {
            let mut d = Draws(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ n);
            let mut h = Histogram::new();
            for _ in 0..n {
                h.record(Duration::from_micros(draw(&mut d).round() as u64));
            }
            let i = quantile(&h, q).as_f64();
            inside += u32::from(i.contains(truth));
            if let (Some(lo), Some(hi)) = (i.lo, i.hi) {
                width += (hi - lo) / truth / 100.0;
            } else {
                width = f64::INFINITY;
            }
        }
        (inside, width)
    }

    #[test]
    fn the_true_percentile_is_inside_the_interval_in_at_least_93_of_100_seeded_runs() {
        // Exponential latency of mean 10 ms: its q-quantile is -10 ms × ln(1 - q). Log-normal
        // of median 20 ms and sigma 0.5: its quantile is exp(mu + sigma × z_q).
        let exp_mean = 10_000.0;
        let exponential = move |d: &mut Draws| d.exponential(exp_mean);
        let mu = 20_000f64.ln();
        let log_normal = move |d: &mut Draws| d.log_normal(mu, 0.5);
        let z_99 = 2.326_347_874_040_841;
        let cases: [(&str, f64, f64, &Draw); 4] = [
            (
                "exponential p50",
                0.50,
                -exp_mean * 0.5f64.ln(),
                &exponential,
            ),
            (
                "exponential p99",
                0.99,
                -exp_mean * 0.01f64.ln(),
                &exponential,
            ),
            ("log-normal p50", 0.50, mu.exp(), &log_normal),
            ("log-normal p99", 0.99, (mu + 0.5 * z_99).exp(), &log_normal),
        ];
        for (name, q, truth, draw) in cases {
            let (small, small_width) = coverage(500, q, truth, draw);
            let (large, large_width) = coverage(10_000, q, truth, draw);
            assert!(small >= 93, "{name}, n = 500: inside in {small} of 100");
            assert!(large >= 93, "{name}, n = 10,000: inside in {large} of 100");
            // The width shrinks as 1/√n: 20 times the samples, about 4.5 times narrower.
            assert!(
                large_width < small_width / 3.0,
                "{name}: mean width {small_width:.4} at 500, {large_width:.4} at 10,000"
            );
        }
    }

    #[test]
    fn a_percentile_from_too_few_samples_is_open_ended_not_made_up() {
        // P(B = n) = 0.99^n must be at most 2.5 % for the largest sample to bound a p99:
        // from 368 samples on (0.99^367 = 2.50 %, just over).
        assert_eq!(ranks(50, 0.99).1, None);
        assert_eq!(ranks(367, 0.99).1, None);
        assert_eq!(ranks(368, 0.99).1, Some(368));
        // A median needs 6 samples (the interval [X(1), X(6)] covers 1 - 2/64 = 96.9 %).
        assert_eq!(ranks(5, 0.5), (None, None));
        assert_eq!(ranks(6, 0.5), (Some(1), Some(6)));
        assert_eq!(ranks(0, 0.5), (None, None));
        assert_eq!(ranks(100, 1.0), (None, None));
        let mut h = Histogram::new();
        for ms in 1..=50 {
            h.record(Duration::from_millis(ms));
        }
        let p99 = quantile(&h, 0.99);
        assert_eq!(p99.hi, None);
        assert!(p99.lo.is_some(), "{p99:?}");
    }

    #[test]
    fn ranks_match_the_binomial_tables() {
        // The same ranks from the binomial's probabilities summed exactly (Python's math.comb,
        // by brute force over every rank).
        for (n, q, lo, hi) in [
            (10, 0.5, 2, Some(9)),
            (31, 0.5, 10, Some(22)),
            (70, 0.5, 27, Some(44)),
            (50, 0.99, 48, None),
            (500, 0.5, 228, Some(273)),
            (500, 0.99, 490, Some(500)),
            (1_000, 0.9, 881, Some(919)),
            (200, 0.95, 184, Some(197)),
        ] {
            assert_eq!(ranks(n, q), (Some(lo), hi), "n {n}, q {q}");
        }
        // Large n: the normal approximation nq ± 1.96 √(nq(1-q)) within a rank or two.
        for (n, q) in [(1_000_000u64, 0.99), (1_000_000, 0.5), (100_000_000, 0.999)] {
            let (lo, hi) = ranks(n, q);
            let (lo, hi) = (lo.unwrap() as f64, hi.unwrap() as f64);
            let (mid, sd) = (n as f64 * q, (n as f64 * q * (1.0 - q)).sqrt());
            assert!((lo - (mid - Z * sd)).abs() < 2.0, "{n} {q}: {lo}");
            assert!((hi - (mid + Z * sd)).abs() < 2.0, "{n} {q}: {hi}");
        }
    }

    #[test]
    fn every_percentile_lies_inside_its_own_interval() {
        let mut d = Draws(7);
        for n in [1u64, 5, 6, 37, 500, 3_000] {
            let mut h = Histogram::new();
            for _ in 0..n {
                h.record(Duration::from_micros(d.exponential(5_000.0) as u64));
            }
            let all = PercentileIntervals::of(&h);
            for (q, one) in [
                (0.5, all.p50_us),
                (0.9, all.p90_us),
                (0.95, all.p95_us),
                (0.99, all.p99_us),
                (0.999, all.p999_us),
            ] {
                let point = h.inner().value_at_quantile(q) as f64;
                let i = quantile(&h, q);
                assert_eq!(one, i, "n {n}, q {q}: read in one pass and alone");
                let i = i.as_f64();
                assert!(i.contains(point), "n {n}, q {q}: {point} outside {i:?}");
            }
        }
    }

    #[test]
    fn wilson_stays_in_bounds_and_covers_a_zero_count() {
        let none = wilson(0, 500).unwrap();
        assert_eq!(none.lo, Some(0.0));
        // 0 of 500: up to 0.77 % (z² / (n + z²)).
        assert!((none.hi.unwrap() - 0.007624).abs() < 1e-5, "{none:?}");
        let half = wilson(50, 100).unwrap();
        assert!((half.lo.unwrap() - 0.4038).abs() < 1e-4, "{half:?}");
        assert!((half.hi.unwrap() - 0.5962).abs() < 1e-4, "{half:?}");
        assert_eq!(wilson(0, 0), None);
        let all = wilson(10, 10).unwrap();
        assert_eq!(all.hi, Some(1.0));
    }

    #[test]
    fn a_rate_interval_is_its_seconds_spread() {
        assert_eq!(per_second(100.0, &[100]), None);
        assert_eq!(per_second(0.0, &[0, 0, 0]), None);
        let steady = per_second(100.0, &[100, 100, 100]).unwrap();
        assert_eq!((steady.lo, steady.hi), (Some(100.0), Some(100.0)));
        // Counts 90 and 110: s = 14.14, t(1) = 12.706: ± 127 req/s, bounded below by 0.
        let two = per_second(100.0, &[90, 110]).unwrap();
        assert_eq!(two.lo, Some(0.0));
        assert!((two.hi.unwrap() - 227.06).abs() < 0.1, "{two:?}");
        assert!((students_t(31) - 2.0395).abs() < 1e-3);
        assert!((students_t(1_000) - 1.9623).abs() < 1e-3);
    }

    #[test]
    fn a_mean_interval_needs_thirty_values() {
        assert_eq!(mean(10.0, 2.0, 29), None);
        let m = mean(10.0, 2.0, 400).unwrap();
        assert!((m.lo.unwrap() - 9.804).abs() < 1e-3 && (m.hi.unwrap() - 10.196).abs() < 1e-3);
    }
}
