//! How a run is launched beside others: as one shard of a test (`--shard I/N`), and at a
//! common start (`--start-at TIME`), so that generators on several machines begin their
//! schedules on the same instant.

use crate::engine::CancellationToken;
use crate::plan::shard::{Shard, Split, Whole};
use crate::plan::{AttackPlan, PlanError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A common start further ahead than this is surely a mistake (a date typed wrong).
pub const MOST_AHEAD: Duration = Duration::from_secs(24 * 3600);
/// A common start further back than this is refused rather than joined late: a shard that
/// late would not overlap the test it is part of (yesterday's manifest applied again).
pub const MOST_LATE: Duration = Duration::from_secs(3600);
/// The engine's threads start this long before the schedule, so that its first due time is
/// not already late.
const LEAD: Duration = Duration::from_millis(20);
pub use crate::plan::shard::LATE_NOTICE;

/// One shard of a test, ready to run.
#[derive(Debug, Clone)]
pub struct ShardRun {
    /// The whole test the engine walks its part of.
    pub whole: Whole,
    /// The fingerprint of the whole test's plan (`store::plan_fingerprint`).
    pub fingerprint: String,
}

/// How a run starts: alone and at once, or as a shard, or at a common start.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    /// Keep each request's record (`--raw`).
    pub raw: bool,
    /// The shard this run is, when it is one.
    pub shard: Option<ShardRun>,
    /// When the schedule begins, when asked.
    pub start_at: Option<SystemTime>,
    /// Live outputs each second is written to (`--push`).
    pub push: Vec<crate::push::PushTarget>,
}

impl Launch {
    /// Splits `whole` for `shard`: the plan this run sends, and the launch that records it
    /// as that shard.
    pub fn sharded(
        whole: &AttackPlan,
        shard: Shard,
        raw: bool,
        start_at: Option<SystemTime>,
    ) -> Result<(AttackPlan, Launch), PlanError> {
        let split = part(whole, shard)?;
        Ok((
            split.plan,
            Launch {
                raw,
                shard: Some(ShardRun {
                    whole: split.whole,
                    fingerprint: crate::store::plan_fingerprint(whole),
                }),
                start_at,
                push: Vec::new(),
            },
        ))
    }
}

/// `shard`'s part of `whole`, checked as a plan of its own: what that shard runs.
fn part(whole: &AttackPlan, shard: Shard) -> Result<Split, PlanError> {
    let split = shard.split(whole)?;
    split.plan.validate()?;
    Ok(split)
}

/// Checks that `whole` runs as `count` shards, before any of them is started (`headroom
/// kube`): the whole test within what `count` generators offer together, and every shard's
/// part as that shard checks it when it starts. The first that cannot run is the error.
pub fn check_shards(whole: &AttackPlan, count: u32) -> Result<(), PlanError> {
    whole.validate_for(count)?;
    // Every part, not one: the parts differ (the first `users % N` shards take one more
    // user), and a shard refuses its own.
    for index in 0..count {
        part(whole, Shard::new(u64::from(index), u64::from(count))?)?;
    }
    Ok(())
}

/// Why a start time cannot be used.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum StartError {
    /// Not a time.
    #[error("--start-at takes an RFC 3339 time with its zone (2026-11-25T04:00:00Z, or +01:00) or unix seconds, got {0:?}")]
    Syntax(String),
    /// Too far ahead.
    #[error("--start-at {0} is more than a day ahead; give a time within the next 24 hours")]
    TooFar(String),
    /// Too far back.
    #[error("--start-at {0} was {1} ago; a shard that late would not overlap its test: give a time ahead")]
    TooLate(String, String),
}

/// Reads `--start-at`: RFC 3339 with a zone (`Z` or `±HH:MM`), or unix seconds (`@` first
/// optional), checked against `now`.
pub fn parse_start_at(text: &str, now: SystemTime) -> Result<SystemTime, StartError> {
    let at = parse_time(text.trim()).ok_or_else(|| StartError::Syntax(text.into()))?;
    if at.duration_since(now).is_ok_and(|ahead| ahead > MOST_AHEAD) {
        return Err(StartError::TooFar(text.trim().into()));
    }
    if let Ok(behind) = now.duration_since(at) {
        if behind > MOST_LATE {
            let behind = Duration::from_secs(behind.as_secs());
            return Err(StartError::TooLate(
                text.trim().into(),
                humantime::format_duration(behind).to_string(),
            ));
        }
    }
    Ok(at)
}

fn parse_time(s: &str) -> Option<SystemTime> {
    let unix = s.strip_prefix('@').unwrap_or(s);
    if !unix.is_empty() && unix.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        let secs: f64 = unix.parse().ok()?;
        return secs
            .is_finite()
            .then(|| UNIX_EPOCH.checked_add(Duration::try_from_secs_f64(secs).ok()?))
            .flatten();
    }
    if !s.contains(['T', 't']) {
        return None;
    }
    if let Some(utc) = s.strip_suffix(['Z', 'z']) {
        return humantime::parse_rfc3339(&format!("{utc}Z")).ok();
    }
    // humantime reads UTC only: take the offset off by hand.
    // Byte positions from the end: text that is not ASCII there is refused, never split
    // inside a character.
    let cut = s.len().checked_sub(6)?;
    let (local, zone) = (s.get(..cut)?, s.get(cut..)?);
    let (sign, hhmm) = (zone.get(..1)?, zone.get(1..)?);
    let (hh, mm) = hhmm.split_once(':')?;
    if hh.len() != 2 || mm.len() != 2 || hh > "23" || mm > "59" {
        return None;
    }
    let offset = Duration::from_secs(hh.parse::<u64>().ok()? * 3600 + mm.parse::<u64>().ok()? * 60);
    let at = humantime::parse_rfc3339(&format!("{local}Z")).ok()?;
    match sign {
        // 04:00+01:00 is 03:00 UTC.
        "+" => at.checked_sub(offset),
        "-" => at.checked_add(offset),
        _ => None,
    }
}

/// Where a run stood at its common start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Started {
    /// When its schedule began, on the wall clock.
    pub at: SystemTime,
    /// How long after the common start it began (zero when on time).
    pub late: Duration,
}

/// Sleeps until shortly before `start_at`, waking to notice `cancel` (Ctrl-C, SIGTERM);
/// returns the instant the schedule is to begin and where it stands, or `None` when
/// cancelled. A start already past begins at once, late.
pub fn wait_for_start(
    start_at: SystemTime,
    cancel: &CancellationToken,
) -> Option<(std::time::Instant, Started)> {
    loop {
        if cancel.is_cancelled() {
            return None;
        }
        match start_at.duration_since(SystemTime::now()) {
            Ok(left) if left > LEAD => {
                std::thread::sleep((left - LEAD).min(Duration::from_millis(100)));
            }
            _ => break,
        }
    }
    // The wall clock is read once, beside the monotonic one, so the schedule's instant is
    // the common start as this machine's clock has it.
    let (wall, mono) = (SystemTime::now(), std::time::Instant::now());
    Some(match start_at.duration_since(wall) {
        Ok(ahead) => (
            mono + ahead,
            Started {
                at: start_at,
                late: Duration::ZERO,
            },
        ),
        Err(past) => {
            let late = past.duration() + LEAD;
            (
                mono + LEAD,
                Started {
                    at: start_at + late,
                    late,
                },
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn a_test_is_checked_as_every_one_of_its_shards_checks_its_part() {
        let plan = |load: &str| {
            let text = format!(
                "target: {{url: 'http://a/'}}\nrequests: [{{name: get, path: /}}]\nload: {load}\n"
            );
            crate::plan::scenario::Document::parse(text, std::path::Path::new("t.yaml"), &|_| None)
                .unwrap()
                .lower_for(&[], 1, crate::plan::shard::MAX_SHARDS)
                .unwrap()
        };
        // More users than one generator runs: what two do together.
        let big = plan("{users: 150000, duration: 1s}");
        assert!(check_shards(&big, 2).is_ok());
        let e = check_shards(&big, 1).unwrap_err().to_string();
        assert!(e.contains("above the 100000 users"), "{e}");
        // Too few users for every shard to have one.
        let e = check_shards(&plan("{users: 3, duration: 1s}"), 4)
            .unwrap_err()
            .to_string();
        assert!(e.contains("3 user(s) cannot be split over 4 shards"), "{e}");
        assert!(check_shards(&plan("{users: 4, duration: 1s}"), 4).is_ok());
    }

    #[test]
    fn start_times_are_read_with_their_zone_or_as_unix_seconds() {
        // 2026-11-25T04:00:00Z
        let t = at(1_795_579_200);
        let now = t - Duration::from_secs(60);
        assert_eq!(parse_start_at("2026-11-25T04:00:00Z", now), Ok(t));
        assert_eq!(parse_start_at("2026-11-25T05:00:00+01:00", now), Ok(t));
        assert_eq!(parse_start_at("2026-11-24T23:30:00-04:30", now), Ok(t));
        assert_eq!(parse_start_at("1795579200", now), Ok(t));
        assert_eq!(parse_start_at("@1795579200", now), Ok(t));
        assert_eq!(
            parse_start_at("2026-11-25T04:00:00.5Z", now),
            Ok(t + Duration::from_millis(500))
        );
        for bad in [
            "2026-11-25T04:00:00",
            "tomorrow",
            "",
            "2026-11-25",
            "2026-11-25T04:00:00+1:00",
            "2026-11-25T04:00:00+24:00",
            "2026-11-25T04:00:00+01:60",
            // Multi-byte text where the zone would be: refused, never split inside a character.
            "T€x€",
            "2026-11-25T04:00:00€:00",
        ] {
            let e = parse_start_at(bad, now).unwrap_err();
            assert!(matches!(e, StartError::Syntax(_)), "{bad}: {e}");
        }
    }

    #[test]
    fn absurd_start_times_are_refused_in_one_line() {
        let now = at(1_795_579_200);
        let e = parse_start_at("1795768000", now).unwrap_err().to_string();
        assert!(
            e.contains("more than a day ahead") && !e.contains('\n'),
            "{e}"
        );
        let e = parse_start_at("1795568000", now).unwrap_err().to_string();
        assert!(e.contains("3h 6m 40s ago") && !e.contains('\n'), "{e}");
        // A few minutes late is joined, late.
        assert!(parse_start_at("1795579000", now).is_ok());
    }

    #[test]
    fn a_start_already_past_begins_at_once_and_says_how_late() {
        let cancel = CancellationToken::new();
        let past = SystemTime::now() - Duration::from_secs(5);
        let (_, started) = wait_for_start(past, &cancel).unwrap();
        assert!(started.late >= Duration::from_secs(5), "{started:?}");
        assert_eq!(started.at, past + started.late);
        // A start ahead is waited for: it returns no sooner than the threads' lead before
        // it, and on time unless the machine was too busy to wake it then, which it says.
        let ahead = SystemTime::now() + Duration::from_millis(300);
        let (_, started) = wait_for_start(ahead, &cancel).unwrap();
        assert!(SystemTime::now() + LEAD >= ahead);
        assert_eq!(started.at, ahead + started.late);
        cancel.cancel();
        assert!(wait_for_start(SystemTime::now() + MOST_AHEAD, &cancel).is_none());
    }
}
