//! One N-th of a test (`--shard I/N`): the plan a shard runs, so that the shards together
//! send exactly the whole test.
//!
//! The open model is interleaved, not divided: shard `I` sends the whole schedule's
//! requests `I, I + N, I + 2N, …` at the whole schedule's due times (the engine paces the
//! whole profile and walks only its indices), so the merged arrival process is the one a
//! single generator would offer. Closed-model users (and each stage's users) are divided
//! exactly, the first `users % N` shards taking one more; a request budget and the
//! connection ceiling are divided as the open model's indices are. In both models a shard's
//! `m`-th request is the whole test's `m·N + I`-th: it sends what the whole mix sends there
//! and draws the data row the whole test draws (`schedule::Mix::shard`), so no two shards
//! send the same account or key in a pass through a set, and a login's row is numbered the
//! same way.

use super::{AttackPlan, Load, PlanError, Rate, Stage};

/// The most shards a test is split into: more would leave each with a rounding error's
/// worth of load, and is surely a typo.
pub const MAX_SHARDS: u32 = 10_000;

/// A run this late after its common start (`--start-at`) or later says so in its output
/// and report.
pub const LATE_NOTICE: std::time::Duration = std::time::Duration::from_millis(100);

/// Which part of a sharded test a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This shard, from 0.
    pub index: u32,
    /// How many shards the test has.
    pub count: u32,
}

impl Shard {
    /// Shard `index` of `count`, checked.
    pub fn new(index: u64, count: u64) -> Result<Shard, PlanError> {
        if count == 0 || count > u64::from(MAX_SHARDS) {
            return Err(PlanError::Range(format!(
                "the number of shards must be between 1 and {MAX_SHARDS}, got {count}"
            )));
        }
        if index >= count {
            return Err(PlanError::Range(format!(
                "shard index {index} is out of range: a test of {count} shard(s) has shards 0 to {}",
                count - 1
            )));
        }
        Ok(Shard {
            index: index as u32,
            count: count as u32,
        })
    }

    /// How many of the whole test's `total` indices (`0..total`) are this shard's: those
    /// congruent to its index modulo the count.
    pub fn share(self, total: u64) -> u64 {
        let (i, n) = (u64::from(self.index), u64::from(self.count));
        if total > i {
            (total - i).div_ceil(n)
        } else {
            0
        }
    }

    /// The whole test's `index`-th request (from 0) for this shard's `local`-th one.
    pub fn whole_index(self, local: u64) -> u64 {
        local * u64::from(self.count) + u64::from(self.index)
    }

    /// This shard's part of the plan `whole`; fails, saying what to change, when the test
    /// is too small to give every shard something to do.
    pub fn split(self, whole: &AttackPlan) -> Result<Split, PlanError> {
        let n = self.count;
        if !whole.arrivals.is_even() && whole.arrivals.seed().is_none() {
            return Err(PlanError::Range(
                "a sharded test of Poisson arrivals needs one seed for all its shards, so that they walk one schedule: give attack --seed N, or a scenario load.seed (--set load.seed=N); headroom kube gives its shards one".into(),
            ));
        }
        let mut plan = whole.clone();
        let users = |u: f64| self.share(u.round() as u64) as f64;
        match whole.load {
            Load::Open { rate } => {
                if let Some(total) = open_requests(whole, rate) {
                    if total < f64::from(n) {
                        return Err(PlanError::Range(format!(
                            "the test sends about {total:.0} request(s), fewer than the {n} shards: some would send nothing; give it a higher rate or a longer duration, or fewer shards"
                        )));
                    }
                }
                plan.load = Load::Open {
                    rate: Rate(rate.per_second() / f64::from(n)),
                };
                for s in &mut plan.stages {
                    s.from /= f64::from(n);
                    s.to /= f64::from(n);
                }
            }
            Load::Closed { concurrency } => {
                if whole.stages.iter().any(|s| s.requests.is_some()) {
                    return Err(PlanError::Range(
                        "steps counted in requests cannot be split over shards; give the steps durations".into(),
                    ));
                }
                let most = if whole.stages.is_empty() {
                    u64::from(concurrency)
                } else {
                    whole
                        .stages
                        .iter()
                        .map(|s| s.from.max(s.to).round() as u64)
                        .max()
                        .unwrap_or(0)
                };
                if most < u64::from(n) {
                    return Err(PlanError::Range(format!(
                        "{most} user(s) cannot be split over {n} shards: give the test at least one user per shard"
                    )));
                }
                plan.load = Load::Closed {
                    concurrency: self.share(u64::from(concurrency)) as u32,
                };
                // The whole test's start-rate cap, in equal parts, as an open rate is split.
                plan.max_rate = whole.max_rate.map(|r| Rate(r.per_second() / f64::from(n)));
                for s in &mut plan.stages {
                    s.from = users(s.from);
                    s.to = users(s.to);
                }
            }
        }
        if let Some(total) = whole.stop.requests {
            if total < u64::from(n) {
                return Err(PlanError::Range(format!(
                    "a count of {total} requests cannot be split over {n} shards: give at least one request per shard"
                )));
            }
            plan.stop.requests = Some(self.share(total));
        }
        // Connections are each generator's own: the whole test's ceiling is shared as users
        // are, so the shards together never open more than one generator would.
        let cap = u64::from(whole.connection.max_connections);
        if cap < u64::from(n) {
            return Err(PlanError::Range(format!(
                "a ceiling of {cap} connection(s) cannot be split over {n} shards: allow at least one connection per shard"
            )));
        }
        plan.connection.max_connections = self.share(cap) as u32;
        // Each shard stops itself on its own seconds: a throughput bound of the whole test
        // is its equal share's (the other metrics are rates and latencies: the same for a
        // part as for the whole).
        for a in &mut plan.abort {
            if a.limit.metric == super::Metric::Rps {
                a.limit.bound /= f64::from(n);
            }
        }
        Ok(Split {
            plan,
            whole: Whole {
                shard: self,
                load: whole.load,
                stages: whole.stages.clone(),
            },
        })
    }
}

/// How many requests an open-model test without a count stop sends: the rate over the
/// duration, or the area under its stages' rates; `None` when a count stops it (checked on
/// its own) or nothing bounds it.
fn open_requests(whole: &AttackPlan, rate: Rate) -> Option<f64> {
    if whole.stop.requests.is_some() {
        return None;
    }
    if whole.stages.is_empty() {
        return whole
            .stop
            .duration
            .map(|d| (rate.per_second() * d.as_secs_f64()).ceil());
    }
    Some(
        whole
            .stages
            .iter()
            .map(|s| (s.from + s.to) / 2.0 * s.duration.as_secs_f64())
            .sum(),
    )
}

impl std::str::FromStr for Shard {
    type Err = PlanError;

    /// Parses `I/N`, e.g. `0/4`.
    fn from_str(s: &str) -> Result<Shard, PlanError> {
        let bad = || {
            PlanError::Range(format!(
                "--shard takes INDEX/COUNT with the index from 0, e.g. 0/4, got {s:?}"
            ))
        };
        let (i, n) = s.trim().split_once('/').ok_or_else(bad)?;
        let i: u64 = i.trim().parse().map_err(|_| bad())?;
        let n: u64 = n.trim().parse().map_err(|_| bad())?;
        Shard::new(i, n)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// What the engine of a shard needs of the whole test: the whole schedule it walks its
/// indices of, and the whole users it takes its share of at every instant.
#[derive(Debug, Clone, PartialEq)]
pub struct Whole {
    /// Which shard.
    pub shard: Shard,
    /// The whole test's load.
    pub load: Load,
    /// The whole test's stages.
    pub stages: Vec<Stage>,
}

/// A shard's plan, and the whole it is part of.
#[derive(Debug, Clone)]
pub struct Split {
    /// What this shard runs: its share of the load, stop and data.
    pub plan: AttackPlan,
    /// The whole test.
    pub whole: Whole,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{NamedRequest, RequestSpec, Stop, Target};
    use std::time::Duration;

    fn plan(load: Load, stop: Stop, stages: Vec<Stage>) -> AttackPlan {
        let target = Target::parse("http://127.0.0.1:1/").unwrap();
        let spec = RequestSpec::parse("GET", &[], bytes::Bytes::new()).unwrap();
        let request = NamedRequest::single(spec, &target);
        AttackPlan {
            stages,
            ..AttackPlan::new(target, vec![request], load, stop)
        }
    }

    fn shards(n: u64) -> impl Iterator<Item = Shard> {
        (0..n).map(move |i| Shard::new(i, n).unwrap())
    }

    #[test]
    fn a_shard_stops_itself_on_its_share_of_a_throughput_bound() {
        let mut whole = plan(
            Load::Open { rate: Rate(400.0) },
            Stop {
                duration: Some(Duration::from_secs(10)),
                requests: None,
            },
            Vec::new(),
        );
        whole.abort = crate::plan::parse_abort_when("rps < 100 for 5s, errors > 5%").unwrap();
        let part = Shard::new(1, 4).unwrap().split(&whole).unwrap().plan;
        assert_eq!(part.abort[0].limit.bound, 25.0);
        assert_eq!(part.abort[0].window, Duration::from_secs(5));
        assert_eq!(part.abort[1].limit.bound, 0.05);
    }

    #[test]
    fn shard_text_is_checked() {
        assert_eq!(
            "2/4".parse::<Shard>().unwrap(),
            Shard { index: 2, count: 4 }
        );
        for bad in ["4/4", "0/0", "1", "-1/4", "a/b", "0/10001", "1/2/3", ""] {
            let e = bad.parse::<Shard>().unwrap_err().to_string();
            assert!(!e.contains('\n'), "{bad}: {e}");
        }
        assert!("0/10000".parse::<Shard>().is_ok());
    }

    #[test]
    fn a_count_is_shared_as_the_indices_are() {
        for total in [1u64, 2, 7, 100, 1001] {
            for n in [1u64, 2, 3, 4, 7] {
                let mut seen: Vec<u64> = shards(n)
                    .flat_map(|s| (0..s.share(total)).map(move |m| s.whole_index(m)))
                    .collect();
                seen.sort();
                assert_eq!(seen, (0..total).collect::<Vec<_>>(), "{total} over {n}");
            }
        }
    }

    #[test]
    fn closed_users_and_stages_are_divided_exactly_first_shards_taking_the_rest() {
        let stages = vec![
            Stage {
                from: 0.0,
                to: 10.0,
                ..Stage::constant("ramp", 0.0, Duration::from_secs(10))
            },
            Stage::constant("hold", 7.0, Duration::from_secs(5)),
        ];
        let whole = plan(
            Load::Closed { concurrency: 10 },
            Stop {
                duration: Some(Duration::from_secs(15)),
                requests: Some(1001),
            },
            stages,
        );
        let parts: Vec<AttackPlan> = shards(3).map(|s| s.split(&whole).unwrap().plan).collect();
        let users: Vec<u32> = parts
            .iter()
            .map(|p| match p.load {
                Load::Closed { concurrency } => concurrency,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(users, vec![4, 3, 3]);
        let to: Vec<f64> = parts.iter().map(|p| p.stages[0].to).collect();
        assert_eq!(to, vec![4.0, 3.0, 3.0]);
        let hold: Vec<f64> = parts.iter().map(|p| p.stages[1].from).collect();
        assert_eq!(hold, vec![3.0, 2.0, 2.0]);
        let budget: Vec<u64> = parts.iter().map(|p| p.stop.requests.unwrap()).collect();
        assert_eq!(budget, vec![334, 334, 333]);
        for p in &parts {
            assert_eq!(p.stop.duration, Some(Duration::from_secs(15)));
            assert_eq!(p.stages[0].duration, Duration::from_secs(10));
        }
    }

    #[test]
    fn the_open_model_keeps_its_whole_schedule_and_reports_its_share() {
        let whole = plan(
            Load::Open { rate: Rate(1000.0) },
            Stop {
                duration: None,
                requests: Some(10),
            },
            vec![],
        );
        let split = Shard::new(1, 4).unwrap().split(&whole).unwrap();
        assert_eq!(split.plan.load, Load::Open { rate: Rate(250.0) });
        assert_eq!(split.plan.stop.requests, Some(3), "indices 1, 5 and 9");
        assert_eq!(split.whole.load, whole.load);
    }

    #[test]
    fn the_connection_ceiling_is_shared_and_never_below_one_per_shard() {
        let mut whole = plan(
            Load::Open { rate: Rate(10.0) },
            Stop {
                duration: Some(Duration::from_secs(1)),
                requests: None,
            },
            vec![],
        );
        whole.connection.max_connections = 10;
        let caps: Vec<u32> = shards(4)
            .map(|s| s.split(&whole).unwrap().plan.connection.max_connections)
            .collect();
        assert_eq!(caps, vec![3, 3, 2, 2]);
        whole.connection.max_connections = 3;
        let e = Shard::new(0, 4)
            .unwrap()
            .split(&whole)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("3 connection(s) cannot be split over 4 shards") && !e.contains('\n'),
            "{e}"
        );
    }

    #[test]
    fn a_whole_test_may_be_as_large_as_its_shards_together() {
        let big = plan(
            Load::Closed {
                concurrency: 150_000,
            },
            Stop {
                duration: Some(Duration::from_secs(1)),
                requests: None,
            },
            vec![],
        );
        assert!(big.validate().is_err(), "more than one generator runs");
        assert!(big.validate_for(2).is_ok());
        for s in shards(2) {
            assert!(s.split(&big).unwrap().plan.validate().is_ok());
        }
        let e = big.validate_for(1).unwrap_err().to_string();
        assert!(e.contains("split the load over several generators"), "{e}");
    }

    #[test]
    fn a_test_too_small_for_its_shards_is_refused_in_one_line() {
        let few = plan(
            Load::Closed { concurrency: 3 },
            Stop {
                duration: Some(Duration::from_secs(1)),
                requests: None,
            },
            vec![],
        );
        let e = Shard::new(0, 4)
            .unwrap()
            .split(&few)
            .unwrap_err()
            .to_string();
        assert!(e.contains("3 user(s) cannot be split over 4 shards"), "{e}");
        let short = plan(
            Load::Open { rate: Rate(10.0) },
            Stop {
                duration: None,
                requests: Some(3),
            },
            vec![],
        );
        let e = Shard::new(3, 4)
            .unwrap()
            .split(&short)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("a count of 3 requests cannot be split over 4"),
            "{e}"
        );
        // 2 req/s for 1 s is two requests: a third shard would send nothing.
        let brief = plan(
            Load::Open { rate: Rate(2.0) },
            Stop {
                duration: Some(Duration::from_secs(1)),
                requests: None,
            },
            vec![],
        );
        let e = Shard::new(2, 3)
            .unwrap()
            .split(&brief)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("sends about 2 request(s), fewer than the 3 shards") && !e.contains('\n'),
            "{e}"
        );
        assert!(Shard::new(1, 2).unwrap().split(&brief).is_ok());
        let ramp = plan(
            Load::Open { rate: Rate(4.0) },
            Stop {
                duration: Some(Duration::from_secs(1)),
                requests: None,
            },
            vec![Stage {
                from: 0.0,
                to: 4.0,
                ..Stage::constant("ramp", 0.0, Duration::from_secs(1))
            }],
        );
        let e = Shard::new(0, 3)
            .unwrap()
            .split(&ramp)
            .unwrap_err()
            .to_string();
        assert!(e.contains("sends about 2 request(s)"), "{e}");
    }
}
