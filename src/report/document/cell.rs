//! A table cell as a typed value: writers word it (text), mark it (HTML classes) or keep
//! it as a number with its unit (JSON), so no number is ever re-parsed from its words.

use crate::report::document::interval;
use crate::summary::regression::Unit;
use crate::summary::Interval;
use crate::units::{fmt_bytes, fmt_count, fmt_num, fmt_rate, fmt_us_f, us_parts};
use serde_json::{json, Value};

/// Whether a cell or a verdict is good news, bad news or undecided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Held, met, nothing at its limit.
    Good,
    /// Broke, not met, a limit reached.
    Bad,
    /// Cannot tell, within noise, a warning.
    Unsure,
}

/// One typed value.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Words.
    Text(String),
    /// A whole count ("2,666").
    Count(u64),
    /// A plain number with `decimals` decimals.
    Number {
        /// The number.
        value: f64,
        /// Decimals shown.
        decimals: usize,
    },
    /// A rate per second ("812.50/s").
    Rate(f64),
    /// A duration in microseconds ("1.204ms").
    Duration(f64),
    /// A duration with its 95 % confidence interval, either end possibly open.
    DurationCi {
        /// The point estimate, µs.
        us: f64,
        /// The interval's lower end, µs.
        lo: Option<f64>,
        /// The interval's upper end, µs.
        hi: Option<f64>,
    },
    /// A percentage, 0–100 ("99.50%").
    Percent(f64),
    /// A byte count ("1.2 MiB").
    Bytes(f64),
    /// What an objective measured, in its unit, with the 95 % confidence interval when the
    /// metric has one, and the objective's bound when the interval holds it (too close to
    /// call).
    Measured {
        /// The value in `unit` (µs, a ratio, per second).
        value: f64,
        /// Its unit.
        unit: Unit,
        /// Its 95 % confidence interval, in `unit`.
        ci: Option<Interval<f64>>,
        /// The objective's bound, when it lies inside the interval.
        too_close: Option<f64>,
    },
    /// An outcome word ("met", "held", "broke") and whether it is good news.
    Status(Tone, String),
    /// Nothing to show ("-").
    Empty,
    /// A measure with nothing to measure, e.g. a latency when no answer was measured ("—";
    /// JSON `null`): never shown as a zero.
    Unmeasured,
}

impl Cell {
    /// Words as a cell.
    pub fn text(s: impl Into<String>) -> Cell {
        Cell::Text(s.into())
    }

    /// The cell in words, as every text-like writer shows it.
    pub fn to_text(&self) -> String {
        match self {
            Cell::Text(s) | Cell::Status(_, s) => s.clone(),
            Cell::Count(n) => fmt_count(*n),
            Cell::Number { value, decimals } => fmt_num(*value, *decimals),
            Cell::Rate(r) => fmt_rate(*r),
            Cell::Duration(us) => fmt_us_f(*us),
            Cell::DurationCi { us, lo, hi } => {
                let range = interval::range(lo.map(us_parts), hi.map(us_parts));
                format!("{} ({range})", fmt_us_f(*us))
            }
            Cell::Percent(p) => format!("{p:.2}%"),
            Cell::Bytes(b) => fmt_bytes(*b),
            Cell::Measured {
                value,
                unit,
                ci,
                too_close,
            } => {
                let point = interval::value(*unit, *value);
                match (ci, too_close) {
                    (None, _) => point,
                    (Some(ci), None) => format!("{point} (95% CI {})", interval::in_unit(*unit, ci)),
                    (Some(ci), Some(bound)) => format!(
                        "{point} (95% CI {}, which holds the bound {}: too close to call; more requests would settle it)",
                        interval::in_unit(*unit, ci),
                        interval::value(*unit, *bound)
                    ),
                }
            }
            Cell::Empty => "-".into(),
            Cell::Unmeasured => "—".into(),
        }
    }

    /// Good or bad news, when the cell is an outcome.
    pub fn tone(&self) -> Option<Tone> {
        match self {
            Cell::Status(t, _) => Some(*t),
            _ => None,
        }
    }

    /// The cell as JSON: numbers stay numbers, with their unit beside them.
    pub fn to_json(&self) -> Value {
        match self {
            Cell::Text(s) => json!(s),
            Cell::Count(n) => json!(n),
            Cell::Number { value, .. } => json!(value),
            Cell::Rate(r) => json!({"value": r, "unit": "1/s"}),
            Cell::Duration(us) => json!({"value": us / 1e3, "unit": "ms"}),
            Cell::DurationCi { us, lo, hi } => json!({
                "value": us / 1e3,
                "unit": "ms",
                "ci95": [lo.map(|v| v / 1e3), hi.map(|v| v / 1e3)],
            }),
            Cell::Percent(p) => json!({"value": p, "unit": "%"}),
            Cell::Bytes(b) => json!({"value": b, "unit": "B"}),
            Cell::Measured {
                value,
                unit,
                ci,
                too_close,
            } => {
                // The units the other cells use: ms, %, 1/s.
                let (scale, name) = match unit {
                    Unit::Micros => (1e-3, "ms"),
                    Unit::Ratio => (100.0, "%"),
                    Unit::PerSecond => (1.0, "1/s"),
                };
                let mut out = json!({"value": value * scale, "unit": name});
                if let Some(ci) = ci {
                    out["ci95"] = json!([ci.lo.map(|v| v * scale), ci.hi.map(|v| v * scale)]);
                }
                if let Some(bound) = too_close {
                    out["too_close_to_call"] = json!({"bound": bound * scale});
                }
                out
            }
            Cell::Status(t, s) => json!({"outcome": s, "good": *t == Tone::Good}),
            Cell::Empty | Cell::Unmeasured => Value::Null,
        }
    }
}

impl From<String> for Cell {
    fn from(s: String) -> Cell {
        Cell::Text(s)
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Cell {
        Cell::Text(s.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_word_numbers_as_the_reports_always_have() {
        assert_eq!(Cell::Count(2666).to_text(), "2,666");
        assert_eq!(Cell::Rate(812.5).to_text(), "812.50/s");
        assert_eq!(Cell::Duration(1204.0).to_text(), "1.204ms");
        assert_eq!(
            Cell::DurationCi {
                us: 2101.0,
                lo: Some(1800.0),
                hi: Some(2601.0)
            }
            .to_text(),
            "2.101ms (1.800–2.601ms)"
        );
        assert_eq!(
            Cell::DurationCi {
                us: 3701.0,
                lo: Some(3500.0),
                hi: None
            }
            .to_text(),
            "3.701ms (≥3.500ms)"
        );
        assert_eq!(Cell::Percent(99.5).to_text(), "99.50%");
        assert_eq!(Cell::Empty.to_text(), "-");
        assert_eq!(Cell::Unmeasured.to_text(), "—");
        assert_eq!(Cell::Unmeasured.to_json(), Value::Null);
    }

    #[test]
    fn json_keeps_numbers_and_units() {
        assert_eq!(
            Cell::Duration(1500.0).to_json(),
            json!({"value": 1.5, "unit": "ms"})
        );
        assert_eq!(Cell::Count(3).to_json(), json!(3));
        assert_eq!(
            Cell::Status(Tone::Bad, "not met".into()).to_json(),
            json!({"outcome": "not met", "good": false})
        );
    }
}
