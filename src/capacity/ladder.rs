//! The loads a sweep steps through: "1000..20000" by a step, "x2" geometric, or a list.

use super::CapacityError;

/// Most steps one sweep may have, so a typo cannot plan a day of load.
pub const MAX_STEPS: usize = 1000;

/// The loads of a sweep, in order (requests per second or users).
#[derive(Debug, Clone, PartialEq)]
pub struct Ladder(pub Vec<f64>);

impl Ladder {
    /// Reads `levels` ("1000..20000" or "1000,2000,3200") with `step` ("1000", or "x2" to
    /// multiply) for a range; a range without a step takes ten equal steps.
    pub fn parse(levels: &str, step: Option<&str>) -> Result<Ladder, CapacityError> {
        Ladder::parse_levels(levels, step, false)
    }

    /// As [`Ladder::parse`], for users: a range's ten equal steps are whole numbers of
    /// users (2..16 steps by 1, not by 1.4), and a step of less than one user is one.
    pub fn parse_users(levels: &str, step: Option<&str>) -> Result<Ladder, CapacityError> {
        Ladder::parse_levels(levels, step, true)
    }

    fn parse_levels(
        levels: &str,
        step: Option<&str>,
        users: bool,
    ) -> Result<Ladder, CapacityError> {
        let bad = |why: String| CapacityError::Ladder(format!("{levels:?}: {why}"));
        let number = |s: &str| -> Result<f64, CapacityError> {
            // A rate as everywhere else (1000/s, 6000/1m); users are plain numbers, which
            // it reads too.
            crate::units::parse_rate(s)
                .ok()
                .filter(|v| v.is_finite() && *v > 0.0)
                .ok_or_else(|| bad(format!("{:?} is not a positive number", s.trim())))
        };
        let out = if let Some((from, to)) = levels.split_once("..") {
            let (from, to) = (number(from)?, number(to)?);
            if to < from {
                return Err(bad("the range must go up (from..to with from <= to)".into()));
            }
            let mut out = Vec::new();
            match step.map(str::trim) {
                Some(s) if s.starts_with(['x', '*']) => {
                    let factor = number(&s[1..])?;
                    if factor <= 1.0 {
                        return Err(bad(format!("the factor of --step {s:?} must be above 1")));
                    }
                    let mut v = from;
                    while v <= to * (1.0 + 1e-9) && out.len() <= MAX_STEPS {
                        out.push(v);
                        v *= factor;
                    }
                }
                s => {
                    let by = match s {
                        Some(s) => number(s)?,
                        None if to > from && users => ((to - from) / 10.0).round().max(1.0),
                        None if to > from => (to - from) / 10.0,
                        None => 1.0,
                    };
                    let mut k = 0.0;
                    while from + k * by <= to * (1.0 + 1e-9) && out.len() <= MAX_STEPS {
                        out.push(from + k * by);
                        k += 1.0;
                    }
                }
            }
            out
        } else {
            if step.is_some() {
                return Err(bad(
                    "--step goes with a range from..to, not with a list".into()
                ));
            }
            levels.split(',').map(number).collect::<Result<_, _>>()?
        };
        if out.len() > MAX_STEPS {
            return Err(bad(format!(
                "more than {MAX_STEPS} steps; take a larger --step"
            )));
        }
        Ok(Ladder(out))
    }

    /// Checks the levels are whole numbers (users of a concurrency sweep).
    pub fn whole(&self) -> Result<(), CapacityError> {
        match self.0.iter().find(|v| v.fract() != 0.0) {
            Some(v) => Err(CapacityError::Step(format!(
                "--concurrency {v} is not a whole number of users"
            ))),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_steps_by_a_sum_a_factor_or_tenths_and_a_list_is_taken_as_is() {
        let l = |levels, step| Ladder::parse(levels, step).unwrap().0;
        assert_eq!(
            l("1000..5000", Some("1000")),
            [1000., 2000., 3000., 4000., 5000.]
        );
        assert_eq!(l("1..120", Some("1")).len(), 120);
        assert_eq!(l("100..1000", Some("x2")), [100., 200., 400., 800.]);
        assert_eq!(l("0.5..1.5", None).len(), 11);
        assert_eq!(l("1000, 2000,3200", None), [1000., 2000., 3200.]);
    }

    #[test]
    fn nonsense_is_refused_with_the_reason() {
        for (levels, step) in [
            ("5..1", None),
            ("1..10", Some("x1")),
            ("a..b", None),
            ("1,2", Some("1")),
            ("1..100000", Some("1")),
            ("0..10", None),
        ] {
            let e = Ladder::parse(levels, step).unwrap_err().to_string();
            assert!(e.contains(levels), "{e}");
        }
        assert!(Ladder::parse("1.5,2", None).unwrap().whole().is_err());
        // Users' ten equal steps are whole users.
        let users = Ladder::parse_users("2..16", None).unwrap();
        assert_eq!(users.0, (2..=16).map(f64::from).collect::<Vec<_>>());
        assert!(users.whole().is_ok());
        assert_eq!(Ladder::parse_users("10..110", None).unwrap().0.len(), 11);
    }
}
