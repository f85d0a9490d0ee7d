//! Service-level objectives: "p95 < 250ms", "error_rate < 1%", "read: p99 < 50ms".

use std::fmt;
use std::str::FromStr;

/// What an objective measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    /// Latency at a quantile (0.95 for p95; 1.0 for p100).
    Quantile(f64),
    /// Mean latency.
    Mean,
    /// Largest latency.
    Max,
    /// Share of requests without an expected answer.
    ErrorRate,
    /// Completed requests per second.
    Rps,
}

impl Metric {
    /// The most the measure can be: the error rate is a share of the requests; the others
    /// have no ceiling.
    pub fn most(self) -> Option<f64> {
        match self {
            Metric::ErrorRate => Some(1.0),
            Metric::Quantile(_) | Metric::Mean | Metric::Max | Metric::Rps => None,
        }
    }
}

/// How the measured value must compare with the bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Strictly below.
    Lt,
    /// At most.
    Le,
    /// Strictly above.
    Gt,
    /// At least.
    Ge,
}

impl Op {
    /// True when `value` satisfies the comparison with `bound`.
    pub fn holds(self, value: f64, bound: f64) -> bool {
        match self {
            Op::Lt => value < bound,
            Op::Le => value <= bound,
            Op::Gt => value > bound,
            Op::Ge => value >= bound,
        }
    }
}

/// One objective, over one named request or over all of them.
#[derive(Debug, Clone, PartialEq)]
pub struct Slo {
    /// As written.
    pub text: String,
    /// The request it is about; `None` for the whole run.
    pub request: Option<String>,
    /// What is measured.
    pub metric: Metric,
    /// The comparison.
    pub op: Op,
    /// The bound: microseconds for latencies, a fraction for the error rate, req/s for rps.
    pub bound: f64,
}

/// Why an objective cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid SLO {text:?}: {reason}")]
pub struct SloError {
    /// As written.
    pub text: String,
    /// What is wrong, and what would be right.
    pub reason: String,
}

const SHAPE: &str = "write [request:] metric op value, e.g. \"p95 < 250ms\", \"error_rate < 1%\", \"read: p99 <= 50ms\", \"rps >= 1000\"; metrics: p50…p100, mean, max, error_rate, rps";

impl FromStr for Slo {
    type Err = SloError;

    fn from_str(text: &str) -> Result<Slo, SloError> {
        let err = |reason: String| SloError {
            text: text.to_string(),
            reason,
        };
        let slo = Slo::read(text).map_err(|r| err(format!("{r}; {SHAPE}")))?;
        if !super::gate::can_fail(slo.op, slo.bound, slo.metric.most()) {
            let why = match slo.op {
                Op::Lt | Op::Le => "the error rate is never above 100 %, so this objective can never fail (it would gate nothing); give a bound below 100 %, e.g. \"error_rate < 1%\"",
                Op::Gt | Op::Ge => "nothing measured is below 0, so this objective can never fail (it would gate nothing); give a bound above 0, e.g. \"rps >= 1000\"",
            };
            return Err(err(why.into()));
        }
        Ok(slo)
    }
}

impl Slo {
    /// Reads `[request:] metric op value` without judging whether it can ever fail (the
    /// objectives and the abort conditions judge that each in their own words); the error
    /// is what is wrong, without the shape to write.
    pub(crate) fn read(text: &str) -> Result<Slo, String> {
        let (request, rest) = match text.rsplit_once(':') {
            Some((name, rest)) if !name.trim().is_empty() => (Some(name.trim().to_string()), rest),
            Some(_) => return Err("the request name before ':' is empty".into()),
            None => (None, text),
        };
        let at = rest
            .find(['<', '>'])
            .ok_or_else(|| "no comparison".to_string())?;
        let (metric, cmp) = rest.split_at(at);
        let (op, value) = if let Some(v) = cmp.strip_prefix("<=") {
            (Op::Le, v)
        } else if let Some(v) = cmp.strip_prefix(">=") {
            (Op::Ge, v)
        } else if let Some(v) = cmp.strip_prefix('<') {
            (Op::Lt, v)
        } else {
            (Op::Gt, &cmp[1..])
        };
        let metric = parse_metric(metric.trim())?;
        let value = value.trim();
        let bound = match metric {
            Metric::Quantile(_) | Metric::Mean | Metric::Max => parse_latency_us(value),
            Metric::ErrorRate => parse_ratio(value),
            Metric::Rps => value
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0),
        }
        .ok_or_else(|| format!("cannot read the bound {value:?}"))?;
        Ok(Slo {
            text: text.trim().to_string(),
            request,
            metric,
            op,
            bound,
        })
    }
}

impl fmt::Display for Slo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn parse_metric(m: &str) -> Result<Metric, String> {
    match m.to_ascii_lowercase().as_str() {
        "mean" | "avg" => Ok(Metric::Mean),
        "max" => Ok(Metric::Max),
        "error_rate" | "errors" => Ok(Metric::ErrorRate),
        "rps" | "throughput" => Ok(Metric::Rps),
        p if p.starts_with('p') => match p[1..].parse::<f64>() {
            Ok(q) if (0.0..=100.0).contains(&q) && q > 0.0 => Ok(Metric::Quantile(q / 100.0)),
            _ => Err(format!("unknown percentile {m:?}")),
        },
        _ => Err(format!("unknown metric {m:?}")),
    }
}

/// "250ms", "1.5s", "800us" or "800µs" as microseconds.
fn parse_latency_us(v: &str) -> Option<f64> {
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(v.len());
    let (number, unit) = v.split_at(split);
    let n: f64 = number.parse().ok()?;
    let scale = match unit.trim() {
        "us" | "µs" => 1.0,
        "ms" => 1e3,
        "s" => 1e6,
        _ => return None,
    };
    Some(n * scale).filter(|v| v.is_finite() && *v >= 0.0)
}

/// "1%" or "0.01" as a fraction.
fn parse_ratio(v: &str) -> Option<f64> {
    let r = match v.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().ok()? / 100.0,
        None => v.parse::<f64>().ok()?,
    };
    Some(r).filter(|r| (0.0..=1.0).contains(r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objectives_read_as_written() {
        let s: Slo = "p95 < 250ms".parse().unwrap();
        assert_eq!(
            (s.request, s.metric, s.op, s.bound),
            (None, Metric::Quantile(0.95), Op::Lt, 250_000.0)
        );
        let s: Slo = "get key: p99.9 <= 1.5s".parse().unwrap();
        assert_eq!(s.request.as_deref(), Some("get key"));
        assert!(matches!(s.metric, Metric::Quantile(q) if (q - 0.999).abs() < 1e-12));
        assert_eq!((s.op, s.bound), (Op::Le, 1_500_000.0));
        let s: Slo = "error_rate<1%".parse().unwrap();
        assert_eq!((s.metric, s.bound), (Metric::ErrorRate, 0.01));
        let s: Slo = "rps >= 1000".parse().unwrap();
        assert_eq!((s.metric, s.op, s.bound), (Metric::Rps, Op::Ge, 1000.0));
    }

    #[test]
    fn malformed_objectives_say_what_would_be_right() {
        for bad in [
            "p95 250ms",
            "p101 < 1ms",
            "latency < 1ms",
            "p95 < 1 parsec",
            "error_rate < 150%",
            ": p95 < 1ms",
        ] {
            let e = bad.parse::<Slo>().unwrap_err().to_string();
            assert!(e.contains("e.g."), "{bad}: {e}");
        }
    }

    #[test]
    fn an_objective_that_cannot_fail_is_refused() {
        for (bad, says) in [
            ("error_rate <= 100%", "never above 100 %"),
            ("errors <= 1", "never above 100 %"),
            ("rps >= 0", "nothing measured is below 0"),
            ("read: p99 >= 0ms", "nothing measured is below 0"),
        ] {
            let e = bad.parse::<Slo>().unwrap_err().to_string();
            assert!(
                e.contains(says) && e.contains("can never fail"),
                "{bad}: {e}"
            );
        }
        // At the edge, but able to fail: every request failing breaks it.
        assert!("error_rate < 100%".parse::<Slo>().is_ok());
        assert!("rps > 0".parse::<Slo>().is_ok());
    }
}
