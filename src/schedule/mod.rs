//! When to send: pure pacing functions, computed from a request count, never from a clock.
//!
//! Due times come from the count (`n / rate`), as wrk2 does, so rounding never accumulates and
//! the rate holds over any run length; a slow server cannot push the schedule back.

mod mix;
mod profile;

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
        // f64 holds integers exactly up to 2^53 ns (104 days): far beyond any run.
        Duration::from_nanos((n as f64 * self.period_ns).round() as u64)
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
    /// Offset from the start at which request `n` is due; `None` once a profile is over.
    pub fn due(&self, n: u64) -> Option<Duration> {
        match self {
            Pacer::Constant(p) => Some(p.due(n)),
            Pacer::Staged(p) => p.due(n),
            Pacer::Sharded {
                whole,
                index,
                count,
            } => whole.due(n.checked_mul(*count)?.checked_add(*index)?),
        }
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
        Stop {
            duration: duration_ms.map(Duration::from_millis),
            requests,
        }
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
        for make in [&profile as &dyn Fn() -> Pacer, &constant] {
            let s = stop(Some(5_000), Some(1_234));
            let whole = make();
            let single: Vec<(u64, Duration)> = (0..)
                .map_while(|n| whole.due(n).filter(|&d| within(&s, n, d)).map(|d| (n, d)))
                .collect();
            for count in [1u64, 2, 3, 4, 7] {
                let mut union = vec![];
                for index in 0..count {
                    let shard = Pacer::Sharded {
                        whole: Box::new(make()),
                        index,
                        count,
                    };
                    // The shard's count stop is its share of the whole count.
                    let own = crate::plan::shard::Shard::new(index, count).unwrap();
                    let s = Stop {
                        requests: Some(own.share(1_234)),
                        ..s
                    };
                    union.extend(
                        (0..)
                            .map_while(|m| {
                                shard.due(m).filter(|&d| within(&s, m, d)).map(|d| (m, d))
                            })
                            .map(|(m, d)| (own.whole_index(m), d)),
                    );
                }
                union.sort();
                assert_eq!(union, single, "{count} shards");
            }
        }
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
