//! Which requests are due, and when: the open model's walk through the schedule (a
//! worker's stride of it, the stop condition, the coalescing horizon) and the closed model's
//! users and request budget. Both drivers take their turns from here; only how they wait
//! for the next one differs.

use super::cap::Slot;
use super::spec::{share, Pace};
use crate::schedule::{within, Schedule, Stride, Walk};
use std::sync::atomic::Ordering;
use std::time::Instant;

/// One worker's walk through the open model's schedule.
pub struct DueWalk<'a> {
    pace: &'a Pace,
    /// A cursor on the schedule: each next due time costs one step (for Poisson arrivals,
    /// a draw per index of the whole schedule passed), never a walk from the start.
    schedule: Walk<'a>,
    stride: Stride,
    next: Option<Instant>,
}

impl<'a> DueWalk<'a> {
    /// Worker `worker`'s share of the schedule: requests `worker, worker + threads, …`.
    pub fn new(pace: &'a Pace, schedule: &'a Schedule, worker: usize) -> DueWalk<'a> {
        let mut walk = DueWalk {
            pace,
            schedule: schedule.walk(),
            stride: Stride::new(worker, pace.threads),
            next: None,
        };
        walk.next = walk.due_of_next();
        walk
    }

    fn due_of_next(&mut self) -> Option<Instant> {
        let n = self.stride.peek();
        let due = self
            .schedule
            .due(n)
            .filter(|&d| within(&self.pace.stop, n, d))?;
        Some(self.pace.start + due)
    }

    /// When the next request is due; `None` once the schedule is over.
    pub fn next_due(&self) -> Option<Instant> {
        self.next
    }

    /// Hands every request due by `horizon` to `each` (its intended time and its number in
    /// the run), in order; returns when the next one falls due.
    pub fn take(
        &mut self,
        horizon: Instant,
        mut each: impl FnMut(Instant, u64),
    ) -> Option<Instant> {
        while let Some(at) = self.next.filter(|&at| at <= horizon) {
            each(at, self.stride.peek());
            self.stride.advance();
            self.next = self.due_of_next();
        }
        self.next
    }

    /// Ends the walk early (the run was stopped): nothing more falls due.
    pub fn stop(&mut self) {
        self.next = None;
    }
}

/// A closed-model user's next turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    /// Send now: the intended time (now) and the request's number in the run.
    Go(Instant, u64),
    /// The start-rate cap has no slot before this instant.
    Wait(Instant),
    /// The run's stop condition is reached.
    Over,
}

#[cfg(test)]
impl Turn {
    /// The request to send now, if any.
    pub fn go(self) -> Option<(Instant, u64)> {
        match self {
            Turn::Go(at, n) => Some((at, n)),
            _ => None,
        }
    }
}

/// One worker's share of the closed model: its users, and the run-wide request budget.
pub struct Users<'a> {
    pace: &'a Pace,
    index: usize,
}

impl<'a> Users<'a> {
    /// Worker `index`'s users.
    pub fn new(pace: &'a Pace, index: usize) -> Users<'a> {
        Users { pace, index }
    }

    /// This worker's share of the users at `now`: all of them, or what the stage running
    /// then asks for (none between stages and after the last).
    pub fn target(&self, now: Instant) -> usize {
        let pace = self.pace;
        // A shard's users are its share of the whole test's at this instant.
        let (load, stages) = match &pace.whole {
            Some(w) => (w.load, &w.stages),
            None => (pace.load, &pace.stages),
        };
        let all = match load {
            crate::plan::Load::Closed { concurrency } => concurrency as usize,
            crate::plan::Load::Open { .. } => 0,
        };
        let users = if stages.is_empty() {
            all as f64
        } else if let crate::plan::StageBounds::Counted(_) = pace.stage_bounds {
            let issued = pace.issued.load(Ordering::Relaxed);
            pace.stage_bounds
                .counted_level(stages, issued)
                .unwrap_or(0.0)
        } else {
            crate::plan::stage_at(stages, now.saturating_duration_since(pace.start))
                .map_or(0.0, |(i, into)| stages[i].level_at(into))
        };
        let users = users.round() as usize;
        let users = match &pace.whole {
            Some(w) => w.shard.share(users as u64) as usize,
            None => users,
        };
        share(users, self.index, pace.threads)
    }

    /// The next request: now, and its number in the run (run-wide, so the mix holds across
    /// workers); a later instant to ask again when the start-rate cap has no slot yet; or
    /// the end, once the stop condition is reached.
    pub fn next(&self, now: Instant) -> Turn {
        if self.over(now) {
            return Turn::Over;
        }
        if let Some(cap) = &self.pace.cap {
            if let Slot::At(at) = cap.take(self.pace.start, now) {
                return Turn::Wait(at);
            }
        }
        let n = self.pace.issued.fetch_add(1, Ordering::Relaxed);
        if self.pace.stop.requests.is_some_and(|max| n >= max) {
            return Turn::Over;
        }
        Turn::Go(now, n)
    }

    /// True once the run's duration (the stages' total, for a staged run) is over, or every
    /// request was handed out (steps counted in requests ask for no users after the last,
    /// so nobody would ask for one more).
    pub fn over(&self, now: Instant) -> bool {
        let pace = self.pace;
        pace.stop.duration.is_some_and(|d| now >= pace.start + d)
            || pace
                .stop
                .requests
                .is_some_and(|max| pace.issued.load(Ordering::Relaxed) >= max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Load, Rate, Stage, StageBounds, Stop};
    use crate::schedule::{ConstantPacer, Pacer};
    use std::sync::atomic::AtomicU64;
    use std::time::Duration;

    fn pace(load: Load, stop: Stop, threads: usize, stages: Vec<Stage>) -> Pace {
        Pace {
            start: Instant::now(),
            load,
            stop,
            threads,
            pacer: None,
            meter: None,
            coalesce: Duration::ZERO,
            stage_bounds: StageBounds::of(&stages),
            stages,
            issued: AtomicU64::new(0),
            cap: None,
            whole: None,
        }
    }

    #[test]
    fn walks_share_the_schedule_and_take_up_to_the_horizon() {
        let stop = Stop {
            duration: Some(Duration::from_secs(1)),
            requests: Some(10),
        };
        let p = pace(Load::Open { rate: Rate(1000.0) }, stop, 2, vec![]);
        let pacer = Schedule {
            pacer: Pacer::Constant(ConstantPacer::new(Rate(1000.0))),
            spacing: crate::schedule::Spacing::Even,
        };
        let mut taken = vec![];
        for worker in 0..2 {
            let mut walk = DueWalk::new(&p, &pacer, worker);
            // Due at 0, 2, 4 ms (worker 0) or 1, 3 ms (worker 1) by 4.5 ms.
            let next = walk.take(p.start + Duration::from_micros(4500), |at, n| {
                taken.push((n, at - p.start))
            });
            assert_eq!(
                next.map(|at| at - p.start),
                Some(Duration::from_millis(6 - worker as u64))
            );
            walk.take(p.start + Duration::from_secs(9), |_, n| {
                taken.push((n, Duration::ZERO))
            });
            assert_eq!(walk.next_due(), None, "the budget of 10 is spent");
        }
        let mut ns: Vec<u64> = taken.iter().map(|(n, _)| *n).collect();
        ns.sort();
        assert_eq!(ns, (0..10).collect::<Vec<_>>());
        assert!(taken.contains(&(3, Duration::from_millis(3))));
    }

    #[test]
    fn users_follow_the_stages_and_the_budget() {
        let stop = Stop {
            duration: Some(Duration::from_secs(60)),
            requests: Some(3),
        };
        let p = pace(Load::Closed { concurrency: 5 }, stop, 2, vec![]);
        let (a, b) = (Users::new(&p, 0), Users::new(&p, 1));
        assert_eq!((a.target(p.start), b.target(p.start)), (3, 2));
        let now = p.start;
        let got: Vec<_> = (0..5)
            .filter_map(|_| a.next(now).go().map(|(_, n)| n))
            .collect();
        assert_eq!(got, vec![0, 1, 2]);
        assert!(a.over(now) && b.next(now) == Turn::Over);

        let stages = vec![
            Stage::constant("a", 4.0, Duration::from_secs(10)),
            Stage::constant("b", 1.0, Duration::from_secs(10)),
        ];
        let p = pace(
            Load::Closed { concurrency: 4 },
            Stop {
                duration: Some(Duration::from_secs(20)),
                requests: None,
            },
            1,
            stages,
        );
        let u = Users::new(&p, 0);
        assert_eq!(u.target(p.start + Duration::from_secs(5)), 4);
        assert_eq!(u.target(p.start + Duration::from_secs(15)), 1);
        assert_eq!(u.target(p.start + Duration::from_secs(25)), 0);
    }

    #[test]
    fn shards_users_add_up_to_the_whole_at_every_instant() {
        use crate::plan::shard::{Shard, Whole};
        let stages = vec![
            Stage {
                from: 0.0,
                to: 10.0,
                ..Stage::constant("ramp", 0.0, Duration::from_secs(10))
            },
            Stage::constant("hold", 7.0, Duration::from_secs(5)),
        ];
        let stop = Stop {
            duration: Some(Duration::from_secs(15)),
            requests: None,
        };
        let load = Load::Closed { concurrency: 10 };
        let single = pace(load, stop, 1, stages.clone());
        for count in [1u64, 2, 3, 4] {
            let shards: Vec<Pace> = (0..count)
                .map(|i| Pace {
                    whole: Some(Whole {
                        shard: Shard::new(i, count).unwrap(),
                        load,
                        stages: stages.clone(),
                    }),
                    ..pace(load, stop, 2, vec![])
                })
                .collect();
            for tenth in 0..160 {
                let at = Duration::from_millis(100 * tenth);
                let whole = Users::new(&single, 0).target(single.start + at);
                let mut parts = vec![];
                for p in &shards {
                    parts.push(
                        (0..2)
                            .map(|w| Users::new(p, w).target(p.start + at))
                            .sum::<usize>(),
                    );
                }
                assert_eq!(
                    parts.iter().sum::<usize>(),
                    whole,
                    "{count} shards at {at:?}"
                );
                // Remainders go to the first shards.
                assert!(
                    parts.windows(2).all(|w| w[0] >= w[1] && w[0] - w[1] <= 1),
                    "{parts:?}"
                );
            }
        }
    }
}
