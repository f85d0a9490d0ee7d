//! Where latency turns upward: a knee estimate from the probes (Kneedle, Satopää et al.
//! 2011, on p99 against the offered rate), with how well two straight lines through the
//! knee fit the probes, or why the probes cannot support one.
//!
//! The knee is a second opinion beside the capacity: the capacity is where the objectives
//! stop holding, the knee where latency starts paying for load. Written here because it is
//! a dozen lines on the probes headroom already has; no crate fits this small a job.

use serde::{Deserialize, Serialize};

/// Fewest distinct rates a knee is estimated from.
pub const MIN_RATES: usize = 4;
/// A bend smaller than this (normalised Kneedle difference) is no knee.
const MIN_BEND: f64 = 0.2;
/// Two lines that explain less than this share of the variance do not describe the curve.
const MIN_R2: f64 = 0.8;

/// The knee estimate, or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "knee", rename_all = "snake_case")]
pub enum Knee {
    /// Latency turns upward at `rate`.
    Found {
        /// The offered rate at the knee, req/s.
        rate: f64,
        /// p99 there, µs.
        p99_us: u64,
        /// Share of the p99's variance two lines meeting at the knee explain (0..=1).
        r2: f64,
        /// Their root-mean-square error, µs.
        rms_us: f64,
    },
    /// The probes cannot support one.
    None {
        /// Why, in words.
        why: String,
    },
}

/// Estimates the knee from `(rate, p99 µs)` of each probe (repeated rates are averaged).
pub fn estimate(probes: &[(f64, u64)]) -> Knee {
    let none = |why: &str| Knee::None { why: why.into() };
    let mut points: Vec<(f64, f64, u32)> = Vec::new();
    let mut sorted = probes.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (rate, p99) in sorted {
        match points.last_mut() {
            Some(last) if last.0 == rate => {
                last.1 += p99 as f64;
                last.2 += 1;
            }
            _ => points.push((rate, p99 as f64, 1)),
        }
    }
    let points: Vec<(f64, f64)> = points
        .iter()
        .map(|&(x, y, n)| (x, y / f64::from(n)))
        .collect();
    if points.len() < MIN_RATES {
        return none(&format!(
            "{} distinct rates probed; a knee needs at least {MIN_RATES}",
            points.len()
        ));
    }
    let (x0, x1) = (points[0].0, points[points.len() - 1].0);
    let (y0, y1) = points.iter().fold((f64::MAX, f64::MIN), |(lo, hi), p| {
        (lo.min(p.1), hi.max(p.1))
    });
    if x1 <= x0 || y1 <= y0 {
        return none("latency did not change across the rates probed");
    }
    let norm: Vec<(f64, f64)> = points
        .iter()
        .map(|&(x, y)| ((x - x0) / (x1 - x0), (y - y0) / (y1 - y0)))
        .collect();
    // For a curve that rises ever faster, the knee is where it lies furthest below the
    // diagonal from its first point to its last.
    let (k, bend) = (1..norm.len() - 1)
        .map(|i| (i, norm[i].0 - norm[i].1))
        .fold((0, f64::MIN), |best, c| if c.1 > best.1 { c } else { best });
    if bend < MIN_BEND {
        return none("latency rose about evenly with the rate: no bend to call a knee");
    }
    let (r2, rms) = two_lines(&points, k);
    if r2 < MIN_R2 {
        return none(&format!(
            "two lines meeting at {} req/s explain only {:.0} % of the p99's variance",
            points[k].0,
            100.0 * r2
        ));
    }
    Knee::Found {
        rate: points[k].0,
        p99_us: points[k].1.round() as u64,
        r2,
        rms_us: rms,
    }
}

/// R² and RMS error of one least-squares line through `points[..=k]` and another through
/// `points[k..]`.
fn two_lines(points: &[(f64, f64)], k: usize) -> (f64, f64) {
    let fit = |seg: &[(f64, f64)]| -> Vec<f64> {
        let n = seg.len() as f64;
        let mx = seg.iter().map(|p| p.0).sum::<f64>() / n;
        let my = seg.iter().map(|p| p.1).sum::<f64>() / n;
        let sxx: f64 = seg.iter().map(|p| (p.0 - mx).powi(2)).sum();
        let b = if sxx > 0.0 {
            seg.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>() / sxx
        } else {
            0.0
        };
        seg.iter().map(|p| p.1 - (my + b * (p.0 - mx))).collect()
    };
    let mut residuals = fit(&points[..=k]);
    // The knee belongs to both lines; count it once, on the line after it.
    residuals.pop();
    residuals.extend(fit(&points[k..]));
    let n = points.len() as f64;
    let mean = points.iter().map(|p| p.1).sum::<f64>() / n;
    let total: f64 = points.iter().map(|p| (p.1 - mean).powi(2)).sum();
    let ss: f64 = residuals.iter().map(|r| r * r).sum();
    (1.0 - ss / total, (ss / n).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hockey_stick_has_its_knee_at_the_bend() {
        // Flat near 2 ms up to 1500 req/s, then climbing steeply.
        let probes = [
            (100.0, 2_000),
            (200.0, 2_000),
            (400.0, 2_100),
            (800.0, 2_200),
            (1500.0, 2_500),
            (1600.0, 150_000),
            (3200.0, 900_000),
        ];
        match estimate(&probes) {
            Knee::Found { rate, r2, .. } => {
                assert_eq!(rate, 1500.0);
                assert!(r2 > 0.95, "{r2}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn says_when_the_probes_cannot_support_a_knee() {
        assert!(matches!(
            estimate(&[(100.0, 1), (200.0, 2), (400.0, 3)]),
            Knee::None { why } if why.contains("at least 4")
        ));
        assert!(matches!(
            estimate(&[(100.0, 5), (200.0, 5), (400.0, 5), (800.0, 5)]),
            Knee::None { why } if why.contains("did not change")
        ));
        // A straight line has no knee.
        assert!(matches!(
            estimate(&[(100.0, 100), (200.0, 200), (300.0, 300), (400.0, 400), (500.0, 500)]),
            Knee::None { why } if why.contains("evenly")
        ));
    }
}
