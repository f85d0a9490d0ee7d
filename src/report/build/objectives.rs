//! Objectives as the answer holds them: what was measured as a typed cell (its number, unit
//! and confidence interval, never re-read from words), for every builder that judges
//! objectives (a run, a capacity search's probe); their checks are in [`super::checks`].

use crate::report::document::{Cell, Objective};
use crate::summary::SloVerdict;

/// What `v` measured, typed; its words when nothing could be measured ("no answered
/// requests", an unreadable objective) or the summary predates the typed value.
pub fn cell(v: &SloVerdict) -> Cell {
    match v.value {
        Some(m) => Cell::Measured {
            value: m.value,
            unit: m.unit,
            ci: v.ci.map(|c| c.interval),
            too_close: v.ci.filter(|c| c.uncertain).map(|c| c.bound),
        },
        None => Cell::Text(v.measured.clone()),
    }
}

/// `v` as the answer lists it.
pub fn objective(v: &SloVerdict) -> Objective {
    Objective {
        text: v.objective.clone(),
        measured: cell(v),
        met: v.met,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::summary::regression::Unit;
    use crate::summary::{Interval, Measured, SloCi};

    /// p99 < 250ms measured 240 ms (220–262 ms): shared with the checks' tests.
    pub(in crate::report::build) fn verdict(met: bool, uncertain: bool) -> SloVerdict {
        SloVerdict {
            objective: "p99 < 250ms".into(),
            request: None,
            measured: "240.000ms".into(),
            value: Some(Measured {
                value: 240_000.0,
                unit: Unit::Micros,
            }),
            met,
            ci: Some(SloCi {
                unit: Unit::Micros,
                interval: Interval {
                    lo: Some(220_000.0),
                    hi: Some(262_000.0),
                },
                bound: 250_000.0,
                uncertain,
            }),
        }
    }

    #[test]
    fn the_measured_value_is_a_number_with_its_interval() {
        let c = cell(&verdict(true, true));
        assert_eq!(
            c.to_text(),
            "240.000ms (95% CI 220.000–262.000ms, which holds the bound 250.000ms: too close to call; more requests would settle it)"
        );
        let json = c.to_json();
        assert_eq!(json["value"], 240.0);
        assert_eq!(json["unit"], "ms");
        assert_eq!(json["ci95"][1], 262.0);
        assert_eq!(json["too_close_to_call"]["bound"], 250.0);
        assert_eq!(
            cell(&verdict(true, false)).to_text(),
            "240.000ms (95% CI 220.000–262.000ms)"
        );
    }

    #[test]
    fn an_error_rate_reads_as_a_percentage_and_old_summaries_keep_their_words() {
        let mut v = verdict(true, false);
        v.value = Some(Measured {
            value: 0.003,
            unit: Unit::Ratio,
        });
        v.ci = None;
        assert_eq!(cell(&v).to_text(), "0.30%");
        assert_eq!(cell(&v).to_json()["value"], 0.3);
        v.value = None;
        v.measured = "no answered requests".into();
        assert_eq!(cell(&v), Cell::Text("no answered requests".into()));
    }
}
