//! The search for the highest rate that meets an objective: grow geometrically until it
//! breaks, bisect the bracket, then confirm the boundary with a repeated run.
//!
//! The search only decides which rate to try next; running a probe is the caller's, so the
//! same steps drive real runs and the tests' model servers.

use serde::{Deserialize, Serialize};

/// Lowest rate a search tries, in requests per second.
pub const MIN_RATE: f64 = 1.0;

/// The highest rate tried when none is asked for: above what the services these reports are
/// about take from one generator, and low enough that a search pointed at a real service
/// never doubles its way to an overload nobody asked for.
pub const DEFAULT_MAX: f64 = 20_000.0;

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

impl Phase {
    /// Its name, as in probe directories and tables.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Grow => "grow",
            Phase::Shrink => "shrink",
            Phase::Bisect => "bisect",
            Phase::Confirm => "confirm",
        }
    }
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
    /// Lowest rate the generator could not offer, when it ran short.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<f64>,
}

/// What a probe says about the bracket.
enum Step {
    Met,
    Broken,
    Bound,
}

/// The bracket so far: the highest rate met, the lowest broken, the lowest the generator
/// could not offer.
#[derive(Default)]
struct Bracket {
    lo: Option<f64>,
    hi: Option<f64>,
    ceiling: Option<f64>,
}

impl Bracket {
    fn take(&mut self, rate: f64, step: &Step) {
        match step {
            Step::Met => self.lo = Some(rate),
            Step::Broken => self.hi = Some(rate),
            Step::Bound => self.ceiling = Some(rate),
        }
    }

    /// The lowest rate known not to be sustainable (by the server or by the generator).
    fn upper(&self) -> Option<f64> {
        match (self.hi, self.ceiling) {
            (Some(h), Some(c)) => Some(h.min(c)),
            (h, c) => h.or(c),
        }
    }

    fn outcome(&self, verdict: Verdict) -> Outcome {
        Outcome {
            verdict,
            capacity: self.lo,
            tipping: self.hi,
            ceiling: self.ceiling,
        }
    }
}

/// Runs the search, calling `probe` with each rate to try and its phase; `None` from
/// `probe` means it was interrupted.
///
/// A probe the generator could not drive caps the bracket like a broken one, so the search
/// still narrows to the highest rate it can measure; the verdict then says that the
/// generator, not the server, was the limit.
pub fn search<E>(
    settings: &SearchSettings,
    mut probe: impl FnMut(f64, Phase) -> Result<Option<Finding>, E>,
) -> Result<Outcome, E> {
    let mut b = Bracket::default();
    let mut probes = 0;
    macro_rules! try_rate {
        ($rate:expr, $phase:expr) => {{
            if probes >= settings.max_probes {
                return Ok(b.outcome(Verdict::OutOfProbes));
            }
            probes += 1;
            let step = match probe($rate, $phase)? {
                None => return Ok(b.outcome(Verdict::Interrupted)),
                Some(f) if f.generator_bound => Step::Bound,
                Some(f) if f.met => Step::Met,
                Some(_) => Step::Broken,
            };
            b.take($rate, &step);
            step
        }};
    }

    let mut rate = settings.start;
    loop {
        let phase = if b.upper().is_some() && b.lo.is_none() {
            Phase::Shrink
        } else {
            Phase::Grow
        };
        match try_rate!(rate, phase) {
            Step::Met if b.upper().is_some() => break,
            Step::Met if rate >= settings.max => return Ok(b.outcome(Verdict::AboveMax)),
            Step::Met => rate = round(rate * settings.growth).min(settings.max),
            _ if b.lo.is_some() => break,
            _ if rate <= MIN_RATE => return Ok(b.outcome(Verdict::BelowMin)),
            _ => rate = round(rate / settings.growth).max(MIN_RATE),
        }
    }

    let mut low = b.lo.unwrap_or(MIN_RATE);
    while let Some(high) = b.upper().filter(|&h| h > low * (1.0 + settings.precision)) {
        let mid = round((low * high).sqrt());
        if mid <= low || mid >= high {
            break;
        }
        if let Step::Met = try_rate!(mid, Phase::Bisect) {
            low = mid;
        }
    }

    // A boundary found once may be luck: repeat it, and step down while it does not hold.
    for _ in 0..3 {
        if let Step::Met = try_rate!(low, Phase::Confirm) {
            let server_broke = b.hi.is_some_and(|h| b.ceiling.is_none_or(|c| h <= c));
            let verdict = if server_broke {
                Verdict::Found
            } else {
                Verdict::GeneratorBound
            };
            return Ok(b.outcome(verdict));
        }
        low = round(low / (1.0 + settings.precision));
        if low < MIN_RATE {
            break;
        }
    }
    b.lo = None;
    Ok(b.outcome(Verdict::Unconfirmed))
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
        let (o, tried) = run(&settings(), 1e9, 3000.0);
        assert_eq!(o.verdict, Verdict::GeneratorBound);
        // Narrowed to the highest rate the generator could drive, and confirmed there.
        let found = o.capacity.unwrap();
        assert!((3000.0 / 1.05 / 1.01..=3000.0).contains(&found), "{found}");
        assert!(o.ceiling.unwrap() > 3000.0 && o.tipping.is_none());
        assert_eq!(tried.last().unwrap().1, Phase::Confirm);
        // A server that breaks below the generator's reach is found as usual.
        assert_eq!(run(&settings(), 2000.0, 3000.0).0.verdict, Verdict::Found);
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
