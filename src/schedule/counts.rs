//! Where request `n` falls on the schedule's count axis: at `n` itself (evenly spaced
//! arrivals), or at `Γ_n`, the `n`-th arrival of a unit-rate Poisson process (the sum of
//! `n + 1` independent Exp(1) draws from a seeded generator).
//!
//! The pacer's count→time map then turns that count into a due time, so a constant rate
//! gives a homogeneous Poisson process and ramps and stages a non-homogeneous one (the
//! time-rescaling theorem, read backwards); a shard that walks every N-th index of the whole
//! schedule walks the whole test's arrivals.
//!
//! `Γ_n` is a prefix sum, so a cursor keeps where it stands: walking `n` upwards costs one
//! draw per index passed (a worker striding by `s` pays `s` draws per request), never a walk
//! from 0. Every worker and every shard draws the same sequence from the same seed and adds
//! it in the same order, so they agree on every `Γ_n` to the bit.

use rand_distr::{Distribution, Exp1};
use rand_pcg::rand_core::SeedableRng;
use rand_pcg::Pcg64Mcg;

/// How arrivals are spaced on the schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spacing {
    /// Request `n` at count `n`: the metronome.
    Even,
    /// Request `n` at the `n`-th arrival of a unit-rate Poisson process drawn from `seed`.
    Poisson {
        /// Seeds the draws: one seed, one schedule.
        seed: u64,
    },
}

/// A cursor on the count axis: the count of request `n`, for `n` that do not go down.
#[derive(Debug, Clone)]
pub struct Counts {
    poisson: Option<PoissonCounts>,
}

/// The unit-rate Poisson process walked so far.
#[derive(Debug, Clone)]
struct PoissonCounts {
    seed: u64,
    // PCG (O'Neill): small state, fast, and what `rand_pcg` keeps stable for a given seed,
    // so a seed stored in a run replays its schedule.
    rng: Pcg64Mcg,
    /// Draws taken so far: `sum` is `Γ_{taken - 1}`.
    taken: u64,
    sum: f64,
}

impl PoissonCounts {
    fn new(seed: u64) -> PoissonCounts {
        PoissonCounts {
            seed,
            rng: Pcg64Mcg::seed_from_u64(seed),
            taken: 0,
            sum: 0.0,
        }
    }

    fn at(&mut self, n: u64) -> f64 {
        if n < self.taken.saturating_sub(1) {
            // Asked for an earlier request: start again (right, if slow; walks never do).
            *self = PoissonCounts::new(self.seed);
        }
        while self.taken <= n {
            let e: f64 = Exp1.sample(&mut self.rng);
            self.sum += e;
            self.taken += 1;
        }
        self.sum
    }
}

impl Counts {
    /// A cursor at the start of `spacing`'s schedule.
    pub fn new(spacing: Spacing) -> Counts {
        Counts {
            poisson: match spacing {
                Spacing::Even => None,
                Spacing::Poisson { seed } => Some(PoissonCounts::new(seed)),
            },
        }
    }

    /// The count at which request `n` (from 0) arrives.
    #[inline]
    pub fn at(&mut self, n: u64) -> f64 {
        match &mut self.poisson {
            None => n as f64,
            Some(p) => p.at(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_counts_are_the_index_and_poisson_counts_a_seeded_increasing_sum() {
        let mut even = Counts::new(Spacing::Even);
        assert_eq!((even.at(0), even.at(7)), (0.0, 7.0));
        let mut a = Counts::new(Spacing::Poisson { seed: 7 });
        let mut b = Counts::new(Spacing::Poisson { seed: 7 });
        let mut other = Counts::new(Spacing::Poisson { seed: 8 });
        let walked: Vec<f64> = (0..1000).map(|n| a.at(n)).collect();
        assert!(walked[0] > 0.0 && walked.windows(2).all(|w| w[1] > w[0]));
        // A cursor striding by 3 lands on the same counts, to the bit; going back starts over.
        for n in (2..1000).step_by(3) {
            assert_eq!(b.at(n).to_bits(), walked[n as usize].to_bits());
        }
        assert_eq!(b.at(5).to_bits(), walked[5].to_bits());
        assert_ne!(other.at(999), walked[999]);
        // Unit rate: about n arrivals by count n (the sum of 1000 Exp(1) has sd 31.6).
        assert!((walked[999] - 1000.0).abs() < 150.0, "{}", walked[999]);
    }
}
