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
    /// For each slot of the wheel, the turn (see [`Mix::turn`]) of the request sent there
    /// in the wheel's first round.
    first: Vec<u64>,
    /// How many turns each request advances by per round of the wheel.
    per_round: Vec<u64>,
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
    /// index + count, …` as its own `0, 1, …`: its `m`-th pick and turn are the whole mix's
    /// at request `m·count + index`. Turns are the whole test's, so a request's data rows
    /// are drawn as the single generator would draw them: the shards together use each row
    /// of a pass through a set once, however the wheel's slots fall among them (with a
    /// 95/5 mix over 4 shards every write is one shard's, and it draws the whole set's rows).
    pub fn shard(&self, index: u64, count: u64) -> Mix {
        let count = count.max(1);
        let len = self.wheel.len() as u64;
        // The shard's slots repeat once `m·count` has gone round the wheel a whole number
        // of times: after len / gcd(len, count) of its requests, which is count / gcd
        // rounds of the whole wheel.
        let g = crate::plan::weights::gcd(len, count);
        let period = len / g;
        let rounds = count / g;
        let whole = |m: u64| m * count + index;
        Mix {
            wheel: (0..period).map(|m| self.pick(whole(m))).collect(),
            first: (0..period).map(|m| self.turn(whole(m))).collect(),
            per_round: self.per_round.iter().map(|&t| t * rounds).collect(),
        }
    }

    fn of_wheel(wheel: Vec<u16>, requests: usize) -> Mix {
        let mut per_round = vec![0u64; requests];
        let first = wheel
            .iter()
            .map(|&r| {
                let k = per_round[usize::from(r)];
                per_round[usize::from(r)] += 1;
                k
            })
            .collect();
        Mix {
            wheel,
            first,
            per_round,
        }
    }

    /// How many times the request sent `n`-th in the run was sent before it: its own count,
    /// from which it draws its data row (for a shard, the whole test's count).
    #[inline]
    pub fn turn(&self, n: u64) -> u64 {
        let len = self.wheel.len() as u64;
        let slot = (n % len) as usize;
        let request = usize::from(self.wheel[slot]);
        (n / len) * self.per_round[request] + self.first[slot]
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
    fn shards_pick_and_count_what_the_whole_mix_does_at_their_indices() {
        let mix = mix_of(&[95, 3, 2]);
        for count in [1u64, 2, 3, 4, 7, 20, 40] {
            let mut turns = vec![vec![]; 3];
            for index in 0..count {
                let part = mix.shard(index, count);
                for m in 0..500 {
                    let n = m * count + index;
                    assert_eq!(part.pick(m), mix.pick(n), "{index}/{count} m={m}");
                    assert_eq!(part.turn(m), mix.turn(n), "{index}/{count} m={m}");
                    turns[usize::from(part.pick(m))].push(part.turn(m));
                }
            }
            // Together the shards' turns of each request are the whole's, each once: rows
            // drawn by turn are never drawn twice in a pass, whichever shard sends them.
            let whole = counts(&mix, 500 * count, 3);
            for (r, t) in turns.iter_mut().enumerate() {
                t.sort_unstable();
                assert_eq!(
                    *t,
                    (0..whole[r]).collect::<Vec<_>>(),
                    "{count}: request {r}"
                );
            }
        }
    }

    #[test]
    fn a_rare_request_on_one_shard_draws_the_whole_sets_rows() {
        // 95/5 over 4 shards: the wheel of 20 puts every write on one shard; it must draw
        // rows 0, 1, 2, … as the single generator would, not a quarter of the set.
        let mix = mix_of(&[95, 5]);
        let writers: Vec<u64> = (0..4)
            .filter(|&i| (0..20).any(|m| mix.shard(i, 4).pick(m) == 1))
            .collect();
        assert_eq!(writers.len(), 1, "{writers:?}");
        let part = mix.shard(writers[0], 4);
        let rows: Vec<u64> = (0..100)
            .filter(|&m| part.pick(m) == 1)
            .map(|m| part.turn(m))
            .collect();
        assert_eq!(rows, (0..20).collect::<Vec<_>>());
    }

    #[test]
    fn a_zero_weight_leaves_a_request_out_without_breaking_the_others() {
        let mix = mix_of(&[0, 4]);
        assert_eq!(counts(&mix, 8, 2), vec![0, 8]);
    }
}
