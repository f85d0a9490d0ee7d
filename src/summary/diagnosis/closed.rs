//! The closed model judged as a closed model: users send back to back, so nothing piles up
//! in front of the server the way an open model's queue does, and a rate is never "held".
//! What says the server is the limit is its throughput: past saturation, more users add no
//! throughput, only latency (each one waits for the others). The knee is where the two
//! asymptotes of operational analysis meet (Lazowska et al., "Quantitative System
//! Performance", ch. 5): users* = plateau throughput × (latency at the lightest load +
//! think time). Little's law (users = throughput × (latency + think)) is checked on every
//! step: fewer users in it than there were says they waited on the generator's side —
//! unless the run was capped (`--max-rate`) and its throughput reached the cap: then they
//! waited for the start slots the user asked for, and neither side was the limit.

use super::{Blame, Diagnosis, Finding};
use crate::summary::StageRow;

/// A step's requests per user below which its throughput and Little's law are mostly the
/// step's start and end (users joining, users finishing): not one user went round twice.
pub const FEW_PER_USER: u64 = 2;
/// Requests per user a step needs before Little's law is checked on it: with fewer, users
/// starting and finishing weigh on its mean throughput.
pub const LITTLE_PER_USER: u64 = 10;
/// Latency this many times the lightest step's says requests queued…
pub const SLOWER: f64 = 1.5;
/// …when it is also at least this much higher, µs (sub-millisecond jitter is not a queue).
pub const SLOWER_MIN_US: f64 = 1_000.0;
/// Throughput within this factor of the best a level of half the users reached did not grow.
pub const FLAT: f64 = 1.1;
/// Users Little's law accounts for, as a share of the users there were, below which they
/// waited elsewhere.
pub const LITTLE_SHARE: f64 = 0.75;
/// Throughput at or above this share of the closed model's cap (`--max-rate`) says the cap
/// set the pace: a cap's starts are exact, but a span's mean throughput also holds its users
/// starting and finishing, so "at the cap" cannot ask for the open model's 99.5 %.
pub const CAP_HELD: f64 = 0.9;
/// Fewest steps of different loads a knee is judged from.
pub const MIN_STEPS: usize = 3;

/// True when `throughput` reached the cap asked for (`cap`, req/s): the cap set the pace.
pub fn at_cap(throughput: f64, cap: Option<f64>) -> bool {
    cap.is_some_and(|cap| throughput >= cap * CAP_HELD)
}

/// Little's law on one level of users: the finding when fewer requests were in flight than
/// there were users — held to the cap asked for (`cap`, req/s) when the throughput reached
/// it, waiting on the generator's side when it did not.
pub fn little(
    users: f64,
    throughput: f64,
    latency_us: f64,
    think_us: f64,
    cap: Option<f64>,
) -> Option<Finding> {
    let implied = throughput * (latency_us + think_us) / 1e6;
    if users <= 0.0 || throughput <= 0.0 || implied >= users * LITTLE_SHARE {
        return None;
    }
    Some(match cap.filter(|_| at_cap(throughput, cap)) {
        Some(cap) => Finding::HeldToCap {
            users,
            implied,
            throughput,
            cap,
            latency_us,
            think_us,
        },
        None => Finding::LittleMismatch {
            users,
            implied,
            throughput,
            latency_us,
            think_us,
        },
    })
}

/// A measured step at one level of users, as the knee is read from it.
struct Level {
    index: usize,
    users: f64,
    throughput: f64,
    mean_us: f64,
    p50_us: u64,
    /// Its throughput reached the cap asked for: a plateau there is the cap's.
    capped: bool,
}

/// Judges a closed-model run's steps, adding to each step's diagnosis: too few requests per
/// user to judge it; users waiting on the generator's side, or held to the cap asked for
/// (`cap`, req/s; Little's law); and, across the steps, saturation on every step past the
/// knee — unless the generator's own evidence, or the cap, says the plateau was its own.
pub fn judge_steps(steps: &mut [StageRow], think_us: f64, cap: Option<f64>) {
    let mut levels = Vec::new();
    for (index, s) in steps.iter_mut().enumerate() {
        if s.warmup || s.count == 0 || s.from != s.to {
            continue;
        }
        let users = s.from;
        let needed = (users * FEW_PER_USER as f64).ceil() as u64;
        let mut findings = s.verdict.findings.clone();
        if s.count < needed {
            if !s.verdict.limit.is_limit() {
                findings.push(Finding::FewPerUser {
                    users,
                    requests: s.count,
                    needed,
                });
                s.verdict = Diagnosis::of(findings);
            }
            // Each user went round about once: too few for Little's law, but the step's
            // throughput still shows whether more users added any.
            if s.count < users.ceil() as u64 {
                continue;
            }
        } else if s.count as f64 >= users * LITTLE_PER_USER as f64 {
            if let Some(f) = little(users, s.rps, s.latency.mean_us, think_us, cap) {
                findings.push(f);
                s.verdict = Diagnosis::of(findings);
            }
        }
        levels.push(Level {
            index,
            users,
            throughput: s.rps,
            mean_us: s.latency.mean_us,
            p50_us: s.latency.p50_us,
            capped: at_cap(s.rps, cap),
        });
    }
    levels.sort_by(|a, b| a.users.total_cmp(&b.users));
    levels.dedup_by(|a, b| a.users == b.users);
    if levels.len() < MIN_STEPS {
        return;
    }
    let base = &levels[0];
    // A level is saturated when it is slower than the lightest and its throughput is no
    // more than FLAT above the best a level of at most half its users reached (the lightest,
    // when none is that light): twice the users with no more throughput is a plateau; a
    // step of one user more is not a doubling, so fine steps are not read as flat.
    let mut saturated = Vec::new();
    for l in &levels[1..] {
        let slower =
            l.mean_us >= base.mean_us * SLOWER && l.mean_us - base.mean_us >= SLOWER_MIN_US;
        let half = levels
            .iter()
            .filter(|o| o.users <= l.users / 2.0)
            .map(|o| o.throughput)
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
            .unwrap_or(base.throughput);
        // Capped, more users add no throughput whatever the server: they wait for slots,
        // not in its line, so a plateau at the cap says nothing of the server.
        if slower && l.throughput <= half * FLAT && !l.capped {
            saturated.push(l);
        }
    }
    let (Some(first), Some(last)) = (saturated.first(), saturated.last()) else {
        return;
    };
    let plateau = saturated.iter().map(|l| l.throughput).sum::<f64>() / saturated.len() as f64;
    // The service time at the lightest load, robustly: its median, unless a stall-free mean
    // is lower (a few stalls in a light step pull its mean far above what a request takes).
    let base_us = base.mean_us.min(base.p50_us as f64);
    let finding = Finding::Saturated {
        knee_users: plateau * (base_us + think_us) / 1e6,
        throughput: plateau,
        base_latency_us: base_us.round() as u64,
        from_users: first.users,
        from_p50_us: first.p50_us,
        to_users: last.users,
        to_p50_us: last.p50_us,
    };
    for l in &saturated {
        let s = &mut steps[l.index];
        // A generator short of its own resources at that step made the plateau its own.
        if s.verdict.on(Blame::Generator).next().is_some() {
            continue;
        }
        let mut findings = s.verdict.findings.clone();
        findings.push(finding.clone());
        s.verdict = Diagnosis::of(findings);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::{Limit, Stats};

    fn step(users: f64, count: u64, rps: f64, mean_us: f64) -> StageRow {
        let latency = Stats {
            count,
            mean_us,
            p50_us: mean_us as u64,
            ..Stats::default()
        };
        StageRow {
            name: format!("{users} users"),
            from: users,
            to: users,
            duration_secs: 0.0,
            not_run: false,
            count,
            failures: 0,
            errors: 0,
            rps,
            sent_rps: rps,
            latency,
            warmup: false,
            lag_p99_us: 0,
            cpu_share: 0.1,
            verdict: Diagnosis::default(),
            server_cpu_percent: None,
            throughput: rps,
            status_codes: Default::default(),
            error_set: Vec::new(),
            requests: Vec::new(),
            flows: Vec::new(),
            counted: true,
            cut_short: false,
        }
    }

    /// A server of 5 ms per request and 2,000 req/s in all: one user gets 200 req/s, the
    /// knee is at 10 users, and past it throughput stays while latency grows.
    fn sweep() -> Vec<StageRow> {
        [1.0, 5.0, 10.0, 20.0, 40.0, 80.0]
            .iter()
            .map(|&u: &f64| {
                let x = (u * 200.0).min(2000.0);
                step(u, (u as u64) * 5, x, u / x * 1e6)
            })
            .collect()
    }

    #[test]
    fn past_the_knee_throughput_stays_and_the_server_is_named() {
        let mut steps = sweep();
        judge_steps(&mut steps, 0.0, None);
        let limits: Vec<Limit> = steps.iter().map(|s| s.verdict.limit).collect();
        use Limit::*;
        assert_eq!(limits, [Neither, Neither, Neither, Server, Server, Server]);
        match &steps[3].verdict.findings[..] {
            [Finding::Saturated {
                knee_users,
                throughput,
                from_users,
                to_users,
                ..
            }] => {
                assert!((knee_users - 10.0).abs() < 0.01, "{knee_users}");
                assert_eq!((*throughput, *from_users, *to_users), (2000.0, 20.0, 80.0));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn fine_steps_of_a_server_still_growing_are_no_plateau() {
        // A lock-contended server: throughput keeps growing, ever slower, up to 80 users.
        let mut steps: Vec<StageRow> = (1..=80)
            .map(|u| {
                let u = f64::from(u);
                let x = 400.0 * u.sqrt() * 5.0;
                step(u, (u as u64) * 20, x, u / x * 1e6)
            })
            .collect();
        judge_steps(&mut steps, 0.0, None);
        let saturated: Vec<f64> = steps
            .iter()
            .filter(|s| s.verdict.limit == Limit::Server)
            .map(|s| s.from)
            .collect();
        assert!(saturated.is_empty(), "{saturated:?}");
    }

    #[test]
    fn throughput_growing_with_users_is_no_knee() {
        let mut steps: Vec<StageRow> = [1.0, 2.0, 4.0, 8.0]
            .iter()
            .map(|&u| step(u, 500, u * 200.0, 5_000.0))
            .collect();
        judge_steps(&mut steps, 0.0, None);
        assert!(steps.iter().all(|s| s.verdict.limit == Limit::Neither));
    }

    #[test]
    fn a_generator_short_of_cpu_owns_the_plateau() {
        let mut steps = sweep();
        steps[4].verdict = Diagnosis::of(vec![Finding::CpuBusy {
            share: 0.97,
            threads: 1,
        }]);
        judge_steps(&mut steps, 0.0, None);
        assert_eq!(steps[4].verdict.limit, Limit::Generator);
        assert_eq!(steps[5].verdict.limit, Limit::Server);
    }

    #[test]
    fn too_few_requests_per_user_cannot_be_judged() {
        // 200 requests among 121 users: under two each.
        let mut steps = vec![step(121.0, 200, 2000.0, 60_000.0)];
        judge_steps(&mut steps, 0.0, None);
        assert_eq!(steps[0].verdict.limit, Limit::CannotTell);
        assert!(matches!(
            steps[0].verdict.findings[..],
            [Finding::FewPerUser { needed: 242, .. }]
        ));
    }

    #[test]
    fn users_waiting_on_the_generator_break_littles_law() {
        // 100 users, 1,000 req/s at 20 ms: 20 in flight, 80 waited elsewhere.
        let f = little(100.0, 1000.0, 20_000.0, 0.0, None).unwrap();
        assert!(
            matches!(f, Finding::LittleMismatch { implied, .. } if (implied - 20.0).abs() < 1e-9)
        );
        assert_eq!(f.blame(), Blame::Generator);
        // With 80 ms of think time they were thinking, not waiting.
        assert_eq!(little(100.0, 1000.0, 20_000.0, 80_000.0, None), None);
    }

    #[test]
    fn users_held_to_the_cap_asked_for_are_no_limit() {
        // The trial's sweep: 2, 5 and 8 users against 10 ms, capped at 120 req/s for 3 s
        // each. The cap holds them to 1.2 users' worth of requests: they waited for start
        // slots, as asked.
        let mut steps: Vec<StageRow> = [2.0, 5.0, 8.0]
            .iter()
            .map(|&u| step(u, 360, 120.0, 10_000.0))
            .collect();
        judge_steps(&mut steps, 0.0, Some(120.0));
        for s in &steps {
            assert_eq!(s.verdict.limit, Limit::Neither, "{:?}", s.verdict);
        }
        assert!(matches!(
            steps[2].verdict.findings[..],
            [Finding::HeldToCap { users, cap, implied, .. }]
                if users == 8.0 && cap == 120.0 && (implied - 1.2).abs() < 1e-9
        ));
        // The trial's run: 8 users, 150.2 req/s at 6.077 ms under a cap of 150.
        let f = little(8.0, 150.2, 6_077.0, 0.0, Some(150.0)).unwrap();
        assert_eq!(f.blame(), Blame::Asked);
        assert_eq!(Diagnosis::of(vec![f]).limit, Limit::Neither);
    }

    #[test]
    fn a_cap_well_above_what_was_reached_still_names_the_generator() {
        // 1,000 req/s under a cap of 5,000 with 80 of 100 users idle: the cap held no one.
        let f = little(100.0, 1000.0, 20_000.0, 0.0, Some(5000.0)).unwrap();
        assert!(matches!(f, Finding::LittleMismatch { .. }), "{f:?}");
        let mut steps = vec![step(100.0, 5000, 1000.0, 20_000.0)];
        judge_steps(&mut steps, 0.0, Some(5000.0));
        assert_eq!(steps[0].verdict.limit, Limit::Generator);
    }

    #[test]
    fn a_plateau_at_the_cap_is_the_caps_not_the_servers() {
        // The knee sweep's plateau of 2,000 req/s, but 2,000 req/s was the cap asked for:
        // more users waited for start slots, and nothing says the server saturated.
        let mut steps = sweep();
        judge_steps(&mut steps, 0.0, Some(2000.0));
        assert!(
            steps.iter().all(|s| s.verdict.limit == Limit::Neither),
            "{:?}",
            steps.iter().map(|s| &s.verdict).collect::<Vec<_>>()
        );
        // Under a cap above the plateau the server is still named.
        let mut steps = sweep();
        judge_steps(&mut steps, 0.0, Some(4000.0));
        assert_eq!(steps[5].verdict.limit, Limit::Server);
    }
}
