//! What a stored interval must hold before it is added up: counts a run could have made.
//!
//! The log is read back from disk, where a damaged or hand-edited line can say anything that
//! parses. Reports add its counts up and subtract failures from completions; a count near
//! `u64::MAX`, or more failures than completions, would make that arithmetic overflow (a
//! panic in a debug build, a silently wrapped number in a release one). Such a line is
//! refused with its number instead.

use crate::record::{FlowStats, IntervalRecord, RequestStats};

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
    if let Some(reason) = requests_implausible(&r.requests, "") {
        return Some(reason);
    }
    if sum(r.requests.iter().map(|q| q.count)).is_none()
        || sum(r.requests.iter().map(|q| q.bytes_in)).is_none()
    {
        return over("the requests' completions or bytes");
    }
    for (stage, s) in &r.steps {
        if s.failures > s.count || s.errors > s.count || s.retried > s.count {
            return Some(format!(
                "stage {stage} has {} failures, {} errors and {} retries of {} completions",
                s.failures, s.errors, s.retried, s.count
            ));
        }
    }
    if sum(r.steps.values().map(|s| s.count)).is_none() {
        return over("the stages' completions");
    }
    if sum(r.steps.values().map(|s| s.sent)).is_none()
        || sum(r.steps.values().map(|s| s.bytes_out)).is_none()
    {
        return over("the stages' sends or bytes");
    }
    if let Some(reason) = flows_implausible(&r.flows, "") {
        return Some(reason);
    }
    for (stage, s) in &r.steps {
        if let Some(reason) = flows_implausible(&s.flows, &format!("stage {stage}: ")) {
            return Some(reason);
        }
        if let Some(reason) = requests_implausible(&s.requests, &format!("stage {stage}: ")) {
            return Some(reason);
        }
        if sum(s.requests.iter().map(|q| q.count)).is_none() {
            return over(&format!("stage {stage}'s requests' completions"));
        }
    }
    None
}

/// Why the per-flow counts could not have been recorded, if they could not.
fn flows_implausible(flows: &[FlowStats], at: &str) -> Option<String> {
    for (i, f) in flows.iter().enumerate() {
        if f.failures > f.count || f.count > MAX_COUNT {
            return Some(format!(
                "{at}flow {i} has {} failures of {} iterations",
                f.failures, f.count
            ));
        }
    }
    sum(flows.iter().map(|f| f.count))
        .is_none()
        .then(|| format!("{at}the flows' iterations add up past 2^60, more than any run makes"))
}

/// Why the per-request counts could not have been recorded, if they could not: the
/// reports subtract failures from completions and add up each request's statuses and errors.
fn requests_implausible(requests: &[RequestStats], at: &str) -> Option<String> {
    for (i, q) in requests.iter().enumerate() {
        if q.failures > q.count {
            return Some(format!(
                "{at}request {i} has {} failures of {} completions",
                q.failures, q.count
            ));
        }
        // Each completion is one status or one error, and an unmet answer one failure: so
        // their sums, bounded by the counts, add up across requests without overflowing.
        let answers = q.status.values().chain(q.errors.values()).copied();
        if sum(answers).is_none_or(|n| n > q.count)
            || sum(q.unmet.values().copied()).is_none_or(|n| n > q.failures)
        {
            return Some(format!(
                "{at}request {i} has more statuses and errors than its {} completions, or more unexpected answers than its {} failures",
                q.count, q.failures
            ));
        }
    }
    None
}

/// The sum of `counts`, unless it goes past [`MAX_COUNT`].
fn sum(mut counts: impl Iterator<Item = u64>) -> Option<u64> {
    counts.try_fold(0u64, |sum, n| {
        sum.checked_add(n).filter(|&s| s <= MAX_COUNT)
    })
}
