//! Goodness of fit of gaps to a known distribution: the Kolmogorov–Smirnov statistic, with
//! a timing band.
//!
//! Gaps between sends are measured against the schedule's Erlang distribution (the sum of
//! `k` Exp(1) draws; `k = 1`, the exponential, for one generator's sends). A send that left
//! within `w` of its due time moves each gap next to it by at most `w`, so each measured gap
//! lies within `w` of the schedule's; the banded statistic
//! `sup_x max(F_n(x) − G(x + w), G(x − w) − F_n(x))` is then at most the plain statistic of
//! the schedule's own gaps, and the plain test's critical value holds for it (the test can
//! only be more lenient, never reject a generator that kept within its resolution). Sends
//! that bunch (a generator catching up) or even out (a metronome) move the empirical
//! distribution by more than the band, and are rejected.

/// The Kolmogorov–Smirnov critical value at `level` (0.05, 0.025, …) for `n` samples against
/// a fully specified distribution: the asymptotic `sqrt(−ln(level/2)/2)` with Stephens'
/// small-sample correction (within 1 % of the exact value from n = 5).
pub fn critical(n: u64, level: f64) -> f64 {
    let c = (-(level / 2.0).ln() / 2.0).sqrt();
    let r = (n.max(1) as f64).sqrt();
    c / (r + 0.12 + 0.11 / r)
}

/// Erlang distributions of more arrivals than this are read from the Wilson–Hilferty normal
/// approximation (within 1e-4 of the exact value from here on, and closer as `k` grows); the
/// exact sum takes `k` terms per point, which a shard of a large test (`k` its count of
/// shards) would make slow.
const EXACT_UP_TO: u32 = 256;

/// P(X ≤ x) for X the sum of `k` independent Exp(1) draws (Erlang-k; `k = 1`: 1 − e^(−x)).
pub fn erlang_cdf(k: u32, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if k <= 1 {
        return -(-x).exp_m1();
    }
    if k > EXACT_UP_TO {
        // (X/k)^(1/3) is nearly normal, of mean 1 − 1/(9k) and variance 1/(9k).
        let v = 1.0 / (9.0 * f64::from(k));
        let z = ((x / f64::from(k)).cbrt() - (1.0 - v)) / v.sqrt();
        return 0.5 * libm::erfc(-z / std::f64::consts::SQRT_2);
    }
    // 1 − e^(−x) Σ_{i<k} x^i / i!, the terms summed in logs: e^(−x) underflows long before
    // the sum does for a large k.
    let ln_x = x.ln();
    let terms = || {
        (1..k).scan(-x, move |ln_term, i| {
            *ln_term += ln_x - f64::from(i).ln();
            Some(*ln_term)
        })
    };
    let most = terms().fold(-x, f64::max);
    let tail = ((-x - most).exp() + terms().map(|t| (t - most).exp()).sum::<f64>()) * most.exp();
    (1.0 - tail).clamp(0.0, 1.0)
}

/// The banded Kolmogorov–Smirnov statistic of the weighted points `(value, count)` (sorted
/// by value) against the distribution `cdf`, each value trusted to within `band`; and the
/// number of values.
pub fn banded_ks(points: &[(f64, u64)], cdf: impl Fn(f64) -> f64, band: f64) -> (f64, u64) {
    let n: u64 = points.iter().map(|p| p.1).sum();
    if n == 0 {
        return (0.0, 0);
    }
    let mut below = 0u64;
    let mut d = 0.0f64;
    for &(x, count) in points {
        // Just before x the empirical distribution is at `below`, at x it has jumped.
        let before = below as f64 / n as f64;
        below += count;
        let after = below as f64 / n as f64;
        d = d.max(cdf(x - band) - before).max(after - cdf(x + band));
    }
    (d, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erlang_cdf_matches_its_closed_forms_and_stays_finite_for_large_k() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(erlang_cdf(1, 1.0), 1.0 - (-1.0f64).exp()));
        assert!(close(erlang_cdf(2, 2.0), 1.0 - 3.0 * (-2.0f64).exp()));
        assert_eq!(erlang_cdf(3, 0.0), 0.0);
        // The median of Erlang-k is close to k − 1/3.
        let big = erlang_cdf(5000, 5000.0 - 1.0 / 3.0);
        assert!((big - 0.5).abs() < 1e-3, "{big}");
        assert!(erlang_cdf(5000, 2000.0) < 1e-12 && erlang_cdf(5000, 9000.0) > 1.0 - 1e-12);
        // Where the approximation takes over, it is within 1e-4 of the exact sum.
        let k = EXACT_UP_TO;
        let approx = |k: u32, x: f64| {
            let v = 1.0 / (9.0 * f64::from(k));
            let z = ((x / f64::from(k)).cbrt() - (1.0 - v)) / v.sqrt();
            0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
        };
        let worst = (0..=2000)
            .map(|i| f64::from(k) * (0.5 + f64::from(i) / 2000.0))
            .map(|x| (erlang_cdf(k, x) - approx(k, x)).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-4, "{worst}");
    }

    #[test]
    fn the_statistic_rejects_a_metronome_and_the_band_only_ever_lowers_it() {
        // 1,000 gaps of exactly the mean: F_n jumps from 0 to 1 at 1.
        let even = [(1.0, 1000u64)];
        let (d, n) = banded_ks(&even, |x| erlang_cdf(1, x), 0.0);
        assert_eq!(n, 1000);
        assert!((d - (1.0 - (-1.0f64).exp())).abs() < 1e-12);
        assert!(d > critical(n, 0.05));
        let (banded, _) = banded_ks(&even, |x| erlang_cdf(1, x), 0.1);
        assert!(banded < d && banded > critical(n, 0.05));
        // Exact quantiles of Exp(1) fit it.
        let quantiles: Vec<(f64, u64)> = (0..1000)
            .map(|i| (-(1.0 - (f64::from(i) + 0.5) / 1000.0).ln(), 1))
            .collect();
        let (d, _) = banded_ks(&quantiles, |x| erlang_cdf(1, x), 0.0);
        assert!(d <= 0.0005 + 1e-12, "{d}");
        assert!((critical(1000, 0.05) - 0.0429).abs() < 2e-4);
        assert!((critical(1_000_000, 0.025) - 1.480e-3).abs() < 1e-5);
    }
}
