//! Each request's share of the load, checked with the rest of the plan.
//!
//! The rule lives here rather than in `schedule` so that validating a plan needs nothing
//! downstream of it; `schedule::Mix` then builds its wheel from weights already checked.

/// The longest cycle a mix may have; finer weights would make the wheel a memory cost.
pub const MAX_CYCLE: u64 = 100_000;

/// Why weights cannot make a mix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MixError {
    /// No request, or every weight zero.
    #[error("a mix needs at least one request with a weight above 0")]
    Empty,
    /// More requests than a wheel can index.
    #[error("a mix can hold at most {max} requests", max = u16::MAX)]
    TooMany,
    /// The weights, reduced by their common divisor, add up to more than [`MAX_CYCLE`].
    #[error("weights adding up to {0} (after dividing by their common divisor) are finer than a mix can follow; the most is {MAX_CYCLE}")]
    TooFine(u64),
}

/// Weights a mix can follow, reduced by their common divisor (95/5 becomes 19/1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Weights {
    parts: Vec<u32>,
}

/// The greatest common divisor (`gcd(0, b)` is `b`).
pub(crate) fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl Weights {
    /// Checks that request `i` can get `weights[i]` parts of the load.
    pub fn new(weights: &[u32]) -> Result<Weights, MixError> {
        if weights.len() > usize::from(u16::MAX) {
            return Err(MixError::TooMany);
        }
        let divisor = weights.iter().fold(0u64, |g, &w| gcd(g, u64::from(w)));
        if divisor == 0 {
            return Err(MixError::Empty);
        }
        let parts: Vec<u32> = weights
            .iter()
            .map(|&w| (u64::from(w) / divisor) as u32)
            .collect();
        let cycle: u64 = parts.iter().map(|&p| u64::from(p)).sum();
        if cycle > MAX_CYCLE {
            return Err(MixError::TooFine(cycle));
        }
        Ok(Weights { parts })
    }

    /// Each request's weight divided by the common divisor, in request order.
    pub fn parts(&self) -> &[u32] {
        &self.parts
    }

    /// Sends in one cycle of the mix: the sum of the parts, from 1 to [`MAX_CYCLE`].
    pub fn cycle(&self) -> u64 {
        self.parts.iter().map(|&p| u64::from(p)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_are_reduced_by_their_common_divisor() {
        let w = Weights::new(&[95, 5]).unwrap();
        assert_eq!(w.parts(), &[19, 1]);
        assert_eq!(w.cycle(), 20);
        assert_eq!(Weights::new(&[0, 4]).unwrap().parts(), &[0, 1]);
    }

    #[test]
    fn zero_weights_and_too_fine_weights_are_refused() {
        assert_eq!(Weights::new(&[]).unwrap_err(), MixError::Empty);
        assert_eq!(Weights::new(&[0, 0]).unwrap_err(), MixError::Empty);
        assert!(matches!(
            Weights::new(&[99_999, 2]).unwrap_err(),
            MixError::TooFine(100_001)
        ));
        assert_eq!(
            Weights::new(&vec![1; usize::from(u16::MAX) + 1]).unwrap_err(),
            MixError::TooMany
        );
    }
}
