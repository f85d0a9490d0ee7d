//! vegeta's `plot`: each request's latency at the time it was due, answered OK and failed
//! apart, drawn from the run's raw records (`--raw`). The records stream through in bounded
//! memory: the run is cut into slices of time, and a slice with more requests than can be
//! drawn keeps its fastest and its slowest of each kind, so no outlier is lost.

use super::figure::{Axis, Figure, Mark, Series};
use crate::record::RawRecord;
use crate::store::{RunDir, RunMeta, StoreError};

/// Slices of time a scatter keeps up to two points of each kind in.
pub const SLICES: usize = 1200;

#[derive(Debug, Clone, Copy)]
struct Dot {
    secs: f64,
    ms: f64,
}

/// The scatter being gathered: per slice, the fastest and slowest OK and failed request.
#[derive(Debug)]
pub struct Scatter {
    slice_secs: f64,
    ok: Vec<Option<(Dot, Dot)>>,
    failed: Vec<Option<(Dot, Dot)>>,
    records: u64,
    /// Some slice held more than its fastest and slowest of a kind: not every dot is drawn.
    thinned: bool,
}

impl Scatter {
    /// An empty scatter for a run lasting `span_secs`.
    pub fn new(span_secs: f64) -> Scatter {
        Scatter {
            slice_secs: span_secs.max(1e-3) / SLICES as f64,
            ok: vec![None; SLICES],
            failed: vec![None; SLICES],
            records: 0,
            thinned: false,
        }
    }

    /// Takes in one request's record.
    pub fn add(&mut self, r: &RawRecord) {
        let dot = Dot {
            secs: r.intended.as_secs_f64(),
            ms: r.end.saturating_sub(r.intended).as_secs_f64() * 1e3,
        };
        let slice = ((dot.secs / self.slice_secs) as usize).min(SLICES - 1);
        let kept = if r.expected {
            &mut self.ok[slice]
        } else {
            &mut self.failed[slice]
        };
        if let Some((fast, slow)) = *kept {
            // A third request in the slice: one of the three goes undrawn.
            self.thinned |= fast.secs != slow.secs || fast.ms != slow.ms;
        }
        *kept = Some(match *kept {
            None => (dot, dot),
            Some((fast, slow)) => (
                if dot.ms < fast.ms { dot } else { fast },
                if dot.ms > slow.ms { dot } else { slow },
            ),
        });
        self.records += 1;
    }

    /// The figure: OK and failed requests as dots.
    pub fn figure(&self) -> Figure {
        let dots = |slices: &[Option<(Dot, Dot)>]| -> Vec<(f64, f64)> {
            let mut out: Vec<(f64, f64)> = slices
                .iter()
                .flatten()
                .flat_map(|&(fast, slow)| {
                    let same = fast.secs == slow.secs && fast.ms == slow.ms;
                    std::iter::once(fast).chain((!same).then_some(slow))
                })
                .map(|d| (d.secs, d.ms))
                .collect();
            out.sort_by(|a, b| a.0.total_cmp(&b.0));
            out
        };
        let series = |name: &str, points| Series {
            name: name.into(),
            points,
            mark: Mark::Points,
            secondary: false,
            labels: Vec::new(),
        };
        Figure {
            name: "latency-scatter".into(),
            title: if self.thinned {
                format!(
                    "Each request's latency ({} requests; per {}, the fastest and slowest)",
                    self.records,
                    crate::units::fmt_secs(self.slice_secs)
                )
            } else {
                format!("Each request's latency ({} requests)", self.records)
            },
            x: Axis::seconds("seconds since start (when each request was due)"),
            y: Axis::log("latency (ms)"),
            y2: None,
            series: vec![
                series("OK", dots(&self.ok)),
                series("failed", dots(&self.failed)),
            ],
            distinct: false,
        }
    }
}

/// The scatter of the run in `dir`, lasting `span_secs`; `None` when it kept no raw records.
pub fn of_run(dir: &RunDir, meta: &RunMeta, span_secs: f64) -> Result<Option<Figure>, StoreError> {
    let Some(mut reader) = dir.open_raw(meta)? else {
        return Ok(None);
    };
    let mut scatter = Scatter::new(span_secs);
    while let Some(r) = reader.next_record()? {
        scatter.add(&r);
    }
    Ok((scatter.records > 0).then(|| scatter.figure()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::Outcome;
    use std::time::Duration;

    fn record(due_ms: u64, latency_ms: u64, expected: bool) -> RawRecord {
        let intended = Duration::from_millis(due_ms);
        RawRecord {
            request: 0,
            stage: None,
            outcome: Outcome::Status(if expected { 200 } else { 500 }),
            expected,
            retried: false,
            intended,
            sent: intended,
            end: intended + Duration::from_millis(latency_ms),
            bytes_in: 0,
            bytes_out: 0,
        }
    }

    #[test]
    fn ok_and_failed_requests_are_drawn_apart_at_their_due_time() {
        let mut s = Scatter::new(2.0);
        s.add(&record(100, 5, true));
        s.add(&record(1500, 40, false));
        let f = s.figure();
        assert_eq!(f.series[0].name, "OK");
        assert_eq!(f.series[0].points, vec![(0.1, 5.0)]);
        assert_eq!(f.series[1].name, "failed");
        assert_eq!(f.series[1].points, vec![(1.5, 40.0)]);
        assert_eq!(f.title, "Each request's latency (2 requests)");
    }

    #[test]
    fn a_crowded_slice_keeps_its_fastest_and_slowest() {
        let mut s = Scatter::new(SLICES as f64);
        for (due, latency) in [(0, 7), (100, 2), (200, 90), (300, 10)] {
            s.add(&record(due, latency, true));
        }
        let f = s.figure();
        assert_eq!(f.series[0].points, vec![(0.1, 2.0), (0.2, 90.0)]);
        assert!(f.title.contains("4 requests") && f.title.contains("fastest and slowest"));
    }
}
