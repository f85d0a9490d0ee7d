//! What a stored interval must hold before it is added up: counts a run could have made.
//!
//! The log is read back from disk, where a damaged or hand-edited line can say anything that
//! parses. Reports add its counts up and subtract failures from completions; a count near
//! `u64::MAX`, or more failures than completions, would make that arithmetic overflow (a
//! panic in a debug build, a silently wrapped number in a release one). Such a line is
//! refused with its number instead.

use crate::record::IntervalRecord;

/// The most any count or byte total of a run may reach (2^60). A year at the rate limit is
/// 2^49 requests, a year at 100 Gbit/s 2^59 bytes; and two counts under it add up without
/// overflowing.
pub const MAX_COUNT: u64 = 1 << 60;

/// Why `r` could not have been recorded, if it could not.
pub fn implausible(r: &IntervalRecord) -> Option<String> {
    let over = |what: &str| Some(format!("{what} add up past 2^60, more than any run makes"));
    let totals = [r.sent, r.scheduled, r.bytes_in, r.bytes_out, r.retried];
    if totals.iter().any(|&n| n > MAX_COUNT) {
        return over("sent, scheduled, retried or byte counts");
    }
    if sum(r.status.values().chain(r.errors.values()).copied()).is_none() {
        return over("completions (statuses and errors)");
    }
    for (i, q) in r.requests.iter().enumerate() {
        if q.failures > q.count {
            return Some(format!(
                "request {i} has {} failures of {} completions",
                q.failures, q.count
            ));
        }
    }
    if sum(r.requests.iter().map(|q| q.count)).is_none()
        || sum(r.requests.iter().map(|q| q.bytes_in)).is_none()
    {
        return over("the requests' completions or bytes");
    }
    for (stage, s) in &r.steps {
        if s.failures > s.count || s.errors > s.count {
            return Some(format!(
                "stage {stage} has {} failures and {} errors of {} completions",
                s.failures, s.errors, s.count
            ));
        }
    }
    if sum(r.steps.values().map(|s| s.count)).is_none() {
        return over("the stages' completions");
    }
    None
}

/// The sum of `counts`, unless it goes past [`MAX_COUNT`].
fn sum(mut counts: impl Iterator<Item = u64>) -> Option<u64> {
    counts.try_fold(0u64, |sum, n| {
        sum.checked_add(n).filter(|&s| s <= MAX_COUNT)
    })
}
