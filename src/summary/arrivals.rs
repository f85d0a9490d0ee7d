//! How a run's arrivals were spaced, and for Poisson arrivals whether what was sent was
//! Poisson: a generator that fell behind sends late requests in bunches (or, saturated, at
//! its own even pace), and a result measured so is not one of Poisson traffic.
//!
//! Two Kolmogorov–Smirnov tests, each at 2.5 % so that the check is at 5 %, of what the
//! engine recorded (`IntervalRecord::send_gaps`, on the schedule's count axis, where the gaps
//! between Poisson arrivals are exponential): the gaps between consecutive sends against the
//! schedule's gaps (exponential; Erlang-N for a shard of N, which sends every N-th arrival),
//! and how long spans of them took against Erlang-k for spans of `k` arrivals. Sends are
//! trusted to `record::SEND_RESOLUTION_US` (see `fit`): a generator that sends each request
//! within it of its due time passes, one whose sends bunch or even out does not.

use super::fit::{banded_ks, critical, erlang_cdf};
use crate::plan::{ArrivalKind, Load};
use crate::record::{send_gaps_points as points, Histogram, IntervalRecord, SEND_RESOLUTION_US};
use crate::store::RunMeta;
use serde::{Deserialize, Serialize};

/// Fewer spans than this are too few to tell a Poisson process from another.
pub const MIN_SPANS: u64 = 50;

/// The level of each of the check's two tests: together at most 5 %.
const LEVEL: f64 = 0.025;

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
    /// The gaps between consecutive sends against the schedule's.
    pub gaps: Fit,
    /// How long spans of consecutive sends took against the schedule's.
    pub spans: Fit,
    /// Arrivals of the whole test between two consecutive sends (1; a shard's count of
    /// shards) and per span.
    pub arrivals_per_gap: u64,
    /// Arrivals of the whole test per span.
    pub arrivals_per_span: u64,
    /// Sends within this of their due time count as on time, µs.
    pub resolution_us: f64,
    /// How late the run's requests left, 99th percentile, µs: a generator behind its
    /// schedule bunches its sends.
    pub lag_p99_us: u64,
}

/// One Kolmogorov–Smirnov test of the sends.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    /// The largest distance between the distribution of what was measured and the
    /// schedule's, beyond the resolution.
    pub statistic: f64,
    /// Its critical value at the test's level (2.5 %) for this many samples.
    pub critical: f64,
    /// Samples tested.
    pub samples: u64,
}

impl Fit {
    /// True when the statistic is below its critical value.
    pub fn holds(&self) -> bool {
        self.statistic < self.critical
    }
}

/// Whether a Poisson run's sends were Poisson.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SendFinding {
    /// Gaps and spans fit the schedule's (both statistics below their critical values).
    Poisson,
    /// They did not: a statistic is at or above its critical value.
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
    let sent = all.send_gaps.clone().unwrap_or_default();
    let fit = |h: &Histogram, k: u64| {
        let k = u32::try_from(k.max(1)).unwrap_or(u32::MAX);
        let (statistic, samples) = banded_ks(&points(h), |x| erlang_cdf(k, x), sent.band);
        Fit {
            statistic,
            critical: critical(samples, LEVEL),
            samples,
        }
    };
    let gaps = fit(&sent.gaps, sent.stride);
    let spans = fit(&sent.spans, sent.span);
    let finding = if spans.samples < MIN_SPANS {
        SendFinding::TooFew
    } else if gaps.holds() && spans.holds() {
        SendFinding::Poisson
    } else {
        SendFinding::NotPoisson
    };
    SendCheck {
        finding,
        gaps,
        spans,
        arrivals_per_gap: sent.stride,
        arrivals_per_span: sent.span,
        resolution_us: SEND_RESOLUTION_US,
        lag_p99_us: all.lag.inner().value_at_quantile(0.99),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Arrivals as Asked, Rate};
    use crate::record::SendGaps;

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

    /// A record of 5,000 req/s (band 0.25) whose gaps are `gaps` and whose spans of 10 are
    /// their sums.
    fn record(gaps: impl Iterator<Item = f64>) -> IntervalRecord {
        let mut sent = SendGaps::new(1, 10, 0.25);
        let gaps: Vec<f64> = gaps.collect();
        gaps.iter().for_each(|&x| sent.gap(x));
        gaps.chunks_exact(10)
            .for_each(|c| sent.span(c.iter().sum()));
        IntervalRecord {
            send_gaps: Some(sent),
            ..Default::default()
        }
    }

    /// `count` exponential gaps drawn from `seed`.
    fn exponential(seed: u64, count: u64) -> impl Iterator<Item = f64> {
        let mut counts = crate::schedule::Counts::new(crate::schedule::Spacing::Poisson { seed });
        let mut last = counts.at(0);
        (1..=count).map(move |i| {
            let now = counts.at(i);
            now - std::mem::replace(&mut last, now)
        })
    }

    #[test]
    fn poisson_sends_pass_and_bunched_or_even_ones_do_not() {
        let poisson = Asked::Poisson { seed: Some(9) };
        let got = Arrivals::of(&meta(poisson), &record(exponential(1, 20_000)));
        assert_eq!((got.kind, got.seed), (ArrivalKind::Poisson, Some(9)));
        let check = got.check.unwrap();
        assert_eq!(check.finding, SendFinding::Poisson, "{check:?}");
        assert_eq!((check.gaps.samples, check.spans.samples), (20_000, 2000));
        assert_eq!((check.arrivals_per_gap, check.arrivals_per_span), (1, 10));
        // A generator stalled for 10 arrivals in every 100, then sending what fell due
        // meanwhile at once: the spans see it.
        let stalled = exponential(2, 20_000)
            .enumerate()
            .map(|(i, x)| match i % 100 {
                0..=9 => 0.001,
                10 => x + 10.0,
                _ => x,
            });
        let check = Arrivals::of(&meta(poisson), &record(stalled))
            .check
            .unwrap();
        assert_eq!(check.finding, SendFinding::NotPoisson, "{check:?}");
        assert!(!check.spans.holds(), "{check:?}");
        // Sends in pairs, a mean gap apart: spans of 10 keep their lengths, the gaps do not.
        let paired = exponential(3, 20_000)
            .collect::<Vec<f64>>()
            .chunks_exact(2)
            .flat_map(|c| [0.0, c[0] + c[1]])
            .collect::<Vec<f64>>();
        let check = Arrivals::of(&meta(poisson), &record(paired.into_iter()))
            .check
            .unwrap();
        assert_eq!(check.finding, SendFinding::NotPoisson, "{check:?}");
        assert!(check.spans.holds() && !check.gaps.holds(), "{check:?}");
        // A metronome fails both.
        let even = (0..20_000).map(|_| 1.0);
        let check = Arrivals::of(&meta(poisson), &record(even)).check.unwrap();
        assert!(
            check.gaps.statistic > 0.4 && check.spans.statistic > 0.4,
            "{check:?}"
        );
    }

    #[test]
    fn too_few_spans_cannot_tell_and_even_arrivals_are_not_checked() {
        let poisson = Asked::Poisson { seed: Some(1) };
        let few = Arrivals::of(&meta(poisson), &record(exponential(3, 200)));
        assert_eq!(few.check.unwrap().finding, SendFinding::TooFew);
        let none = Arrivals::of(&meta(poisson), &IntervalRecord::default());
        assert_eq!(none.check.unwrap().spans.samples, 0);
        let even = Arrivals::of(&meta(Asked::Even), &IntervalRecord::default());
        assert_eq!(even, Arrivals::default());
    }
}
