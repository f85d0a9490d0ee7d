//! What makes a gate able to fail, shared by the objectives (`--slo`, a scenario's `slo`,
//! `--stop-when`) and the regression rules (`compare --fail-on`). A gate given nothing (an
//! unset variable: `--slo "$SLO"`) or a bound no measure can break (`error_rate <= 100%`,
//! `rps -100%`) would pass for ever in silence: both are refused when read.

use super::slo::Op;

/// What to give `--slo`, said when it is empty.
pub const OBJECTIVES: &str = "objectives like 'p99 < 200ms, errors < 0.1%'";
/// What to give `compare --fail-on`, said when it is empty.
pub const RULES: &str = "rules like 'p99 +10%, errors +0.1pp, rps -5%'";
/// What to give `sweep --stop-when`, said when it is empty.
pub const LIMITS: &str = "limits like 'errors > 10%, p99 > 2s' ('none' never stops early)";

/// A gate given nothing to judge: empty, blank, or commas only.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{flag} is empty (was a variable unset?): the gate would be off; give {example}, or leave {flag} out")]
pub struct EmptyGate {
    /// The flag, e.g. `--slo`.
    pub flag: &'static str,
    /// What to give instead, e.g. `objectives like 'p99 < 200ms'`.
    pub example: &'static str,
}

/// Refuses `text` given to `flag` when it names nothing (empty, blank, commas only);
/// `example` says what to give.
pub fn given(flag: &'static str, text: &str, example: &'static str) -> Result<(), EmptyGate> {
    if text.split(',').all(|item| item.trim().is_empty()) {
        return Err(EmptyGate { flag, example });
    }
    Ok(())
}

/// Whether a measure that lies between 0 and `most` (`None`: no ceiling) can break
/// `value op bound`, so that the gate can fail at all.
pub fn can_fail(op: Op, bound: f64, most: Option<f64>) -> bool {
    match op {
        // Broken by a value at or above the bound: the measure must reach it.
        Op::Lt => most.is_none_or(|m| m >= bound),
        // Broken by a value above the bound.
        Op::Le => most.is_none_or(|m| m > bound),
        // Broken by a value at or below the bound; every measure can be 0.
        Op::Gt => bound >= 0.0,
        // Broken by a value below the bound.
        Op::Ge => bound > 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_given_is_refused_naming_the_flag() {
        for blank in ["", "  ", ",", " , ,", "\t,\n"] {
            let e = given("--slo", blank, "objectives like 'p99 < 200ms'").unwrap_err();
            assert_eq!(
                e.to_string(),
                "--slo is empty (was a variable unset?): the gate would be off; give objectives like 'p99 < 200ms', or leave --slo out"
            );
        }
        assert_eq!(given("--slo", ", p99 < 1s", "x"), Ok(()));
    }

    #[test]
    fn a_bound_at_the_end_of_the_range_cannot_fail() {
        // The error rate lies in 0..=1.
        assert!(!can_fail(Op::Le, 1.0, Some(1.0)));
        assert!(!can_fail(Op::Le, 2.0, Some(1.0)));
        assert!(can_fail(Op::Le, 0.999, Some(1.0)));
        assert!(can_fail(Op::Lt, 1.0, Some(1.0)));
        assert!(!can_fail(Op::Lt, 1.5, Some(1.0)));
        assert!(can_fail(Op::Lt, 1e12, None));
        // Nothing is below 0.
        assert!(!can_fail(Op::Ge, 0.0, None));
        assert!(!can_fail(Op::Ge, -1.0, None));
        assert!(can_fail(Op::Ge, 1e-9, None));
        assert!(can_fail(Op::Gt, 0.0, None));
        assert!(!can_fail(Op::Gt, -0.5, None));
    }
}
