//! The search for the highest rate that meets an objective: grow geometrically until it
//! breaks, bisect the bracket, confirm the boundary with a repeated run, then hold it for
//! longer than any probe (`--confirm`): burst credits running out, a cache filling or a leak
//! show only after a while. A rate that passes its probes but not the hold is broken, and
//! the search goes on below it with holds only, since probes that short have shown they
//! cannot see this server's limit.
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
    /// Hold the answer for a confirmation longer than the probes (false in searches stored
    /// before holds, and with `--confirm 0`).
    #[serde(default)]
    pub hold: bool,
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
    /// Holding a rate for the confirmation's length.
    Hold,
}

impl Phase {
    /// Its name, as in probe directories and tables.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Grow => "grow",
            Phase::Shrink => "shrink",
            Phase::Bisect => "bisect",
            Phase::Confirm => "confirm",
            Phase::Hold => "hold",
        }
    }
}

/// What a probe at one rate found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Finding {
    /// Every objective held.
    pub met: bool,
    /// The generator could not offer the rate (it fell behind or ran out of something).
    pub generator_bound: bool,
    /// The probes so far say the server's latency follows the clock, not the rate: no
    /// capacity can be read from it, and the search stops.
    pub changed_with_time: bool,
    /// For a rate that broke by refusing or failing part of it: what the server still
    /// answered successfully per second once it broke. Rates above it are not sustainable
    /// (a token bucket serves its refill rate once its credits are spent), so the search
    /// takes it as a bound.
    pub served: Option<f64>,
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
    /// The server's latency rose with the time of the search whatever the rate: it has no
    /// capacity to find until it stops changing.
    ChangedWithTime,
    /// Rates passed their probes, but not one held for the confirmation.
    NeverHeld,
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
    /// The capacity held for the confirmation (`--confirm`), not only its probes.
    #[serde(default)]
    pub held: bool,
    /// The least a broken probe's server still answered successfully per second once it
    /// broke: no rate above it is sustained, so the tipping point is at most this (plus the
    /// precision), whatever rate was tried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served: Option<f64>,
}

/// What a probe says about the bracket.
enum Step {
    Met,
    Broken,
    Bound,
}

/// The bracket so far: the highest rate met, the lowest broken, the lowest the generator
/// could not offer, and the least a broken probe's server still served.
#[derive(Default)]
struct Bracket {
    lo: Option<f64>,
    hi: Option<f64>,
    ceiling: Option<f64>,
    served: Option<f64>,
}

impl Bracket {
    /// Takes a probe's result at `rate`; `served` is what a broken probe's server still
    /// answered successfully per second once it broke.
    fn take(&mut self, rate: f64, step: &Step, served: Option<f64>) {
        match step {
            Step::Met => self.lo = Some(rate),
            Step::Broken => self.hi = Some(rate),
            Step::Bound => self.ceiling = Some(rate),
        }
        if let (Step::Broken, Some(s)) = (step, served.filter(|&s| s < rate)) {
            self.served = Some(self.served.map_or(s, |c| c.min(s)));
        }
        // A rate met above what the server sustains once it breaks was met on credits it
        // does not refill (a token bucket's burst): not an answer.
        if let (Some(lo), Some(s)) = (self.lo, self.served) {
            if lo > s {
                self.lo = None;
            }
        }
    }

    /// The lowest rate known not to be sustainable (by the server or by the generator): a
    /// rate broken, or above what a broken probe's server still served.
    fn upper(&self, precision: f64) -> Option<f64> {
        [
            self.hi,
            self.ceiling,
            self.served.map(|s| s * (1.0 + precision)),
        ]
        .into_iter()
        .flatten()
        .reduce(f64::min)
    }

    /// The next rate to try below `rate`, with nothing met under it: what a broken probe's
    /// server still served, when that is lower, else `rate` shrunk by `growth`.
    fn below(&self, rate: f64, growth: f64) -> f64 {
        match self.served {
            Some(s) if round(s) < rate => round(s),
            _ => round(rate / growth),
        }
    }

    fn outcome(&self, verdict: Verdict) -> Outcome {
        Outcome {
            verdict,
            capacity: self.lo,
            tipping: self.hi,
            ceiling: self.ceiling,
            held: false,
            served: self.served,
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
                Some(f) if f.changed_with_time => {
                    // Whatever was met or broke, it was by a server that has since changed:
                    // neither bound stands.
                    b.lo = None;
                    b.hi = None;
                    return Ok(b.outcome(Verdict::ChangedWithTime));
                }
                Some(f) if f.generator_bound => (Step::Bound, None),
                Some(f) if f.met => (Step::Met, None),
                Some(f) => (Step::Broken, f.served),
            };
            b.take($rate, &step.0, step.1);
            step.0
        }};
    }
    let p = settings.precision;

    let mut rate = settings.start;
    'search: loop {
        loop {
            let phase = if b.upper(p).is_some() && b.lo.is_none() {
                Phase::Shrink
            } else {
                Phase::Grow
            };
            match try_rate!(rate, phase) {
                Step::Met if b.upper(p).is_some() => break,
                Step::Met if rate >= settings.max => {
                    return hold(settings, &mut b, Verdict::AboveMax, &mut probes, &mut probe)
                }
                Step::Met => rate = round(rate * settings.growth).min(settings.max),
                _ if b.lo.is_some() => break,
                _ if rate <= MIN_RATE => return Ok(b.outcome(Verdict::BelowMin)),
                _ => rate = b.below(rate, settings.growth).max(MIN_RATE),
            }
        }
        loop {
            // A rate met on credits was dropped: look below what the server served.
            let Some(low) = b.lo else {
                rate = b.below(rate, settings.growth).max(MIN_RATE);
                continue 'search;
            };
            let Some(high) = b.upper(p).filter(|&h| h > low * (1.0 + p)) else {
                break 'search;
            };
            let mid = round((low * high).sqrt());
            if mid <= low || mid >= high {
                break 'search;
            }
            rate = mid;
            try_rate!(mid, Phase::Bisect);
        }
    }
    let mut low = b.lo.unwrap_or(MIN_RATE);

    // A boundary found once may be luck: repeat it, and step down while it does not hold.
    for _ in 0..3 {
        if let Step::Met = try_rate!(low, Phase::Confirm) {
            b.lo = Some(low);
            let server_broke = b.hi.is_some_and(|h| b.ceiling.is_none_or(|c| h <= c));
            let verdict = if server_broke {
                Verdict::Found
            } else {
                Verdict::GeneratorBound
            };
            return hold(settings, &mut b, verdict, &mut probes, &mut probe);
        }
        low = match b.served {
            Some(s) if round(s) < low => round(s),
            _ => round(low / (1.0 + settings.precision)),
        };
        if low < MIN_RATE {
            break;
        }
    }
    b.lo = None;
    Ok(b.outcome(Verdict::Unconfirmed))
}

/// Holds the answer `b.lo` for the confirmation (when the settings ask for it): met, the
/// answer stands, held; broken, the search goes on below it with holds only, so the answer
/// is a rate that held: next at what the server still served once the hold broke (when it
/// refused part of it), else shrinking by the growth factor until one holds; then bisecting
/// between the highest held and the lowest rate known unsustainable (broken, or above what
/// the server served while breaking). `verdict` is the short probes' answer.
fn hold<E>(
    settings: &SearchSettings,
    b: &mut Bracket,
    verdict: Verdict,
    probes: &mut usize,
    probe: &mut impl FnMut(f64, Phase) -> Result<Option<Finding>, E>,
) -> Result<Outcome, E> {
    let Some(first) = b.lo.filter(|_| settings.hold) else {
        return Ok(b.outcome(verdict));
    };
    let mut held: Option<f64> = None;
    let mut broke: Option<f64> = None;
    let mut bound_only = true;
    let mut rate = first;
    let end = |b: &mut Bracket, held: Option<f64>, broke: Option<f64>, v: Verdict| {
        b.lo = held;
        if let Some(x) = broke {
            b.hi = Some(b.hi.map_or(x, |h| h.min(x)));
        }
        Outcome {
            held: held.is_some(),
            ..b.outcome(v)
        }
    };
    loop {
        if *probes >= settings.max_probes {
            return Ok(end(b, held, broke, Verdict::OutOfProbes));
        }
        *probes += 1;
        match probe(rate, Phase::Hold)? {
            None => return Ok(end(b, held, broke, Verdict::Interrupted)),
            Some(f) if f.changed_with_time => {
                b.hi = None;
                return Ok(end(b, None, None, Verdict::ChangedWithTime));
            }
            Some(f) if f.met && !f.generator_bound => held = Some(rate),
            Some(f) => {
                bound_only &= f.generator_bound;
                if f.generator_bound {
                    b.ceiling = Some(b.ceiling.map_or(rate, |c| c.min(rate)));
                }
                if let Some(s) = f.served.filter(|&s| s < rate) {
                    b.served = Some(b.served.map_or(s, |c| c.min(s)));
                }
                broke = Some(rate);
            }
        }
        // Every hold so far held: the first one, at the answer, which stands.
        let Some(x) = broke else {
            return Ok(end(b, held, None, verdict));
        };
        // The lowest rate known not sustainable: broken, or above what was served.
        let upper = b
            .served
            .map_or(x, |s| x.min(s * (1.0 + settings.precision)));
        // A rate held only on credits the server does not refill (above what it served
        // once it broke) is not an answer.
        held = held.filter(|&g| g < upper);
        rate = match held {
            None => {
                let lower = match b.served {
                    Some(s) if round(s) < x => round(s),
                    _ => round(x / settings.growth),
                };
                if lower < MIN_RATE {
                    return Ok(end(b, None, broke, Verdict::NeverHeld));
                }
                lower
            }
            Some(g) => {
                let mid = round((g * upper).sqrt());
                // A hold at what the server served while breaking is as near as that figure
                // tells: rounding it to three digits (200.4 to 200) must not buy another
                // hold between it and its own precision.
                let at_served = b.served.is_some_and(|s| g >= round(s));
                if at_served || upper <= g * (1.0 + settings.precision) || mid <= g || mid >= upper
                {
                    let v = if bound_only {
                        Verdict::GeneratorBound
                    } else {
                        Verdict::Found
                    };
                    return Ok(end(b, held, broke, v));
                }
                mid
            }
        };
    }
}

/// A rate rounded to three significant digits, so steps read as 2830, not 2828.43.
pub fn round(rate: f64) -> f64 {
    if rate <= 0.0 || !rate.is_finite() {
        return rate;
    }
    // Multiplying by a power of ten and dividing by another (never by a fraction such as
    // 0.1, which has no exact binary form) gives the double nearest the decimal: 22.9, not
    // 22.900000000000002.
    let digits = 2 - rate.log10().floor() as i32;
    if digits >= 0 {
        let k = 10f64.powi(digits);
        (rate * k).round() / k
    } else {
        let k = 10f64.powi(-digits);
        (rate / k).round() * k
    }
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
            hold: false,
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
                changed_with_time: false,
                served: None,
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
                changed_with_time: false,
                served: None,
            }))
        })
        .unwrap();
        assert_eq!(o.verdict, Verdict::Found);
        assert!(o.capacity.unwrap() <= 1000.0);
    }

    /// A server whose burst credits carry any rate through a short probe, but only
    /// `sustained` req/s through a hold.
    fn with_credits(
        s: &SearchSettings,
        sustained: f64,
        serves: bool,
    ) -> (Outcome, Vec<(f64, Phase)>) {
        let mut tried = Vec::new();
        let outcome = search(s, |rate, phase| {
            tried.push((rate, phase));
            let met = phase != Phase::Hold || rate <= sustained;
            Ok::<_, ()>(Some(Finding {
                met,
                generator_bound: false,
                changed_with_time: false,
                served: (!met && serves).then_some(sustained),
            }))
        })
        .unwrap();
        (outcome, tried)
    }

    #[test]
    fn a_rate_that_breaks_in_the_hold_sends_the_search_below_it_with_holds_only() {
        let mut s = settings();
        s.max = 5_000.0;
        s.hold = true;
        let (o, tried) = with_credits(&s, 2_000.0, false);
        assert_eq!(o.verdict, Verdict::Found, "{tried:?}");
        assert!(o.held);
        let found = o.capacity.unwrap();
        assert!((2000.0 / 1.05 / 1.01..=2000.0).contains(&found), "{found}");
        assert!(o.tipping.unwrap() > 2000.0 && o.tipping.unwrap() <= 2000.0 * 1.06);
        // The short probes reached the ceiling; every probe after the first hold is a hold.
        let first_hold = tried.iter().position(|t| t.1 == Phase::Hold).unwrap();
        assert_eq!(tried[first_hold], (5000.0, Phase::Hold));
        assert!(tried[first_hold..].iter().all(|t| t.1 == Phase::Hold));
        // A server that says what it sustains while refusing the rest (a token bucket
        // serving its refill rate) is answered in two holds: the broken one and that rate.
        let (o, tried) = with_credits(&s, 2_000.0, true);
        assert_eq!(
            (o.verdict, o.capacity, o.held),
            (Verdict::Found, Some(2000.0), true)
        );
        assert_eq!(tried.iter().filter(|t| t.1 == Phase::Hold).count(), 2);
        // Also when what it served rounds down to the rate held (200.4 to 200): no third
        // hold between them.
        let (o, tried) = with_credits(&s, 2_004.4, true);
        assert_eq!(
            (o.verdict, o.capacity, o.held),
            (Verdict::Found, Some(2000.0), true),
            "{tried:?}"
        );
        assert_eq!(tried.iter().filter(|t| t.1 == Phase::Hold).count(), 2);
        // Without a hold the same server is answered above what it sustains.
        s.hold = false;
        assert_eq!(
            with_credits(&s, 2_000.0, false).0.verdict,
            Verdict::AboveMax
        );
    }

    #[test]
    fn a_probe_that_breaks_while_serving_less_bounds_the_search_there() {
        // A bucket of credits spent by the growing probes: rates up to 400 met on credits,
        // then every rate above 200 refused in part while 200 were served.
        let mut spent = false;
        let mut tried = Vec::new();
        let mut s = settings();
        s.max = 5000.0;
        let o = search(&s, |rate, phase| {
            tried.push((rate, phase));
            spent |= rate >= 800.0;
            let met = rate <= 200.0 || !spent;
            Ok::<_, ()>(Some(Finding {
                met,
                generator_bound: false,
                changed_with_time: false,
                served: (!met).then_some(200.0),
            }))
        })
        .unwrap();
        assert_eq!(
            (o.verdict, o.capacity),
            (Verdict::Found, Some(200.0)),
            "{tried:?}"
        );
        assert!(tried.len() <= 8, "{tried:?}");
    }

    #[test]
    fn an_answer_that_holds_stands_and_says_it_held() {
        let mut s = settings();
        s.hold = true;
        let (o, tried) = run(&s, 2000.0, f64::INFINITY);
        assert_eq!(o.verdict, Verdict::Found);
        assert!(o.held);
        assert_eq!(tried.last().unwrap(), &(o.capacity.unwrap(), Phase::Hold));
        // A server that never holds anything.
        s.max = 5_000.0;
        let (o, _) = with_credits(&s, 0.5, false);
        assert_eq!(o.verdict, Verdict::NeverHeld);
        assert_eq!(o.capacity, None);
    }

    #[test]
    fn a_server_changing_with_time_stops_the_search_without_an_answer() {
        let mut n = 0;
        let o = search(&settings(), |_, _| {
            n += 1;
            Ok::<_, ()>(Some(Finding {
                met: true,
                generator_bound: false,
                changed_with_time: n >= 3,
                served: None,
            }))
        })
        .unwrap();
        assert_eq!(
            (o.verdict, o.capacity, o.tipping),
            (Verdict::ChangedWithTime, None, None)
        );
        // Nor a tipping point from a rate that broke before the change was seen.
        let mut n = 0;
        let o = search(&settings(), |rate, _| {
            n += 1;
            Ok::<_, ()>(Some(Finding {
                met: rate < 150.0,
                generator_bound: false,
                changed_with_time: n >= 3,
                served: None,
            }))
        })
        .unwrap();
        assert_eq!(
            (o.verdict, o.capacity, o.tipping),
            (Verdict::ChangedWithTime, None, None)
        );
    }

    #[test]
    fn rates_are_rounded_to_three_digits() {
        assert_eq!(round(2828.427), 2830.0);
        assert_eq!(round(141.42), 141.0);
        assert_eq!(round(1.414), 1.41);
        assert_eq!(round(22.9), 22.9);
        assert_eq!(round((17.7f64 * 24.4).sqrt()).to_string(), "20.8");
        assert_eq!(round(24.400000000000002).to_string(), "24.4");
    }
}
