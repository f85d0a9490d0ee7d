//! How a run's arrivals were spaced, and for Poisson arrivals whether what was sent was
//! Poisson: a generator that fell behind sends late requests in bunches (or, saturated, at
//! its own even pace), and a result measured so is not one of Poisson traffic.
//!
//! The check is a Kolmogorov–Smirnov test (5 %) of how long spans of consecutive sends took
//! (`IntervalRecord::send_spans`, on the schedule's count axis, where the gaps between
//! Poisson arrivals are exponential) against the schedule's own distribution: Erlang-k for
//! spans of `k` arrivals. Sends are trusted to `record::SEND_RESOLUTION_US` (see `fit`): a
//! generator that sends each request within it of its due time passes, one whose sends bunch
//! or even out does not.

use super::fit::{banded_ks, critical_5pct, erlang_cdf};
use crate::plan::{ArrivalKind, Load};
use crate::record::{IntervalRecord, SEND_RESOLUTION_US};
use crate::store::RunMeta;
use serde::{Deserialize, Serialize};

/// Fewer spans than this are too few to tell a Poisson process from another.
pub const MIN_SPANS: u64 = 50;

/// How the run's arrivals were spaced, and what its sends were.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Arrivals {
    /// Evenly, or as a Poisson process.
    pub kind: ArrivalKind,
    /// The seed of Poisson arrivals: `--seed` it to send the same schedule again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Whether a Poisson run's sends were Poisson; `None` for even arrivals (and the
    /// closed model, which has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<SendCheck>,
}

/// What the check of a Poisson run's sends found, with its numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SendCheck {
    /// The finding.
    pub finding: SendFinding,
    /// The Kolmogorov–Smirnov statistic (the largest distance between the distribution of
    /// the spans' lengths and the schedule's, beyond the resolution).
    pub statistic: f64,
    /// Its critical value at the 5 % level for this many spans.
    pub critical: f64,
    /// Spans checked.
    pub samples: u64,
    /// Arrivals of the whole test per span.
    pub arrivals_per_span: u64,
    /// Sends within this of their due time count as on time, µs.
    pub resolution_us: f64,
    /// How late the run's requests left, 99th percentile, µs: a generator behind its
    /// schedule bunches its sends.
    pub lag_p99_us: u64,
}

/// Whether a Poisson run's sends were Poisson.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SendFinding {
    /// They fit the schedule's exponential gaps (the statistic below its critical value).
    Poisson,
    /// They did not: the statistic is at or above its critical value.
    NotPoisson,
    /// Too few spans to tell (fewer than [`MIN_SPANS`]).
    TooFew,
}

impl SendCheck {
    /// True when the sends were checked and found Poisson.
    pub fn passed(&self) -> bool {
        self.finding == SendFinding::Poisson
    }

    /// True when the generator's lag stands beside a failed check as its likely cause.
    pub fn lagged(&self) -> bool {
        self.lag_p99_us as f64 > self.resolution_us
    }
}

impl Arrivals {
    /// The arrivals of a stored run, `all` being its whole record (warm-up included: those
    /// sends are the generator's too).
    pub fn of(meta: &RunMeta, all: &IntervalRecord) -> Arrivals {
        let kind = meta.arrivals.kind();
        let open = matches!(meta.load, Load::Open { .. });
        Arrivals {
            kind,
            seed: meta.arrivals.seed(),
            check: (kind == ArrivalKind::Poisson && open).then(|| check(all)),
        }
    }
}

/// Checks the sends of a Poisson run.
fn check(all: &IntervalRecord) -> SendCheck {
    let spans = all.send_spans.clone().unwrap_or_default();
    let k = u32::try_from(spans.arrivals.max(1)).unwrap_or(u32::MAX);
    let (statistic, samples) = banded_ks(&spans.points(), |x| erlang_cdf(k, x), spans.band);
    let critical = critical_5pct(samples);
    let finding = if samples < MIN_SPANS {
        SendFinding::TooFew
    } else if statistic < critical {
        SendFinding::Poisson
    } else {
        SendFinding::NotPoisson
    };
    SendCheck {
        finding,
        statistic,
        critical,
        samples,
        arrivals_per_span: spans.arrivals,
        resolution_us: SEND_RESOLUTION_US,
        lag_p99_us: all.lag.inner().value_at_quantile(0.99),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Arrivals as Asked, Rate};
    use crate::record::SendSpans;

    fn meta(arrivals: Asked) -> RunMeta {
        let plan = crate::plan::AttackPlan {
            arrivals,
            ..crate::plan::AttackPlan::new(
                crate::plan::Target::parse("http://127.0.0.1:1/").unwrap(),
                vec![],
                Load::Open { rate: Rate(5000.0) },
                crate::plan::Stop {
                    duration: Some(std::time::Duration::from_secs(4)),
                    requests: None,
                },
            )
        };
        RunMeta::describe(&plan, &[], None, "HTTP/1.1", &[])
    }

    /// A record of spans of 10 arrivals (band 0.25: 5,000 req/s) lasting `lengths`.
    fn record(lengths: impl Iterator<Item = f64>) -> IntervalRecord {
        let mut spans = SendSpans::new(10, 0.25);
        lengths.for_each(|x| spans.record(x));
        IntervalRecord {
            send_spans: Some(spans),
            ..Default::default()
        }
    }

    /// Spans of 10 exponential gaps drawn from `seed`.
    fn erlang(seed: u64, count: u64) -> impl Iterator<Item = f64> {
        let mut counts = crate::schedule::Counts::new(crate::schedule::Spacing::Poisson { seed });
        let mut last = counts.at(0);
        (1..=count).map(move |i| {
            let now = counts.at(10 * i);
            now - std::mem::replace(&mut last, now)
        })
    }

    #[test]
    fn poisson_sends_pass_and_bunched_or_even_ones_do_not() {
        let poisson = Asked::Poisson { seed: Some(9) };
        let got = Arrivals::of(&meta(poisson), &record(erlang(1, 2000)));
        assert_eq!((got.kind, got.seed), (ArrivalKind::Poisson, Some(9)));
        let check = got.check.unwrap();
        assert_eq!(check.finding, SendFinding::Poisson, "{check:?}");
        assert_eq!((check.samples, check.arrivals_per_span), (2000, 10));
        // A generator stalled now and then, sending what fell due meanwhile at once: one
        // span in twenty in no time, the next one twice as long.
        let stalled = erlang(2, 2000).enumerate().map(|(i, x)| match i % 20 {
            0 => 0.01,
            1 => x + 10.0,
            _ => x,
        });
        let check = Arrivals::of(&meta(poisson), &record(stalled))
            .check
            .unwrap();
        assert_eq!(check.finding, SendFinding::NotPoisson, "{check:?}");
        // A metronome.
        let even = (0..2000).map(|_| 10.0);
        let check = Arrivals::of(&meta(poisson), &record(even)).check.unwrap();
        assert_eq!(check.finding, SendFinding::NotPoisson);
        assert!(check.statistic > 0.4, "{check:?}");
    }

    #[test]
    fn too_few_spans_cannot_tell_and_even_arrivals_are_not_checked() {
        let poisson = Asked::Poisson { seed: Some(1) };
        let few = Arrivals::of(&meta(poisson), &record(erlang(3, 20)));
        assert_eq!(few.check.unwrap().finding, SendFinding::TooFew);
        let none = Arrivals::of(&meta(poisson), &IntervalRecord::default());
        assert_eq!(none.check.unwrap().samples, 0);
        let even = Arrivals::of(&meta(Asked::Even), &IntervalRecord::default());
        assert_eq!(even, Arrivals::default());
    }
}
