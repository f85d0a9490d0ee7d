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

    /// The mix one shard of `count` sees when it sends the whole run's requests `index,
    /// index + count, …` as its own `0, 1, …`: its `m`-th pick is the whole mix's pick of
    /// request `m·count + index`, and its turns count its own sends, so the shard's data rows
    /// follow one another within its part of a set.
    pub fn shard(&self, index: u64, count: u64) -> Mix {
        let len = self.wheel.len() as u64;
        // The shard's slots repeat once `m·count` has gone round the wheel a whole number
        // of times: after len / gcd(len, count) of its requests.
        let period = len / gcd(len, count.max(1));
        let wheel = (0..period).map(|m| self.pick(m * count + index)).collect();
        Mix::of_wheel(wheel, self.per_cycle.len())
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

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
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
    fn shards_pick_what_the_whole_mix_picks_at_their_indices() {
        let mix = mix_of(&[95, 3, 2]);
        for count in [1u64, 2, 3, 7, 20, 40] {
            let mut turns = vec![vec![]; 3];
            for index in 0..count {
                let part = mix.shard(index, count);
                let mut own = [0u64; 3];
                for m in 0..500 {
                    let r = part.pick(m);
                    assert_eq!(r, mix.pick(m * count + index), "{index}/{count} m={m}");
                    assert_eq!(part.turn(m), own[usize::from(r)], "its own count");
                    own[usize::from(r)] += 1;
                }
                for (r, t) in own.iter().enumerate() {
                    turns[r].push(*t);
                }
            }
            // Together the shards sent what the whole mix sends over their indices.
            let whole = counts(&mix, 500 * count, 3);
            let summed: Vec<u64> = turns.iter().map(|t| t.iter().sum()).collect();
            assert_eq!(summed, whole, "count {count}");
        }
    }

    #[test]
    fn a_zero_weight_leaves_a_request_out_without_breaking_the_others() {
        let mix = mix_of(&[0, 4]);
        assert_eq!(counts(&mix, 8, 2), vec![0, 8]);
    }
}
