//! The rules of a regression gate (`p99 +10%, errors +0.1pp, rps -5%`): their grammar and
//! parser, refusing a rule that cannot fail.

use crate::plan::{gate, Metric, Op};
use serde::Serialize;

/// The grammar, quoted by every parse error.
pub const GRAMMAR: &str = "rules are comma-separated, each METRIC CHANGE: latency (p50, p90, p95, p99, p99.9, max, mean) +N% or +Nms/+Nus/+Ns, errors +Npp (percentage points), rps -N% (throughput); e.g. 'p99 +10%, errors +0.1pp, rps -5%'";

/// A latency statistic of the answered requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Latency {
    /// Median.
    P50,
    /// 90th percentile.
    P90,
    /// 95th percentile.
    P95,
    /// 99th percentile.
    P99,
    /// 99.9th percentile.
    P999,
    /// Largest.
    Max,
    /// Arithmetic mean.
    Mean,
}

/// What a rule watches, and how far it may get worse.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Allowance {
    /// Latency may grow by this share of the baseline's (0.1 for `+10%`).
    LatencyShare {
        /// The statistic.
        stat: Latency,
        /// The share.
        share: f64,
    },
    /// Latency may grow by this many microseconds (`+5ms`).
    LatencyBy {
        /// The statistic.
        stat: Latency,
        /// Microseconds.
        us: f64,
    },
    /// The error rate may grow by this many percentage points (`+0.1pp`).
    ErrorPoints {
        /// Percentage points.
        points: f64,
    },
    /// Throughput may fall by this share of the baseline's (0.05 for `-5%`).
    ThroughputShare {
        /// The share.
        share: f64,
    },
}

/// One rule, as written and as read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rule {
    /// As written (trimmed).
    pub text: String,
    /// What it allows.
    pub allowance: Allowance,
}

/// Why rules cannot be read: names the bad rule and quotes the grammar.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid rule {rule:?}: {reason}; {GRAMMAR}")]
pub struct RuleError {
    /// The rule as written.
    pub rule: String,
    /// What is wrong.
    pub reason: String,
}

/// Reads comma-separated rules; at least one.
pub fn parse_rules(text: &str) -> Result<Vec<Rule>, RuleError> {
    let rules: Vec<Rule> = text
        .split(',')
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    if rules.is_empty() {
        return Err(RuleError {
            rule: text.trim().to_string(),
            reason: "no rule given".into(),
        });
    }
    Ok(rules)
}

impl std::str::FromStr for Rule {
    type Err = RuleError;

    fn from_str(text: &str) -> Result<Rule, RuleError> {
        let text = text.trim();
        let err = |reason: &str| RuleError {
            rule: text.to_string(),
            reason: reason.to_string(),
        };
        let at = text
            .find(['+', '-'])
            .ok_or_else(|| err("no change: write +N… or -N…"))?;
        let (metric, change) = text.split_at(at);
        let metric = metric.trim().to_ascii_lowercase();
        let (sign, amount) = change.split_at(1);
        let amount = amount.trim();
        let split = amount
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(amount.len());
        let (number, unit) = amount.split_at(split);
        let n: f64 = number
            .parse()
            .ok()
            .filter(|n: &f64| n.is_finite())
            .ok_or_else(|| {
                // The number as written is what follows the sign up to the unit; when that is
                // empty (`+abc%`, `+-10%`) the whole change is what the user must fix.
                let shown = if number.is_empty() {
                    change.trim()
                } else {
                    number
                };
                err(&format!("cannot read the number in {shown:?}"))
            })?;
        let unit = unit.trim();
        if unit.contains(';') {
            return Err(err("rules are separated by a comma, not a semicolon"));
        }
        let latency = match metric.as_str() {
            "p50" => Some(Latency::P50),
            "p90" => Some(Latency::P90),
            "p95" => Some(Latency::P95),
            "p99" => Some(Latency::P99),
            "p99.9" | "p999" => Some(Latency::P999),
            "max" => Some(Latency::Max),
            "mean" | "avg" => Some(Latency::Mean),
            _ => None,
        };
        let allowance = match (latency, metric.as_str(), sign, unit) {
            (Some(_), _, "-", _) => {
                return Err(err("a latency rule says how much it may grow: +N% or +Nms"))
            }
            (Some(stat), _, _, "%") => Allowance::LatencyShare {
                stat,
                share: n / 100.0,
            },
            (Some(stat), _, _, "ms" | "us" | "µs" | "s") => Allowance::LatencyBy {
                stat,
                us: n * match unit {
                    "ms" => 1e3,
                    "s" => 1e6,
                    _ => 1.0,
                },
            },
            (Some(_), _, _, _) => return Err(err("a latency change is +N% or +Nms, +Nus, +Ns")),
            (None, "errors" | "error_rate", "+", "pp") => Allowance::ErrorPoints { points: n },
            (None, "errors" | "error_rate", _, _) => {
                return Err(err(
                    "an error-rate rule is +Npp, in percentage points (0.1pp: from 0.2% to 0.3%)",
                ))
            }
            (None, "rps" | "throughput", "-", "%") => {
                Allowance::ThroughputShare { share: n / 100.0 }
            }
            (None, "rps" | "throughput", _, _) => {
                return Err(err("a throughput rule says how much it may fall: -N%"))
            }
            _ => return Err(err(&format!("unknown metric {metric:?}"))),
        };
        // A rule is an objective on the candidate whose bound the baseline sets; it can fail
        // at all only if it can against the baseline that makes it tightest (no errors; any
        // throughput, as a share of the baseline's, which has no ceiling).
        let never = match allowance {
            Allowance::ErrorPoints { points }
                if !gate::can_fail(Op::Le, points / 100.0, Metric::ErrorRate.most()) =>
            {
                Some("the error rate cannot rise by 100 percentage points or more (it is at most 100 %), so this rule can never fail (it would gate nothing); allow less, e.g. 'errors +0.1pp'")
            }
            Allowance::ThroughputShare { share } if !gate::can_fail(Op::Ge, 1.0 - share, None) => {
                Some("throughput cannot fall by 100 % or more (it is never below 0), so this rule can never fail (it would gate nothing); allow less, e.g. 'rps -5%'")
            }
            _ => None,
        };
        if let Some(reason) = never {
            return Err(err(reason));
        }
        Ok(Rule {
            text: text.to_string(),
            allowance,
        })
    }
}
