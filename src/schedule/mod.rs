//! When to send: pure pacing functions, computed from a request count, never from a clock.
//!
//! Due times come from the count (`n / rate`), as wrk2 does, so rounding never accumulates and
//! the rate holds over any run length; a slow server cannot push the schedule back.
//!
//! A schedule is two parts: where request `n` falls on the count axis ([`Counts`]: at `n`, or
//! at the `n`-th arrival of a unit-rate Poisson process) and the pacer's map from a count to
//! a time (a constant rate, or stages). A [`Walk`] is a cursor through both, as the engine's
//! workers walk their strides of the schedule.

mod counts;
mod mix;
mod profile;

pub use counts::{Counts, Spacing};
pub use mix::Mix;
pub use profile::{RateProfile, RateStage};

use crate::plan::{Rate, Stop};
use std::time::Duration;

/// Constant-rate arrivals: request `n` (from 0) is due at `n / rate` after the start.
#[derive(Debug, Clone, Copy)]
pub struct ConstantPacer {
    /// Nanoseconds between arrivals, kept as a float so fractional rates stay exact.
    period_ns: f64,
}

impl ConstantPacer {
    /// A pacer for `rate` requests per second.
    pub fn new(rate: Rate) -> Self {
        ConstantPacer {
            period_ns: 1e9 / rate.per_second(),
        }
    }

    /// Offset from the start at which request `n` is due.
    pub fn due(&self, n: u64) -> Duration {
        self.at(n as f64)
    }

    /// Offset from the start at which the schedule's count reaches `count`.
    fn at(&self, count: f64) -> Duration {
        // f64 holds integers exactly up to 2^53 ns (104 days): far beyond any run.
        Duration::from_nanos((count * self.period_ns).round() as u64)
    }

    /// The schedule's count by `elapsed`: arrivals expected so far, as a real number.
    fn expected_by(&self, elapsed: Duration) -> f64 {
        elapsed.as_nanos() as f64 / self.period_ns
    }

    /// Number of requests due by `elapsed` (those with `due(n) <= elapsed`).
    pub fn due_by(&self, elapsed: Duration) -> u64 {
        let n = (elapsed.as_nanos() as f64 / self.period_ns).floor() as u64 + 1;
        // Guard the float boundary so due_by and due agree exactly.
        if self.due(n) <= elapsed {
            n + 1
        } else if n > 0 && self.due(n - 1) > elapsed {
            n - 1
        } else {
            n
        }
    }
}

/// Due times of an open-model run: a constant rate, or a profile of stages.
#[derive(Debug, Clone)]
pub enum Pacer {
    /// One rate until the stop condition.
    Constant(ConstantPacer),
    /// Rates and ramps in sequence; the profile ends the run.
    Staged(RateProfile),
    /// One shard's requests of a whole schedule: its `m`-th request is the whole's
    /// `m·count + index`-th, due when the whole schedule has it due.
    Sharded {
        /// The whole test's schedule.
        whole: Box<Pacer>,
        /// This shard, from 0.
        index: u64,
        /// How many shards.
        count: u64,
    },
}

impl Pacer {
    /// Offset from the start at which request `n` is due, arrivals evenly spaced; `None`
    /// once a profile is over.
    pub fn due(&self, n: u64) -> Option<Duration> {
        self.at(self.whole_index(n)? as f64)
    }

    /// The whole schedule's index of this pacer's request `n` (a shard's `n·count + index`).
    #[inline]
    fn whole_index(&self, n: u64) -> Option<u64> {
        match self {
            Pacer::Sharded { index, count, .. } => n.checked_mul(*count)?.checked_add(*index),
            _ => Some(n),
        }
    }

    /// Offset from the start at which the whole schedule's count reaches `count`; `None`
    /// past the end of a profile.
    #[inline]
    fn at(&self, count: f64) -> Option<Duration> {
        match self {
            Pacer::Constant(p) => Some(p.at(count)),
            Pacer::Staged(p) => p.at(count),
            Pacer::Sharded { whole, .. } => whole.at(count),
        }
    }

    /// The whole schedule's count by `elapsed` (the inverse of the count→time map): the
    /// arrivals expected so far, whose differences are Exp(1) between Poisson arrivals
    /// whatever the rate does (the time-rescaling theorem).
    pub fn expected_by(&self, elapsed: Duration) -> f64 {
        match self {
            Pacer::Constant(p) => p.expected_by(elapsed),
            Pacer::Staged(p) => p.expected_by(elapsed),
            Pacer::Sharded { whole, .. } => whole.expected_by(elapsed),
        }
    }

    /// How many of the whole schedule's indices lie between two consecutive requests of
    /// this pacer (a shard's count, else 1).
    pub fn stride(&self) -> u64 {
        match self {
            Pacer::Sharded { count, .. } => *count,
            _ => 1,
        }
    }
}

/// An open-model run's due times: the pacer's map, and the spacing of arrivals on it.
#[derive(Debug, Clone)]
pub struct Schedule {
    /// From a count of arrivals to a time.
    pub pacer: Pacer,
    /// Where each request falls on the count axis.
    pub spacing: Spacing,
}

impl Schedule {
    /// A cursor from the schedule's start.
    pub fn walk(&self) -> Walk<'_> {
        Walk {
            pacer: &self.pacer,
            counts: Counts::new(self.spacing),
        }
    }
}

/// A cursor through a schedule: due times of requests asked in increasing order cost one
/// step each, whatever the spacing (an earlier request is found again, by starting over).
#[derive(Debug, Clone)]
pub struct Walk<'a> {
    pacer: &'a Pacer,
    counts: Counts,
}

impl Walk<'_> {
    /// Offset from the start at which request `n` is due; `None` once a profile is over.
    #[inline]
    pub fn due(&mut self, n: u64) -> Option<Duration> {
        let whole = self.pacer.whole_index(n)?;
        self.pacer.at(self.counts.at(whole))
    }
}

/// Whether request `n`, due at `due`, still belongs to the run.
pub fn within(stop: &Stop, n: u64, due: Duration) -> bool {
    stop.requests.is_none_or(|max| n < max) && stop.duration.is_none_or(|d| due < d)
}

/// Request indices owned by worker `worker` of `workers`: `worker, worker + workers, …`.
///
/// Interleaving (rather than splitting the rate) keeps the merged arrival stream exactly
/// the requested one, whatever the number of workers.
#[derive(Debug, Clone, Copy)]
pub struct Stride {
    next: u64,
    step: u64,
}

impl Stride {
    /// The indices of `worker` among `workers`.
    pub fn new(worker: usize, workers: usize) -> Self {
        Stride {
            next: worker as u64,
            step: workers.max(1) as u64,
        }
    }

    /// The next index this worker sends, without taking it.
    pub fn peek(&self) -> u64 {
        self.next
    }

    /// Moves to the following index.
    pub fn advance(&mut self) {
        self.next += self.step;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stop(duration_ms: Option<u64>, requests: Option<u64>) -> Stop {
        Stop::of_ms(duration_ms, requests)
    }

    #[test]
    fn due_times_come_from_the_count() {
        let p = ConstantPacer::new(Rate(5000.0));
        assert_eq!(p.due(0), Duration::ZERO);
        assert_eq!(p.due(1), Duration::from_micros(200));
        assert_eq!(p.due(5000), Duration::from_secs(1));
        // No drift: the millionth request is due exactly 200 s in.
        assert_eq!(p.due(1_000_000), Duration::from_secs(200));
        let p = ConstantPacer::new(Rate(3.0));
        assert_eq!(p.due(1), Duration::from_nanos(333_333_333));
        assert_eq!(p.due(3), Duration::from_secs(1));
    }

    #[test]
    fn due_by_counts_requests_at_or_before_elapsed() {
        let p = ConstantPacer::new(Rate(1000.0));
        assert_eq!(p.due_by(Duration::ZERO), 1);
        assert_eq!(p.due_by(Duration::from_micros(999)), 1);
        assert_eq!(p.due_by(Duration::from_millis(1)), 2);
        assert_eq!(p.due_by(Duration::from_secs(10)), 10_001);
        let p = ConstantPacer::new(Rate(3.0));
        for n in 0..1000 {
            let d = p.due(n);
            assert_eq!(p.due_by(d), n + 1, "n={n}");
            if !d.is_zero() {
                assert_eq!(p.due_by(d - Duration::from_nanos(1)), n, "n={n}");
            }
        }
    }

    #[test]
    fn stop_conditions_bound_the_count() {
        let p = ConstantPacer::new(Rate(5000.0));
        let s = stop(Some(10_000), None);
        let sent = (0..).take_while(|&n| within(&s, n, p.due(n))).count();
        assert_eq!(sent, 50_000, "10 s at 5,000/s");
        let s = stop(Some(10_000), Some(1234));
        assert_eq!((0..).take_while(|&n| within(&s, n, p.due(n))).count(), 1234);
        let p = ConstantPacer::new(Rate(0.5));
        let s = stop(Some(3_000), None);
        assert_eq!(
            (0..).take_while(|&n| within(&s, n, p.due(n))).count(),
            2,
            "t=0 and t=2s"
        );
    }

    #[test]
    fn shards_of_a_schedule_together_are_the_whole_schedule() {
        let profile = || {
            Pacer::Staged(RateProfile::new(&[
                RateStage {
                    from: 0.0,
                    to: 300.0,
                    duration: Duration::from_secs(3),
                },
                RateStage {
                    from: 300.0,
                    to: 300.0,
                    duration: Duration::from_secs(2),
                },
            ]))
        };
        let constant = || Pacer::Constant(ConstantPacer::new(Rate(333.0)));
        let spacings = [Spacing::Even, Spacing::Poisson { seed: 11 }];
        for (make, spacing) in [&profile as &dyn Fn() -> Pacer, &constant]
            .into_iter()
            .flat_map(|m| spacings.map(|s| (m, s)))
        {
            let s = stop(Some(5_000), Some(1_234));
            let whole = Schedule {
                pacer: make(),
                spacing,
            };
            let mut walk = whole.walk();
            let single: Vec<(u64, Duration)> = (0..)
                .map_while(|n| walk.due(n).filter(|&d| within(&s, n, d)).map(|d| (n, d)))
                .collect();
            assert!(single.len() > 1000, "{spacing:?}: {}", single.len());
            for count in [1u64, 2, 3, 4, 7] {
                let mut union = vec![];
                for index in 0..count {
                    let shard = Schedule {
                        pacer: Pacer::Sharded {
                            whole: Box::new(make()),
                            index,
                            count,
                        },
                        spacing,
                    };
                    let mut walk = shard.walk();
                    // The shard's count stop is its share of the whole count.
                    let own = crate::plan::shard::Shard::new(index, count).unwrap();
                    let s = Stop {
                        requests: Some(own.share(1_234)),
                        ..s
                    };
                    union.extend(
                        (0..)
                            .map_while(|m| {
                                walk.due(m).filter(|&d| within(&s, m, d)).map(|d| (m, d))
                            })
                            .map(|(m, d)| (own.whole_index(m), d)),
                    );
                }
                union.sort();
                assert_eq!(union, single, "{count} shards, {spacing:?}");
            }
        }
    }

    /// The first `count` due times of `schedule`, in seconds.
    fn due_secs(schedule: &Schedule, count: u64) -> Vec<f64> {
        let mut walk = schedule.walk();
        (0..count)
            .map_while(|n| walk.due(n))
            .map(|d| d.as_secs_f64())
            .collect()
    }

    /// KS statistic and critical value of `gaps` (in expected arrivals) against Exp(1).
    fn exponential_fit(gaps: &[f64]) -> (f64, f64) {
        use crate::summary::fit::{banded_ks, critical, erlang_cdf};
        let mut points: Vec<(f64, u64)> = gaps.iter().map(|&g| (g, 1)).collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (d, n) = banded_ks(&points, |x| erlang_cdf(1, x), 0.0);
        (d, critical(n, 0.05))
    }

    #[test]
    fn poisson_gaps_at_a_constant_rate_are_exponential_and_even_ones_are_not() {
        let rate = 5000.0;
        let poisson = |seed| Schedule {
            pacer: Pacer::Constant(ConstantPacer::new(Rate(rate))),
            spacing: Spacing::Poisson { seed },
        };
        for seed in [1, 2, 3] {
            let at = due_secs(&poisson(seed), 20_000);
            let gaps: Vec<f64> = at.windows(2).map(|w| (w[1] - w[0]) * rate).collect();
            let (d, critical) = exponential_fit(&gaps);
            assert!(d < critical, "seed {seed}: D = {d} ≥ {critical}");
            // The rate holds: 20,000 arrivals in 4 s, give or take 4 standard deviations.
            let last = at[at.len() - 1];
            assert!((last - 4.0).abs() < 4.0 * 20_000f64.sqrt() / rate, "{last}");
        }
        // The same seed is the same schedule; another is another.
        assert_eq!(due_secs(&poisson(1), 500), due_secs(&poisson(1), 500));
        assert_ne!(due_secs(&poisson(1), 500), due_secs(&poisson(2), 500));
        let even = Schedule {
            pacer: Pacer::Constant(ConstantPacer::new(Rate(rate))),
            spacing: Spacing::Even,
        };
        let at = due_secs(&even, 20_000);
        let gaps: Vec<f64> = at.windows(2).map(|w| (w[1] - w[0]) * rate).collect();
        let (d, critical) = exponential_fit(&gaps);
        assert!(d > 10.0 * critical, "a metronome is not Poisson: D = {d}");
    }

    #[test]
    fn poisson_arrivals_follow_a_ramp_and_its_rescaled_gaps_are_exponential() {
        // 0 → 4,000 req/s over 10 s, then 4,000 for 5 s: 40,000 arrivals expected.
        let pacer = Pacer::Staged(RateProfile::new(&[
            RateStage {
                from: 0.0,
                to: 4000.0,
                duration: Duration::from_secs(10),
            },
            RateStage {
                from: 4000.0,
                to: 4000.0,
                duration: Duration::from_secs(5),
            },
        ]));
        let schedule = Schedule {
            pacer: pacer.clone(),
            spacing: Spacing::Poisson { seed: 5 },
        };
        let at = due_secs(&schedule, u64::MAX);
        assert!(at.windows(2).all(|w| w[1] >= w[0]) && *at.last().unwrap() < 15.0);
        // Each second sends what the ramp asks, within 4 standard deviations (Poisson: the
        // variance is the mean).
        for second in 0..15 {
            let from = Duration::from_secs(second);
            let to = Duration::from_secs(second + 1);
            let expected = pacer.expected_by(to) - pacer.expected_by(from);
            let got = at
                .iter()
                .filter(|&&t| t >= from.as_secs_f64() && t < to.as_secs_f64())
                .count() as f64;
            assert!(
                (got - expected).abs() <= 4.0 * expected.sqrt() + 1.0,
                "second {second}: {got} sent, {expected} expected"
            );
        }
        // Rescaled by the schedule's expected count, the gaps are Exp(1) all along the ramp.
        let counts: Vec<f64> = at
            .iter()
            .map(|&t| pacer.expected_by(Duration::from_secs_f64(t)))
            .collect();
        let gaps: Vec<f64> = counts.windows(2).map(|w| w[1] - w[0]).collect();
        let (d, critical) = exponential_fit(&gaps);
        assert!(d < critical, "D = {d} ≥ {critical}");
    }

    #[test]
    fn strides_partition_the_indices() {
        let mut seen = vec![];
        for w in 0..3 {
            let mut s = Stride::new(w, 3);
            for _ in 0..4 {
                seen.push(s.peek());
                s.advance();
            }
        }
        seen.sort();
        assert_eq!(seen, (0..12).collect::<Vec<_>>());
    }
}
