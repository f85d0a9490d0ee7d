//! Which request comes next in a weighted mix, computed from the request count.
//!
//! A 95/5 mix sends exactly 19 reads per write in every window of 20 requests, spread out
//! (smooth weighted round-robin, as nginx balances upstreams), rather than drawing at random:
//! the mix holds over any run length and two runs of a scenario send the same sequence.

use crate::plan::Weights;

/// A weighted mix of requests, as a wheel of request indices repeated forever.
#[derive(Debug, Clone)]
pub struct Mix {
    wheel: Vec<u16>,
    /// For each slot of the wheel, how many earlier slots hold the same request.
    rank: Vec<u32>,
    /// How many slots each request has.
    per_cycle: Vec<u32>,
}

impl Mix {
    /// A mix in which request `i` gets `weights.parts()[i]` parts of the load.
    pub fn new(weights: &Weights) -> Mix {
        let parts: Vec<i64> = weights.parts().iter().map(|&p| i64::from(p)).collect();
        let cycle = weights.cycle() as i64;
        // Smooth weighted round-robin: each turn every request gains its weight, the one
        // furthest ahead is picked and pays back the whole cycle.
        let mut credit = vec![0i64; parts.len()];
        let mut wheel = Vec::with_capacity(cycle as usize);
        for _ in 0..cycle {
            for (c, p) in credit.iter_mut().zip(&parts) {
                *c += p;
            }
            let (best, _) = credit
                .iter()
                .enumerate()
                .max_by_key(|&(i, c)| (*c, std::cmp::Reverse(i)))
                .expect("at least one request");
            credit[best] -= cycle;
            wheel.push(best as u16);
        }
        Mix::of_wheel(wheel, parts.len())
    }

    fn of_wheel(wheel: Vec<u16>, requests: usize) -> Mix {
        let mut per_cycle = vec![0u32; requests];
        let rank = wheel
            .iter()
            .map(|&r| {
                let k = per_cycle[usize::from(r)];
                per_cycle[usize::from(r)] += 1;
                k
            })
            .collect();
        Mix {
            wheel,
            rank,
            per_cycle,
        }
    }

    /// How many times the request sent `n`-th in the run was sent before it: its own count,
    /// from which it draws its data row.
    #[inline]
    pub fn turn(&self, n: u64) -> u64 {
        let len = self.wheel.len() as u64;
        let slot = (n % len) as usize;
        let request = usize::from(self.wheel[slot]);
        (n / len) * u64::from(self.per_cycle[request]) + u64::from(self.rank[slot])
    }

    /// The request sent as the `n`-th request of the run (from 0).
    #[inline]
    pub fn pick(&self, n: u64) -> u16 {
        self.wheel[(n % self.wheel.len() as u64) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mix_of(weights: &[u32]) -> Mix {
        Mix::new(&Weights::new(weights).unwrap())
    }

    fn counts(mix: &Mix, n: u64, requests: usize) -> Vec<u64> {
        let mut c = vec![0; requests];
        for i in 0..n {
            c[mix.pick(i) as usize] += 1;
        }
        c
    }

    #[test]
    fn a_mix_holds_its_weights_exactly_over_every_cycle() {
        let mix = mix_of(&[95, 5]);
        assert_eq!(counts(&mix, 20, 2), vec![19, 1]);
        assert_eq!(counts(&mix, 20_000, 2), vec![19_000, 1_000]);
        let mix = mix_of(&[50, 30, 20]);
        assert_eq!(counts(&mix, 10, 3), vec![5, 3, 2]);
    }

    #[test]
    fn each_request_counts_its_own_sends() {
        let mix = mix_of(&[3, 1]);
        let mut seen = [0u64; 2];
        for n in 0..40 {
            let r = usize::from(mix.pick(n));
            assert_eq!(mix.turn(n), seen[r], "send {n}");
            seen[r] += 1;
        }
    }

    #[test]
    fn the_rarer_request_is_spread_out_not_bunched() {
        let mix = mix_of(&[1, 1]);
        let seq: Vec<u16> = (0..6).map(|n| mix.pick(n)).collect();
        assert_eq!(seq, vec![0, 1, 0, 1, 0, 1]);
        let mix = mix_of(&[3, 1]);
        let writes: Vec<u64> = (0..12).filter(|&n| mix.pick(n) == 1).collect();
        assert_eq!(writes.len(), 3);
        assert!(writes.windows(2).all(|w| w[1] - w[0] == 4), "{writes:?}");
    }

    #[test]
    fn a_zero_weight_leaves_a_request_out_without_breaking_the_others() {
        let mix = mix_of(&[0, 4]);
        assert_eq!(counts(&mix, 8, 2), vec![0, 8]);
    }
}
