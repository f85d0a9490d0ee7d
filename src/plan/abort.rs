//! The safety stop's conditions (`--abort-when`, a scenario's `abort_when`): "errors > 5%
//! for 30s, p99 > 2s for 1m". Each reads like an objective (the same metrics and bounds as
//! `--slo` and `--stop-when`) with a window of consecutive seconds it must hold for; how the
//! seconds are judged is `crate::abort`'s.

use super::gate;
use super::slo::{Metric, Op, Slo};
use std::fmt;
use std::time::Duration;

/// A correct value, shown with every error.
pub const EXAMPLE: &str = "'errors > 5% for 30s, p99 > 2s for 1m'";

/// Longest window: a condition must be able to stop a run while it still matters, and a
/// streak counter is bounded like everything else.
pub const MAX_WINDOW: Duration = Duration::from_secs(24 * 3600);

/// One condition that stops the run once it has held for `window` of consecutive seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct AbortWhen {
    /// As written, `for` part included ("errors > 5% for 30s").
    pub text: String,
    /// What is measured each second and the bound it is compared with; `limit.text` is
    /// the part before `for`.
    pub limit: Slo,
    /// How long it must hold, whole seconds (0: the first second it holds).
    pub window: Duration,
}

impl AbortWhen {
    /// The seconds in a row it must hold for (at least one: a second is the least judged).
    pub fn seconds_needed(&self) -> u64 {
        self.window.as_secs().max(1)
    }
}

impl fmt::Display for AbortWhen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Why a condition cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid abort condition {part:?}: {reason}; write [request:] metric op value [for duration], e.g. {EXAMPLE} (metrics: p50…p100, mean, max, errors, rps)")]
pub struct AbortWhenError {
    /// The condition as written (the whole text when none was given).
    pub part: String,
    /// What is wrong.
    pub reason: String,
}

/// Reads comma-separated conditions; refuses an empty list, a condition that could never
/// hold (it would guard nothing) and one that holds every second (it would stop every run).
pub fn parse_abort_when(text: &str) -> Result<Vec<AbortWhen>, AbortWhenError> {
    if text.split(',').all(|p| p.trim().is_empty()) {
        return Err(AbortWhenError {
            part: text.to_string(),
            reason: "no condition given (was a variable unset?)".into(),
        });
    }
    text.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(parse_abort_condition)
        .collect()
}

/// Reads one condition, as a scenario's list item is read (a stored run keeps each so).
pub fn parse_abort_condition(part: &str) -> Result<AbortWhen, AbortWhenError> {
    let err = |reason: String| AbortWhenError {
        part: part.trim().to_string(),
        reason,
    };
    let (condition, window) = split_window(part);
    let window = match window {
        None => Duration::ZERO,
        Some(w) => {
            let d = crate::units::parse_duration(w.trim())
                .map_err(|e| err(format!("cannot read the window {:?}: {e}", w.trim())))?;
            if d.subsec_nanos() != 0 {
                return Err(err(format!(
                    "the window {} is not a whole number of seconds (each second is judged whole)",
                    humantime::format_duration(d)
                )));
            }
            if d > MAX_WINDOW {
                return Err(err(format!(
                    "the window {} is longer than {}",
                    humantime::format_duration(d),
                    humantime::format_duration(MAX_WINDOW)
                )));
            }
            d
        }
    };
    let limit = Slo::read(condition).map_err(err)?;
    // A condition is the opposite of an objective: it must be able to hold, and to not hold.
    if !gate::can_fail(negate(limit.op), limit.bound, limit.metric.most()) {
        return Err(err(match limit.metric {
            Metric::ErrorRate => "the error rate is never above 100 %, so this condition can never hold (it would guard nothing); give a bound below 100 %, e.g. 'errors > 5%'".into(),
            _ => "nothing measured is below 0, so this condition can never hold (it would guard nothing); give a bound above 0, e.g. 'rps < 100'".into(),
        }));
    }
    if !gate::can_fail(limit.op, limit.bound, limit.metric.most()) {
        return Err(err(
            "this condition holds at every second, so it would stop every run at once".into(),
        ));
    }
    Ok(AbortWhen {
        text: part.trim().to_string(),
        limit,
        window,
    })
}

/// "p99 > 2s for 1m" as ("p99 > 2s", Some("1m")); the last whole word `for` splits.
fn split_window(part: &str) -> (&str, Option<&str>) {
    let lower = part.to_ascii_lowercase();
    match lower.rfind(" for ") {
        Some(at) => (&part[..at], Some(&part[at + 5..])),
        None => match lower.trim_end().strip_suffix(" for") {
            Some(before) => (&part[..before.len()], Some("")),
            None => (part, None),
        },
    }
}

/// The comparison that holds exactly when `op` does not.
fn negate(op: Op) -> Op {
    match op {
        Op::Lt => Op::Ge,
        Op::Le => Op::Gt,
        Op::Gt => Op::Le,
        Op::Ge => Op::Lt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_read_with_their_windows() {
        let c = parse_abort_when("errors > 5% for 30s, p99 > 2s for 1m, read: max >= 1s").unwrap();
        assert_eq!(c.len(), 3);
        assert_eq!(c[0].text, "errors > 5% for 30s");
        assert_eq!(c[0].limit.metric, Metric::ErrorRate);
        assert_eq!((c[0].limit.op, c[0].limit.bound), (Op::Gt, 0.05));
        assert_eq!(c[0].window, Duration::from_secs(30));
        assert_eq!(c[1].limit.metric, Metric::Quantile(0.99));
        assert_eq!(c[1].limit.bound, 2_000_000.0);
        assert_eq!(c[1].window, Duration::from_secs(60));
        assert_eq!(c[2].limit.request.as_deref(), Some("read"));
        assert_eq!(c[2].window, Duration::ZERO);
        assert_eq!(c[2].seconds_needed(), 1);
        let c = parse_abort_when("rps < 10 FOR 0s").unwrap();
        assert_eq!((c[0].window, c[0].seconds_needed()), (Duration::ZERO, 1));
        assert_eq!(c[0].limit.text, "rps < 10");
    }

    #[test]
    fn bad_conditions_name_the_part_and_show_a_correct_example() {
        for (bad, says) in [
            ("", "no condition given"),
            (" , ", "no condition given"),
            ("errors > 5% for", "cannot read the window"),
            ("errors > 5% for ever", "cannot read the window"),
            ("errors > 5% for 1.5s", "not a whole number of seconds"),
            ("errors > 5% for 2d", "longer than"),
            ("p99 2s for 1m", "no comparison"),
            ("latency > 2s", "unknown metric"),
            ("p99 > 2 parsecs for 1m", "cannot read the bound"),
            ("errors > 150%", "cannot read the bound"),
            (": p99 > 1s", "request name"),
            ("errors > 1", "can never hold"),
            ("rps < 0", "can never hold"),
            ("errors >= 0%", "every second"),
            ("errors <= 100%", "every second"),
        ] {
            // Behind a good condition, so the error names the bad one, not the first.
            let text = match bad.trim().trim_matches(',').trim() {
                "" => bad.to_string(),
                _ => format!("p50 > 1s, {bad}"),
            };
            let e = parse_abort_when(&text)
                .err()
                .unwrap_or_else(|| panic!("{bad:?} was read"));
            let shown = e.to_string();
            assert!(shown.contains(says), "{bad:?}: {shown}");
            assert!(shown.contains(EXAMPLE), "{bad:?}: {shown}");
            if !bad.trim().trim_matches(',').trim().is_empty() {
                assert_eq!(e.part, bad.trim(), "{shown}");
            }
        }
    }

    #[test]
    fn any_text_is_read_or_refused_never_a_panic() {
        for text in [
            "for",
            " for ",
            "for 1s",
            ">",
            "<",
            ">=",
            "p> for 1s",
            "p99 >",
            "p99 > for 1s",
            "errors > 5%% for 1s",
            "é > 1 for 1s",
            "p99 > 1s for 1s for 1s",
            ":",
            "::",
            "a:b: p99 > 1s",
            "errors > -1%",
            "p0 > 1s",
            "p100 > 1s for 100000000000s",
        ] {
            let _ = parse_abort_when(text);
        }
        // Every sequence of up to four pieces of the grammar: read, or refused with the
        // example, never a panic.
        let pieces = [
            "p99", "errors", "rps", ">", "<=", "5%", "2s", "0", " for ", "for", ",", ":", " ", "é",
            "1.5",
        ];
        let n = pieces.len();
        for code in 0..n.pow(4) {
            let mut text = String::new();
            let mut c = code;
            for _ in 0..4 {
                text.push_str(pieces[c % n]);
                c /= n;
            }
            if let Err(e) = parse_abort_when(&text) {
                assert!(e.to_string().contains(EXAMPLE), "{text:?}: {e}");
            }
        }
    }
}
