//! The search for the highest rate that meets an objective: grow geometrically until it
//! breaks, bisect the bracket, then confirm the boundary with a repeated run.
//!
//! The search only decides which rate to try next; running a probe is the caller's, so the
//! same steps drive real runs and the tests' model servers.

use serde::{Deserialize, Serialize};

/// Lowest rate a search tries, in requests per second.
pub const MIN_RATE: f64 = 1.0;

/// How the search proceeds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SearchSettings {
    /// First rate tried.
    pub start: f64,
    /// Highest rate tried.
    pub max: f64,
    /// Factor between rates while growing (and shrinking, when the start already breaks).
    pub growth: f64,
    /// The bracket is narrowed until its top is within this share of its bottom.
    pub precision: f64,
    /// Most probes run in all.
    pub max_probes: usize,
}

impl SearchSettings {
    /// Checks the settings make a search that ends.
    pub fn validate(&self) -> Result<(), super::CapacityError> {
        let bad = |s: String| Err(super::CapacityError::Search(s));
        if !(self.start >= MIN_RATE && self.start.is_finite()) {
            return bad(format!("--start must be at least {MIN_RATE} req/s"));
        }
        if !(self.max >= self.start && self.max.is_finite()) {
            return bad("--max must be at least --start".into());
        }
        if !(self.growth > 1.0 && self.growth <= 100.0) {
            return bad("--growth must be above 1 (and at most 100)".into());
        }
        if !(self.precision >= 0.001 && self.precision < 1.0) {
            return bad("--precision must be between 0.1% and 100%".into());
        }
        if self.max_probes < 2 {
            return bad("--max-probes must be at least 2".into());
        }
        Ok(())
    }
}

/// Which part of the search a probe belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Growing until the objective breaks.
    Grow,
    /// Shrinking, when the first rate already broke it.
    Shrink,
    /// Narrowing the bracket.
    Bisect,
    /// Repeating the best rate found.
    Confirm,
}

/// What a probe at one rate found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finding {
    /// Every objective held.
    pub met: bool,
    /// The generator could not offer the rate (it fell behind or ran out of something).
    pub generator_bound: bool,
}

/// How a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// A capacity was found and confirmed.
    Found,
    /// Even the highest rate allowed met the objective.
    AboveMax,
    /// Even the lowest rate broke it.
    BelowMin,
    /// The generator could not offer the load: the server's capacity is above what this
    /// generator can measure.
    GeneratorBound,
    /// The boundary did not hold on repetition.
    Unconfirmed,
    /// The search ran out of probes before it narrowed the bracket.
    OutOfProbes,
    /// It was interrupted.
    Interrupted,
}

/// The search's result: the bracket it ended with.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// How it ended.
    pub verdict: Verdict,
    /// Highest rate that met the objective (confirmed when the verdict is `Found`).
    pub capacity: Option<f64>,
    /// Lowest rate that broke it: the tipping point.
    pub tipping: Option<f64>,
}

/// Runs the search, calling `probe` with each rate to try and its phase; `None` from
/// `probe` means it was interrupted.
pub fn search<E>(
    settings: &SearchSettings,
    mut probe: impl FnMut(f64, Phase) -> Result<Option<Finding>, E>,
) -> Result<Outcome, E> {
    let mut lo: Option<f64> = None;
    let mut hi: Option<f64> = None;
    let mut probes = 0;
    let end = |verdict, lo, hi| {
        Ok(Outcome {
            verdict,
            capacity: lo,
            tipping: hi,
        })
    };
    macro_rules! try_rate {
        ($rate:expr, $phase:expr) => {{
            if probes >= settings.max_probes {
                return end(Verdict::OutOfProbes, lo, hi);
            }
            probes += 1;
            match probe($rate, $phase)? {
                None => return end(Verdict::Interrupted, lo, hi),
                Some(f) if f.generator_bound => return end(Verdict::GeneratorBound, lo, hi),
                Some(f) => f.met,
            }
        }};
    }

    let mut rate = settings.start;
    loop {
        let phase = if hi.is_some() && lo.is_none() {
            Phase::Shrink
        } else {
            Phase::Grow
        };
        if try_rate!(rate, phase) {
            lo = Some(rate);
            if hi.is_some() {
                break;
            }
            if rate >= settings.max {
                return end(Verdict::AboveMax, lo, hi);
            }
            rate = round(rate * settings.growth).min(settings.max);
        } else {
            hi = Some(rate);
            if lo.is_some() {
                break;
            }
            if rate <= MIN_RATE {
                return end(Verdict::BelowMin, lo, hi);
            }
            rate = round(rate / settings.growth).max(MIN_RATE);
        }
    }

    let (mut low, mut high) = (lo.unwrap_or(MIN_RATE), hi.unwrap_or(settings.max));
    while high > low * (1.0 + settings.precision) {
        let mid = round((low * high).sqrt());
        if mid <= low || mid >= high {
            break;
        }
        if try_rate!(mid, Phase::Bisect) {
            low = mid;
            lo = Some(mid);
        } else {
            high = mid;
            hi = Some(mid);
        }
    }

    // A boundary found once may be luck: repeat it, and step down while it does not hold.
    for _ in 0..3 {
        if try_rate!(low, Phase::Confirm) {
            return end(Verdict::Found, Some(low), hi);
        }
        hi = Some(low);
        low = round(low / (1.0 + settings.precision));
        if low < MIN_RATE {
            break;
        }
    }
    end(Verdict::Unconfirmed, None, hi)
}

/// A rate rounded to three significant digits, so steps read as 2830, not 2828.43.
pub fn round(rate: f64) -> f64 {
    if rate <= 0.0 || !rate.is_finite() {
        return rate;
    }
    let scale = 10f64.powi(rate.log10().floor() as i32 - 2);
    (rate / scale).round() * scale
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> SearchSettings {
        SearchSettings {
            start: 100.0,
            max: 1_000_000.0,
            growth: 2.0,
            precision: 0.05,
            max_probes: 30,
        }
    }

    /// A server meeting the objective up to `capacity` req/s, probed by a generator that
    /// can offer `reach` req/s.
    fn run(s: &SearchSettings, capacity: f64, reach: f64) -> (Outcome, Vec<(f64, Phase)>) {
        let mut tried = Vec::new();
        let outcome = search(s, |rate, phase| {
            tried.push((rate, phase));
            Ok::<_, ()>(Some(Finding {
                met: rate <= capacity,
                generator_bound: rate > reach,
            }))
        })
        .unwrap();
        (outcome, tried)
    }

    #[test]
    fn finds_a_known_capacity_within_the_precision_and_confirms_it() {
        for capacity in [150.0, 2000.0, 7777.0, 50_000.0] {
            let (o, tried) = run(&settings(), capacity, f64::INFINITY);
            assert_eq!(o.verdict, Verdict::Found, "{capacity}");
            let found = o.capacity.unwrap();
            assert!(
                found <= capacity && found >= capacity / 1.05 / 1.01,
                "{capacity}: {found}"
            );
            assert!(o.tipping.unwrap() > capacity);
            assert_eq!(tried.last().unwrap(), &(found, Phase::Confirm));
            assert!(tried.len() <= 20, "{capacity}: {} probes", tried.len());
        }
    }

    #[test]
    fn shrinks_when_the_first_rate_already_breaks() {
        let (o, tried) = run(&settings(), 30.0, f64::INFINITY);
        assert_eq!(o.verdict, Verdict::Found);
        assert!(o.capacity.unwrap() <= 30.0 && o.capacity.unwrap() > 28.0);
        assert_eq!(tried[1].1, Phase::Shrink);
    }

    #[test]
    fn says_when_the_generator_and_not_the_server_is_the_limit() {
        let (o, _) = run(&settings(), 1e9, 3000.0);
        assert_eq!(o.verdict, Verdict::GeneratorBound);
        assert_eq!(o.capacity, Some(1600.0));
    }

    #[test]
    fn the_ends_of_the_range_and_the_probe_budget_are_reported_as_such() {
        let mut s = settings();
        s.max = 500.0;
        assert_eq!(run(&s, 1e9, f64::INFINITY).0.verdict, Verdict::AboveMax);
        assert_eq!(
            run(&settings(), 0.5, f64::INFINITY).0.verdict,
            Verdict::BelowMin
        );
        s = settings();
        s.max_probes = 4;
        let o = run(&s, 5000.0, f64::INFINITY).0;
        assert_eq!(o.verdict, Verdict::OutOfProbes);
        assert_eq!((o.capacity, o.tipping), (Some(800.0), None));
    }

    #[test]
    fn a_boundary_that_does_not_hold_is_stepped_down() {
        // One lucky run above the real capacity, never repeated.
        let mut lucky = true;
        let o = search(&settings(), |rate, _| {
            let met = rate <= 1000.0 || (rate <= 1100.0 && std::mem::take(&mut lucky));
            Ok::<_, ()>(Some(Finding {
                met,
                generator_bound: false,
            }))
        })
        .unwrap();
        assert_eq!(o.verdict, Verdict::Found);
        assert!(o.capacity.unwrap() <= 1000.0);
    }

    #[test]
    fn rates_are_rounded_to_three_digits() {
        assert_eq!(round(2828.427), 2830.0);
        assert_eq!(round(141.42), 141.0);
        assert_eq!(round(1.414), 1.41);
    }
}
